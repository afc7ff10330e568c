"""pytest fixtures for object-store tests, loaded for the whole suite by tests/conftest.py.

Each server starts once per test run, on first use, and stops at the end of the run; each bucket
fixture makes a fresh bucket (a container on Azure) per test. A server that is not installed fails the
test that needs it, with the command that installs it: it is never skipped.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import pytest

from tests.object_stores import servers
from tests.object_stores.proxy import Proxy, start_proxy

Bucket = TypeVar("Bucket", servers.S3Bucket, servers.GCSBucket, servers.AzureContainer)


def serve(manager: Callable[[], contextlib.AbstractContextManager[Any]]) -> Iterator[Any]:
    try:
        with manager() as server:
            yield server
            return
    except servers.ServerNotInstalled as error:
        missing = str(error)
    pytest.fail(missing, pytrace=False)  # outside the except: the message alone, no chained traceback


def use(monkeypatch: pytest.MonkeyPatch, bucket: Any) -> str:
    """The environment a client of ``bucket`` has (processes a test starts inherit it), and a warehouse
    URI in it."""
    for name, value in bucket.env.items():
        monkeypatch.setenv(name, value)
    return f"{bucket.url}/warehouse"


@pytest.fixture(scope="session")
def moto_s3_server() -> Iterator[servers.S3Server]:
    yield from serve(servers.moto_s3)


@pytest.fixture(scope="session")
def versitygw_server() -> Iterator[servers.S3Server]:
    yield from serve(servers.versitygw)


@pytest.fixture(scope="session")
def fake_gcs_server() -> Iterator[servers.GCSServer]:
    yield from serve(servers.fake_gcs)


@pytest.fixture(scope="session")
def azurite_server() -> Iterator[servers.AzureServer]:
    yield from serve(servers.azurite)


S3_SERVER_FIXTURES = {"moto": "moto_s3_server", "versitygw": "versitygw_server"}


@pytest.fixture(scope="session", params=sorted(S3_SERVER_FIXTURES))
def s3_server(request: pytest.FixtureRequest) -> servers.S3Server:
    """Each S3 server in turn: moto's, and versitygw (a real S3 implementation)."""
    server: servers.S3Server = request.getfixturevalue(S3_SERVER_FIXTURES[request.param])
    return server


@pytest.fixture
def s3_bucket(s3_server: servers.S3Server) -> servers.S3Bucket:
    """A fresh bucket on each S3 server in turn."""
    return s3_server.new_bucket()


@pytest.fixture
def moto_bucket(moto_s3_server: servers.S3Server) -> servers.S3Bucket:
    return moto_s3_server.new_bucket()


@pytest.fixture
def versitygw_bucket(versitygw_server: servers.S3Server) -> servers.S3Bucket:
    return versitygw_server.new_bucket()


@pytest.fixture
def gcs_bucket(fake_gcs_server: servers.GCSServer) -> servers.GCSBucket:
    return fake_gcs_server.new_bucket()


@pytest.fixture
def azure_container(azurite_server: servers.AzureServer) -> servers.AzureContainer:
    return azurite_server.new_bucket()


STYLES = {servers.S3Bucket: "s3", servers.GCSBucket: "gcs", servers.AzureContainer: "azure"}


@pytest.fixture
def proxied() -> Iterator[Callable[..., tuple[Proxy, Any]]]:
    """``proxied(bucket, latency=0.0)``: a proxy in front of the bucket's server, and the bucket through it.

    Every proxy it starts is stopped at the end of the test.
    """
    with contextlib.ExitStack() as stack:

        def start(bucket: Bucket, latency: float = 0.0) -> tuple[Proxy, Bucket]:
            proxy = stack.enter_context(start_proxy(bucket.endpoint, STYLES[type(bucket)], latency))  # type: ignore[arg-type]
            return proxy, bucket.through(proxy.endpoint)

        yield start
