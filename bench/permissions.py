"""What Lake Formation permissions cost a request: get_table and get_partitions with 10,000 grants in the
catalog next to the same calls with none, and with the audit log on, in one run.

    python bench/permissions.py [--seconds 10] [--partitions 100] [--grants 10000] [--scratch DIR]

Three warehouses, each served by its own ``gluecat serve`` process, hold the same table (3 columns, one
partition key, ``--partitions`` partitions):

- **none**: Lake Formation's initial state, as every warehouse made before permissions: no grants to
  read, every caller may do everything;
- **10,000 grants**: the defaults closed, ``--grants`` grants (SELECT on 100 other tables for 100
  users each, and on the benchmark's table for 100 of them), and the caller's own SELECT on the table;
- the same warehouse served with ``--audit-log`` (**+ audit log**).

One client (the lean client of bench/aws_endpoint.py: HTTPS, botocore's SigV4, orjson) with a
connection to each server calls them in turn, one request each, for ``--seconds``: whatever else the
machine does falls on every server alike (on this shared machine, timing the servers one after another
moved their ratio by 30% between runs). The table gives each server's requests a second (of the time
spent on its calls), p50 latency and its own CPU ms per call (/proc/PID/stat). The reply cache is on,
as ``gluecat serve`` runs: get_table is then answered from it, the call where a check costs the most in
proportion. Target: with 10,000 grants at most 10% slower than with none.

A second table times the check itself in process (Authorizer.decide of one GetTable, and the index
built once per change of the grants) with none and with the grants.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.certificates import make_certificate

from aws_endpoint import LeanClient, cpu_seconds, start, storage
from gluecat import Catalog, LakeFormation
from gluecat.aws import keys
from gluecat.catalog import grants
from gluecat.catalog.permission_index import Index
from gluecat.hms.reference import free_port
from gluecat.serving.permissions import Authorizer
from scratch import file_system

READER = "reader"


def fill(warehouse: str, partitions: int) -> Catalog:
    glue = Catalog(warehouse)
    glue.create_database(DatabaseInput={"Name": "bench"})
    glue.create_table(
        DatabaseName="bench",
        TableInput={
            "Name": "events",
            "TableType": "EXTERNAL_TABLE",
            "StorageDescriptor": storage("s3://lake/bench/events/"),
            "PartitionKeys": [{"Name": "dt", "Type": "string"}],
        },
    )
    days = [f"d{i:05d}" for i in range(partitions)]
    for i in range(0, partitions, 100):
        glue.batch_create_partition(
            DatabaseName="bench",
            TableName="events",
            PartitionInputList=[
                {"Values": [d], "StorageDescriptor": storage(f"s3://lake/bench/events/dt={d}/")}
                for d in days[i : i + 100]
            ],
        )
    return glue


def close_and_grant(glue: Catalog, count: int) -> int:
    """Close the defaults and make ``count`` grants (at least); the number of grant records."""
    lf = LakeFormation(glue)
    grants.add_admins(glue._ctx, ["admin"])
    settings = lf.get_data_lake_settings()["DataLakeSettings"]
    lf.put_data_lake_settings(
        DataLakeSettings={
            **settings,
            "CreateDatabaseDefaultPermissions": [],
            "CreateTableDefaultPermissions": [],
        }
    )
    everyone = {"DataLakePrincipalIdentifier": "IAM_ALLOWED_PRINCIPALS"}
    lf.revoke_permissions(Principal=everyone, Resource={"Database": {"Name": "bench"}}, Permissions=["ALL"])
    lf.revoke_permissions(
        Principal=everyone,
        Resource={"Table": {"DatabaseName": "bench", "Name": "events"}},
        Permissions=["ALL"],
    )
    glue.create_database(DatabaseInput={"Name": "others"})
    tables = max(1, count // 100 - 1)
    for t in range(tables):
        glue.create_table(DatabaseName="others", TableInput={"Name": f"t{t:04d}"})
    targets = [("others", f"t{t:04d}") for t in range(tables)] + [("bench", "events")]
    entries = [
        {
            "Principal": {
                "DataLakePrincipalIdentifier": grants.user_arn(glue._ctx.catalog_id, f"user{u:03d}")
            },
            "Resource": {"Table": {"DatabaseName": db, "Name": name}},
            "Permissions": ["SELECT"],
        }
        for db, name in targets
        for u in range(100)
    ]
    entries.append(
        {
            "Principal": {"DataLakePrincipalIdentifier": grants.user_arn(glue._ctx.catalog_id, READER)},
            "Resource": {"Table": {"DatabaseName": "bench", "Name": "events"}},
            "Permissions": ["SELECT"],
        }
    )
    for i in range(0, len(entries), 1000):
        batch = [{**e, "Id": str(n)} for n, e in enumerate(entries[i : i + 1000])]
        assert lf.batch_grant_permissions(Entries=batch)["Failures"] == []
    return len(glue.store.latest().root.records(grants.GRANT))


def interleaved(
    clients: dict[str, Any], pids: dict[str, int], call: Callable[[Any], Any], seconds: float
) -> dict[str, dict[str, float]]:
    """Each client's call in turn, one request each, for ``seconds``: latencies, and each server's CPU
    per call."""
    for client in clients.values():
        call(client)  # connect, warm the reply cache
    latencies: dict[str, list[float]] = {name: [] for name in clients}
    before = {name: cpu_seconds(pid) for name, pid in pids.items()}
    stop = time.monotonic() + seconds
    order = list(clients.items())
    turn = 0
    while time.monotonic() < stop:
        turn += 1
        for name, client in (
            order[turn % len(order) :] + order[: turn % len(order)]
        ):  # each goes first in turn
            t = time.perf_counter()
            call(client)
            latencies[name].append((time.perf_counter() - t) * 1000)
    return {
        name: {
            "rps": len(spent) / (sum(spent) / 1000),
            "p50": statistics.median(spent),
            "cpu": (cpu_seconds(pids[name]) - before[name]) * 1000 / len(spent),
        }
        for name, spent in latencies.items()
    }


def in_process(warehouses: dict[str, str]) -> list[tuple[str, float, float]]:
    """Authorizer.decide of one GetTable (µs, median of 20,000), and the index build (ms, best of 5)."""
    out = []
    for name, warehouse in warehouses.items():
        glue = Catalog(warehouse)
        authorizer = Authorizer(glue)
        params = {"DatabaseName": "bench", "Name": "events"}
        authorizer.decide(READER, "glue", "GetTable", params)
        times = []
        for _ in range(20_000):
            t = time.perf_counter()
            decision = authorizer.decide(READER, "glue", "GetTable", params)
            times.append((time.perf_counter() - t) * 1e6)
        assert decision.allowed
        root = glue.store.latest().root
        builds = []
        for _ in range(5):
            t = time.perf_counter()
            Index.of(root)
            builds.append((time.perf_counter() - t) * 1000)
        out.append((name, statistics.median(times), min(builds)))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--partitions", type=int, default=100)
    parser.add_argument("--grants", type=int, default=10_000)
    parser.add_argument("--scratch", default=".")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=args.scratch, prefix=".bench-permissions-") as tmp:
        folder = Path(tmp)
        print(f"warehouses in {tmp} ({file_system(tmp)})", file=sys.stderr, flush=True)
        cert, key = (str(p) for p in make_certificate(folder))
        users_file = folder / "users.json"
        key_id, secret = keys.add(users_file, READER)
        keys.add(users_file, "admin")
        none, granted = str(folder / "none"), str(folder / "granted")
        fill(none, args.partitions)
        records = close_and_grant(fill(granted, args.partitions), args.grants)
        print(f"{records:,} grant records in the granted warehouse", file=sys.stderr, flush=True)
        servers: dict[str, tuple[subprocess.Popen[str], int]] = {}
        for name, warehouse, extra in (
            ("none", none, []),
            (f"{records:,} grants", granted, []),
            ("+ audit log", granted, ["--audit-log", str(folder / "audit.jsonl")]),
        ):
            port = free_port()
            command = [
                sys.executable,
                "-m",
                "gluecat",
                "serve",
                "--warehouse",
                warehouse,
                "--users",
                str(users_file),
            ]
            command += ["--port", str(port), "--tls-cert", cert, "--tls-key", key, *extra]
            servers[name] = (start(command, "with an access key"), port)
        calls: dict[str, Callable[[Any], Any]] = {
            "get_table": lambda c: c.get_table(DatabaseName="bench", Name="events"),
            f"get_partitions ({args.partitions})": lambda c: c.get_partitions(
                DatabaseName="bench", TableName="events", MaxResults=1000
            ),
        }
        rows = []
        try:
            clients = {
                name: LeanClient(f"https://127.0.0.1:{port}", key_id, secret, cert)
                for name, (_, port) in servers.items()
            }
            pids = {name: proc.pid for name, (proc, _) in servers.items()}
            for call_name, call in calls.items():
                rows.append((call_name, interleaved(clients, pids, call, args.seconds)))
                print(f"  {call_name}: {rows[-1][1]}", file=sys.stderr, flush=True)
        finally:
            for proc, _ in servers.values():
                proc.terminate()
                proc.communicate(timeout=30)
        checks = in_process({"none": none, f"{records:,} grants": granted})
    report(rows, checks, args)


def report(
    rows: list[tuple[str, dict[str, dict[str, float]]]], checks: list[tuple[str, float, float]], args: Any
) -> None:
    import os

    print(
        f"\n{os.cpu_count()} cores (load average {os.getloadavg()[0]:.1f} at the end); one lean client calling "
        f"the servers in turn for {args.seconds:g} s a call.\n"
    )
    names = list(rows[0][1])
    print(
        "| call | "
        + " | ".join(f"{n}: req/s, p50 ms, server CPU ms" for n in names)
        + " | grants / none | audit / grants |"
    )
    print("|---|" + "---|" * len(names) + "---|---|")
    for call, got in rows:
        cells = [f"{got[n]['rps']:,.0f}, {got[n]['p50']:.2f}, {got[n]['cpu']:.3f}" for n in names]
        base, granted, audited = (got[n] for n in names)
        print(
            f"| {call} | "
            + " | ".join(cells)
            + f" | {granted['rps'] / base['rps']:.2f}x req/s, {granted['cpu'] / base['cpu']:.2f}x CPU"
            + f" | {audited['rps'] / granted['rps']:.2f}x req/s, {audited['cpu'] / granted['cpu']:.2f}x CPU |"
        )
    print("\nThe check in process: Authorizer.decide of a GetTable, and building the index of the grants.\n")
    print("| warehouse | decide µs (median) | index build ms (best of 5) |")
    print("|---|---|---|")
    for name, decide, build in checks:
        print(f"| {name} | {decide:.1f} | {build:.2f} |")


if __name__ == "__main__":
    main()
