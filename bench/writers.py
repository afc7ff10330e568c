"""Writers that add up: what N writer processes commit together, against one alone, in the same run.

    python bench/writers.py [--seconds 8] [--only local|s3|delta|iceberg] [--latency 0.02]

- local: a warehouse in a folder (fsync on); each writer adds partitions in batches of 100 with
  BatchCreatePartition. One writer on one table; two writers on two tables of the warehouse; two on one
  table. Partitions a second, and each case's ratio to one writer.
- s3: a warehouse on S3 (versitygw, tests/object_stores) through a proxy that adds ``--latency`` to every request
  (20 ms, about what S3 takes: without it a local server answers in a millisecond and the machine's
  cores, not the design, set the limit). Each commit adds one partition (CreatePartition). One writer;
  eight writers on eight tables; two, and eight, on one table. Commits a second, the ratio to one
  writer, and object-store requests per commit (counted by the proxy).
- s3 also runs boto3 clients, each a process of its own, of one ``gluecat serve`` on the S3 warehouse
  (one client; eight), creating partitions in one table.
- s3 also runs writers of table definitions (UpdateTable: decided by the root log, with a marker in the
  table's log): one writer; four on four tables; four on one table.
- s3 also runs Iceberg writers: pyiceberg's GlueCatalog with a gluecat Catalog as its Glue client,
  appending one row per commit to Iceberg tables whose files are on the same S3 through the same
  proxy. An Iceberg commit writes its files, then swaps the table's metadata pointer with UpdateTable:
  one writer; four on four tables; four on one table (pyiceberg retries a refused commit itself).
- Both also run their one-table case as threads of one process (a catalog server's writers): those share
  a commit when they write at once (the in-process group commit), which processes cannot.
- delta: the same-run peer, delta-rs (``deltalake``) appending one row per commit to a Delta table on
  the same S3 server through the same proxy: one writer and eight.

Every writer is a process of its own. They begin at one time, and each counts the commits it made in
one window of ``--seconds`` after a warm-up, the same window for all: a writer that keeps losing counts
what it made in it, however long its call goes on (the last column: how evenly the writers shared the
commits). Ratios, not absolute rates, are what compare across machines.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

WARMUP = 1.0
KEYS = [{"Name": "k", "Type": "string"}]


def worker(args: argparse.Namespace) -> None:
    """One writer: commit through the case's window, then print what was committed in it (JSON)."""
    from gluecat import Catalog

    glue = Catalog(args.warehouse)
    table, batch = args.table, args.batch
    if args.op == "iceberg":
        timed(args, iceberg_appends(glue, args.warehouse, table, args.name), 1)

    def commit(n: int) -> bool:
        if args.op == "update":
            described = {"Name": table, "PartitionKeys": KEYS, "Description": f"{args.name}-{n}"}
            glue.update_table(DatabaseName="db", TableInput=described)
            return True
        values = [f"{args.name}-{n}-{i}" for i in range(batch)]
        if batch == 1:
            glue.create_partition(DatabaseName="db", TableName=table, PartitionInput={"Values": values})
        else:
            out = glue.batch_create_partition(
                DatabaseName="db", TableName=table, PartitionInputList=[{"Values": [v]} for v in values]
            )
            assert out["Errors"] == [], out["Errors"]
        return True

    timed(args, commit, batch, args.threads)


def iceberg_catalog(glue: Any, warehouse: str) -> Any:
    """pyiceberg's GlueCatalog with ``glue`` (a gluecat Catalog) as its Glue client; the Iceberg files
    go beside the gluecat warehouse, on the S3 the environment names."""
    from pyiceberg.catalog.glue import GlueCatalog

    return GlueCatalog(
        "lake",
        client=glue,
        **{
            "warehouse": f"{warehouse}-iceberg",
            "s3.endpoint": os.environ["AWS_ENDPOINT_URL_S3"],
            "s3.region": os.environ.get("AWS_REGION", "us-east-1"),
            "s3.access-key-id": os.environ["AWS_ACCESS_KEY_ID"],
            "s3.secret-access-key": os.environ["AWS_SECRET_ACCESS_KEY"],
        },
    )


