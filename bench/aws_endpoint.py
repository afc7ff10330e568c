"""The AWS Glue endpoint's throughput next to moto's server mode, and next to the in-process API, in one run.

    python bench/aws_endpoint.py [--seconds 5] [--partitions 1000] [--clients 1,16] [--scratch DIR]

Both servers get the same table (3 columns, one partition key, 1,000 partitions) through boto3, and
then the same boto3 calls for a fixed time from 1 and from 16 client processes, each with its own
client and connection: get_table, get_partitions of all 1,000 partitions (one page), and
batch_create_partition of 100 new partitions into a second table. Everything travels over HTTPS
with Signature V4: gluecat as ``gluecat serve`` runs it, moto as ``moto_server`` runs it (its Flask
app under werkzeug, threaded) with the same certificate, each server in its own process. The
in-process API (gluecat.Catalog opened on the served warehouse in each client process) runs the
same calls too. Prints requests/s and p50/p99 latency. The served warehouse goes in a temporary folder
under ``--scratch`` (default: the current folder), for the reason bench/scratch.py gives; the file
system used is printed.

boto3 is the main client. A client's own CPU per call bounds what a row can reach whatever the server:
the "client ceiling" is min(clients, cores) x 1 / that CPU time, what a server of zero cost would allow.
botocore's parser is most of it for a large reply, so the second table runs the same requests from a
lean client: the same HTTPS connection and Signature V4 (botocore's SigV4Auth) but the body sent and the
reply read with orjson and http.client, without botocore's model (timestamps stay numbers), against
both servers.
Targets: at least 5x moto's throughput on each call; a 1,000-partition get_partitions over the wire
within 2x of the in-process API.
"""

from __future__ import annotations

import argparse
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

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.certificates import make_certificate

from gluecat.hms.reference import free_port
from scratch import file_system

REGION = "us-east-1"
COLUMNS = [("id", "bigint"), ("amount", "double"), ("note", "string")]
PARQUET = "org.apache.hadoop.hive.ql.io.parquet"

MOTO = """
import sys
from werkzeug.serving import make_server
from moto.moto_server.threaded_moto_server import MotoRequestHandler
from moto.server import DomainDispatcherApplication, create_backend_app

port, cert, key = int(sys.argv[1]), sys.argv[2], sys.argv[3]
app = DomainDispatcherApplication(create_backend_app)
server = make_server("127.0.0.1", port, app, True, request_handler=MotoRequestHandler, ssl_context=(cert, key))
print("ready", flush=True)
server.serve_forever()
"""


def storage(location: str) -> dict[str, Any]:
    return {
        "Columns": [{"Name": c, "Type": t} for c, t in COLUMNS],
        "Location": location,
        "InputFormat": f"{PARQUET}.MapredParquetInputFormat",
        "OutputFormat": f"{PARQUET}.MapredParquetOutputFormat",
        "SerdeInfo": {"SerializationLibrary": f"{PARQUET}.serde.ParquetHiveSerDe"},
    }


