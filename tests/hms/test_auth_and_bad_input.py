"""Every request needs valid Basic credentials; malformed requests get an error and the server goes on."""

from __future__ import annotations

import http.client
import json
import threading
from pathlib import Path

import pytest

from gluecat.hms.server import MAX_BODY, HiveMetastoreServer
from gluecat.serving import users

from .conftest import PASSWORD, basic, client, databases

JSON = "application/vnd.apache.thrift.json"
GET_ALL_DATABASES = b'[1,"get_all_databases",1,0,{}]'


def post(
    server: HiveMetastoreServer, body: bytes, headers: dict[str, str]
) -> tuple[int, dict[str, str], bytes]:
    conn = http.client.HTTPConnection(server.host, server.port, timeout=10)
    try:
        conn.request("POST", server.path, body=body, headers=headers)
        resp = conn.getresponse()
        return resp.status, dict(resp.getheaders()), resp.read()
    finally:
        conn.close()


@pytest.mark.parametrize(
    ("authorization", "reason"),
    [
        (None, "authentication needed: HTTP Basic, with a user name and password of the users file"),
        (basic("alice", "wrong"), "the user name or password is wrong"),
        (basic("mallory", PASSWORD), "the user name or password is wrong"),
        ("Basic !!!not-base64!!!", "the Basic credentials are not user-name:password in base64"),
        (
            "Bearer abc",
            "the Authorization header is not Basic: this endpoint takes HTTP Basic authentication",
        ),
        ("Basic " + "YWxpY2U=", "the user name or password is wrong"),  # "alice" without a colon
    ],
    ids=["no header", "wrong password", "unknown user", "malformed", "other scheme", "no password"],
)
def test_requests_without_valid_credentials_get_401_saying_why_and_no_thrift_body(
    http_server: HiveMetastoreServer, authorization: str | None, reason: str
) -> None:
    """The body says what failed, so that curl shows it; a wrong password and an unknown user get the
    same words, which tell nobody whether the user exists."""
    headers = {"Content-Type": JSON}
    if authorization:
        headers["Authorization"] = authorization
    status, resp_headers, body = post(http_server, GET_ALL_DATABASES, headers)
    assert status == 401
    assert resp_headers["WWW-Authenticate"] == 'Basic realm="gluecat"'
    assert resp_headers["Content-Type"].startswith("text/plain")
    assert body == f"{reason}\n".encode()


def test_good_credentials_get_the_json_reply(http_server: HiveMetastoreServer) -> None:
    status, headers, body = post(
        http_server, GET_ALL_DATABASES, {"Content-Type": JSON, "Authorization": basic("alice", PASSWORD)}
    )
    assert status == 200 and headers["Content-Type"] == JSON
    assert json.loads(body) == [1, "get_all_databases", 2, 0, {"0": {"lst": ["str", 2, "crm", "sales"]}}]


@pytest.mark.parametrize("scheme", ["basic", "BASIC", "Basic "], ids=["lower", "upper", "two spaces"])
def test_the_basic_scheme_is_case_insensitive(http_server: HiveMetastoreServer, scheme: str) -> None:
    # RFC 7235 2.1 (and RFC 2617, which the document cites): the scheme is a case-insensitive token.
    credentials = basic("alice", PASSWORD).removeprefix("Basic ")
    headers = {"Content-Type": JSON, "Authorization": f"{scheme} {credentials}"}
    status, _, body = post(http_server, GET_ALL_DATABASES, headers)
    assert status == 200, body


