"""Latency of the Glue table calls with many tables in one database: gluecat next to moto's mock.

    PYTHONPATH=python python bench/tables.py [--tables 10000] [--samples 200]

Fills one database with N tables (one commit each, so the warehouse also has N commits), then times
get_table, get_tables (one page of 100), create_table and update_table, and the time to open the
warehouse (``Catalog(w)`` and its first get_table). The same calls run against moto's in-process mock
in the same run. Targets: get_table < 2 ms, create/update < 20 ms, open < 1 s.
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from typing import Any

import boto3  # type: ignore[import-untyped]
import moto

from gluecat import Catalog

DATABASE = "bench"
TARGETS_MS = {"get_table": 2.0, "create_table": 20.0, "update_table": 20.0, "open warehouse": 1000.0}


def table_input(name: str, description: str = "v1") -> dict[str, Any]:
    return {
        "Name": name,
        "Description": description,
        "TableType": "EXTERNAL_TABLE",
        "Parameters": {"classification": "parquet"},
        "StorageDescriptor": {
            "Columns": [{"Name": f"c{i}", "Type": "string"} for i in range(8)],
            "Location": f"s3://bucket/{name}/",
            "InputFormat": "org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat",
            "OutputFormat": "org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat",
            "SerdeInfo": {
                "SerializationLibrary": "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe"
            },
        },
        "PartitionKeys": [{"Name": "dt", "Type": "string"}],
    }


def timed(call: Callable[..., Any], **kwargs: Any) -> float:
    start = time.perf_counter()
    call(**kwargs)
    return (time.perf_counter() - start) * 1000


def summary(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, int(len(ordered) * 0.9))]


def fill(client: Any, tables: int, label: str) -> None:
    client.create_database(DatabaseInput={"Name": DATABASE})
    start = time.perf_counter()
    for i in range(tables):
        client.create_table(DatabaseName=DATABASE, TableInput=table_input(f"t{i:06d}"))
        if (i + 1) % 2000 == 0:
            print(f"  {label}: {i + 1} tables ({time.perf_counter() - start:.0f} s)", flush=True)


def measure(client: Any, tables: int, samples: int, rng: random.Random) -> dict[str, list[float]]:
    """The calls' latencies in ms; every sample is a different table (or page) chosen at random."""
    names = [f"t{i:06d}" for i in range(tables)]
    out: dict[str, list[float]] = {}
    out["get_table"] = [
        timed(client.get_table, DatabaseName=DATABASE, Name=rng.choice(names)) for _ in range(samples)
    ]
    # One page of 100 names matched by an Expression ("t0042.*"): moto has no paging (it returns every
    # table), so this is the page both can serve; gluecat's NextToken paging is timed separately.
    out["get_tables (100, Expression)"] = [
        timed(
            client.get_tables,
            DatabaseName=DATABASE,
            Expression=f"t{rng.randrange(max(1, tables // 100)):04d}.*",
            MaxResults=100,
        )
        for _ in range(samples)
    ]
    if isinstance(client, Catalog):
        tokens = page_tokens(client)
        out["get_tables (100, NextToken)"] = [
            timed(client.get_tables, DatabaseName=DATABASE, MaxResults=100, NextToken=rng.choice(tokens))
            for _ in range(samples)
        ]
    inputs = [table_input(f"new{i:06d}") for i in range(samples)]
    out["create_table"] = [timed(client.create_table, DatabaseName=DATABASE, TableInput=t) for t in inputs]
    inputs = [table_input(rng.choice(names), f"u{i}") for i in range(samples)]
    out["update_table"] = [timed(client.update_table, DatabaseName=DATABASE, TableInput=t) for t in inputs]
    return out


def page_tokens(catalog: Catalog) -> list[str]:
    tokens = []
    page = catalog.get_tables(DatabaseName=DATABASE, MaxResults=100)
    while "NextToken" in page:
        tokens.append(page["NextToken"])
        page = catalog.get_tables(DatabaseName=DATABASE, MaxResults=100, NextToken=page["NextToken"])
    return tokens


def open_times(warehouse: str, tables: int, repeats: int, rng: random.Random) -> list[float]:
    def open_and_read() -> None:
        Catalog(warehouse).get_table(DatabaseName=DATABASE, Name=f"t{rng.randrange(tables):06d}")

    return [timed(open_and_read) for _ in range(repeats)]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--tables", type=int, default=10_000)
    parser.add_argument("--samples", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)

    with tempfile.TemporaryDirectory(prefix="gluecat-bench-") as tmp:
        warehouse = f"{tmp}/warehouse"
        print(f"filling gluecat ({args.tables} tables, one commit each) ...", flush=True)
        catalog = Catalog(warehouse)
        fill(catalog, args.tables, "gluecat")
        commits = catalog.store.latest().version
        opened = open_times(warehouse, args.tables, 5, rng)
        g = measure(catalog, args.tables, args.samples, rng)
        g["open warehouse"] = opened

    print(f"filling moto ({args.tables} tables) ...", flush=True)
    with moto.mock_aws():
        client = boto3.client("glue", region_name="us-east-1")
        fill(client, args.tables, "moto")
        m = measure(client, args.tables, args.samples, rng)

    print()
    print(
        f"{args.tables} tables in one database, {args.samples} samples per call; open after {commits} commits"
    )
    print(f"{'call':<30}{'gluecat p50':>12}{'p90':>10}{'moto p50':>11}{'p90':>10}{'ratio p50':>11}  target")
    for call, samples in g.items():
        gp50, gp90 = summary(samples)
        target = TARGETS_MS.get(call)
        verdict = "" if target is None else (f"< {target:g} ms " + ("met" if gp50 < target else "MISSED"))
        if call in m:
            mp50, mp90 = summary(m[call])
            print(
                f"{call:<30}{gp50:>10.2f}ms{gp90:>8.2f}ms{mp50:>9.2f}ms{mp90:>8.2f}ms{gp50 / mp50:>10.2f}x  {verdict}"
            )
        else:
            print(f"{call:<30}{gp50:>10.2f}ms{gp90:>8.2f}ms{'n/a':>11}{'':>9}{'':>11}  {verdict}")


if __name__ == "__main__":
    main()