def fill(glue: Any, partitions: int) -> None:
    glue.create_database(DatabaseInput={"Name": "bench"})
    for table in ("events", "writes", "local_writes"):
        glue.create_table(
            DatabaseName="bench",
            TableInput={
                "Name": table,
                "TableType": "EXTERNAL_TABLE",
                "Parameters": {"classification": "parquet"},
                "StorageDescriptor": storage(f"s3://lake/bench/{table}/"),
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


def boto3_client(url: str, key_id: str, secret: str, ca_bundle: str) -> Any:
    import boto3
    from botocore.config import Config

    return boto3.client(
        "glue",
        endpoint_url=url,
        region_name=REGION,
        aws_access_key_id=key_id,
        aws_secret_access_key=secret,
        verify=ca_bundle,
        config=Config(retries={"max_attempts": 1}),
    )


class LeanClient:
    """Glue's JSON 1.1 protocol by hand: ``client.get_table(**params)`` posts ``AWSGlue.GetTable`` with
    the parameters as orjson's JSON, signed by botocore's SigV4Auth, over one kept-alive HTTPS
    connection (http.client writes headers and body in one piece, so Nagle's algorithm does not wait),
    and answers the reply's JSON decoded by orjson, or raises on an error reply."""

    def __init__(self, url: str, key_id: str, secret: str, ca_bundle: str) -> None:
        import http.client
        import socket
        import ssl
        from urllib.parse import urlsplit

        from botocore.auth import SigV4Auth
        from botocore.credentials import Credentials

        self.url = url + "/"
        where = urlsplit(url)
        context = ssl.create_default_context(cafile=ca_bundle)
        self.connection = http.client.HTTPSConnection(where.hostname or "", where.port, context=context)
        self.connection.connect()
        self.connection.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.signer = SigV4Auth(Credentials(key_id, secret), "glue", REGION)

    def __getattr__(self, method: str) -> Callable[..., Any]:
        import orjson
        from botocore.awsrequest import AWSRequest

        target = "AWSGlue." + "".join(part.capitalize() for part in method.split("_"))

        def call(**params: Any) -> Any:
            body = orjson.dumps(params)
            request = AWSRequest(
                method="POST",
                url=self.url,
                data=body,
                headers={"Content-Type": "application/x-amz-json-1.1", "X-Amz-Target": target},
            )
            self.signer.add_auth(request)
            self.connection.request("POST", "/", body=body, headers=dict(request.headers.items()))
            reply = self.connection.getresponse()
            data = reply.read()
            if reply.status != 200:
                raise RuntimeError(f"{target}: HTTP {reply.status}: {data[:300]!r}")
            return orjson.loads(data)

        return call


def calls(partitions: int, writes: str = "writes") -> dict[str, Callable[[Any, str, int], Any]]:
    """Each call as (client, worker name, call number) -> response; batches go into ``writes``."""

    def batch(c: Any, worker: str, n: int) -> Any:
        prefix = f"{worker}n{n:06d}p"
        out = c.batch_create_partition(
            DatabaseName="bench",
            TableName=writes,
            PartitionInputList=[
                {
                    "Values": [f"{prefix}{i:03d}"],
                    "StorageDescriptor": storage(f"s3://lake/w/{prefix}{i:03d}/"),
                }
                for i in range(100)
            ],
        )
        assert not out.get("Errors"), out["Errors"][:1]
        return out

    def partitions_page(c: Any, worker: str, n: int) -> Any:
        out = c.get_partitions(DatabaseName="bench", TableName="events", MaxResults=1000)
        assert len(out["Partitions"]) == partitions, len(out["Partitions"])
        return out

    return {
        "get_table": lambda c, w, n: c.get_table(DatabaseName="bench", Name="events"),
        f"get_partitions ({partitions})": partitions_page,
        "batch_create_partition (100)": batch,
    }


RUNS = iter(range(1_000_000))


def drive(
    make_client: Callable[[], Any], call: Callable[[Any, str, int], Any], clients: int, seconds: float
) -> dict[str, float]:
    """Each client a process of its own (botocore decoding a thousand partitions costs tens of ms of one
    interpreter: client threads would measure the harness)."""
    context = multiprocessing.get_context("fork")
    start_line = context.Barrier(clients)
    results: Any = context.Queue()
    run = next(RUNS)

    def worker(number: int) -> None:
        name = f"r{run:03d}w{number:02d}"
        # A forked client inherits the harness's heap (gluecat, pyarrow, moto's imports): frozen, its
        # collections walk only what a client process of its own would hold, its own client included.
        gc.freeze()
        try:
            c = make_client()
            call(c, name, 0)  # connect and warm up
        except Exception as e:
            start_line.abort()
            results.put(f"client {number} failed: {type(e).__name__}: {e}")
            raise
        start_line.wait()
        stop = time.monotonic() + seconds
        latencies, n = [], 1
        cpu = time.process_time()
        while time.monotonic() < stop:
            t = time.perf_counter()
            call(c, name, n)
            latencies.append((time.perf_counter() - t) * 1000)
            n += 1
        results.put((latencies, time.process_time() - cpu))

    procs = [context.Process(target=worker, args=(i,)) for i in range(clients)]
    for p in procs:
        p.start()
    every: list[float] = []
    client_cpu = 0.0
    for _ in procs:
        got = results.get(timeout=seconds + 300)
        if isinstance(got, str):
            raise RuntimeError(got)
        every += got[0]
        client_cpu += got[1]
    every.sort()
    for p in procs:
        p.join()
    return {
        "rps": len(every) / seconds,
        "p50": statistics.median(every),
        "p99": every[min(len(every) - 1, int(len(every) * 0.99))],
        "client": client_cpu * 1000 / len(every),  # a client's own CPU per call (botocore's work)
    }


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def start(command: list[str], ready: str) -> subprocess.Popen[str]:
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert proc.stdout is not None
    while True:
        line = proc.stdout.readline()
        if not line:
            raise RuntimeError(f"{command[:4]} stopped before it was ready")
        if line.startswith(ready):
            return proc


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--partitions", type=int, default=1000)
    parser.add_argument("--clients", default="1,16")
    parser.add_argument("--scratch", default=".", help="where the served warehouse goes (default: .)")
    args = parser.parse_args()
    counts = [int(c) for c in args.clients.split(",")]
    with tempfile.TemporaryDirectory(dir=args.scratch, prefix=".bench-aws-") as tmp:
        folder = Path(tmp)
        print(f"warehouse in {tmp} ({file_system(tmp)})", file=sys.stderr, flush=True)
        cert, key = (str(p) for p in make_certificate(folder))
        users_file = folder / "users.json"
        added = subprocess.run(
            [
                sys.executable,
                "-m",
                "gluecat",
                "users",
                "add",
                "bench",
                "--file",
                str(users_file),
                "--access-key",
            ],
            capture_output=True,
            text=True,
            check=True,
        )
        key_id, secret = (line.split(" = ")[1] for line in added.stdout.splitlines())
        warehouse = str(folder / "warehouse")
        glue_port, moto_port = free_port(), free_port()
        servers = [
            start(
                [
                    sys.executable, "-m", "gluecat", "serve", "--warehouse", warehouse, "--create", "--users", str(users_file),
                    "--port", str(glue_port), "--tls-cert", cert, "--tls-key", key,
                ],
                "with an access key",
            ),
            start([sys.executable, "-c", MOTO, str(moto_port), cert, key], "ready"),
        ]  # fmt: skip
        try:
            glue_url, moto_url = f"https://127.0.0.1:{glue_port}", f"https://127.0.0.1:{moto_port}"
            fill(boto3_client(glue_url, key_id, secret, cert), args.partitions)
            fill(boto3_client(moto_url, "testing", "testing", cert), args.partitions)

            def in_process() -> Any:
                from gluecat import Catalog

                return Catalog(warehouse)

            peers: dict[str, Callable[[], Any]] = {
                "gluecat": lambda: boto3_client(glue_url, key_id, secret, cert),
                "moto": lambda: boto3_client(moto_url, "testing", "testing", cert),
                "in-process": in_process,
                "lean gluecat": lambda: LeanClient(glue_url, key_id, secret, cert),
                "lean moto": lambda: LeanClient(moto_url, "testing", "testing", cert),
            }
            pids = {"gluecat": servers[0].pid, "moto": servers[1].pid}
            rows = []
            # The in-process peer writes a table of its own: the serving process would otherwise replay
            # its thousands of commits inside the next peer's measurement.
            local_calls = calls(args.partitions, "local_writes")
            for name, call in calls(args.partitions).items():
                for clients in counts:
                    got = {}
                    for peer, make in peers.items():
                        server = pids.get(peer.removeprefix("lean "))
                        before = cpu_seconds(server) if server else 0.0
                        own = local_calls[name] if peer == "in-process" else call
                        got[peer] = drive(make, own, clients, args.seconds)
                        if server:
                            # the server's CPU per call, each client's warm-up call counted too
                            used = cpu_seconds(server) - before
                            got[peer]["cpu"] = used * 1000 / (got[peer]["rps"] * args.seconds + clients)
                    rows.append((name, clients, got))
                    print(f"  {name} x{clients}: {got}", file=sys.stderr, flush=True)
        finally:
            for proc in servers:
                proc.terminate()
                proc.communicate(timeout=30)
    report(rows, args.seconds)


def report(rows: list[tuple[str, int, dict[str, dict[str, float]]]], seconds: float) -> None:
    cores = os.cpu_count() or 1
    print(f"\n{cores} cores (load average {os.getloadavg()[0]:.1f} at the end); {seconds:g} s a measurement;")
    print(
        "HTTPS + SigV4 for both servers. CPU ms per call: the serving process's / one client process's own."
    )
    print(
        "Client ceiling: min(clients, cores) x 1,000 / the client's CPU ms per call (a server of zero cost)."
    )
    for title, prefix in (
        ("boto3 clients (the benchmark's client)", ""),
        ("lean client (no botocore model)", "lean "),
    ):
        print(f"\n{title}:\n")
        print(
            "| call | clients | gluecat req/s (p50/p99 ms) | moto req/s (p50/p99 ms) | vs moto "
            "| CPU ms gluecat server/client | CPU ms moto server/client | client ceiling req/s (reached) "
            "| in-process req/s (p50 ms) | wire / in-process |"
        )
        print("|---|---|---|---|---|---|---|---|---|---|")
        for name, clients, got in rows:
            g, m, p = got[prefix + "gluecat"], got[prefix + "moto"], got["in-process"]
            ceiling = min(clients, cores) * 1000 / g["client"]
            print(
                f"| {name} | {clients} | {g['rps']:,.0f} ({g['p50']:.1f}/{g['p99']:.1f}) "
                f"| {m['rps']:,.1f} ({m['p50']:.1f}/{m['p99']:.1f}) | {g['rps'] / m['rps']:.1f}x "
                f"| {g['cpu']:.1f} / {g['client']:.1f} | {m['cpu']:.1f} / {m['client']:.1f} "
                f"| {ceiling:,.0f} ({g['rps'] / ceiling:.0%}) | {p['rps']:,.0f} ({p['p50']:.2f}) "
                f"| {g['rps'] / p['rps']:.2f} |"
            )


if __name__ == "__main__":
    main()
