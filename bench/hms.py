"""Hive Metastore endpoint throughput: gluecat next to the real Hive Metastore 2.3.10, in one run.

    python bench/hms.py [--seconds 5] [--partitions 1000]

The same table (with 1,000 partitions) is created in both; then get_table and get_partitions (all
1,000) are called for a fixed time by 1 and by 16 concurrent clients, each a process of its own with
its own connection.
gluecat is reached both ways clients reach it: Thrift binary over HTTP with Basic authentication, and
Thrift binary over TCP (``--thrift-port``, what stock Hive clients speak); the real metastore by its
own transport, Thrift binary over TCP. Prints requests/s, p50/p99 latency and the server process's
CPU time per call (on 2 cores, 16 client processes compete with the server for CPU, so the CPU per
call says more about the server than the throughput does).
Target: at least the real metastore's throughput on get_table, 3x its speed on get_partitions.
"""

from __future__ import annotations

import argparse
import functools
import gc
import multiprocessing
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from gluecat import Catalog
from gluecat.hms.gen.hive_metastore import ttypes
from gluecat.hms.reference import ReferenceMetastore, free_port
from gluecat.serving import users

PASSWORD = "bench-password"
PARQUET_SERDE = "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe"


def gluecat_client(url: str) -> Any:
    import base64

    from thrift.protocol import TBinaryProtocol
    from thrift.transport import THttpClient, TTransport

    from gluecat.hms.gen.hive_metastore import ThriftHiveMetastore

    transport = THttpClient.THttpClient(url)
    transport.setCustomHeaders(
        {"Authorization": "Basic " + base64.b64encode(f"bench:{PASSWORD}".encode()).decode()}
    )
    # Buffered, as the reference client's transport is: Thrift's C decoder only reads from a buffered
    # transport, and a bare THttpClient would make this client decode in pure Python.
    return ThriftHiveMetastore.Client(
        TBinaryProtocol.TBinaryProtocolAccelerated(TTransport.TBufferedTransport(transport))
    )


def tcp_client(port: int) -> Any:
    from thrift.protocol import TBinaryProtocol
    from thrift.transport import TSocket, TTransport

    from gluecat.hms.gen.hive_metastore import ThriftHiveMetastore

    transport = TTransport.TBufferedTransport(TSocket.TSocket("127.0.0.1", port))
    transport.open()
    return ThriftHiveMetastore.Client(TBinaryProtocol.TBinaryProtocolAccelerated(transport))


def cpu_seconds(pid: int) -> float:
    """User and system CPU time a process has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def measured(
    pid: int, make_client: Callable[[], Any], call: Callable[[Any], Any], clients: int, seconds: float
) -> dict[str, float]:
    """``drive``'s figures, with the CPU milliseconds server process ``pid`` spent per call meanwhile."""
    before = cpu_seconds(pid)
    figures = drive(make_client, call, clients, seconds)
    figures["cpu_ms"] = (cpu_seconds(pid) - before) * 1000 / max(1.0, figures["rps"] * seconds)
    return figures


def fill(glue: Catalog, hms: Any, root: str, n: int) -> None:
    columns = [("id", "bigint"), ("amount", "double"), ("note", "string")]
    glue.create_database(DatabaseInput={"Name": "bench"})
    hms.create_database(
        ttypes.Database(name="bench", description="", locationUri=f"{root}/bench.db", parameters={})
    )

    def hive_sd(location: str) -> ttypes.StorageDescriptor:
        return ttypes.StorageDescriptor(
            cols=[ttypes.FieldSchema(c, t, None) for c, t in columns],
            location=location,
            inputFormat="org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat",
            outputFormat="org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat",
            compressed=False,
            numBuckets=-1,
            serdeInfo=ttypes.SerDeInfo(None, PARQUET_SERDE, {}),
            bucketCols=[],
            sortCols=[],
            parameters={},
        )

    def glue_sd(location: str) -> dict[str, Any]:
        return {
            "Columns": [{"Name": c, "Type": t} for c, t in columns],
            "Location": location,
            "InputFormat": "org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat",
            "OutputFormat": "org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat",
            "SerdeInfo": {"SerializationLibrary": PARQUET_SERDE},
        }

    location = f"{root}/bench.db/events"
    glue.create_table(
        DatabaseName="bench",
        TableInput={
            "Name": "events",
            "TableType": "EXTERNAL_TABLE",
            "Parameters": {"EXTERNAL": "TRUE"},
            "StorageDescriptor": glue_sd(location),
            "PartitionKeys": [{"Name": "dt", "Type": "string"}],
        },
    )
    hms.create_table(
        ttypes.Table(
            tableName="events",
            dbName="bench",
            owner="bench",
            createTime=0,
            lastAccessTime=0,
            retention=0,
            sd=hive_sd(location),
            partitionKeys=[ttypes.FieldSchema("dt", "string", None)],
            parameters={"EXTERNAL": "TRUE"},
            tableType="EXTERNAL_TABLE",
        )
    )
    days = [f"d{i:05d}" for i in range(n)]
    for i in range(0, n, 100):
        batch = days[i : i + 100]
        glue.batch_create_partition(
            DatabaseName="bench",
            TableName="events",
            PartitionInputList=[
                {"Values": [d], "StorageDescriptor": glue_sd(f"{location}/dt={d}")} for d in batch
            ],
        )
        hms.add_partitions(
            [
                ttypes.Partition(
                    values=[d],
                    dbName="bench",
                    tableName="events",
                    createTime=0,
                    lastAccessTime=0,
                    sd=hive_sd(f"{location}/dt={d}"),
                    parameters={},
                )
                for d in batch
            ]
        )


