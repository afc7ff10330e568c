"""A worker process of the reliability battery (run as a script, not collected by pytest).

    python worker.py writer WAREHOUSE PREFIX COUNT PAUSE_AT PAUSE SEED   # creates tables, may pause open
    python worker.py compactor WAREHOUSE STOPFILE SEED                   # compact --apply, retain 0, until STOPFILE
    python worker.py batches WAREHOUSE RUN                               # partition batches until killed
    python worker.py race WAREHOUSE GOFILE NAMES INCREMENTS SEED         # create races and a shared counter

Every line is printed and flushed only after the call returned, so what the parent reads is exactly
what the catalog acknowledged.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import random
import sys
import time
from typing import Any

from gluecat import Catalog, GlueError
from gluecat.cli import main as cli
from gluecat.errors import ConcurrentModificationException
from tests.reliability.battery import BATCH, table_input


def emit(record: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(record) + "\n")
    sys.stdout.flush()


def writer(warehouse: str, prefix: str, count: int, pause_at: int, pause: float, seed: int) -> None:
    rng = random.Random(seed)
    glue = Catalog(warehouse)  # held open across the pause: the stale process of the scenario
    parts = f"{prefix}_parts"  # a table this writer adds partitions to, so compactions merge them
    glue.create_table(DatabaseName="db", TableInput=table_input(parts, "v1"))
    emit({"table": parts, "ok": True})
    for i in range(count):
        if i == pause_at:
            time.sleep(pause)
        name = f"{prefix}_{i}"
        try:
            glue.create_table(DatabaseName="db", TableInput=table_input(name, "v1"))
            if i % 3 == 0:
                glue.batch_create_partition(
                    DatabaseName="db",
                    TableName=parts,
                    PartitionInputList=[
                        {"Values": [str(i), str(h)], "StorageDescriptor": {"Location": f"s3://b/{i}/{h}"}}
                        for h in range(10)
                    ],
                )
                emit({"partitions": parts, "batch": i})
        except GlueError as e:
            emit({"table": name, "ok": False, "error": e.code, "message": e.message})
            continue
        emit({"table": name, "ok": True})
        if rng.random() < 0.1:
            time.sleep(rng.uniform(0, 0.05))


def compactor(warehouse: str, stop: str, seed: int) -> None:
    rng = random.Random(seed)
    emit({"ready": True})
    n = 0
    while not os.path.exists(stop):
        with contextlib.redirect_stdout(io.StringIO()):
            code = cli(["compact", "-w", warehouse, "--apply", "--retain-hours", "0"])
        if code != 0:
            raise SystemExit(f"compaction exited {code}")
        n += 1
        emit({"compaction": n})
        time.sleep(rng.uniform(0, 0.2))


def batches(warehouse: str, run: int) -> None:
    glue = Catalog(warehouse)
    emit({"ready": True})
    for b in range(1_000_000):
        batch = run * 100_000 + b
        glue.batch_create_partition(
            DatabaseName="db",
            TableName="t",
            PartitionInputList=[
                {"Values": [str(batch), str(i)], "StorageDescriptor": {"Location": f"s3://b/{batch}/{i}"}}
                for i in range(BATCH)
            ],
        )
        emit({"batch": batch})


def race(warehouse: str, go: str, names: int, increments: int, seed: int) -> None:
    rng = random.Random(seed)
    glue = Catalog(warehouse)
    while not os.path.exists(go):
        time.sleep(0.01)
    work = [("create", n) for n in range(names)] + [("increment", i) for i in range(increments)]
    rng.shuffle(work)
    for what, n in work:
        if what == "create":
            try:
                glue.create_table(DatabaseName="db", TableInput=table_input(f"r{n}"))
                emit({"table": f"r{n}", "result": "ok"})
            except GlueError as e:
                emit({"table": f"r{n}", "result": e.code})
            continue
        while True:  # read, check, write: a stale VersionId is refused and read again
            table = glue.get_table(DatabaseName="db", Name="counter")["Table"]
            value = int(table["Parameters"]["n"])
            update = {**table_input("counter"), "Parameters": {"n": str(value + 1)}}
            try:
                glue.update_table(DatabaseName="db", TableInput=update, VersionId=table["VersionId"])
            except ConcurrentModificationException:
                continue
            emit({"increment": True, "result": "ok"})
            break


def main(argv: list[str]) -> None:
    mode, warehouse, *rest = argv
    if mode == "writer":
        prefix, count, pause_at, pause, seed = rest
        writer(warehouse, prefix, int(count), int(pause_at), float(pause), int(seed))
    elif mode == "compactor":
        stop, seed = rest
        compactor(warehouse, stop, int(seed))
    elif mode == "batches":
        batches(warehouse, int(rest[0]))
    elif mode == "race":
        go, names, increments, seed = rest
        race(warehouse, go, int(names), int(increments), int(seed))
    else:
        raise SystemExit(f"unknown mode {mode}")


if __name__ == "__main__":
    main(sys.argv[1:])
