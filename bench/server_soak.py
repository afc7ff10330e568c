"""`gluecat serve` under attack: what slow, idle and malicious clients cost the clients that behave.

    python bench/server_soak.py [--connections 1000] [--seconds 3] [--bodies 3000] [--seed 1]

Starts `gluecat serve` over HTTPS in a process of its own, then:
1. get_table throughput over HTTPS, by 1 and 8 client processes, each either opening a new connection
   per call (as Python's THttpClient does) or keeping one alive (as Java's HTTP clients do);
2. attacks, each holding --connections connections of one kind open (idle TCP, half a TLS ClientHello,
   slowloris headers, a slow body, an unfinished keep-alive), while a normal client is timed from its
   connect to its get_table reply, and the server's CPU is read over a quiet second;
3. fuzzed Thrift bodies (JSON and binary, seeded), forged lengths, an oversized POST and a ReDoS pattern;
   outcomes are counted by HTTP status, and the server's memory is read before and after.
Prints one table per part. Each attack's connections are closed before the next; the run is bounded.
"""

from __future__ import annotations

import argparse
import base64
import http.client
import multiprocessing
import random
import resource
import socket
import ssl
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from thrift.protocol import TBinaryProtocol
from thrift.transport import TTransport

from gluecat import Catalog
from gluecat.hms.gen.hive_metastore import ThriftHiveMetastore
from gluecat.hms.reference import free_port
from gluecat.serving import users

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.certificates import make_certificate

PASSWORD = "soak-password"
AUTH = "Basic " + base64.b64encode(f"soak:{PASSWORD}".encode()).decode()


def message(name: str, **args: Any) -> bytes:
    """A binary Thrift call of ``name``."""
    out = TTransport.TMemoryBuffer()
    proto = TBinaryProtocol.TBinaryProtocol(out)
    proto.writeMessageBegin(name, 1, 1)
    getattr(ThriftHiveMetastore, f"{name}_args")(**args).write(proto)
    proto.writeMessageEnd()
    return out.getvalue()


GET_TABLE = message("get_table", dbname="soak", tbl_name="events")


class Server:
    def __init__(self, folder: Path, extra: list[str]) -> None:
        self.cert, key = make_certificate(folder)
        self.port = free_port()
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "gluecat",
                "serve",
                "--warehouse",
                str(folder / "warehouse"),
                "--create",
                "--users",
                str(folder / "users.json"),
                "--port",
                str(self.port),
                "--tls-cert",
                str(self.cert),
                "--tls-key",
                str(key),
                *extra,
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        assert self.proc.stdout is not None and b"endpoint on" in self.proc.stdout.readline()
        self.context = ssl.create_default_context(cafile=str(self.cert))

    def cpu_seconds(self) -> float:
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / 100  # utime + stime, in clock ticks of 1/100 s

    def rss_mb(self) -> float:
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        return 0.0

    def connection(self, timeout: float = 10.0) -> http.client.HTTPSConnection:
        return http.client.HTTPSConnection("127.0.0.1", self.port, timeout=timeout, context=self.context)

    def call(self, body: bytes = GET_TABLE, timeout: float = 10.0, **headers: str) -> int:
        conn = self.connection(timeout)
        try:
            conn.request(
                "POST",
                "/",
                body=body,
                headers={"Authorization": AUTH, "Content-Type": "application/x-thrift"},
            )
            resp = conn.getresponse()
            resp.read()
            return resp.status
        finally:
            conn.close()

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


# -- 1. throughput -----------------------------------------------------------------------------------


def drive(server: Server, clients: int, seconds: float, keep_alive: bool) -> dict[str, float]:
    context = multiprocessing.get_context("fork")
    start_line = context.Barrier(clients)
    results: Any = context.Queue()

    def worker() -> None:
        conn = server.connection()
        headers = {"Authorization": AUTH, "Content-Type": "application/x-thrift"}

        def call() -> None:
            nonlocal conn
            if not keep_alive:
                conn.close()
                conn = server.connection()
            conn.request("POST", "/", body=GET_TABLE, headers=headers)
            resp = conn.getresponse()
            assert resp.status == 200, resp.status
            resp.read()

        call()
        start_line.wait()
        stop = time.monotonic() + seconds
        latencies = []
        while time.monotonic() < stop:
            t = time.perf_counter()
            call()
            latencies.append((time.perf_counter() - t) * 1000)
        conn.close()
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


# -- 2. connections that hold on ---------------------------------------------------------------------


def _tls(server: Server, sock: socket.socket) -> ssl.SSLSocket:
    return server.context.wrap_socket(sock, server_hostname="127.0.0.1")


def idle_tcp(server: Server, sock: socket.socket) -> socket.socket:
    return sock


