"""Malformed Thrift bodies, of any size, are refused in time and memory proportional to their length."""

from __future__ import annotations

import http.client
import random
import struct
import time
import tracemalloc
from pathlib import Path

import pytest

from gluecat import Catalog
from gluecat.hms.server import MAX_BODY, HiveMetastoreServer
from gluecat.hms.thrift_endpoint import ThriftEndpoint

from .server_support import (
    AUTH,
    BINARY,
    JSON,
    LONG_NAME,
    certificate,
    get_table,
    https,
    lake,
    message,
    post,
    reply,
    users_file,
)

__all__ = ["certificate", "https", "lake", "users_file"]  # fixtures

SEED = 24
VALID_CALLS = [
    ("get_table", {"dbname": "sales", "tbl_name": "orders"}),
    ("get_tables", {"db_name": "sales", "pattern": "o*"}),
    ("get_tables_by_type", {"db_name": "sales", "pattern": "*", "tableType": "EXTERNAL_TABLE"}),
    ("get_partitions", {"db_name": "sales", "tbl_name": "orders", "max_parts": 2}),
    ("get_partition_names", {"db_name": "sales", "tbl_name": "orders", "max_parts": -1}),
    ("get_databases", {"pattern": "s*|x"}),
]


@pytest.fixture(scope="module")
def endpoint(lake: Catalog) -> ThriftEndpoint:
    return ThriftEndpoint(lake)


def answer(endpoint: ThriftEndpoint, body: bytes, content_type: str) -> tuple[int, float, int]:
    """(status, seconds, peak bytes allocated) of one body."""
    tracemalloc.start()
    started = time.perf_counter()
    try:
        status = endpoint.answer(body, content_type).status
        return status, time.perf_counter() - started, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize(
    "body",
    [
        b"[1",
        b"[",
        b"[1,",
        b'[1,"get_table",1,1,{"1":{"str"',
        b'[1,"get_table",1,1,{"1":{"i32":1',
        b"[1" + b"9" * 100,
    ],
)
def test_a_truncated_json_body_is_refused_at_once(endpoint: ThriftEndpoint, body: bytes) -> None:
    # "[1" used to take 6 s and 137 MB: the JSON reader took the end of the body for digits.
    status, seconds, peak = answer(endpoint, body, JSON)
    assert status == 400
    assert seconds < 2.0 and peak < 1_000_000, (seconds, peak)


def forged(prefix_call: str, tail: bytes) -> bytes:
    """A binary call of ``prefix_call`` cut after its message header, followed by ``tail``."""
    name = prefix_call.encode()
    return b"\x80\x01\x00\x01" + struct.pack("!i", len(name)) + name + b"\x00\x00\x00\x01" + tail


HUGE = struct.pack("!i", 2**31 - 1)


@pytest.mark.parametrize(
    "body",
    [
        b"\x80\x01\x00\x01" + HUGE,  # the method name
        forged("get_table", b"\x0b\x00\x01" + HUGE),  # a string argument
        forged("get_table", b"\x0f\x00\x09\x08" + HUGE),  # an unknown list field, skipped
        forged("get_table", b"\x0d\x00\x09\x0b\x0b" + HUGE),  # an unknown map field
        forged("get_table", b"\x0e\x00\x09\x0c" + HUGE),  # an unknown set of structs
        forged("get_partitions", b"\x0f\x00\x01\x0c" + HUGE),  # a list where a string is due
        forged("get_all_functions", b"\x0f\x00\x01\x0b" + HUGE),  # a method gluecat does not serve
        struct.pack("!i", 2**31 - 1) + b"get_table",  # an old-style (unversioned) message header
    ],
    ids=["name", "string", "list", "map", "set", "wrong type", "unknown method", "unversioned"],
)
def test_a_huge_declared_length_allocates_nothing(endpoint: ThriftEndpoint, body: bytes) -> None:
    status, seconds, peak = answer(endpoint, body, BINARY)
    assert status in (200, 400)
    assert seconds < 2.0 and peak < 1_000_000, (seconds, peak)


def mutate(rng: random.Random, body: bytes) -> bytes:
    out = bytearray(body)
    for _ in range(rng.randint(1, 6)):
        op = rng.randrange(5)
        at = rng.randrange(len(out) + 1)
        if op == 0 and out:
            del out[at : at + rng.randint(1, 16)]
        elif op == 1:
            out[at:at] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 8)))
        elif op == 2 and out:
            out[min(at, len(out) - 1)] = rng.randrange(256)
        elif op == 3:
            out[at:at] = rng.choice([HUGE, b"\xff\xff\xff\xff", b"[", b"{", b'"', b"9" * 30, b"\\u"])
        else:
            del out[at:]
    return bytes(out)


