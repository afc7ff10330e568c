"""Idle, silent and slow connections cost the server a socket, never a thread, CPU time or anyone's turn."""

from __future__ import annotations

import resource
import socket
import ssl
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from gluecat import Catalog
from gluecat.hms.server import HiveMetastoreServer, Limits

from .server_support import (
    AUTH,
    Address,
    certificate,
    connect,
    get_table,
    lake,
    message,
    users_file,
)

__all__ = ["certificate", "lake", "users_file"]  # fixtures

HALF_CLIENT_HELLO = b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03"


@pytest.fixture
def server_factory(
    lake: Catalog, users_file: Path, certificate: tuple[Path, Path]
) -> Iterator[Callable[..., HiveMetastoreServer]]:
    made: list[HiveMetastoreServer] = []

    def make(limits: Limits | None = None, tls: bool = True) -> HiveMetastoreServer:
        cert, key = certificate
        tls_args = {"tls_cert": str(cert), "tls_key": str(key)} if tls else {}
        made.append(HiveMetastoreServer(lake, users_file, limits=limits, **tls_args).start())
        return made[-1]

    yield make
    for server in made:
        server.stop()


def tls_connection(server: HiveMetastoreServer, cafile: Path) -> ssl.SSLSocket:
    context = ssl.create_default_context(cafile=str(cafile))
    return context.wrap_socket(connect(server), server_hostname="127.0.0.1")


def test_one_silent_connection_does_not_stop_https_service(
    server_factory: Callable[..., HiveMetastoreServer], certificate: tuple[Path, Path]
) -> None:
    server = server_factory()
    silent = connect(server)  # connects and sends nothing: the handshake used to block every client
    half = connect(server)
    half.sendall(HALF_CLIENT_HELLO)
    try:
        assert get_table(server, certificate[0], timeout=5).tableName == "orders"
    finally:
        silent.close()
        half.close()