def half_hello(server: Server, sock: socket.socket) -> socket.socket:
    sock.sendall(b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03")  # a ClientHello's first 11 bytes
    return sock


def slow_headers(server: Server, sock: socket.socket) -> socket.socket:
    tls = _tls(server, sock)
    tls.sendall(b"POST / HTTP/1.1\r\nHost: x\r\nX-a: ")  # and one more byte now and then
    return tls


def slow_body(server: Server, sock: socket.socket) -> socket.socket:
    tls = _tls(server, sock)
    tls.sendall(
        b"POST / HTTP/1.1\r\nHost: x\r\nAuthorization: " + AUTH.encode() + b"\r\n"
        b"Content-Type: application/x-thrift\r\nContent-Length: 1000\r\n\r\n" + GET_TABLE[:10]
    )
    return tls


def idle_keep_alive(server: Server, sock: socket.socket) -> socket.socket:
    tls = _tls(server, sock)
    tls.sendall(
        b"POST / HTTP/1.1\r\nHost: x\r\nAuthorization: " + AUTH.encode() + b"\r\n"
        b"Content-Type: application/x-thrift\r\nContent-Length: " + str(len(GET_TABLE)).encode() + b"\r\n\r\n"
        b"" + GET_TABLE
    )
    return tls  # the reply is never read; the connection then idles


ATTACKS: dict[str, Callable[[Server, socket.socket], socket.socket]] = {
    "idle TCP (nothing sent)": idle_tcp,
    "half a TLS ClientHello": half_hello,
    "slowloris headers": slow_headers,
    "slow body (10 of 1000 bytes)": slow_body,
    "idle keep-alive, reply unread": idle_keep_alive,
}


def hold(
    server: Server, kind: Callable[[Server, socket.socket], socket.socket], n: int
) -> list[socket.socket]:
    held = []
    deadline = time.monotonic() + 60
    for _ in range(n):
        if time.monotonic() > deadline:
            break
        try:
            sock = socket.create_connection(("127.0.0.1", server.port), timeout=2)
            held.append(kind(server, sock))
        except OSError:
            continue  # refused, shed or timed out: the server's choice
    return held


def timed_call(server: Server, limit: float = 10.0) -> float | None:
    t = time.perf_counter()
    try:
        return time.perf_counter() - t if server.call(timeout=limit) == 200 else None
    except OSError:
        return None


def attack(server: Server, name: str, n: int) -> tuple[str, int, str, float]:
    # Opened from a thread, so that a server that stalls on them does not stall the measurement.
    import threading

    held: list[socket.socket] = []
    opener = threading.Thread(target=lambda: held.extend(hold(server, ATTACKS[name], n)), daemon=True)
    opener.start()
    opener.join(timeout=60)
    served = timed_call(server)
    cpu0 = server.cpu_seconds()
    time.sleep(1.0)
    cpu = server.cpu_seconds() - cpu0
    for s in held:
        s.close()
    outcome = "not served in 10 s" if served is None else f"served in {served * 1000:.0f} ms"
    return name, len(held), outcome, cpu * 100


# -- 3. bodies ---------------------------------------------------------------------------------------


def fuzzed(rng: random.Random, valid: list[bytes]) -> bytes:
    body = bytearray(rng.choice(valid))
    for _ in range(rng.randint(1, 8)):
        op = rng.randrange(4)
        at = rng.randrange(len(body) + 1)
        if op == 0 and body:
            del body[at : at + rng.randint(1, 16)]
        elif op == 1:
            body[at:at] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 8)))
        elif op == 2 and body:
            body[min(at, len(body) - 1)] = rng.randrange(256)
        else:
            body = body[:at]
    return bytes(body)


def json_message(name: str, **args: Any) -> bytes:
    from thrift.protocol import TJSONProtocol

    out = TTransport.TMemoryBuffer()
    proto = TJSONProtocol.TJSONProtocol(out)
    proto.writeMessageBegin(name, 1, 1)
    getattr(ThriftHiveMetastore, f"{name}_args")(**args).write(proto)
    proto.writeMessageEnd()
    return out.getvalue()