@pytest.mark.parametrize("protocol", ["json", "binary"])
def test_fuzzed_bodies_are_answered_in_time_and_memory_proportional_to_their_length(
    endpoint: ThriftEndpoint, protocol: str
) -> None:
    rng = random.Random(SEED)
    valid = [message(name, protocol, **args) for name, args in VALID_CALLS]
    content_type = JSON if protocol == "json" else BINARY
    statuses: dict[int, int] = {}
    for i in range(2000):
        body = mutate(rng, rng.choice(valid))
        status, seconds, peak = answer(endpoint, body, content_type)
        statuses[status] = statuses.get(status, 0) + 1
        where = f"seed {SEED}, body {i}: {body[:200]!r}"
        assert status in (200, 400), where
        # Generous for a shared machine; what it catches took seconds (the JSON "[1" took 6 to 22).
        assert seconds < 1.0 + len(body) * 1e-4, f"{seconds:.3f} s; {where}"
        assert peak < 200_000 + 200 * len(body), f"{peak} bytes; {where}"
    assert statuses.get(400, 0) > 1000 and statuses.get(200, 0) > 0, statuses


def test_a_large_malformed_body_costs_time_in_proportion(endpoint: ThriftEndpoint) -> None:
    def seconds(body: bytes) -> float:
        started = time.perf_counter()
        assert endpoint.answer(body, JSON).status == 400
        return time.perf_counter() - started

    unterminated = b'[1,"get_table",1,1,{"1":{"str":"'
    small = min(seconds(unterminated + b"a" * 20_000) for _ in range(3))
    large = min(seconds(unterminated + b"a" * 200_000) for _ in range(2))
    assert large < 30 * small + 1.0, (small, large)  # linear (10x), not quadratic (100x)


def test_bad_bodies_over_the_wire_get_400_and_the_server_goes_on(
    https: HiveMetastoreServer, certificate: tuple[Path, Path]
) -> None:
    rng = random.Random(SEED)
    cafile = certificate[0]
    for protocol, content_type in (("json", JSON), ("binary", BINARY)):
        valid = [message(name, protocol, **args) for name, args in VALID_CALLS]
        for _ in range(50):
            status, _ = post(https, mutate(rng, rng.choice(valid)), cafile=cafile, content_type=content_type)
            assert status in (200, 400)
    assert post(https, b"[1", cafile=cafile, content_type=JSON, timeout=5)[0] == 400
    assert get_table(https, cafile).tableName == "orders"


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"Content-Length": str(MAX_BODY + 1)}, 413),
        ({"Content-Length": str(100 * 1024**3)}, 413),
        ({"Content-Length": "-1"}, 413),
        ({"Content-Length": "ten"}, 400),
        ({"Transfer-Encoding": "chunked"}, 411),
        ({}, 411),
        ({"X-Big": "x" * 70_000, "Content-Length": "0"}, 431),
    ],
    ids=["over the limit", "100 GB", "negative", "not a number", "chunked", "no length", "huge head"],
)
def test_requests_whose_bodies_will_not_be_read_are_refused_first(
    https: HiveMetastoreServer, certificate: tuple[Path, Path], headers: dict[str, str], expected: int
) -> None:
    import ssl

    context = ssl.create_default_context(cafile=str(certificate[0]))
    conn = http.client.HTTPSConnection(https.host, https.port, timeout=5, context=context)
    conn.putrequest("POST", https.path, skip_accept_encoding=True)
    conn.putheader("Authorization", AUTH)
    for k, v in headers.items():
        conn.putheader(k, v)
    conn.endheaders()
    response = conn.getresponse()
    assert response.status == expected
    assert response.getheader("Connection") == "close"
    conn.close()
    assert get_table(https, certificate[0]).tableName == "orders"


def test_a_long_pattern_is_refused_and_a_backtracking_one_answers_at_once(
    https: HiveMetastoreServer, certificate: tuple[Path, Path]
) -> None:
    cafile = certificate[0]
    started = time.monotonic()
    # Python's regular expressions took minutes on this against the 250-character table name.
    status, body = post(
        https, message("get_tables", db_name="sales", pattern="(.+)+!"), cafile=cafile, timeout=10
    )
    assert status == 200 and reply("get_tables", body) == []
    assert time.monotonic() - started < 5.0
    status, body = post(https, message("get_tables", db_name="sales", pattern="e*|(e+)+$"), cafile=cafile)
    assert reply("get_tables", body) == [LONG_NAME]
    status, body = post(https, message("get_databases", pattern="s" * 3000), cafile=cafile)
    assert "at most 2048 characters" in reply("get_databases", body).message
