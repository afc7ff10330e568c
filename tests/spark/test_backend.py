"""The Spark shim's backend without Spark: what a driver killed in the middle of a drop leaves behind.

The backend is called as the shim calls it (an operation and its JSON arguments), in a child process that
kills itself (os._exit) right after the drop's catalog commit, before its folders are deleted."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from gluecat import Catalog
from gluecat.data.files import DataFiles
from gluecat.data.maintenance import repair_table
from gluecat.spark.backend import Backend

PARQUET = {
    "InputFormat": "org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat",
    "OutputFormat": "org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat",
    "SerdeInfo": {"SerializationLibrary": "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe"},
}

_KILLED_AFTER_COMMIT = """
import os, sys
from gluecat import Catalog
from gluecat.spark.backend import Backend
from gluecat.data.files import DataFiles

warehouse, operation, arguments = sys.argv[1:]
DataFiles.remove = lambda *args, **kwargs: os._exit(9)
print(Backend(Catalog(warehouse)).call(operation, arguments))
"""


def kill_after_commit(warehouse: str, operation: str, arguments: dict[str, object]) -> None:
    child = subprocess.run(
        [sys.executable, "-c", _KILLED_AFTER_COMMIT, warehouse, operation, json.dumps(arguments)],
        capture_output=True,
    )
    assert child.returncode == 9, child.stdout.decode() + child.stderr.decode()


def managed_table(cat: Catalog, warehouse: str, partitions: list[str]) -> Path:
    home = Path(warehouse) / "db.db" / "t"
    cat.create_table(
        DatabaseName="db",
        TableInput={
            "Name": "t",
            "TableType": "MANAGED_TABLE",
            "StorageDescriptor": {
                **PARQUET,
                "Columns": [{"Name": "v", "Type": "int"}],
                "Location": str(home),
            },
            "PartitionKeys": [{"Name": "p", "Type": "string"}],
        },
    )
    for value in partitions:
        (home / f"p={value}").mkdir(parents=True)
        (home / f"p={value}" / "part-0.parquet").write_text("rows")
        cat.create_partition(
            DatabaseName="db",
            TableName="t",
            PartitionInput={
                "Values": [value],
                "StorageDescriptor": {**PARQUET, "Location": str(home / f"p={value}")},
            },
        )
    return home


def test_a_partition_dropped_by_a_killed_driver_does_not_come_back_nor_block_its_place(
    tmp_path: Path,
) -> None:
    warehouse = str(tmp_path / "warehouse")
    cat = Catalog(warehouse)
    cat.create_database(DatabaseInput={"Name": "db"})
    home = managed_table(cat, warehouse, ["a", "b"])
    kill_after_commit(warehouse, "drop_partitions", {"database": "db", "name": "t", "partitions": [["a"]]})

    assert [p["Values"] for p in cat.get_partitions(DatabaseName="db", TableName="t")["Partitions"]] == [
        ["b"]
    ]
    table = cat.get_table(DatabaseName="db", Name="t")["Table"]
    files = DataFiles(cat)
    assert repair_table(cat, files, table, add=True, drop=False) == []  # the dropped rows stay dropped
    staging = files.begin_write(table)
    (Path(staging) / "p=a").mkdir(parents=True)
    (Path(staging) / "p=a" / "part-1.parquet").write_text("new rows")
    files.commit_write(table, staging, "APPEND", [{"fragment": "p=a", "values": ["a"]}], [])  # not refused
    assert sorted(p.name for p in (home / "p=a").iterdir()) == ["part-1.parquet"]


def test_a_table_dropped_by_a_killed_driver_leaves_its_name_free_for_a_new_table(tmp_path: Path) -> None:
    warehouse = str(tmp_path / "warehouse")
    cat = Catalog(warehouse)
    cat.create_database(DatabaseInput={"Name": "db"})
    managed_table(cat, warehouse, ["a"])
    kill_after_commit(warehouse, "drop_table", {"database": "db", "name": "t"})

    made = {
        "database": "db",
        "name": "t",
        "columns": [{"name": "v", "type": "int"}],
        "partition_keys": [],
        "properties": {"provider": "parquet"},
    }
    assert json.loads(Backend(cat).call("create_table", json.dumps(made))) == {"ok": None}


def test_a_replace_table_killed_after_dropping_the_old_table_can_run_again(tmp_path: Path) -> None:
    warehouse = str(tmp_path / "warehouse")
    cat = Catalog(warehouse)
    cat.create_database(DatabaseInput={"Name": "db"})
    home = managed_table(cat, warehouse, ["a"])
    replace = {
        "database": "db",
        "name": "t",
        "columns": [{"name": "w", "type": "int"}],
        "partition_keys": [],
        "properties": {"provider": "parquet"},
        "stage": "create_or_replace",
    }

    def staged_write() -> dict[str, object]:
        staged = json.loads(Backend(cat).call("stage_table", json.dumps(replace)))["ok"]
        Path(staged["staging"]).mkdir()  # as Spark's writers make it
        (Path(staged["staging"]) / "part-new.parquet").write_text("new rows")
        written = [{"fragment": "", "values": []}]
        return {
            **replace,
            "staging": staged["staging"],
            "replaces": staged["replaces"],
            "mode": "TRUNCATE",
            "written": written,
        }

    kill_after_commit(warehouse, "commit_staged", staged_write())  # the old table is gone, its files not yet
    assert json.loads(Backend(cat).call("commit_staged", json.dumps(staged_write()))) == {"ok": None}
    assert [p.name for p in home.iterdir() if not p.name.startswith(".")] == ["part-new.parquet"]