def iceberg_appends(glue: Any, warehouse: str, table: str, name: str) -> Callable[[int], bool]:
    """An Iceberg writer: one row appended per commit, through one table handle for the whole run."""
    import pyarrow as pa
    from pyiceberg.exceptions import CommitFailedException

    iceberg = iceberg_catalog(glue, warehouse)
    handle = [iceberg.load_table(f"db.{table}")]

    def commit(n: int) -> bool:
        try:
            handle[0].append(pa.table({"w": [name], "n": pa.array([n], pa.int64())}))
        except CommitFailedException:  # refused again after pyiceberg's own retries: counted, not fatal
            handle[0] = iceberg.load_table(f"db.{table}")
            return False
        return True

    return commit


def client_worker(args: argparse.Namespace) -> None:
    """One boto3 client of a `gluecat serve`: create a partition per call through the case's window."""
    import boto3

    glue = boto3.client(
        "glue",
        endpoint_url=args.endpoint,
        region_name="us-east-1",
        aws_access_key_id=args.key_id,
        aws_secret_access_key=args.secret,
    )

    def commit(n: int) -> bool:
        values = [f"{args.name}-{n}"]
        glue.create_partition(DatabaseName="db", TableName="t0", PartitionInput={"Values": values})
        return True

    timed(args, commit, 1)


def delta_worker(args: argparse.Namespace) -> None:
    """One delta-rs writer: append one row per commit through the case's window."""
    import pyarrow as pa
    from deltalake import DeltaTable, write_deltalake

    options = json.loads(args.options)
    # One table handle kept for the whole run, as gluecat's writers keep theirs: each commit then
    # reads only the log entries since the handle's version, not the whole table again.
    target: list[Any] = [args.warehouse]

    def commit(n: int) -> bool:
        if not isinstance(target[0], DeltaTable):
            with contextlib.suppress(Exception):  # no table yet: the first commit makes it
                target[0] = DeltaTable(args.warehouse, storage_options=options)
        try:
            write_deltalake(
                target[0],
                pa.table({"w": [args.name], "n": [n]}),
                mode="append",
                storage_options=None if isinstance(target[0], DeltaTable) else options,
            )
        except Exception as e:  # delta-rs gives up after 15 lost races: counted, not fatal
            if "Failed to commit" not in str(e):
                raise
            return False
        return True

    if args.seconds == 0:  # the table's first commit, before the writers race
        commit(0)
        return
    timed(args, commit, 1)


def timed(args: argparse.Namespace, commit: Callable[[int], bool], batch: int, threads: int = 1) -> None:
    """Call ``commit`` (with the call's number; False: it gave up) over and over, on each of ``threads``
    threads, from ``args.start``, a time shared by every writer of the case, and count the calls that
    end in the window after the warm-up. At the window's end print the counts (JSON; ``each``: every
    thread's commits) and exit, whatever call is still under way: a writer that keeps losing counts
    nothing, instead of reporting a window of its own, after the others have finished."""
    opens, closes = args.start + WARMUP, args.start + WARMUP + args.seconds
    each, failed = [0] * threads, [0] * threads
    numbers = itertools.count()
    failures: list[str] = []

    def loop(thread: int) -> None:
        try:
            while True:
                landed = commit(next(numbers))
                if opens <= time.time() < closes:
                    (each if landed else failed)[thread] += 1
        except BaseException:
            failures.append(traceback.format_exc())

    time.sleep(max(0.0, args.start - time.time()))
    for thread in range(threads):
        threading.Thread(target=loop, args=(thread,), daemon=True).start()
    time.sleep(max(0.0, opens - time.time()))
    cpu = time.process_time()
    time.sleep(max(0.0, closes - time.time()))
    commits = sum(each)
    result = {"commits": commits, "failed": sum(failed), "each": each, "partitions": commits * batch}
    print(json.dumps({**result, "seconds": args.seconds, "cpu": time.process_time() - cpu}), flush=True)
    if failures:
        print(failures[0], file=sys.stderr, flush=True)
    os._exit(1 if failures else 0)


def run_writers(commands: list[list[str]], env: dict[str, str]) -> list[dict[str, Any]]:
    # Time for every writer to start Python and import what it needs (they share the machine's cores).
    start = str(time.time() + 1.0 + 0.5 * len(commands))
    procs = [
        subprocess.Popen(
            [*c, "--start", start], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
        )
        for c in commands
    ]
    out = []
    for p in procs:
        stdout, stderr = p.communicate(timeout=600)
        if p.returncode != 0:
            raise SystemExit(f"a writer failed:\n{stderr}")
        out.append(json.loads(stdout.strip().splitlines()[-1]))
    return out