def test_failed_attempts_are_logged_without_the_password(
    http_server: HiveMetastoreServer, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level("WARNING", logger="gluecat.hms"):
        post(
            http_server,
            GET_ALL_DATABASES,
            {"Content-Type": JSON, "Authorization": basic("bob", "hunter2-secret")},
        )
    assert "bob" in caplog.text
    assert "hunter2-secret" not in caplog.text


def test_a_burst_of_bad_attempts_leaves_good_clients_served(lake, tmp_path: Path) -> None:
    users_file = tmp_path / "users.json"
    users.add(users_file, "alice", PASSWORD, n=2**10)
    server = HiveMetastoreServer(lake, users_file).start()
    try:
        good = client(server, "binary")
        assert good.get_all_databases() == ["crm", "sales"]

        def attack(n: int) -> None:
            for i in range(n):
                assert (
                    post(
                        server,
                        GET_ALL_DATABASES,
                        {"Content-Type": JSON, "Authorization": basic("alice", f"guess{i}")},
                    )[0]
                    == 401
                )

        threads = [threading.Thread(target=attack, args=(250,)) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert good.get_all_databases() == ["crm", "sales"]
        good._iprot.trans.close()
        # Past the limit, a client is told why even its right password is refused for now (one not
        # remembered: the header differs from the good client's by the scheme's case).
        unremembered = basic("alice", PASSWORD).replace("Basic", "basic")
        refused = post(server, GET_ALL_DATABASES, {"Content-Type": JSON, "Authorization": unremembered})
        assert refused[0] == 401
        assert refused[2] == b"too many failed attempts from this address: try again in a minute\n"
    finally:
        server.stop()


@pytest.mark.parametrize(
    ("body", "content_type"),
    [
        (b'[1,"get_database",1,0,{"1":{"str":"sa', JSON),  # truncated JSON
        (b'[1,"get_database",1,0,{"1":{"i32":"sales"}}]', JSON),  # wrong type for the field
        (b"[" * 5000 + b"]" * 5000, JSON),  # deeply nested
        (b'{"not": "a thrift message"}', JSON),
        (
            b"\x80\x01\x00\x01\x00\x00\x00\x0cget_database\x00\x00\x00\x01\x0b\x00\x01\xff\xff\xff\xff",
            "application/x-thrift",
        ),
        (b"garbage", "text/plain"),
    ],
    ids=[
        "truncated",
        "wrong type",
        "deeply nested",
        "not a message",
        "bad binary length",
        "unknown content type",
    ],
)
def test_malformed_bodies_get_an_error_and_the_server_keeps_serving(
    http_server: HiveMetastoreServer, body: bytes, content_type: str
) -> None:
    status, _, _ = post(
        http_server, body, {"Content-Type": content_type, "Authorization": basic("alice", PASSWORD)}
    )
    assert status in (400, 415) or status == 200  # a protocol error reply is also an answer
    assert databases(http_server, "json") == ["crm", "sales"]


def test_an_oversized_body_is_refused_before_it_is_read(http_server: HiveMetastoreServer) -> None:
    conn = http.client.HTTPConnection(http_server.host, http_server.port, timeout=10)
    conn.putrequest("POST", http_server.path)
    conn.putheader("Authorization", basic("alice", PASSWORD))
    conn.putheader("Content-Type", JSON)
    conn.putheader("Content-Length", str(MAX_BODY + 1))
    conn.endheaders()
    assert conn.getresponse().status == 413
    conn.close()
    assert databases(http_server, "json") == ["crm", "sales"]


def test_a_slow_client_does_not_stall_the_others(http_server: HiveMetastoreServer) -> None:
    import socket

    slow = socket.create_connection((http_server.host, http_server.port))
    slow.sendall(b"POST /hms HTTP/1.1\r\nContent-Length: 100\r\n")  # and then nothing
    try:
        assert databases(http_server, "binary") == ["crm", "sales"]
    finally:
        slow.close()


@pytest.mark.parametrize(
    "body",
    [
        b'[1,"get_partition_names",1,0,{"1":{"str":"sales"},"2":{"str":"orders"},"3":{"i16":100000}}]',
        b'[1,"get_partitions",1,0,{"1":{"str":"sales"},"2":{"str":"orders"},"3":{"i16":-32769}}]',
        b'[1,"get_all_databases",1,2147483648,{}]',
        b'[1,"get_all_databases",1,-2147483649,{}]',
        b'[1,"get_all_databases",300,0,{}]',
        b'[1,"get_database",1,0,{"1":{"str":"sales\\ud800"}}]',  # read as "sales" before
    ],
    ids=["i16 too big", "i16 too small", "seqid too big", "seqid too small", "type too big", "half a pair"],
)
def test_json_values_their_thrift_type_cannot_hold_are_refused(
    http_server: HiveMetastoreServer, body: bytes
) -> None:
    status, _, reply = post(
        http_server, body, {"Content-Type": JSON, "Authorization": basic("alice", PASSWORD)}
    )
    assert status == 400, reply
    assert reply.startswith(b"malformed Thrift message: TProtocolException")


def test_json_values_at_the_ends_of_their_range_are_taken(http_server: HiveMetastoreServer) -> None:
    auth = {"Content-Type": JSON, "Authorization": basic("alice", PASSWORD)}
    for seqid in (2147483647, -2147483648):
        status, _, reply = post(http_server, b'[1,"get_all_databases",1,%d,{}]' % seqid, auth)
        assert status == 200 and json.loads(reply)[3] == seqid
    for max_parts, count in ((32767, 6), (-32768, 6)):
        body = (
            b'[1,"get_partition_names",1,0,{"1":{"str":"sales"},"2":{"str":"orders"},"3":{"i16":%d}}]'
            % max_parts
        )
        status, _, reply = post(http_server, body, auth)
        assert status == 200 and json.loads(reply)[4]["0"]["lst"][1] == count
    status, _, reply = post(http_server, b'[1,"get_database",1,0,{"1":{"str":"s\\ud83d\\ude00"}}]', auth)
    assert status == 200 and json.loads(reply)[4]["1"]["rec"]["1"]["str"] == "Database s\U0001f600 not found."
