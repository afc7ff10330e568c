"""Governed tables: transactions per second, and GetTableObjects at a million objects.

    python bench/governed.py [--transactions 2000] [--objects 1000000] [--samples 15] [--scratch DIR]

The warehouses go in a temporary folder under ``--scratch`` (default: the current folder), not the
system's temporary folder: durable commits are timed, and /tmp may be tmpfs, where fsync costs nothing.
The file system the run used is printed with the results.

Transactions: each is start_transaction, one update_table_objects of 10 AddObjects, commit_transaction
(durable: fsync on), on a fresh warehouse, from one process and from four processes at once (each
writing its own partitions, so none conflicts). The peer in the same run is the same writes as plain
Glue partitions: batch_create_partition of 10 partitions a call, one commit each.

GetTableObjects: a governed table keyed (region string, day date) holds 1,000,000 objects in 10,000
partitions (100 each), registered by transactions of 1,000 objects; a partition index on (region, day)
is made afterwards, on a copy of the table, so that the same objects are queried with and without it.
Timed: a selective predicate (one partition, 100 objects), a week of one region (700), and the same
reads at the transaction that filled the table last (time travel by transaction id). The peer is the
same object set kept as plain Glue partitions (keys region, day, file: a million partitions) queried with
the same expressions by GetPartitions. moto implements neither Lake Formation transactions nor table
objects, so it is no peer here. Targets: 500 transactions/s from one process; a selective
get_table_objects under 20 ms at 1M objects.

A Spark INSERT into a governed table against the same INSERT into a plain table: bench/spark_governed.py.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import date, timedelta
from typing import Any

from scratch import file_system

REGIONS = [f"r{i}" for i in range(10)]
DAYS = [(date(2024, 1, 1) + timedelta(days=d)).isoformat() for d in range(1000)]
PER_PARTITION = 100
SELECTIVE = "region = 'r3' AND day = '2024-05-01'"
WEEK = "region = 'r3' AND day >= '2024-05-01' AND day < '2024-05-08'"


def governed_input(name: str, keys: list[tuple[str, str]]) -> dict[str, Any]:
    return {
        "Name": name,
        "TableType": "GOVERNED",
        "StorageDescriptor": {
            "Columns": [{"Name": "amount", "Type": "double"}],
            "Location": f"s3://lake/{name}/",
        },
        "PartitionKeys": [{"Name": k, "Type": t} for k, t in keys],
    }


def add(uri: str, values: list[str]) -> dict[str, Any]:
    return {"AddObject": {"Uri": uri, "ETag": "0123456789abcdef", "Size": 1 << 20, "PartitionValues": values}}


def rate(
    one: Callable[[int], None], count: int, warm_up: list[int], start_at: float | None, glue: Any
) -> dict[str, Any]:
    """``one(i)`` for each warm-up i, then (from ``start_at``, if given) ``count`` times, timed; closes
    ``glue``."""
    for i in warm_up:
        one(i)
    if start_at is not None:
        time.sleep(max(0.0, start_at - time.time()))
    began = time.perf_counter()
    for i in range(count):
        one(i)
    elapsed = time.perf_counter() - began
    glue.close()
    return {"count": count, "seconds": elapsed, "per_s": count / elapsed}


# -- transactions per second --------------------------------------------------------------------------


def transactions(root: str, count: int, worker: int, start_at: float | None) -> dict[str, Any]:
    """``count`` transactions of 10 AddObjects (after 50 to warm up); their rate."""
    import gluecat

    warehouse = f"{root}/tx"
    glue = gluecat.Catalog(warehouse)
    lf = gluecat.LakeFormation(glue)
    if worker == 0 and start_at is None:
        glue.create_database(DatabaseInput={"Name": "bench"})
        glue.create_table(DatabaseName="bench", TableInput=governed_input("t", [("w", "int"), ("n", "int")]))

    def one(i: int) -> None:
        tx = lf.start_transaction()["TransactionId"]
        ops = [add(f"s3://lake/t/{worker}/{i}/{j}", [str(worker), str(i % 1000)]) for j in range(10)]
        lf.update_table_objects(DatabaseName="bench", TableName="t", TransactionId=tx, WriteOperations=ops)
        assert lf.commit_transaction(TransactionId=tx)["TransactionStatus"] == "COMMITTED"

    return rate(one, count, [-1 - i for i in range(50)], start_at, glue)


def plain_commits(root: str, count: int) -> dict[str, Any]:
    """The peer: the same writes as Glue partitions, 10 a batch_create_partition call."""
    import gluecat

    glue = gluecat.Catalog(f"{root}/plain")
    glue.create_database(DatabaseInput={"Name": "bench"})
    table = governed_input("t", [("w", "int"), ("n", "int"), ("file", "int")])
    table["TableType"] = "EXTERNAL_TABLE"
    glue.create_table(DatabaseName="bench", TableInput=table)

    def one(i: int) -> None:
        parts = [
            {
                "Values": ["0", str(i % 1000), f"{i}{j:02d}"],
                "StorageDescriptor": {"Location": f"s3://lake/t/{i}/{j}"},
            }
            for j in range(10)
        ]
        glue.batch_create_partition(DatabaseName="bench", TableName="t", PartitionInputList=parts)

    return rate(one, count, [10_000_000 + i for i in range(50)], None, glue)


def four_processes(root: str, count: int) -> dict[str, Any]:
    """Four processes at once, each ``count`` transactions into partitions of its own."""
    import gluecat

    glue = gluecat.Catalog(f"{root}/tx")
    glue.create_database(DatabaseInput={"Name": "bench"})
    glue.create_table(DatabaseName="bench", TableInput=governed_input("t", [("w", "int"), ("n", "int")]))
    start_at = time.time() + 8  # after every process has started and warmed up
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                __file__,
                "--child",
                "tx",
                "--root",
                root,
                "--count",
                str(count),
                "--worker",
                str(w),
                "--start-at",
                str(start_at),
            ],
            stdout=subprocess.PIPE,
            text=True,
        )
        for w in range(1, 5)
    ]
    results = [json.loads(p.communicate()[0].strip().splitlines()[-1]) for p in procs]
    wall = max(r["seconds"] for r in results)
    return {"count": 4 * count, "seconds": wall, "per_s": 4 * count / wall}


# -- GetTableObjects at a million objects ------------------------------------------------------------


def fill_objects(lf: Any, table: str, n: int) -> str:
    """``n`` objects in 10,000 partitions (100 each), by transactions of 1,000; the last one's id."""
    partitions = [(r, d) for d in DAYS for r in REGIONS]
    last = ""
    batch: list[dict[str, Any]] = []
    tx = lf.start_transaction()["TransactionId"]
    written = 0
    for i in range(n):
        region, day = partitions[(i // PER_PARTITION) % len(partitions)]
        batch.append(add(f"s3://lake/{table}/{region}/{day}/part-{i:07d}.parquet", [region, day]))
        if len(batch) == 100:
            lf.update_table_objects(
                DatabaseName="bench", TableName=table, TransactionId=tx, WriteOperations=batch
            )
            batch, written = [], written + 100
            if written % 1000 == 0:
                lf.commit_transaction(TransactionId=tx)
                last, tx = tx, lf.start_transaction()["TransactionId"]
    if batch:
        lf.update_table_objects(
            DatabaseName="bench", TableName=table, TransactionId=tx, WriteOperations=batch
        )
    lf.commit_transaction(TransactionId=tx)
    return tx if batch or written % 1000 else last


def timed(call: Any, samples: int) -> tuple[float, float, Any]:
    """(first call ms, median ms of the next ``samples``, the answer)."""
    began = time.perf_counter()
    out = call()
    first = (time.perf_counter() - began) * 1000
    times = []
    for _ in range(samples):
        began = time.perf_counter()
        call()
        times.append((time.perf_counter() - began) * 1000)
    return first, statistics.median(times), out


def objects_query(root: str, n: int, samples: int) -> dict[str, Any]:
    import gluecat

    glue = gluecat.Catalog(f"{root}/objects", fsync=False)
    lf = gluecat.LakeFormation(glue)
    glue.create_database(DatabaseInput={"Name": "bench"})
    keys = [("region", "string"), ("day", "date")]
    glue.create_table(DatabaseName="bench", TableInput=governed_input("t", keys))
    glue.create_table(DatabaseName="bench", TableInput=governed_input("ti", keys))
    began = time.perf_counter()
    last = fill_objects(lf, "t", n)
    fill_s = time.perf_counter() - began
    last_indexed = fill_objects(lf, "ti", n)
    glue.create_partition_index(
        DatabaseName="bench", TableName="ti", PartitionIndex={"IndexName": "rd", "Keys": ["region", "day"]}
    )

    def count(table: str, predicate: str, **kwargs: Any) -> int:
        found, token = 0, {}
        while True:
            page = lf.get_table_objects(
                DatabaseName="bench", TableName=table, PartitionPredicate=predicate, **kwargs, **token
            )
            found += sum(len(g["Objects"]) for g in page["Objects"])
            if not page.get("NextToken"):
                return found
            token = {"NextToken": page["NextToken"]}

    out: dict[str, Any] = {"objects": n, "fill_s": fill_s, "fill_per_s": n / fill_s}
    for name, table, predicate, tx in (
        ("selective, indexed", "ti", SELECTIVE, None),
        ("selective, not indexed", "t", SELECTIVE, None),
        ("a week, indexed", "ti", WEEK, None),
        ("a week, not indexed", "t", WEEK, None),
        ("selective at a transaction, indexed", "ti", SELECTIVE, last_indexed),
        ("selective at a transaction, not indexed", "t", SELECTIVE, last),
    ):
        kwargs = {"TransactionId": tx} if tx else {}
        first, median, rows = timed(lambda t=table, p=predicate, k=kwargs: count(t, p, **k), samples)
        out[name] = {"first ms": first, "ms": median, "objects": rows}
    out["peak MB"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return out


def partitions_query(root: str, n: int, samples: int) -> dict[str, Any]:
    """The peer: the same object set as a million Glue partitions (keys region, day, file)."""
    import gluecat

    glue = gluecat.Catalog(f"{root}/partitions", fsync=False)
    glue.create_database(DatabaseInput={"Name": "bench"})
    table = governed_input("p", [("region", "string"), ("day", "date"), ("file", "int")])
    table["TableType"] = "EXTERNAL_TABLE"
    glue.create_table(
        DatabaseName="bench",
        TableInput=table,
        PartitionIndexes=[{"IndexName": "rd", "Keys": ["region", "day"]}],
    )
    partitions = [(r, d) for d in DAYS for r in REGIONS]
    batch = []
    for i in range(n):
        region, day = partitions[(i // PER_PARTITION) % len(partitions)]
        batch.append({"Values": [region, day, str(i)], "StorageDescriptor": {"Location": f"s3://lake/p/{i}"}})
        if len(batch) == 100:
            glue.batch_create_partition(DatabaseName="bench", TableName="p", PartitionInputList=batch)
            batch = []

    def count(expression: str) -> int:
        found, token = 0, {}
        while True:
            page = glue.get_partitions(DatabaseName="bench", TableName="p", Expression=expression, **token)
            found += len(page["Partitions"])
            if not page.get("NextToken"):
                return found
            token = {"NextToken": page["NextToken"]}

    out: dict[str, Any] = {}
    for name, expression in (("selective, indexed", SELECTIVE), ("a week, indexed", WEEK)):
        first, median, rows = timed(lambda e=expression: count(e), samples)
        out[name] = {"first ms": first, "ms": median, "objects": rows}
    return out


# -- the run -------------------------------------------------------------------------------------------


def child(kind: str, args: argparse.Namespace) -> dict[str, Any]:
    if kind == "tx":
        return transactions(args.root, args.count, args.worker, args.start_at)
    if kind == "plain":
        return plain_commits(args.root, args.count)
    if kind == "four":
        return four_processes(args.root, args.count)
    if kind == "objects":
        return objects_query(args.root, args.count, args.samples)
    return partitions_query(args.root, args.count, args.samples)


def run(kind: str, root: str, count: int, samples: int) -> dict[str, Any]:
    cmd = [sys.executable, __file__, "--child", kind, "--root", f"{root}/{kind}", "--count", str(count)]
    out = subprocess.run([*cmd, "--samples", str(samples)], check=True, capture_output=True, text=True).stdout
    return dict(json.loads(out.strip().splitlines()[-1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--transactions", type=int, default=2000)
    parser.add_argument("--objects", type=int, default=1_000_000)
    parser.add_argument("--samples", type=int, default=15)
    parser.add_argument("--scratch", default=".", help="where the temporary warehouses go (default: .)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--root", help=argparse.SUPPRESS)
    parser.add_argument("--count", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--worker", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--start-at", type=float, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child, args)))
        return
    with tempfile.TemporaryDirectory(dir=args.scratch, prefix=".bench-governed-") as root:
        print(f"warehouses in {root} ({file_system(root)})", flush=True)
        print("transactions, one process ...", flush=True)
        one = run("tx", root, args.transactions, args.samples)
        print("the same writes as plain partition commits ...", flush=True)
        plain = run("plain", root, args.transactions, args.samples)
        print("transactions, four processes ...", flush=True)
        four = run("four", root, args.transactions // 2, args.samples)
        print(f"GetTableObjects at {args.objects:,} objects ...", flush=True)
        objects = run("objects", root, args.objects, args.samples)
        print(f"GetPartitions at {args.objects:,} partitions (the peer) ...", flush=True)
        parts = run("parts", root, args.objects, args.samples)
    print()
    print("transactions of 10 AddObjects (start, update_table_objects, commit), fsync on:")
    print(f"  one process         {one['per_s']:8.0f} /s   ({one['count']} in {one['seconds']:.1f} s)")
    print(f"  four processes      {four['per_s']:8.0f} /s   ({four['count']} in {four['seconds']:.1f} s)")
    print(
        f"  peer: batch_create_partition of 10, one process {plain['per_s']:8.0f} /s "
        f"(one process's transactions: {one['per_s'] / plain['per_s']:.2f} of it)"
    )
    print()
    print(
        f"{args.objects:,} objects in 10,000 partitions (filled at {objects['fill_per_s']:,.0f} objects/s, fsync off):"
    )
    print(f"  {'':42}{'first ms':>10}{'median ms':>11}{'objects':>9}{'  GetPartitions peer ms':>24}")
    for name in (
        "selective, indexed",
        "selective, not indexed",
        "a week, indexed",
        "a week, not indexed",
        "selective at a transaction, indexed",
        "selective at a transaction, not indexed",
    ):
        r = objects[name]
        peer = parts.get(name)
        shown = f"{peer['ms']:24.1f}" if peer else ""
        print(f"  {name:42}{r['first ms']:10.1f}{r['ms']:11.1f}{r['objects']:9}{shown}")
    print(f"  peak memory {objects['peak MB']:.0f} MB")
    print()
    verdict = "met" if one["per_s"] >= 500 else "MISSED"
    print(f"target 500 transactions/s from one process: {one['per_s']:.0f}/s  {verdict}")
    selective = objects["selective, indexed"]["ms"]
    print(
        f"target selective get_table_objects < 20 ms at 1M objects: {selective:.1f} ms  {'met' if selective < 20 else 'MISSED'}"
    )


if __name__ == "__main__":
    main()
