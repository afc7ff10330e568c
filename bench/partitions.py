"""Partition throughput and GetPartitions latency at 100k and 1M partitions, next to moto's mock.

    python bench/partitions.py [--sizes 100000,1000000] [--moto-size 100000] [--samples 15]

A table keyed (country, category, year, month) with a partition index on (country, category, year) is
filled through batch_create_partition in batches of 100 (Glue's limit). Each size runs in a fresh
subprocess so that its peak memory (ru_maxrss) is its own. Reported per size: creation throughput
(with fsync, the default, and without; from one client, and from four threads at once, whose calls
share commits), the median latency of an indexed selective query, of an unindexed one (first page, and
all pages), and of listing every partition; peak memory. moto's mock runs the same calls from one
client on the smaller table in the same run. Targets (at 1M): indexed < 20 ms, unindexed
< 1 s, creation > 50,000 partitions/s, peak memory < 1.5 GB.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

INDEXED = "country = 'US' AND category = 'Books' AND year > 2018"
UNINDEXED = "month = 2"
CATEGORIES = [f"cat{i:02d}" for i in range(19)] + ["Books"]
YEARS = range(2000, 2025)
MONTHS = range(1, 13)


def countries(size: int) -> list[str]:
    """Enough countries (always including 'US') for ``size`` partitions."""
    n = -(-size // (len(CATEGORIES) * len(YEARS) * len(MONTHS)))
    return ["US"] + [f"C{i:03d}" for i in range(n - 1)]


def partition_values(size: int) -> Iterator[list[str]]:
    combos = itertools.product(countries(size), CATEGORIES, YEARS, MONTHS)
    for country, category, year, month in itertools.islice(combos, size):
        yield [country, category, str(year), str(month)]


def table_input() -> dict[str, Any]:
    return {
        "Name": "sales",
        "StorageDescriptor": {
            "Columns": [{"Name": "amount", "Type": "double"}],
            "Location": "s3://lake/sales/",
        },
        "PartitionKeys": [
            {"Name": "country", "Type": "string"},
            {"Name": "category", "Type": "string"},
            {"Name": "year", "Type": "int"},
            {"Name": "month", "Type": "int"},
        ],
    }


def fill(client: Any, size: int) -> float:
    """Create ``size`` partitions in batches of 100; returns partitions per second."""
    batch: list[dict[str, Any]] = []
    start = time.perf_counter()
    for values in partition_values(size):
        batch.append(
            {"Values": values, "StorageDescriptor": {"Location": "s3://lake/sales/" + "/".join(values)}}
        )
        if len(batch) == 100:
            client.batch_create_partition(DatabaseName="bench", TableName="sales", PartitionInputList=batch)
            batch = []
    if batch:
        client.batch_create_partition(DatabaseName="bench", TableName="sales", PartitionInputList=batch)
    return size / (time.perf_counter() - start)


CLIENTS = 4


def fill_concurrently(client: Any, size: int, clients: int = CLIENTS) -> float:
    """Create ``size`` partitions in batches of 100 from ``clients`` threads at once (the batches are
    handed out in order from one generator); returns partitions per second."""
    values = partition_values(size)
    lock = threading.Lock()

    def next_batch() -> list[dict[str, Any]]:
        with lock:
            return [
                {"Values": v, "StorageDescriptor": {"Location": "s3://lake/sales/" + "/".join(v)}}
                for v in itertools.islice(values, 100)
            ]

    def work() -> None:
        while batch := next_batch():
            client.batch_create_partition(DatabaseName="bench", TableName="sales", PartitionInputList=batch)

    threads = [threading.Thread(target=work) for _ in range(clients)]
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return size / (time.perf_counter() - start)


def every_page(client: Any, expression: str) -> int:
    kwargs: dict[str, Any] = {"DatabaseName": "bench", "TableName": "sales", "Expression": expression}
    n = 0
    while True:
        resp = client.get_partitions(**kwargs)
        n += len(resp["Partitions"])
        if not resp.get("NextToken"):
            return n
        kwargs["NextToken"] = resp["NextToken"]


def first_page(client: Any, expression: str) -> int:
    resp = client.get_partitions(
        DatabaseName="bench", TableName="sales", Expression=expression, MaxResults=1000
    )
    return len(resp["Partitions"])


def median_ms(call: Callable[[], Any], samples: int) -> tuple[float, Any]:
    result = call()  # warm-up (builds in-memory structures once, as a long-running catalog would)
    times = []
    for _ in range(samples):
        start = time.perf_counter()
        call()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times), result


def measure(client: Any, samples: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, call, n in (
        ("indexed", lambda: every_page(client, INDEXED), samples),
        ("unindexed first page", lambda: first_page(client, UNINDEXED), samples),
        ("unindexed all pages", lambda: every_page(client, UNINDEXED), max(3, samples // 5)),
        ("everything, all pages", lambda: every_page(client, ""), 3),
    ):
        ms, rows = median_ms(call, n)
        out[name] = {"ms": ms, "rows": rows}
    return out


def run_gluecat(size: int, samples: int, root: str) -> dict[str, Any]:
    result: dict[str, Any] = {"size": size}
    for i, (fsync, clients) in enumerate(((False, 1), (False, CLIENTS), (True, 1), (True, CLIENTS))):
        fill_and_measure(result, f"{root}/{size}-{i}", size, samples, fsync=fsync, clients=clients)
    result["peak MB"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return result


def create_us(folder: str, n: int = 300) -> float:
    """Median time to create, write and close a small new file in ``folder`` (each commit creates one).
    On ext4 without a journal, inodes deleted in the last one to five minutes are skipped one by one
    when a new one is allocated: after a big deletion this took 800 us here instead of 35."""
    os.makedirs(folder)
    times = []
    for i in range(n):
        start = time.perf_counter()
        with open(f"{folder}/{i}", "xb") as f:
            f.write(b"x" * 2000)
        times.append((time.perf_counter() - start) * 1e6)
    return statistics.median(times)


def fill_and_measure(
    result: dict[str, Any], warehouse: str, size: int, samples: int, *, fsync: bool, clients: int
) -> None:
    """One fill into ``result``; the queries are measured after the fill without fsync from one client.
    With fsync, creation alone is measured on the first 50k (it is the same code path)."""
    from gluecat import Catalog

    with Catalog(warehouse, fsync=fsync) as glue:
        glue.create_database(DatabaseInput={"Name": "bench"})
        glue.create_table(
            DatabaseName="bench",
            TableInput=table_input(),
            PartitionIndexes=[{"IndexName": "ccy", "Keys": ["country", "category", "year"]}],
        )
        n = size if not fsync else min(size, 50_000)
        name = "create/s" + (" fsync" if fsync else "") + (f" {clients} clients" if clients > 1 else "")
        result[name] = fill(glue, n) if clients == 1 else fill_concurrently(glue, n, clients)
        if not fsync and clients == 1:
            result["queries"] = measure(glue, samples)
            result["explain"] = glue.explain_partitions(
                DatabaseName="bench", TableName="sales", Expression=INDEXED
            )


def run_moto(size: int, samples: int) -> dict[str, Any]:
    import boto3  # type: ignore[import-untyped]
    import moto

    with moto.mock_aws():
        glue = boto3.client("glue", region_name="us-east-1")
        glue.create_database(DatabaseInput={"Name": "bench"})
        glue.create_table(DatabaseName="bench", TableInput=table_input())
        result = {"size": size, "create/s": fill(glue, size), "queries": measure(glue, max(3, samples // 3))}
    result["peak MB"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return result


def in_subprocess(kind: str, size: int, samples: int, root: str) -> dict[str, Any]:
    cmd = [sys.executable, __file__, "--child", kind, "--sizes", str(size), "--samples", str(samples)]
    cmd += ["--root", root]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return dict(json.loads(out.strip().splitlines()[-1]))


def verdict(value: float, target: float, lower_is_better: bool) -> str:
    met = value < target if lower_is_better else value > target
    return "met" if met else "MISSED"


def report(
    results: list[dict[str, Any]], peer: dict[str, Any], create_before: float, create_after: float
) -> None:
    print(
        f"\nfile system: a new 2 kB file took {create_before:.0f} us (median) before the runs, "
        f"{create_after:.0f} us after (see create_us)"
    )
    print()
    print(
        f"{'':34}"
        + "".join(f"{r['size']:>14,}" for r in results)
        + f"{'moto ' + format(peer['size'], ','):>16}"
    )
    rows = [
        ("batch_create_partition /s", "create/s", None),
        (f"  {CLIENTS} clients at once", f"create/s {CLIENTS} clients", None),
        ("  with fsync (first 50k)", "create/s fsync", None),
        (f"  with fsync, {CLIENTS} clients", f"create/s fsync {CLIENTS} clients", None),
    ]
    for label, key, _ in rows:
        line = f"{label:34}" + "".join(f"{r.get(key, 0):>14,.0f}" for r in results)
        line += f"{peer.get(key, 0):>16,.0f}" if key in peer else f"{'':>16}"
        print(line)
    for name in ("indexed", "unindexed first page", "unindexed all pages", "everything, all pages"):
        line = f"{name + ' (ms)':34}" + "".join(f"{r['queries'][name]['ms']:>14.1f}" for r in results)
        line += f"{peer['queries'][name]['ms']:>16.1f}"
        print(line)
    print(
        f"{'peak memory (MB)':34}"
        + "".join(f"{r['peak MB']:>14.0f}" for r in results)
        + f"{peer['peak MB']:>16.0f}"
    )
    print()
    for r in results:
        q = r["queries"]
        print(
            f"{r['size']:,} partitions: indexed query returns {q['indexed']['rows']}, month = 2 returns "
            f"{q['unindexed all pages']['rows']} ({q['unindexed first page']['rows']} on the first page)"
        )
    same = [r for r in results if r["size"] == peer["size"]]
    if same:
        ours = same[0]
        print(f"\ngluecat / moto at {peer['size']:,} partitions (lower is better for times):")
        for name in ("indexed", "unindexed first page", "unindexed all pages", "everything, all pages"):
            print(f"  {name:28} {ours['queries'][name]['ms'] / peer['queries'][name]['ms']:8.3f}x")
        print(f"  {'creation rate':28} {ours['create/s'] / peer['create/s']:8.2f}x (higher is better)")
    big = max(results, key=lambda r: r["size"])
    print(f"\ntargets at {big['size']:,} partitions:")
    q = big["queries"]
    print(
        f"  indexed < 20 ms:            {q['indexed']['ms']:8.1f} ms  {verdict(q['indexed']['ms'], 20, True)}"
    )
    # One GetPartitions call is what the target's latency reads most naturally as; fetching every
    # matching page is shown next to it.
    for name in ("unindexed first page", "unindexed all pages"):
        print(
            f"  unindexed < 1 s:            {q[name]['ms']:8.1f} ms  "
            f"{verdict(q[name]['ms'], 1000, True)}  ({name.split(' ', 1)[1]})"
        )
    for key, how in (("create/s", "one client"), (f"create/s {CLIENTS} clients", f"{CLIENTS} clients")):
        print(
            f"  creation > 50,000/s:        {big[key]:8.0f} /s  {verdict(big[key], 50_000, False)}  (no fsync, {how})"
        )
    print(f"  peak memory < 1.5 GB:       {big['peak MB']:8.0f} MB  {verdict(big['peak MB'], 1536, True)}")
    print(
        f"\nexplain of the indexed query: index {big['explain']['Index']}, scans {big['explain']['Ranges'][0]['Text']!r}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--sizes", default="100000,1000000")
    parser.add_argument("--moto-size", type=int, default=100_000)
    parser.add_argument("--samples", type=int, default=15)
    parser.add_argument("--child", choices=["gluecat", "moto"], help=argparse.SUPPRESS)
    parser.add_argument("--root", help=argparse.SUPPRESS)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    if args.child == "gluecat":
        print(json.dumps(run_gluecat(sizes[0], args.samples, args.root), default=str))
        return
    if args.child == "moto":
        print(json.dumps(run_moto(sizes[0], args.samples), default=str))
        return
    # Every warehouse of the run is deleted together at the end: deleting one run's files before the
    # next run would slow that run's file creation (see create_us).
    with tempfile.TemporaryDirectory() as root:
        before = create_us(f"{root}/probe-before")
        results = []
        for size in sizes:
            print(f"gluecat, {size:,} partitions ...", flush=True)
            results.append(in_subprocess("gluecat", size, args.samples, root))
        print(f"moto, {args.moto_size:,} partitions ...", flush=True)
        peer = in_subprocess("moto", args.moto_size, args.samples, root)
        after = create_us(f"{root}/probe-after")
    report(results, peer, before, after)


if __name__ == "__main__":
    main()