def prepare(warehouse: str, tables: int, env: dict[str, str], op: str = "partitions") -> None:
    command = [sys.executable, __file__, "prepare", "--warehouse", warehouse, "--tables", str(tables)]
    subprocess.run([*command, "--op", op], check=True, env=env)


def prepare_tables(args: argparse.Namespace) -> None:
    """Database db and its tables t0, t1, ...: partitioned by k, or Iceberg tables of (w, n)."""
    from gluecat import Catalog

    glue = Catalog(args.warehouse)
    glue.create_database(DatabaseInput={"Name": "db"})
    if args.op == "iceberg":
        import pyarrow as pa

        iceberg = iceberg_catalog(glue, args.warehouse)
        schema = pa.schema([("w", pa.string()), ("n", pa.int64())])
        for t in range(args.tables):
            iceberg.create_table(f"db.t{t}", schema=schema)
        return
    for t in range(args.tables):
        glue.create_table(DatabaseName="db", TableInput={"Name": f"t{t}", "PartitionKeys": KEYS})


def case(
    warehouse: str,
    writers: int,
    tables: int,
    batch: int,
    seconds: float,
    env: dict[str, str],
    prepared: Any = None,
    threads: int = 1,
    op: str = "partitions",
) -> dict[str, float]:
    prepare(warehouse, tables, env, op)
    if prepared is not None:
        prepared()
    commands = [
        [
            sys.executable,
            __file__,
            "worker",
            "--warehouse",
            warehouse,
            "--table",
            f"t{w % tables}",
            "--name",
            f"w{w}",
            "--batch",
            str(batch),
            "--seconds",
            str(seconds),
            "--threads",
            str(threads),
            "--op",
            op,
        ]
        for w in range(writers)
    ]
    got = run_writers(commands, env)
    return {
        "commits/s": sum(g["commits"] / g["seconds"] for g in got),
        "partitions/s": sum(g["partitions"] / g["seconds"] for g in got),
        "cpu ms/commit": 1000 * sum(g["cpu"] for g in got) / max(1, sum(g["commits"] for g in got)),
        "commits": sum(g["commits"] for g in got),
        "fewest": min(n for g in got for n in g["each"]),
        "most": max(n for g in got for n in g["each"]),
        "gave up": sum(g["failed"] for g in got),
    }


def table(title: str, rows: list[tuple[str, dict[str, float]]], measure: str, *extras: str) -> None:
    base = rows[0][1][measure]
    print(f"\n{title}")
    head = f"| case | {measure} | ratio to one writer | CPU ms/commit |" + "".join(f" {e} |" for e in extras)
    head += " commits of one writer, fewest-most |"
    print(head)
    print("|" + "---|" * (head.count("|") - 1))
    for name, r in rows:
        cpu = r["cpu ms/commit"]
        line = f"| {name} | {r[measure]:,.0f} | {r[measure] / base:.2f}x | {'—' if cpu != cpu else f'{cpu:.1f}'} |"
        line += "".join(f" {r.get(e, float('nan')):.2f} |" for e in extras)
        line += f" {r['fewest']:,.0f}-{r['most']:,.0f} |" if "fewest" in r else " |"
        if r.get("gave up"):
            line += f" ({r['gave up']:.0f} commits gave up)"
        print(line)


def local(seconds: float) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO / "python")}
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, writers, tables, threads in (
            ("1 writer, 1 table", 1, 1, 1),
            ("2 writers, 2 tables", 2, 2, 1),
            ("2 writers, 1 table", 2, 1, 1),
            ("2 threads of one process, 1 table", 1, 1, 2),
        ):
            warehouse = f"{tmp}/{len(rows)}"
            rows.append((name, case(warehouse, writers, tables, 100, seconds, env, threads=threads)))
    table("local folder, fsync on, BatchCreatePartition of 100", rows, "partitions/s")


