"""Signature Version 4 on every request: AWS's refusals, and nothing that tells more than AWS tells."""

from __future__ import annotations

import json
import socket
import ssl
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from botocore.auth import SigV4QueryAuth
from botocore.credentials import Credentials as BotoCredentials

from tests.aws_wire import REGION, Served

from .conftest import glue_request, send, sign

MISMATCH = "The request signature we calculated does not match the signature you provided."


def error(reply: tuple[int, dict[str, str], Any]) -> tuple[int, str, str]:
    status, _, body = reply
    return status, body["__type"], body.get("message") or body.get("Message")


def test_a_signed_request_is_answered(served: Served) -> None:
    request = glue_request(served, "GetDatabases")
    sign(request, served.credentials.key_id, served.credentials.secret)
    status, headers, body = send(served, request)
    assert (status, body) == (200, {"DatabaseList": []})
    assert headers["content-type"] == "application/x-amz-json-1.1"
    assert headers["x-amzn-requestid"]


def test_an_unsigned_request_is_missing_its_token(served: Served) -> None:
    assert error(send(served, glue_request(served, "GetDatabases"))) == (
        400,
        "MissingAuthenticationTokenException",
        "Request is missing Authentication Token",
    )


def test_basic_credentials_are_not_a_signature(served: Served) -> None:
    reply = send(served, glue_request(served, "GetDatabases"), Authorization="Basic YWxpY2U6cHc=")
    assert error(reply)[1] == "MissingAuthenticationTokenException"


@pytest.mark.parametrize(
    ("authorization", "says"),
    [
        ("AWS4-HMAC-SHA256 SignedHeaders=host, Signature=00", "requires 'Credential' parameter"),
        ("AWS4-HMAC-SHA256 Credential=a/b/c/d/e", "requires 'Signature' parameter"),
        (
            "AWS4-HMAC-SHA512 Credential=a/b/c/d/e, SignedHeaders=host, Signature=00",
            "Unsupported AWS 'algorithm'",
        ),
        ("AWS4-HMAC-SHA256 Credential=abc, SignedHeaders=host, Signature=00", "5 slash-delimited elements"),
    ],
)
def test_a_malformed_authorization_is_an_incomplete_signature(
    served: Served, authorization: str, says: str
) -> None:
    request = glue_request(served, "GetDatabases")
    request.headers["X-Amz-Date"] = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    status, code, message = error(send(served, request, Authorization=authorization))
    assert (status, code) == (400, "IncompleteSignatureException")
    assert says in message


def test_a_wrong_secret_is_an_invalid_signature(served: Served) -> None:
    request = glue_request(served, "GetDatabases")
    sign(request, served.credentials.key_id, "not-the-secret")
    status, code, message = error(send(served, request))
    assert (status, code) == (400, "InvalidSignatureException")
    assert message.startswith(MISMATCH)


def test_an_unknown_key_is_an_unrecognized_client(served: Served) -> None:
    request = glue_request(served, "GetDatabases")
    sign(request, "GCAKNOSUCHKEY0000000", served.credentials.secret)
    assert error(send(served, request)) == (
        400,
        "UnrecognizedClientException",
        "The security token included in the request is invalid.",
    )


def test_a_session_token_cannot_be_valid(served: Served) -> None:
    request = glue_request(served, "GetDatabases")
    request.headers["X-Amz-Security-Token"] = "anything"
    sign(request, served.credentials.key_id, served.credentials.secret)
    assert error(send(served, request))[1] == "UnrecognizedClientException"


@pytest.mark.parametrize("minutes", [-16, 16])
def test_more_than_15_minutes_of_skew_is_refused(served: Served, minutes: int) -> None:
    request = glue_request(served, "GetDatabases")
    sign(
        request,
        served.credentials.key_id,
        served.credentials.secret,
        at=datetime.now(UTC) + timedelta(minutes=minutes),
    )
    status, code, message = error(send(served, request))
    assert (status, code) == (400, "InvalidSignatureException")
    assert message.startswith("Signature expired:" if minutes < 0 else "Signature not yet current:")


def test_14_minutes_of_skew_is_accepted(served: Served) -> None:
    request = glue_request(served, "GetDatabases")
    sign(
        request,
        served.credentials.key_id,
        served.credentials.secret,
        at=datetime.now(UTC) - timedelta(minutes=14),
    )
    assert send(served, request)[0] == 200


@pytest.mark.parametrize(
    ("service", "region", "says"),
    [
        ("glue", "eu-west-1", "Credential should be scoped to a valid region."),
        ("s3", REGION, "Credential should be scoped to correct service: 'glue'."),
    ],
)
def test_the_credential_scope_must_name_this_service_and_region(
    served: Served, service: str, region: str, says: str
) -> None:
    request = glue_request(served, "GetDatabases")
    sign(request, served.credentials.key_id, served.credentials.secret, service=service, region=region)
    assert error(send(served, request)) == (400, "InvalidSignatureException", says)


