"""The Thrift TCP endpoint under the HTTP endpoint's rules: idle, silent and slow connections never delay
another client; messages are framed strictly and bounded in size; every wait has a deadline; the number
of connections is bounded, the longest-idle shed first."""

from __future__ import annotations

import contextlib
import random
import socket
import struct
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from thrift.protocol import TBinaryProtocol
from thrift.transport import TSocket, TTransport

from gluecat import Catalog
from gluecat.hms.gen.hive_metastore import ThriftHiveMetastore
from gluecat.server import Server
from gluecat.serving.connections import Limits

from .server_support import lake, message, reply, users_file

__all__ = ["lake", "users_file"]  # fixtures

pytestmark = pytest.mark.slow


@pytest.fixture
def tcp(lake: Catalog, users_file: Path) -> Iterator[Callable[..., Server]]:
    made: list[Server] = []

    def make(limits: Limits | None = None) -> Server:
        made.append(Server(lake, users_file, thrift_port=0, thrift_limits=limits).start())
        return made[-1]

    yield make
    for s in made:
        s.stop()


def connect(server: Server) -> socket.socket:
    assert server.thrift_port is not None
    return socket.create_connection(("127.0.0.1", server.thrift_port), timeout=5)


def get_table(server: Server, timeout: float = 5.0) -> Any:
    assert server.thrift_port is not None
    sock = TSocket.TSocket("127.0.0.1", server.thrift_port)
    sock.setTimeout(timeout * 1000)
    transport = TTransport.TBufferedTransport(sock)
    transport.open()
    try:
        return ThriftHiveMetastore.Client(TBinaryProtocol.TBinaryProtocol(transport)).get_table(
            "sales", "orders"
        )
    finally:
        transport.close()


def closed(sock: socket.socket, timeout: float = 5.0) -> bool:
    """Whether the server closed the connection (without an answer) within ``timeout``."""
    sock.settimeout(timeout)
    try:
        return sock.recv(1) == b""
    except ConnectionResetError:
        return True
    except TimeoutError:
        return False


def test_silent_half_sent_and_trickling_connections_do_not_delay_another_client(
    tcp: Callable[..., Server],
) -> None:
    server = tcp()
    call = message("get_table", dbname="sales", tbl_name="orders")
    held = []
    try:
        for _ in range(100):
            held.append(connect(server))  # silent
        for _ in range(100):
            half = connect(server)
            half.sendall(call[: len(call) // 2])  # a message that never ends
            held.append(half)
        trickle = connect(server)
        held.append(trickle)
        started = time.monotonic()
        for byte in call[:10]:
            trickle.send(bytes([byte]))
            assert get_table(server, timeout=2).tableName == "orders"
        assert time.monotonic() - started < 5
        trickle.sendall(call[10:])  # the trickled message, finished, is answered
        trickle.settimeout(5)
        assert reply("get_table", trickle.recv(65536)).tableName == "orders"
    finally:
        for s in held:
            s.close()


@pytest.mark.parametrize(
    ("name", "data"),
    [
        ("bad version", struct.pack(">I", 0x80020001) + b"\0" * 20),
        ("unknown message type", struct.pack(">I", 0x80010009) + b"\0" * 20),
        ("huge method name", struct.pack(">Ii", 0x80010001, 1 << 30)),
        (
            "unknown field type",
            struct.pack(">Ii", 0x80010001, 1) + b"f" + struct.pack(">i", 1) + b"\x07\x00\x01",
        ),
        (
            "negative string",
            struct.pack(">Ii", 0x80010001, 1)
            + b"f"
            + struct.pack(">i", 1)
            + b"\x0b\x00\x01"
            + struct.pack(">i", -5),
        ),
        (
            "string past the bound",
            struct.pack(">Ii", 0x80010001, 1)
            + b"f"
            + struct.pack(">i", 1)
            + b"\x0b\x00\x01"
            + struct.pack(">i", 1 << 30),
        ),
        (
            "list past the bound",
            struct.pack(">Ii", 0x80010001, 1)
            + b"f"
            + struct.pack(">i", 1)
            + b"\x0f\x00\x01\x0b"
            + struct.pack(">i", 1 << 29),
        ),
        (
            "nested too deep",
            struct.pack(">Ii", 0x80010001, 1) + b"f" + struct.pack(">i", 1) + b"\x0c\x00\x01" * 200,
        ),
        ("HTTP on the Thrift port", b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"),
    ],
)
def test_bytes_that_are_no_thrift_message_close_the_connection_and_change_nothing(
    tcp: Callable[..., Server], name: str, data: bytes
) -> None:
    server = tcp(Limits(max_body_bytes=64 * 1024))
    sock = connect(server)
    try:
        sock.sendall(data)
        assert closed(sock), name
    finally:
        sock.close()
    assert get_table(server).tableName == "orders"


def test_a_message_over_the_size_bound_is_refused_before_it_is_read_whole(tcp: Callable[..., Server]) -> None:
    server = tcp(Limits(max_body_bytes=4096))
    big = message("get_table", dbname="sales", tbl_name="x" * 10_000)
    sock = connect(server)
    try:
        refused = False
        for at in range(0, len(big), 1000):
            try:
                sock.sendall(big[at : at + 1000])
            except OSError:  # closed while the client is still sending
                refused = True
                break
            time.sleep(0.01)
        assert refused or closed(sock)
    finally:
        sock.close()
    assert get_table(server).tableName == "orders"


def test_waits_have_deadlines(tcp: Callable[..., Server]) -> None:
    server = tcp(Limits(idle_timeout=0.5, request_timeout=0.5))
    idle, slow = connect(server), connect(server)
    try:
        slow.sendall(message("get_table", dbname="sales", tbl_name="orders")[:12])
        started = time.monotonic()
        assert closed(idle) and closed(slow)
        assert time.monotonic() - started < 3
    finally:
        idle.close()
        slow.close()


def test_connections_are_bounded_and_the_longest_idle_is_shed(tcp: Callable[..., Server]) -> None:
    server = tcp(Limits(max_connections=20))
    held = [connect(server) for _ in range(40)]
    try:
        assert get_table(server).tableName == "orders"
        assert server.thrift is not None and server.thrift.open_connections <= 20
        assert sum(closed(s, timeout=0.2) for s in held[:20]) >= 19  # the oldest were shed
    finally:
        for s in held:
            s.close()


def test_random_bytes_never_take_the_server_down(tcp: Callable[..., Server]) -> None:
    seed = random.randrange(1 << 30)
    rng = random.Random(seed)
    server = tcp(Limits(max_body_bytes=16 * 1024, request_timeout=0.1, idle_timeout=0.1))
    valid = message("get_partitions", db_name="sales", tbl_name="orders", max_parts=-1)
    for _ in range(60):
        data = bytearray(valid)
        for _ in range(rng.randint(1, 8)):  # mutate a valid message: the nearer misses reach decoding
            data[rng.randrange(len(data))] = rng.randrange(256)
        sock = connect(server)
        try:
            sock.sendall(bytes(data[: rng.randint(1, len(data))]))
            sock.settimeout(2)
            with contextlib.suppress(TimeoutError, ConnectionResetError):
                sock.recv(65536)
        finally:
            sock.close()
    assert get_table(server).tableName == "orders", f"seed {seed}"