def s3(seconds: float, latency: float, delta: bool, gluecat: bool, iceberg: bool) -> None:
    from tests.object_stores import servers
    from tests.object_stores.proxy import start_proxy

    # versitygw, a real S3 implementation: moto's server answers a few hundred creates a second and
    # closes every connection, which would be the limit measured.
    with servers.versitygw() as server, start_proxy(server.endpoint, style="s3", latency=latency) as proxy:
        if gluecat:
            rows = []
            for name, writers, tables, threads in (
                ("1 writer, 1 table", 1, 1, 1),
                ("8 writers, 8 tables", 8, 8, 1),
                ("2 writers, 1 table", 2, 1, 1),
                ("8 writers, 1 table", 8, 1, 1),
                ("8 threads of one process, 1 table", 1, 1, 8),
            ):
                bucket = server.new_bucket().through(proxy.endpoint)
                env = {**os.environ, **bucket.env, "PYTHONPATH": str(REPO / "python")}
                warehouse = f"{bucket.url}/wh"
                result = case(warehouse, writers, tables, 1, seconds, env, proxy.reset, threads)
                result["requests/commit"] = proxy.total() / max(1, result["commits"])
                rows.append((name, result))
            table(
                f"S3 (versitygw) through a proxy adding {latency * 1000:.0f} ms a request, CreatePartition",
                rows,
                "commits/s",
                "requests/commit",
            )
            table(
                "S3 (versitygw) through the same proxy, UpdateTable (decided by the root log)",
                four_writers(server, proxy, seconds, "update"),
                "commits/s",
                "requests/commit",
            )
            served(server, proxy, seconds)
        if iceberg:
            iceberg_writers(server, proxy, seconds)
        if delta:
            rows = []
            for name, writers in (("1 writer", 1), ("8 writers", 8)):
                bucket = server.new_bucket().through(proxy.endpoint)
                env = dict(os.environ)
                options = delta_options(bucket)
                uri = f"{bucket.url}/delta"
                commands = [
                    [
                        sys.executable,
                        __file__,
                        "delta",
                        "--warehouse",
                        uri,
                        "--name",
                        f"w{w}",
                        "--seconds",
                        str(seconds),
                        "--options",
                        json.dumps(options),
                    ]
                    for w in range(writers)
                ]
                # The table's first commit, before the writers race.
                subprocess.run(
                    [*commands[0][:-4], "--seconds", "0", "--options", json.dumps(options)],
                    check=True,
                    env=env,
                    capture_output=True,
                )
                proxy.reset()
                got = run_writers(commands, env)
                commits = sum(g["commits"] for g in got)
                rows.append(
                    (
                        name,
                        {
                            "commits/s": sum(g["commits"] / g["seconds"] for g in got),
                            "cpu ms/commit": 1000 * sum(g["cpu"] for g in got) / max(1, commits),
                            "requests/commit": proxy.total() / max(1, commits),
                            "gave up": sum(g["failed"] for g in got),
                        },
                    )
                )
            table(
                "delta-rs on the same S3 through the same proxy, one row per commit",
                rows,
                "commits/s",
                "requests/commit",
            )


def four_writers(server: Any, proxy: Any, seconds: float, op: str) -> list[tuple[str, dict[str, float]]]:
    """The rows of ``op`` by one writer, four on four tables and four on one, each case on a new bucket
    through the proxy, with the requests of a commit and the share of them in the catalog's warehouse."""
    rows = []
    for name, writers, tables in (
        ("1 writer, 1 table", 1, 1),
        ("4 writers, 4 tables", 4, 4),
        ("4 writers, 1 table", 4, 1),
    ):
        bucket = server.new_bucket().through(proxy.endpoint)
        env = {**os.environ, **bucket.env, "PYTHONPATH": str(REPO / "python")}
        result = case(f"{bucket.url}/wh", writers, tables, 1, seconds, env, proxy.reset, op=op)
        commits = max(1, result["commits"])
        result["requests/commit"] = proxy.total() / commits
        catalog = sum(1 for r in proxy.log() if str(r.get("key") or "").startswith("wh/"))
        result["of them gluecat's"] = catalog / commits
        rows.append((name, result))
    return rows


def iceberg_writers(server: Any, proxy: Any, seconds: float) -> None:
    """pyiceberg writers over gluecat Catalogs on the S3 warehouse: each commit is Iceberg files and an
    UpdateTable, so writers of different tables share the root log."""
    table(
        "pyiceberg over a gluecat Catalog, its files on the same S3 through the same proxy, a row a commit",
        four_writers(server, proxy, seconds, "iceberg"),
        "commits/s",
        "requests/commit",
        "of them gluecat's",
    )


