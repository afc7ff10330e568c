"""How gluecat reaches S3 for tables' data files (pyarrow's S3FileSystem), configured as whoever wrote them.

Spark reads and writes a table's files through Hadoop's S3A; gluecat moves, lists and deletes the same
files, so it must reach the same bucket with the same settings. Each setting is taken from the first of:

1. The S3A settings of the Spark application this process serves (``fs.s3a.bucket.<bucket>.<option>``,
   then ``fs.s3a.<option>``), which the Spark catalog hands over when it starts: ``endpoint`` (with
   ``connection.ssl.enabled`` for a scheme it does not name), ``endpoint.region``, ``path.style.access``,
   ``access.key``, ``secret.key``, ``session.token``.
2. The AWS chain, read by botocore as boto3 and the AWS CLI read it: the endpoint from
   ``AWS_ENDPOINT_URL_S3`` / ``AWS_ENDPOINT_URL`` or the profile's ``endpoint_url`` (its ``services``
   section too), the credentials (environment, ``AWS_PROFILE`` and ``~/.aws``, SSO, roles, instance
   metadata; refreshed as they expire), ``AWS_REGION`` / the profile's region, ``AWS_CA_BUNDLE`` / the
   profile's ``ca_bundle``, and the profile's ``s3.addressing_style``.

A bucket reached through an endpoint of its own (a local S3 server, MinIO) uses path-style requests
unless S3A's ``path.style.access`` is false or the profile's addressing style is ``virtual``.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import pyarrow.fs as pafs

_S3A_OPTIONS = (
    "endpoint",
    "endpoint.region",
    "connection.ssl.enabled",
    "path.style.access",
    "access.key",
    "secret.key",
    "session.token",
)
_lock = threading.Lock()
_hadoop: dict[str, str] = {}


@dataclass(frozen=True)
class S3Settings:
    """What one bucket is reached with."""

    endpoint: str | None = None
    """``host[:port]`` of an endpoint of its own; None for AWS's."""
    scheme: str = "https"
    region: str | None = None
    virtual_addressing: bool = False
    access_key: str | None = None
    secret_key: str | None = None
    session_token: str | None = None
    ca_bundle: str | None = None

    def __repr__(self) -> str:  # never the secrets, in a log or an error message
        return f"S3Settings(endpoint={self.endpoint!r}, scheme={self.scheme!r}, region={self.region!r})"


def use_hadoop_settings(settings: Mapping[str, str]) -> None:
    """The ``fs.s3a.*`` settings of the Spark application this process serves (the whole Hadoop keys, or
    those under ``fs.s3a.``); they replace any given before."""
    picked = {}
    for key, value in settings.items():
        name = key.removeprefix("fs.s3a.")
        option = name.split(".", 2)[2] if name.startswith("bucket.") and name.count(".") >= 2 else name
        if option in _S3A_OPTIONS and value is not None:
            picked[name] = str(value)
    with _lock:
        _hadoop.clear()
        _hadoop.update(picked)


def _s3a(bucket: str, option: str) -> str | None:
    with _lock:
        value = _hadoop.get(f"bucket.{bucket}.{option}", _hadoop.get(option))
    return value.strip() if value is not None and value.strip() else None


def _true(value: str | None, default: bool) -> bool:
    return default if value is None else value.lower() == "true"


@functools.cache
def _session() -> Any:
    """botocore's session: the AWS chain as boto3 and the AWS CLI read it, read once per process."""
    import botocore.session

    return botocore.session.get_session()


@functools.cache
def _configured_endpoint() -> tuple[str | None, str | None]:
    """The S3 endpoint the AWS chain configures (None for AWS's own), and its addressing style."""
    import botocore.config

    session = _session()
    region = session.get_config_variable("region") or "us-east-1"
    client = session.create_client("s3", region_name=region)
    # botocore's stubs predate this option (botocore 1.31): the client without configured endpoints
    unconfigured: Any = botocore.config.Config
    default = session.create_client(
        "s3", region_name=region, config=unconfigured(ignore_configured_endpoint_urls=True)
    )
    configured = client.meta.endpoint_url if client.meta.endpoint_url != default.meta.endpoint_url else None
    s3_config = getattr(client.meta.config, "s3", None) or {}
    return configured, s3_config.get("addressing_style")


