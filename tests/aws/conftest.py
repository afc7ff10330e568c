"""A served warehouse per test, boto3 clients of it, and requests signed (or not) by botocore's signer."""

from __future__ import annotations

import http.client
import json
import ssl
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials as BotoCredentials

from gluecat import Catalog
from tests.aws_wire import REGION, Credentials, Served, make_credentials
from tests.certificates import make_certificate


@pytest.fixture(scope="package")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return make_certificate(tmp_path_factory.mktemp("tls"))


@pytest.fixture(scope="package")
def credentials(tmp_path_factory: pytest.TempPathFactory) -> Credentials:
    return make_credentials(tmp_path_factory.mktemp("users"))


@pytest.fixture
def served(warehouse: str, credentials: Credentials, certificate: tuple[Path, Path]) -> Iterator[Served]:
    server = Served(Catalog(warehouse), credentials, certificate)
    yield server
    server.stop()


@pytest.fixture
def glue(served: Served) -> Any:
    return served.client()


def sign(
    request: AWSRequest,
    key_id: str,
    secret: str,
    *,
    service: str = "glue",
    region: str = REGION,
    at: datetime | None = None,
) -> None:
    """Sign with botocore's own SigV4Auth, with its clock set to ``at`` if given."""
    with pytest.MonkeyPatch.context() as clock:
        if at is not None:
            clock.setattr("botocore.auth.get_current_datetime", lambda: at)
        SigV4Auth(BotoCredentials(key_id, secret), service, region).add_auth(request)


def glue_request(served: Served, operation: str, body: Any = None) -> AWSRequest:
    """An unsigned Glue JSON 1.1 request, as botocore would build it."""
    data = body if isinstance(body, bytes) else json.dumps(body or {}).encode()
    return AWSRequest(
        method="POST",
        url=served.url + "/",
        data=data,
        headers={"X-Amz-Target": f"AWSGlue.{operation}", "Content-Type": "application/x-amz-json-1.1"},
    )


def send(served: Served, request: AWSRequest, **extra_headers: str) -> tuple[int, dict[str, str], Any]:
    """Send a prepared request over HTTPS; (status, headers, JSON body or raw bytes)."""
    prepared = request.prepare()
    context = ssl.create_default_context(cafile=served.ca_bundle)
    connection = http.client.HTTPSConnection("127.0.0.1", served.server.port, context=context, timeout=10)
    try:
        path = prepared.url.split(served.url, 1)[1] or "/"
        headers = {k: v for k, v in prepared.headers.items()}
        headers.update(extra_headers)
        connection.request(prepared.method, path, body=prepared.body, headers=headers)
        response = connection.getresponse()
        raw = response.read()
        reply_headers = {k.lower(): v for k, v in response.getheaders()}
    finally:
        connection.close()
    try:
        parsed: Any = json.loads(raw)
    except ValueError:
        parsed = raw
    return response.status, reply_headers, parsed