def drive(
    make_client: Callable[[], Any], call: Callable[[Any], Any], clients: int, seconds: float
) -> dict[str, float]:
    """Each client in its own process, as independent metastore clients are: decoding a thousand Thrift
    partitions costs a Python client about 10 ms, so client threads sharing one interpreter lock would
    measure the harness, not the server."""
    context = multiprocessing.get_context("fork")  # the clients share the parent's setup, nothing pickled
    start_line = context.Barrier(clients)
    results: Any = context.Queue()

    def worker() -> None:
        # A forked client inherits the harness's heap (gluecat, pyarrow, sqlglot, the Thrift classes):
        # frozen, its collections walk only what a client process of its own would hold. Unfrozen, a
        # full collection walked it every six get_partitions calls, for about 45 ms each.
        gc.freeze()
        c = make_client()
        call(c)  # connect and warm up
        start_line.wait()  # the clock starts once every client has connected and made a first call
        stop = time.monotonic() + seconds  # CLOCK_MONOTONIC is one clock for every process
        latencies = []
        while time.monotonic() < stop:
            t = time.perf_counter()
            call(c)
            latencies.append((time.perf_counter() - t) * 1000)
        c._iprot.trans.close()
        results.put(latencies)

    procs = [context.Process(target=worker) for _ in range(clients)]
    for p in procs:
        p.start()
    every = sorted(x for _ in procs for x in results.get(timeout=seconds + 120))
    for p in procs:
        p.join()
    return {
        "rps": len(every) / seconds,
        "p50": statistics.median(every),
        "p99": every[min(len(every) - 1, int(len(every) * 0.99))],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--partitions", type=int, default=1000)
    args = parser.parse_args()
    calls = {
        "get_table": lambda c: c.get_table("bench", "events"),
        f"get_partitions ({args.partitions})": lambda c: c.get_partitions("bench", "events", -1),
    }
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        users_file = folder / "users.json"
        users.add(users_file, "bench", PASSWORD)
        with ReferenceMetastore(folder / "hms", heap="2g") as reference:
            hms = reference.client()
            glue = Catalog(str(folder / "warehouse"))
            fill(glue, hms, f"file:{folder}/data", args.partitions)
            hms._iprot.trans.close()
            # gluecat serves from its own process, as the real metastore does from its JVM (in one
            # process the server and the 16 client threads would share one interpreter lock).
            # The JVM compiles its hot paths over the first thousands of calls: warm it up, unmeasured,
            # so its JIT's work is not counted as the calls' CPU time.
            for call in calls.values():
                drive(reference.client, call, 4, args.seconds)
            rows = []
            reference_pid = reference.pid
            theirs_by_run: dict[tuple[str, int], dict[str, float]] = {}
            for cache_mb in (256, 0):
                port, thrift_port = free_port(), free_port()
                proc = subprocess.Popen(
                    [
                        sys.executable,
                        "-m",
                        "gluecat",
                        "serve",
                        "--warehouse",
                        str(folder / "warehouse"),
                        "--users",
                        str(users_file),
                        "--port",
                        str(port),
                        "--thrift-port",
                        str(thrift_port),
                        "--insecure-http",
                        "--reply-cache-mb",
                        str(cache_mb),
                    ],
                    stdout=subprocess.PIPE,
                    stderr=subprocess.DEVNULL,
                )
                try:
                    assert proc.stdout is not None and b"endpoint on" in proc.stdout.readline()
                    url = f"http://127.0.0.1:{port}/"
                    transports: dict[str, Callable[[], Any]] = {
                        "HTTP": functools.partial(gluecat_client, url),
                        "TCP": functools.partial(tcp_client, thrift_port),
                    }
                    for name, call in calls.items():
                        for clients in (1, 16):
                            if (name, clients) not in theirs_by_run:
                                theirs_by_run[name, clients] = measured(
                                    reference_pid, reference.client, call, clients, args.seconds
                                )
                            theirs = theirs_by_run[name, clients]
                            for transport, make in transports.items():
                                ours = measured(proc.pid, make, call, clients, args.seconds)
                                label = f"{name} {transport}" + ("" if cache_mb else ", no reply cache")
                                rows.append((label, clients, ours, theirs))
                finally:
                    proc.terminate()
                    proc.wait(timeout=20)
    print(
        f"\n{'call':46}{'clients':>8}{'gluecat req/s':>14}{'p50 ms':>8}{'p99 ms':>8}{'CPU ms':>8}"
        f"{'HMS req/s':>11}{'p50 ms':>8}{'p99 ms':>8}{'CPU ms':>8}{'ratio':>7}{'CPU ratio':>10}"
    )
    for name, clients, ours, theirs in rows:
        print(
            f"{name:46}{clients:>8}{ours['rps']:>14.0f}{ours['p50']:>8.2f}{ours['p99']:>8.2f}{ours['cpu_ms']:>8.2f}"
            f"{theirs['rps']:>11.0f}{theirs['p50']:>8.2f}{theirs['p99']:>8.2f}{theirs['cpu_ms']:>8.2f}"
            f"{ours['rps'] / theirs['rps']:>6.2f}x{theirs['cpu_ms'] / max(ours['cpu_ms'], 1e-9):>9.2f}x"
        )
    print("\ntargets: get_table throughput >= 1x the real metastore's; get_partitions >= 3x")
    print(
        "(gluecat reuses encoded replies while the warehouse is unchanged; the no-cache rows encode every reply;"
        "\n CPU ms: the server process's CPU time per call; CPU ratio: the real metastore's over gluecat's)"
    )


if __name__ == "__main__":
    main()