def _chain_credentials() -> tuple[str | None, str | None, str | None]:
    creds = _session().get_credentials()
    if creds is None:
        return None, None, None
    frozen = creds.get_frozen_credentials()  # a refreshable one renews itself here when due
    return frozen.access_key, frozen.secret_key, frozen.token


def reset() -> None:
    """Forget the settings read so far (the Spark application's and the AWS chain's)."""
    with _lock:
        _hadoop.clear()
    _session.cache_clear()
    _configured_endpoint.cache_clear()
    _filesystem.cache_clear()
    _bucket_region.cache_clear()


def _endpoint(url: str, ssl: bool) -> tuple[str | None, str]:
    """``host[:port]`` and scheme of an endpoint written as a URL or as S3A's bare host; AWS's own
    endpoints (``s3.<region>.amazonaws.com``) are no endpoint of their own."""
    parts = urlsplit(url if "://" in url else f"{'https' if ssl else 'http'}://{url}")
    host = parts.netloc
    if host == "amazonaws.com" or host.endswith(".amazonaws.com"):
        return None, "https"
    return host, parts.scheme


def settings(bucket: str) -> S3Settings:
    """What ``bucket`` is reached with, by the rules in this module's docstring (the AWS chain is read only
    for what Spark's settings leave out)."""
    endpoint, scheme, path_style = None, "https", True
    s3a_endpoint = _s3a(bucket, "endpoint")
    if s3a_endpoint is not None:
        endpoint, scheme = _endpoint(s3a_endpoint, _true(_s3a(bucket, "connection.ssl.enabled"), True))
        path_style = _true(_s3a(bucket, "path.style.access"), False)
    else:
        url, addressing = _configured_endpoint()
        if url is not None:
            endpoint, scheme = _endpoint(url, True)
            path_style = addressing != "virtual"
    key, secret, token = _s3a(bucket, "access.key"), _s3a(bucket, "secret.key"), _s3a(bucket, "session.token")
    if key is None or secret is None:
        key, secret, token = _chain_credentials()
    region = _s3a(bucket, "endpoint.region") or _session().get_config_variable("region")
    if region is None:
        region = "us-east-1" if endpoint is not None else _bucket_region(bucket)
    return S3Settings(
        endpoint=endpoint,
        scheme=scheme,
        region=region,
        virtual_addressing=endpoint is not None and not path_style,
        access_key=key,
        secret_key=secret,
        session_token=token,
        ca_bundle=_session().get_config_variable("ca_bundle"),
    )


BUCKET_REGIONS_KEPT = 1024
"""Buckets whose regions are remembered: tables name their buckets, and a server whose clients make
tables over any number of them must not keep each for its life (one looked up again is one request)."""


@functools.lru_cache(maxsize=BUCKET_REGIONS_KEPT)
def _bucket_region(bucket: str) -> str:
    try:
        return pafs.resolve_s3_region(bucket)
    except OSError:
        return "us-east-1"


def filesystem(bucket: str) -> pafs.S3FileSystem:
    """The file system ``bucket`` is reached through (paths in it are ``<bucket>/<key>``)."""
    return _filesystem(settings(bucket))


@functools.lru_cache(maxsize=32)
def _filesystem(s: S3Settings) -> pafs.S3FileSystem:
    args: dict[str, Any] = {"region": s.region, "scheme": s.scheme}
    if s.endpoint is not None:
        args["endpoint_override"] = s.endpoint
        args["force_virtual_addressing"] = s.virtual_addressing
    if s.access_key is not None:
        args.update(access_key=s.access_key, secret_key=s.secret_key, session_token=s.session_token)
    else:
        args["anonymous"] = True  # no credentials anywhere: unsigned requests, as boto3 would fail to sign
    if s.ca_bundle is not None:
        args["tls_ca_file_path"] = s.ca_bundle
    return pafs.S3FileSystem(**args)