def test_a_body_changed_after_signing_is_refused(served: Served) -> None:
    request = glue_request(served, "GetDatabase", {"Name": "a"})
    sign(request, served.credentials.key_id, served.credentials.secret)
    request.data = json.dumps({"Name": "b"}).encode()
    status, code, message = error(send(served, request))
    assert (status, code) == (400, "InvalidSignatureException")
    assert message.startswith(MISMATCH)


def test_a_target_changed_after_signing_is_refused(served: Served) -> None:
    request = glue_request(served, "GetDatabases")
    sign(request, served.credentials.key_id, served.credentials.secret)
    request.headers.replace_header("X-Amz-Target", "AWSGlue.DeleteDatabase")
    assert error(send(served, request))[1] == "InvalidSignatureException"


def test_an_unsigned_target_header_is_refused(served: Served) -> None:
    """A signature that leaves X-Amz-Target out could be replayed against another operation."""
    request = glue_request(served, "GetDatabases")
    del request.headers["X-Amz-Target"]
    sign(request, served.credentials.key_id, served.credentials.secret)
    status, code, message = error(send(served, request, **{"X-Amz-Target": "AWSGlue.GetDatabases"}))
    assert (status, code) == (400, "InvalidSignatureException")
    assert "x-amz-target" in message


def test_a_declared_payload_hash_must_be_the_bodys(served: Served) -> None:
    request = glue_request(served, "GetDatabases")
    request.headers["X-Amz-Content-SHA256"] = "UNSIGNED-PAYLOAD"
    sign(request, served.credentials.key_id, served.credentials.secret)
    assert error(send(served, request))[1] == "InvalidSignatureException"


def test_a_presigned_request_is_answered_until_it_expires(served: Served) -> None:
    request = glue_request(served, "GetDatabases", b"")
    SigV4QueryAuth(
        BotoCredentials(served.credentials.key_id, served.credentials.secret), "glue", REGION, 60
    ).add_auth(request)
    assert "X-Amz-Signature=" in request.url and "Authorization" not in request.headers
    assert send(served, request)[0] == 200

    old = glue_request(served, "GetDatabases", b"")
    with pytest.MonkeyPatch.context() as clock:
        clock.setattr("botocore.auth.get_current_datetime", lambda: datetime.now(UTC) - timedelta(minutes=2))
        SigV4QueryAuth(
            BotoCredentials(served.credentials.key_id, served.credentials.secret), "glue", REGION, 60
        ).add_auth(old)
    status, code, message = error(send(served, old))
    assert (status, code) == (400, "InvalidSignatureException")
    assert message.startswith("Signature expired:")


def test_a_refused_request_changes_nothing(served: Served) -> None:
    request = glue_request(served, "CreateDatabase", {"DatabaseInput": {"Name": "a"}})
    sign(request, served.credentials.key_id, "wrong")
    assert send(served, request)[0] == 400
    assert served.catalog.get_databases()["DatabaseList"] == []


def test_a_declared_body_over_the_limit_is_refused_before_it_is_sent(
    warehouse: str, credentials: Any, certificate: Any
) -> None:
    from gluecat import Catalog

    served = Served(Catalog(warehouse), credentials, certificate, max_body=1000)
    try:
        context = ssl.create_default_context(cafile=served.ca_bundle)
        with (
            socket.create_connection(("127.0.0.1", served.server.port), timeout=10) as raw,
            context.wrap_socket(raw, server_hostname="127.0.0.1") as tls,
        ):
            tls.sendall(
                b"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Amz-Target: AWSGlue.GetDatabases\r\n"
                b"Content-Length: 1000000000\r\n\r\n"
            )
            # Answered, and the connection closed, without waiting for a gigabyte.
            reply = b"".join(iter(lambda: tls.recv(65536), b"")).decode()
        assert reply.startswith("HTTP/1.1 413")
        assert '"__type":"RequestEntityTooLargeException"' in reply
        with pytest.raises(served.client().exceptions.ClientError, match="RequestEntityTooLargeException"):
            served.client().create_database(DatabaseInput={"Name": "a", "Description": "x" * 2000})
        assert served.catalog.get_databases()["DatabaseList"] == []
    finally:
        served.stop()


@pytest.mark.parametrize(
    "date", ["20261301T000000Z", "20260230T000000Z", "2026-01-01T00:00:00Z", "yesterday"]
)
def test_an_x_amz_date_that_is_no_basic_iso_8601_time_is_an_incomplete_signature(
    served: Served, date: str
) -> None:
    request = glue_request(served, "GetDatabases")
    request.headers["X-Amz-Date"] = date
    reply = send(
        served,
        request,
        Authorization="AWS4-HMAC-SHA256 Credential=a/b/c/d/e, SignedHeaders=host, Signature=00",
    )
    status, code, message = error(reply)
    assert (status, code) == (400, "IncompleteSignatureException")
    assert message.startswith(f"Date must be in ISO-8601 'basic format'. Got '{date}'.")
