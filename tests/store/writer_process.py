"""A writer process for the store's concurrency and crash tests (run as a script, not collected by pytest).

    python writer_process.py mixed WAREHOUSE WORKER SEED OPS TABLES   # concurrency: JSON lines of outcomes
    python writer_process.py stream WAREHOUSE RUN                      # crash: prints ACK lines until killed
    python writer_process.py partitions WAREHOUSE WORKER SEED OPS      # concurrency: JSON lines of outcomes
    python writer_process.py updates WAREHOUSE TABLE WORKER SECONDS    # turns: one line per UpdateTable

Every line is printed and flushed only after the call returned, so what the parent reads is exactly
what the catalog acknowledged.
"""

from __future__ import annotations

import json
import random
import sys
import time
from typing import Any

from gluecat import Catalog, GlueError

DATABASE = "db"


def table_input(name: str, description: str) -> dict[str, Any]:
    return {
        "Name": name,
        "Description": description,
        "TableType": "EXTERNAL_TABLE",
        "StorageDescriptor": {
            "Columns": [{"Name": "id", "Type": "bigint"}],
            "Location": f"s3://bucket/{name}/",
        },
        "PartitionKeys": [{"Name": "dt", "Type": "string"}],
    }


def emit(record: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(record) + "\n")
    sys.stdout.flush()


def attempt(call: Any, **kwargs: Any) -> str:
    """'ok', or the Glue error code the call was refused with."""
    try:
        call(**kwargs)
    except GlueError as e:
        return e.code
    return "ok"


def mixed(warehouse: str, worker: int, seed: int, ops: int, tables: int) -> None:
    """Random create/update/delete calls on a few shared table names, each outcome reported."""
    rng = random.Random(seed * 1000 + worker)
    catalog = Catalog(warehouse)
    for i in range(ops):
        name = f"t{rng.randrange(tables)}"
        description = f"w{worker}-{i}"  # unique per call, so the log can be matched to acknowledgements
        roll = rng.random()
        if roll < 0.25:
            result = attempt(
                catalog.create_table, DatabaseName=DATABASE, TableInput=table_input(name, description)
            )
            emit({"op": "create", "table": name, "description": description, "result": result})
        elif roll < 0.85:
            try:
                expected = catalog.get_table(DatabaseName=DATABASE, Name=name)["Table"]["VersionId"]
            except GlueError as e:
                emit({"op": "read", "table": name, "result": e.code})
                continue
            result = attempt(
                catalog.update_table,
                DatabaseName=DATABASE,
                TableInput=table_input(name, description),
                VersionId=expected,
            )
            emit(
                {
                    "op": "update",
                    "table": name,
                    "description": description,
                    "expected": expected,
                    "result": result,
                }
            )
        else:
            result = attempt(catalog.delete_table, DatabaseName=DATABASE, Name=name)
            emit({"op": "delete", "table": name, "result": result})


def stream(warehouse: str, run: int) -> None:
    """Commit after commit until killed: create a table, add partitions, update it twice."""
    catalog = Catalog(warehouse)  # the database exists already: the parent made it
    emit({"ready": True})
    k = 0
    while True:
        name = f"r{run}_t{k}"
        catalog.create_table(DatabaseName=DATABASE, TableInput=table_input(name, "v1"))
        emit({"table": name, "version": 1})
        values = [f"2024-01-{d:02d}" for d in range(1, 6)]
        out = catalog.batch_create_partition(
            DatabaseName=DATABASE,
            TableName=name,
            PartitionInputList=[
                {"Values": [v], "StorageDescriptor": {"Location": f"s3://bucket/{name}/dt={v}/"}}
                for v in values
            ],
        )
        assert out["Errors"] == []
        emit({"table": name, "partitions": values})
        for version in (2, 3):
            catalog.update_table(
                DatabaseName=DATABASE, TableInput=table_input(name, f"v{version}"), VersionId=str(version - 1)
            )
            emit({"table": name, "version": version})
        k += 1


def partitions(warehouse: str, worker: int, seed: int, ops: int) -> None:
    """Batches of partitions added to one shared table, and now and then up to 25 partitions of one of this
    worker's own acknowledged batches deleted again; each outcome reported with the values it names."""
    rng = random.Random(seed * 1000 + worker)
    catalog = Catalog(warehouse)
    added: list[list[str]] = []
    for i in range(ops):
        if added and rng.random() < 0.2:
            batch = added.pop(rng.randrange(len(added)))
            values, rest = batch[:25], batch[25:]  # BatchDeletePartition takes at most 25
            if rest:
                added.append(rest)
            out = catalog.batch_delete_partition(
                DatabaseName=DATABASE,
                TableName="shared",
                PartitionsToDelete=[{"Values": [v]} for v in values],
            )
            emit({"op": "delete", "values": values, "errors": out["Errors"]})
        else:
            values = [f"w{worker}-{i}-{j}" for j in range(rng.randint(1, 100))]
            out = catalog.batch_create_partition(
                DatabaseName=DATABASE,
                TableName="shared",
                PartitionInputList=[
                    {"Values": [v], "StorageDescriptor": {"Location": f"s3://bucket/shared/dt={v}/"}}
                    for v in values
                ],
            )
            emit({"op": "add", "values": values, "errors": out["Errors"]})
            added.append(values)


def updates(warehouse: str, table: str, worker: int, seconds: float) -> None:
    """UpdateTable of ``table`` back to back for ``seconds``, each acknowledged one reported with the
    Description it set. It prints a ready line once the warehouse is open and begins at the line the
    parent then writes, so that writers begin together."""
    catalog = Catalog(warehouse, background_merges=False)
    catalog.get_table(DatabaseName=DATABASE, Name=table)
    emit({"ready": True})
    sys.stdin.readline()
    ends = time.monotonic() + seconds
    n = 0
    while time.monotonic() < ends:
        description = f"w{worker}-{n}"
        catalog.update_table(DatabaseName=DATABASE, TableInput={"Name": table, "Description": description})
        emit({"description": description})
        n += 1


def main(argv: list[str]) -> None:
    mode, warehouse = argv[0], argv[1]
    if mode == "mixed":
        mixed(warehouse, int(argv[2]), int(argv[3]), int(argv[4]), int(argv[5]))
    elif mode == "partitions":
        partitions(warehouse, int(argv[2]), int(argv[3]), int(argv[4]))
    elif mode == "updates":
        updates(warehouse, argv[2], int(argv[3]), float(argv[4]))
    elif mode == "stream":
        stream(warehouse, int(argv[2]))
    else:
        raise SystemExit(f"unknown mode {mode!r}")


if __name__ == "__main__":
    main(sys.argv[1:])