def test_a_thousand_idle_and_slow_connections_leave_a_normal_client_served_and_the_cpu_idle(
    server_factory: Callable[..., HiveMetastoreServer], certificate: tuple[Path, Path]
) -> None:
    server = server_factory()
    cafile = certificate[0]
    # Both ends of each connection live in this process: two descriptors a connection.
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    per_kind = min(200, (soft - 300) // 10)
    held: list[socket.socket] = []
    try:
        for _ in range(per_kind):
            held.append(connect(server))  # silent
            half = connect(server)
            half.sendall(HALF_CLIENT_HELLO)
            held.append(half)
            headers = tls_connection(server, cafile)  # slowloris: a head that never ends
            headers.sendall(b"POST / HTTP/1.1\r\nHost: x\r\nX-Slow: ")
            held.append(headers)
            body = tls_connection(server, cafile)  # a body that never comes
            body.sendall(
                b"POST / HTTP/1.1\r\nAuthorization: " + AUTH.encode() + b"\r\nContent-Length: 1000\r\n\r\nab"
            )
            held.append(body)
            unread = tls_connection(server, cafile)  # a request whose reply is never read
            call = message("get_table", dbname="sales", tbl_name="orders")
            unread.sendall(
                b"POST / HTTP/1.1\r\nAuthorization: "
                + AUTH.encode()
                + b"\r\nContent-Length: "
                + str(len(call)).encode()
                + b"\r\n\r\n"
                + call
            )
            held.append(unread)
        time.sleep(0.5)  # let the server take them all in
        assert server.http.open_connections >= len(held) - 5
        started = time.monotonic()
        assert get_table(server, cafile, timeout=5).tableName == "orders"
        assert time.monotonic() - started < 5.0
        cpu = time.process_time()  # this process: the server's threads and the idle clients
        time.sleep(1.0)
        assert time.process_time() - cpu < 0.3, "the server works while every connection is idle"
    finally:
        for s in held:
            s.close()


def test_at_the_bound_the_longest_idle_connection_makes_room(
    server_factory: Callable[..., HiveMetastoreServer], certificate: tuple[Path, Path]
) -> None:
    server = server_factory(Limits(max_connections=20))
    held = [connect(server) for _ in range(60)]
    try:
        assert get_table(server, certificate[0], timeout=5).tableName == "orders"
        assert server.http.shed >= 40
        assert server.http.open_connections <= 20
        held[0].settimeout(2)
        assert held[0].recv(1) == b""  # the first (longest idle) connection was closed
    finally:
        for s in held:
            s.close()


@pytest.mark.parametrize("kind", ["silent", "half a ClientHello", "slow head", "slow body", "no TLS"])
def test_slow_requests_are_closed_at_their_deadline(
    server_factory: Callable[..., HiveMetastoreServer], certificate: tuple[Path, Path], kind: str
) -> None:
    server = server_factory(Limits(handshake_timeout=0.5, idle_timeout=0.5, request_timeout=0.5))
    if kind == "silent":
        sock: socket.socket = connect(server)
    elif kind == "half a ClientHello":
        sock = connect(server)
        sock.sendall(HALF_CLIENT_HELLO)
    elif kind == "no TLS":
        sock = connect(server)
        sock.sendall(b"POST / HTTP/1.1\r\n")  # plain HTTP to the TLS port
    else:
        sock = tls_connection(server, certificate[0])
        if kind == "slow head":
            sock.sendall(b"POST / HTTP/1.1\r\nHost: x\r\n")
        else:
            sock.sendall(
                b"POST / HTTP/1.1\r\nAuthorization: " + AUTH.encode() + b"\r\nContent-Length: 9\r\n\r\n"
            )
    started = time.monotonic()
    sock.settimeout(5)
    try:
        while sock.recv(100):
            pass
    except (ConnectionResetError, ssl.SSLError):
        pass
    finally:
        sock.close()
    elapsed = time.monotonic() - started
    assert elapsed < 3.0, f"closed after {elapsed:.1f} s"


def test_a_client_that_never_reads_its_reply_is_closed_and_the_others_are_served(
    server_factory: Callable[..., HiveMetastoreServer],
) -> None:
    server = server_factory(Limits(request_timeout=0.5), tls=False)
    sock = connect(server)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    call = message("get_partitions", db_name="sales", tbl_name="orders", max_parts=-1)
    request = (
        b"POST / HTTP/1.1\r\nAuthorization: "
        + AUTH.encode()
        + b"\r\nContent-Length: "
        + str(len(call)).encode()
        + b"\r\n\r\n"
        + call
    )
    sock.sendall(request * 200)  # pipelined, and no reply read
    try:
        assert get_table(server, timeout=5).tableName == "orders"
    finally:
        sock.close()


SERVER_OUT_OF_DESCRIPTORS = textwrap.dedent(
    """
    import os, resource, sys, time
    from gluecat import Catalog
    from gluecat.hms.server import HiveMetastoreServer
    resource.setrlimit(resource.RLIMIT_NOFILE, (256, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))
    server = HiveMetastoreServer(Catalog(sys.argv[1]), sys.argv[2]).start()
    time.sleep(0.3)
    burned = []
    while True:  # leave no descriptor free: the next accept() fails with EMFILE
        try:
            burned.append(os.open(os.devnull, os.O_RDONLY))
        except OSError:
            break
    for fd in burned[-20:]:
        os.close(fd)  # but twenty
    print(server.port, flush=True)
    sys.stdin.readline()
    print(server.http.shed, flush=True)
    """
)


def test_accept_out_of_file_descriptors_closes_the_longest_idle_and_keeps_serving(
    lake: Catalog, users_file: Path
) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-c", SERVER_OUT_OF_DESCRIPTORS, str(lake.warehouse), str(users_file)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    held: list[socket.socket] = []
    try:
        assert proc.stdout is not None and proc.stdin is not None
        port = int(proc.stdout.readline())
        server = Address("127.0.0.1", port)
        for _ in range(60):  # more than the twenty free descriptors
            held.append(socket.create_connection(("127.0.0.1", port), timeout=5))
        time.sleep(0.5)
        assert get_table(server, timeout=5).tableName == "orders"
        proc.stdin.write("\n")
        proc.stdin.flush()
        assert int(proc.stdout.readline()) > 0  # idle connections were closed to make room
    finally:
        for s in held:
            s.close()
        proc.kill()
        proc.communicate()


def test_many_clients_at_once_are_all_served(
    server_factory: Callable[..., HiveMetastoreServer], certificate: tuple[Path, Path]
) -> None:
    server = server_factory(Limits(workers=4))
    results: list[str] = []

    def client() -> None:
        for _ in range(5):
            results.append(get_table(server, certificate[0], timeout=20).tableName)

    threads = [threading.Thread(target=client) for _ in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == ["orders"] * 80
