"""The data-file life cycle on S3, without Spark: tables whose folders are ``s3a://`` locations on a local S3
server (moto), their files put and listed with boto3 behind gluecat's back. S3 has no folder rename: every
file moves by a copy and a delete, so what each step leaves differs from a local folder's (docs/spark.md)."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gluecat import Catalog, s3_access
from gluecat.data import files as data_files
from gluecat.data import maintenance
from gluecat.data.files import DataFiles, FolderMove, data_file_infos
from gluecat.errors import EntityNotFoundException
from gluecat.spark.backend import Backend
from tests import s3_server

pytestmark = pytest.mark.slow  # a local S3 server

PARQUET = {
    "SerdeInfo": {"SerializationLibrary": "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe"}
}
_buckets = itertools.count()


@pytest.fixture(scope="module")
def endpoint() -> Iterator[str]:
    with s3_server.moto_s3() as url:
        yield url


@pytest.fixture
def s3(endpoint: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """A boto3 client of the server; gluecat reaches it through the AWS chain (the environment)."""
    for key, value in s3_server.aws_environment(endpoint).items():
        monkeypatch.setenv(key, value)
    s3_access.reset()
    yield s3_server.client(endpoint)
    s3_access.reset()


@pytest.fixture
def bucket(s3: Any) -> str:
    name = f"lake-files-{next(_buckets)}"
    s3.create_bucket(Bucket=name)
    return name


@pytest.fixture
def warehouse(tmp_path: Path) -> str:
    """Its own warehouse, a local folder (not the Spark session's): nothing here runs Spark."""
    return str(tmp_path / "warehouse")


@pytest.fixture
def cat(warehouse: str, bucket: str) -> Catalog:
    """A local warehouse whose database keeps its tables' folders in the bucket."""
    c = Catalog(warehouse)
    c.create_database(DatabaseInput={"Name": "db", "LocationUri": f"s3a://{bucket}/db"})
    return c


def make(cat: Catalog, name: str, location: str, keys: list[str] | None = None) -> dict[str, Any]:
    cat.create_table(
        DatabaseName="db",
        TableInput={
            "Name": name,
            "TableType": "MANAGED_TABLE",
            "StorageDescriptor": {**PARQUET, "Columns": [{"Name": "v", "Type": "int"}], "Location": location},
            "PartitionKeys": [{"Name": k, "Type": "string"} for k in keys or []],
        },
    )
    table: dict[str, Any] = cat.get_table(DatabaseName="db", Name=name)["Table"]
    return table


def add_partition(cat: Catalog, name: str, value: str, location: str) -> None:
    sd = {**PARQUET, "Location": location}
    cat.create_partition(
        DatabaseName="db", TableName=name, PartitionInput={"Values": [value], "StorageDescriptor": sd}
    )


def key_of(location: str) -> str:
    return location.split("://", 1)[1].split("/", 1)[1]


def files_under(s3: Any, bucket: str, prefix: str) -> list[str]:
    """The objects under ``prefix`` that are files (not folder markers), relative to it."""
    return [k[len(prefix) :] for k in s3_server.keys(s3, bucket, prefix) if not k.endswith("/")]


def staged(s3: Any, bucket: str, files: DataFiles, table: dict[str, Any], names: dict[str, str]) -> str:
    """A write job's staging folder holding the files ``names`` ({path under it: file name})."""
    staging = files.begin_write(table)
    for fragment, name in names.items():
        s3.put_object(Bucket=bucket, Key=f"{key_of(staging)}/{fragment}/{name}".replace("//", "/"), Body=name)
    return staging


def values(cat: Catalog, name: str) -> list[list[str]]:
    return [p["Values"] for p in cat.get_partitions(DatabaseName="db", TableName=name)["Partitions"]]


def test_a_write_moves_its_files_into_place_and_an_overwrite_leaves_no_old_file(
    cat: Catalog, s3: Any, bucket: str
) -> None:
    files = DataFiles(cat)
    t = make(cat, "t", f"s3a://{bucket}/db/t", keys=["p"])
    written = [{"fragment": "p=a", "values": ["a"]}, {"fragment": "p=b", "values": ["b"]}]
    job = staged(s3, bucket, files, t, {"p=a": "part-1", "p=b": "part-2"})
    files.commit_write(t, job, "APPEND", written, [])
    assert files_under(s3, bucket, "db/t/") == ["p=a/part-1", "p=b/part-2"]

    job = staged(s3, bucket, files, t, {"p=a": "part-3"})
    files.commit_write(t, job, "OVERWRITE_DYNAMIC", written[:1], [])
    assert files_under(s3, bucket, "db/t/") == ["p=a/part-3", "p=b/part-2"]

    # A whole-table overwrite drops the partitions it does not write: their files go, and so do their
    # folders (an empty folder left at p=a would be a partition to MSCK REPAIR TABLE).
    job = staged(s3, bucket, files, t, {"p=c": "part-4"})
    files.commit_write(t, job, "TRUNCATE", [{"fragment": "p=c", "values": ["c"]}], [])
    assert values(cat, "t") == [["c"]]
    assert files_under(s3, bucket, "db/t/") == ["p=c/part-4"]
    assert s3_server.keys(s3, bucket, "db/t/p=a") == s3_server.keys(s3, bucket, "db/t/p=b") == []
    assert not [k for k in s3_server.keys(s3, bucket) if ".gluecat-staging-" in k]


def test_an_overwrite_whose_catalog_commit_fails_puts_every_file_back(
    cat: Catalog, s3: Any, bucket: str, warehouse: str
) -> None:
    files = DataFiles(cat)
    t = make(cat, "t", f"s3a://{bucket}/db/t", keys=["p"])
    for value in "ab":
        add_partition(cat, "t", value, f"s3a://{bucket}/db/t/p={value}")
        s3.put_object(Bucket=bucket, Key=f"db/t/p={value}/old-{value}", Body=b"old")
    job = staged(s3, bucket, files, t, {"p=a": "new-a", "p=b": "new-b", "p=c": "new-c"})
    commit = cat.commit_partitions

    def dropped_meanwhile(**kwargs: Any) -> Any:
        Catalog(warehouse).delete_table(DatabaseName="db", Name="t")  # another client, while files moved
        return commit(**kwargs)

    cat.commit_partitions = dropped_meanwhile  # type: ignore[method-assign]
    written = [{"fragment": f"p={v}", "values": [v]} for v in "abc"]
    with pytest.raises(EntityNotFoundException):
        files.commit_write(t, job, "OVERWRITE_DYNAMIC", written, [])
    assert files_under(s3, bucket, "db/t/") == ["p=a/old-a", "p=b/old-b"]


# A write's commit in a process killed (os._exit) as it starts its move number KILL_AT (moves run on
# several threads), or at its catalog commit when it gets that far.
_KILLED_COMMIT = """
import os, sys, threading
import gluecat.data.files as data_files
from gluecat import Catalog

warehouse, staging, kill_at = sys.argv[1], sys.argv[2], int(sys.argv[3])
moves = 0
lock = threading.Lock()
real_filesystem = data_files.filesystem


class Dying:
    def __init__(self, fs):
        self._fs = fs

    def __getattr__(self, name):
        return getattr(self._fs, name)

    def move(self, src, dst):
        global moves
        with lock:
            if moves == kill_at:
                os._exit(9)
            moves += 1
        self._fs.move(src, dst)


def filesystem(location):
    fs, path = real_filesystem(location)
    return Dying(fs), path


data_files.filesystem = filesystem
cat = Catalog(warehouse)
cat.commit_partitions = lambda **kwargs: os._exit(9)
table = cat.get_table(DatabaseName="db", Name="t")["Table"]
written = [{"fragment": f"p={v}", "values": [v]} for v in "abc"]
data_files.DataFiles(cat).commit_write(table, staging, "OVERWRITE_DYNAMIC", written, [])
"""


def test_a_write_killed_in_its_commit_loses_no_file_and_never_mixes_old_and_new_rows(
    cat: Catalog, s3: Any, bucket: str, warehouse: str, endpoint: str
) -> None:
    """On S3 every old file of the write goes aside before any new one comes in: a partition killed
    meanwhile holds some of its old rows or some of its new ones (a local folder: all, none or all), never
    both; every replaced file is in place or in the staging folder's .replaced until the commit."""
    old = {"a": {"old-1", "old-2"}, "b": {"old-3", "old-4"}}
    new = {"a": {"new-1", "new-2"}, "b": {"new-3"}, "c": {"new-4"}}
    moves = sum(map(len, old.values())) + len(new["a"]) + len(new["b"])  # c's come after the commit
    env = {**os.environ, **s3_server.aws_environment(endpoint)}
    for kill_at in range(1, moves + 1, 2):  # the last: killed at the catalog commit
        name = f"t{kill_at}"
        home = f"db/{name}"
        t = make(cat, name, f"s3a://{bucket}/{home}", keys=["p"])
        for value, names in old.items():
            add_partition(cat, name, value, f"s3a://{bucket}/{home}/p={value}")
            for file in names:
                s3.put_object(Bucket=bucket, Key=f"{home}/p={value}/{file}", Body=file)
        job = DataFiles(cat).begin_write(t)
        for v, names in new.items():
            for file in names:
                s3.put_object(Bucket=bucket, Key=f"{key_of(job)}/p={v}/{file}", Body=file)
        script = _KILLED_COMMIT.replace('"t"', repr(name))
        child = subprocess.run(
            [sys.executable, "-c", script, warehouse, job, str(kill_at)], capture_output=True, env=env
        )
        assert child.returncode == 9, child.stderr.decode()
        placed = files_under(s3, bucket, f"{home}/")
        assert not [p for p in placed if p.startswith("p=c/")], kill_at  # c comes only after its commit
        for value in "ab":
            there = {p.split("/", 1)[1] for p in placed if p.startswith(f"p={value}/")}
            assert there <= old[value] or there <= new[value], (kill_at, value, there)
        aside = {p.rsplit("/", 1)[1] for p in placed if "/.replaced/" in p and "/old-" in p}
        in_place = {p.rsplit("/", 1)[1] for p in placed if p.startswith("p=") and "/old-" in p}
        assert aside | in_place == set().union(*old.values()), kill_at


def test_a_folder_moves_by_copies_before_the_commit_and_deletions_after_it(
    cat: Catalog, s3: Any, bucket: str
) -> None:
    for key in ("db/t/p=a/part-1", "db/t/p=b/part-2", "db/t/p=empty/"):
        s3.put_object(Bucket=bucket, Key=key, Body=b"" if key.endswith("/") else b"rows")
    move = FolderMove(f"s3a://{bucket}/db/t", f"s3a://{bucket}/db/t2")
    move.prepare()  # killed from here to the commit: the old folder, which the catalog names, is whole
    move.switch()
    assert (
        files_under(s3, bucket, "db/t/") == files_under(s3, bucket, "db/t2/") == ["p=a/part-1", "p=b/part-2"]
    )
    assert "db/t2/p=empty/" in s3_server.keys(s3, bucket, "db/t2/")  # an empty partition keeps its folder
    move.undo()  # the commit failed: the copies go
    assert s3_server.keys(s3, bucket, "db/t2") == []
    assert files_under(s3, bucket, "db/t/") == ["p=a/part-1", "p=b/part-2"]
    move.prepare()
    move.finish()  # committed: the old objects go
    assert s3_server.keys(s3, bucket, "db/t/") == []
    assert files_under(s3, bucket, "db/t2/") == ["p=a/part-1", "p=b/part-2"]


def test_a_rename_that_fails_leaves_the_table_and_its_files_whole(cat: Catalog, s3: Any, bucket: str) -> None:
    make(cat, "t", f"s3a://{bucket}/db/t")
    s3.put_object(Bucket=bucket, Key="db/t/part-1", Body=b"rows")
    backend = Backend(cat)

    def refused(**kwargs: Any) -> None:
        raise EntityNotFoundException("the catalog refused")

    cat.rename_table = refused  # type: ignore[method-assign,assignment]
    rename = json.dumps({"database": "db", "name": "t", "new_database": "db", "new_name": "u"})
    assert json.loads(backend.call("rename_table", rename))["error"] == "EntityNotFoundException"
    assert files_under(s3, bucket, "db/") == ["t/part-1"]  # the copy made for the new name is gone
    del cat.rename_table
    assert "ok" in json.loads(backend.call("rename_table", rename))
    assert files_under(s3, bucket, "db/") == ["u/part-1"]
    assert (
        cat.get_table(DatabaseName="db", Name="u")["Table"]["StorageDescriptor"]["Location"]
        == f"s3a://{bucket}/db/u"
    )


def test_partition_folders_are_the_keys_spark_writes_escapes_and_spaces_included(
    cat: Catalog, s3: Any, bucket: str
) -> None:
    """Spark names the folder of the value x:y ``p=x%3Ay`` and keeps ``p=a b`` as it is: those are the keys
    (a URI's reading would decode the one and refuse the other)."""
    files = DataFiles(cat)
    t = make(cat, "t", f"s3a://{bucket}/db/t", keys=["p"])
    for value, folder in (("a b", "p=a b"), ("x:y", "p=x%3Ay"), ("keep", "p=keep")):
        add_partition(cat, "t", value, f"s3a://{bucket}/db/t/{folder}")
        s3.put_object(Bucket=bucket, Key=f"db/t/{folder}/part-0", Body=b"12345")
    assert [i.size for i in data_file_infos(f"s3a://{bucket}/db/t/p=x%3Ay")] == [5]
    files.truncate(t, [["x:y"]])
    assert files_under(s3, bucket, "db/t/") == ["p=a b/part-0", "p=keep/part-0"]
    removal = files.plan_drop_partitions(t, [["a b"], ["x:y"]])
    files.remove(removal)
    assert files_under(s3, bucket, "db/t/") == ["p=keep/part-0"]


def test_rows_of_a_drop_killed_after_its_commit_never_come_back(
    cat: Catalog, s3: Any, bucket: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """S3 renames no folder, so a drop cannot hide what it deletes before its commit, as it does on a local
    folder: it marks it (``.gluecat-dropped-<name>`` beside it). Killed after the commit, before deleting,
    the files stay; whatever next registers or repairs a partition there, or makes a table there, deletes
    them first instead of taking them for rows."""
    files = DataFiles(cat)
    t = make(cat, "t", f"s3a://{bucket}/db/t", keys=["p"])
    for value in "abc":
        add_partition(cat, "t", value, f"s3a://{bucket}/db/t/p={value}")
        s3.put_object(Bucket=bucket, Key=f"db/t/p={value}/part-0", Body=b"dropped rows")

    def drop_killed_after_commit(values: list[list[str]]) -> None:
        files.hide(files.plan_drop_partitions(t, values))
        cat.batch_delete_partition(
            DatabaseName="db", TableName="t", PartitionsToDelete=[{"Values": v} for v in values]
        )  # ... and the process dies before DataFiles.remove

    drop_killed_after_commit([["a"], ["b"]])
    assert files_under(s3, bucket, "db/t/") == [
        ".gluecat-dropped-p=a",
        ".gluecat-dropped-p=b",
        "p=a/part-0",
        "p=b/part-0",
        "p=c/part-0",
    ]
    # MSCK REPAIR TABLE finds the folders p=a and p=b: dropped, so deleted, not registered. (It finds
    # their marks by a listing of the table's folder where it asks about many folders: here about 2.)
    looked_up = data_files._MARKS_LOOKED_UP
    monkeypatch.setattr(data_files, "_MARKS_LOOKED_UP", 1)
    assert maintenance.repair_table(cat, files, t, add=True, drop=False) == []
    monkeypatch.setattr(data_files, "_MARKS_LOOKED_UP", looked_up)
    assert files_under(s3, bucket, "db/t/") == ["p=c/part-0"]

    drop_killed_after_commit([["c"]])
    Backend(cat).op_create_partitions(
        {"database": "db", "name": "t", "partitions": [["c"]], "properties": [{}]}
    )
    assert values(cat, "t") == [["c"]]
    assert files_under(s3, bucket, "db/t/") == []  # registered again, empty

    # A table dropped likewise does not keep a new table of its name out of its folder.
    u = make(cat, "u", f"s3a://{bucket}/db/u")
    s3.put_object(Bucket=bucket, Key="db/u/part-0", Body=b"dropped rows")
    files.hide(files.plan_drop_table(u))
    cat.delete_table(DatabaseName="db", Name="u")
    files.check_new_managed_folder("db", "u", f"s3a://{bucket}/db/u")
    assert s3_server.keys(s3, bucket, "db/u") == [] and files_under(s3, bucket, "db/") == []


def test_a_drop_killed_before_its_commit_keeps_every_row(cat: Catalog, s3: Any, bucket: str) -> None:
    files = DataFiles(cat)
    t = make(cat, "t", f"s3a://{bucket}/db/t", keys=["p"])
    add_partition(cat, "t", "a", f"s3a://{bucket}/db/t/p=a")
    s3.put_object(Bucket=bucket, Key="db/t/p=a/part-0", Body=b"rows")
    files.hide(files.plan_drop_partitions(t, [["a"]]))  # ... and the process dies before the commit
    # The partition is still registered: its folder is in use, so only the mark goes.
    assert files.finish_drops([f"s3a://{bucket}/db/t/p=a"]) == []
    assert files_under(s3, bucket, "db/t/") == ["p=a/part-0"]


def test_a_rename_killed_before_its_commit_leaves_a_copy_that_keeps_nothing_out(
    cat: Catalog, s3: Any, bucket: str
) -> None:
    make(cat, "t", f"s3a://{bucket}/db/t")
    s3.put_object(Bucket=bucket, Key="db/t/part-0", Body=b"rows")
    FolderMove(f"s3a://{bucket}/db/t", f"s3a://{bucket}/db/u").prepare()  # ... and the process dies
    assert files_under(s3, bucket, "db/u/") == ["part-0"]
    # t still reads all its rows; the copy is no table's, and a table of its name starts empty. (t's mark
    # stays until something is made in t's place: t uses its folder, so only the mark goes then.)
    DataFiles(cat).check_new_managed_folder("db", "u", f"s3a://{bucket}/db/u")
    assert files_under(s3, bucket, "db/") == [".gluecat-dropped-t", "t/part-0"]