def served(server: Any, proxy: Any, seconds: float) -> None:
    """Clients of one `gluecat serve` on the S3 warehouse, each a process of its own with boto3: the
    server's threads share a commit when they write the table at once."""
    from tests.object_stores.servers import free_port, process

    from gluecat.aws import keys

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        users = Path(tmp) / "users.json"
        key_id, secret = keys.add(users, "writer")
        for name, clients in (("1 client", 1), ("8 clients", 8)):
            bucket = server.new_bucket().through(proxy.endpoint)
            env = {**os.environ, **bucket.env, "PYTHONPATH": str(REPO / "python")}
            warehouse = f"{bucket.url}/wh"
            prepare(warehouse, 1, env)
            port = free_port()
            command = [sys.executable, "-m", "gluecat", "serve", "-w", warehouse, "--users", str(users)]
            with process([*command, "--port", str(port), "--insecure-http"], port, "serve", Path(tmp), env):
                proxy.reset()
                endpoint = f"http://127.0.0.1:{port}"
                client = [sys.executable, __file__, "client", "--endpoint", endpoint, "--key-id", key_id]
                got = run_writers(
                    [
                        [*client, "--secret", secret, "--name", f"c{c}", "--seconds", str(seconds)]
                        for c in range(clients)
                    ],
                    env,
                )
            commits = sum(g["commits"] for g in got)
            rows.append(
                (
                    name,
                    {
                        "commits/s": commits / seconds,
                        "cpu ms/commit": float("nan"),  # the clients' CPU, not the server's: not shown (—)
                        "requests/commit": proxy.total() / max(1, commits),
                        "fewest": min(g["commits"] for g in got),
                        "most": max(g["commits"] for g in got),
                    },
                )
            )
    table(
        "boto3 clients of one gluecat serve on the same S3 through the same proxy, CreatePartition on one table",
        rows,
        "commits/s",
        "requests/commit",
    )


def delta_options(bucket: Any) -> dict[str, str]:
    env = bucket.env
    return {
        "AWS_ENDPOINT_URL": env["AWS_ENDPOINT_URL_S3"],
        "AWS_ACCESS_KEY_ID": env["AWS_ACCESS_KEY_ID"],
        "AWS_SECRET_ACCESS_KEY": env["AWS_SECRET_ACCESS_KEY"],
        "AWS_REGION": env.get("AWS_REGION", "us-east-1"),
        "AWS_ALLOW_HTTP": "true",  # delta-rs 1.x commits with S3's conditional writes, no lock table
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = parser.add_subparsers(dest="command")
    w = sub.add_parser("worker")
    w.add_argument("--warehouse", required=True)
    w.add_argument("--table", required=True)
    w.add_argument("--name", required=True)
    w.add_argument("--batch", type=int, default=100)
    w.add_argument("--seconds", type=float, default=8)
    w.add_argument("--threads", type=int, default=1, help="writers in this process, one a thread")
    w.add_argument("--op", choices=["partitions", "update", "iceberg"], default="partitions")
    w.add_argument("--start", type=float, default=0.0, help="when the writers begin (epoch seconds)")
    p = sub.add_parser("prepare")
    p.add_argument("--warehouse", required=True)
    p.add_argument("--tables", type=int, required=True)
    p.add_argument("--op", choices=["partitions", "update", "iceberg"], default="partitions")
    c = sub.add_parser("client")
    c.add_argument("--endpoint", required=True)
    c.add_argument("--key-id", required=True)
    c.add_argument("--secret", required=True)
    c.add_argument("--name", required=True)
    c.add_argument("--seconds", type=float, default=8)
    c.add_argument("--start", type=float, default=0.0, help="when the writers begin (epoch seconds)")
    d = sub.add_parser("delta")
    d.add_argument("--warehouse", required=True)
    d.add_argument("--name", required=True)
    d.add_argument("--seconds", type=float, default=8)
    d.add_argument("--options", required=True)
    d.add_argument("--start", type=float, default=0.0, help="when the writers begin (epoch seconds)")
    parser.add_argument("--seconds", type=float, default=8)
    parser.add_argument("--only", choices=["local", "s3", "delta", "iceberg"])
    parser.add_argument("--latency", type=float, default=0.02)
    args = parser.parse_args()
    if args.command == "worker":
        worker(args)
    elif args.command == "delta":
        delta_worker(args)
    elif args.command == "client":
        client_worker(args)
    elif args.command == "prepare":
        prepare_tables(args)
    else:
        if args.only in (None, "local"):
            local(args.seconds)
        if args.only in (None, "s3", "delta", "iceberg"):
            s3(
                args.seconds,
                args.latency,
                delta=args.only in (None, "delta"),
                gluecat=args.only in (None, "s3"),
                iceberg=args.only in (None, "s3", "iceberg"),
            )


if __name__ == "__main__":
    main()