def bodies(server: Server, count: int, seed: int) -> list[tuple[str, int, str, float]]:
    rng = random.Random(seed)
    calls: list[tuple[str, dict[str, Any]]] = [
        ("get_table", {"dbname": "soak", "tbl_name": "events"}),
        ("get_tables", {"db_name": "soak", "pattern": "ev*"}),
        ("get_partitions", {"db_name": "soak", "tbl_name": "events", "max_parts": 5}),
    ]
    rows = []
    for label, encode, content_type in (
        ("fuzzed JSON bodies", json_message, "application/vnd.apache.thrift.json"),
        ("fuzzed binary bodies", message, "application/x-thrift"),
    ):
        valid = [encode(n, **a) for n, a in calls]
        outcomes: Counter[str] = Counter()
        worst = 0.0
        for _ in range(count):
            body = fuzzed(rng, valid)
            t = time.perf_counter()
            try:
                conn = server.connection(timeout=30)
                conn.request(
                    "POST", "/", body=body, headers={"Authorization": AUTH, "Content-Type": content_type}
                )
                resp = conn.getresponse()
                resp.read()
                conn.close()
                outcomes[str(resp.status)] += 1
            except OSError as e:
                outcomes[type(e).__name__] += 1
            worst = max(worst, time.perf_counter() - t)
        rows.append((label, count, ", ".join(f"{k}: {v}" for k, v in sorted(outcomes.items())), worst))
    forged = [
        ("JSON '[1' (2 bytes)", b"[1", "application/vnd.apache.thrift.json"),
        (
            'JSON \'[1,"get_table",1,1,{"1":{"str"\' cut',
            b'[1,"get_table",1,1,{"1":{"str"',
            "application/vnd.apache.thrift.json",
        ),
        (
            "binary string length 2^31-1",
            GET_TABLE[:12] + b"\x0b\x00\x01\x7f\xff\xff\xff",
            "application/x-thrift",
        ),
        (
            "binary list length 2^31-1",
            message("get_table", dbname="x", tbl_name="y")[:12]
            + b"\x0f\x00\x01\x08"
            + struct.pack("!i", 2**31 - 1),
            "application/x-thrift",
        ),
        ("binary name length 2^31-1", b"\x80\x01\x00\x01\x7f\xff\xff\xff", "application/x-thrift"),
    ]
    for label, body, content_type in forged:
        t = time.perf_counter()
        try:
            conn = server.connection(timeout=60)
            conn.request(
                "POST", "/", body=body, headers={"Authorization": AUTH, "Content-Type": content_type}
            )
            status = str(conn.getresponse().status)
            conn.close()
        except OSError as e:
            status = type(e).__name__
        rows.append((label, 1, status, time.perf_counter() - t))
    t = time.perf_counter()
    try:
        conn = server.connection(timeout=30)
        conn.putrequest("POST", "/")
        conn.putheader("Authorization", AUTH)
        conn.putheader("Content-Length", str(100 * 1024 * 1024))
        conn.endheaders()
        status = str(conn.getresponse().status)
        conn.close()
    except OSError as e:
        status = type(e).__name__
    rows.append(("POST declaring 100 MB", 1, status, time.perf_counter() - t))
    t = time.perf_counter()
    try:
        status = str(server.call(message("get_tables", db_name="soak", pattern="(.+)+!"), timeout=120))
    except OSError as e:
        status = type(e).__name__
    rows.append(("get_tables pattern (.+)+! over a 250-character name", 1, status, time.perf_counter() - t))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--connections", type=int, default=1000)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--bodies", type=int, default=3000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--skip", default="", help="comma-separated parts to skip: throughput,attacks,bodies")
    parser.add_argument("serve_args", nargs="*", help="extra `gluecat serve` options (after --)")
    args = parser.parse_args()
    skip = set(args.skip.split(","))
    print(f"seed {args.seed}; file descriptors: {resource.getrlimit(resource.RLIMIT_NOFILE)[0]}")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        users.add(folder / "users.json", "soak", PASSWORD)
        glue = Catalog(str(folder / "warehouse"))
        glue.create_database(DatabaseInput={"Name": "soak"})
        glue.create_table(
            DatabaseName="soak",
            TableInput={
                "Name": "events",
                "StorageDescriptor": {"Columns": [{"Name": "id", "Type": "bigint"}], "Location": "s3://x/e"},
                "PartitionKeys": [{"Name": "dt", "Type": "string"}],
            },
        )
        glue.create_table(DatabaseName="soak", TableInput={"Name": "e" * 250})
        server = Server(folder, args.serve_args)
        try:
            if "throughput" not in skip:
                print(f"\n{'get_table over HTTPS':34}{'clients':>8}{'req/s':>8}{'p50 ms':>9}{'p99 ms':>9}")
                for keep_alive in (False, True):
                    for clients in (1, 8):
                        r = drive(server, clients, args.seconds, keep_alive)
                        label = "one connection kept alive" if keep_alive else "a new connection per call"
                        print(f"{label:34}{clients:>8}{r['rps']:>8.0f}{r['p50']:>9.2f}{r['p99']:>9.2f}")
            if "attacks" not in skip:
                print(
                    f"\n{'connections held open':32}{'held':>6}  {'a normal client':22}{'server CPU %':>13}"
                )
                for name in ATTACKS:
                    row = attack(server, name, args.connections)
                    print(f"{row[0]:32}{row[1]:>6}  {row[2]:22}{row[3]:>13.0f}")
            if "bodies" not in skip:
                rss = server.rss_mb()
                print(f"\n{'bad requests':52}{'sent':>6}  {'outcomes (HTTP status)':34}{'worst s':>8}")
                for label, n, outcome, worst in bodies(server, args.bodies, args.seed):
                    print(f"{label:52}{n:>6}  {outcome:34}{worst:>8.2f}")
                print(f"server memory: {rss:.0f} MB before the bad requests, {server.rss_mb():.0f} MB after")
        finally:
            server.stop()


if __name__ == "__main__":
    main()
