"""Hive Metastore endpoint throughput: gluecat next to the real Hive Metastore 2.3.10, in one run.

    python bench/hms.py [--seconds 5] [--partitions 1000]

The same table (with 1,000 partitions) is created in both; then get_table and get_partitions (all
1,000) are called for a fixed time by 1 and by 16 concurrent clients, each a process of its own with
its own connection.
gluecat is reached as clients reach it: Thrift binary over HTTP with Basic authentication; the real
metastore by its own transport, Thrift binary over TCP. Prints requests/s and p50/p99 latency.
Target: at least the real metastore's throughput on get_table, 3x its speed on get_partitions.
"""

from __future__ import annotations

import argparse
import gc
import multiprocessing
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
            rows = []
            for cache_mb in (256, 0):
                port = free_port()
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
                    for name, call in calls.items():
                        for clients in (1, 16):
                            ours = drive(lambda url=url: gluecat_client(url), call, clients, args.seconds)
                            theirs = drive(reference.client, call, clients, args.seconds)
                            label = name if cache_mb else f"{name}, no reply cache"
                            rows.append((label, clients, ours, theirs))
                finally:
                    proc.terminate()
                    proc.wait(timeout=20)
    print(
        f"\n{'call':42}{'clients':>8}{'gluecat req/s':>15}{'p50 ms':>9}{'p99 ms':>9}{'HMS req/s':>12}{'p50 ms':>9}{'p99 ms':>9}{'ratio':>8}"
    )
    for name, clients, ours, theirs in rows:
        print(
            f"{name:42}{clients:>8}{ours['rps']:>15.0f}{ours['p50']:>9.2f}{ours['p99']:>9.2f}"
            f"{theirs['rps']:>12.0f}{theirs['p50']:>9.2f}{theirs['p99']:>9.2f}{ours['rps'] / theirs['rps']:>7.2f}x"
        )
    print("\ntargets: get_table throughput >= 1x the real metastore's; get_partitions >= 3x")
    print(
        "(gluecat reuses encoded replies while the warehouse is unchanged; the no-cache rows encode every reply)"
    )


if __name__ == "__main__":
    main()
