"""A warehouse on S3, Google Cloud Storage or Azure Blob storage, through obstore.

obstore is Python over Rust's object_store crate, the one delta-rs commits its logs with: one API over
the three stores' conditional writes (``PutMode "create"``: S3's ``If-None-Match: *``, GCS's
``ifGenerationMatch=0``, Azure's ``If-None-Match: *``), listings that start after a key, and retries of
transient failures (5xx, SlowDown, timeouts, dropped connections) with backoff.

Configuration is the one each store's users already have:

- S3 is configured as botocore configures it (so as boto3 and the AWS CLI are): the endpoint from
  ``AWS_ENDPOINT_URL_S3`` / ``AWS_ENDPOINT_URL`` / the profile's ``endpoint_url`` or its ``services``
  section; credentials from the environment, ``AWS_PROFILE`` and ``~/.aws`` (SSO, roles and session
  tokens included, refreshed as they expire); ``AWS_REGION``; ``AWS_CA_BUNDLE`` / the profile's
  ``ca_bundle``; the profile's ``s3.addressing_style``. An ``http://`` endpoint (a local S3 server)
  works.
- GCS and Azure read their own environment variables, as object_store documents them
  (``GOOGLE_SERVICE_ACCOUNT``, ``GOOGLE_APPLICATION_CREDENTIALS``; ``AZURE_STORAGE_ACCOUNT_NAME``,
  ``AZURE_STORAGE_ACCOUNT_KEY``, ``AZURE_STORAGE_USE_EMULATOR``, ...), plus ``GCS_ENDPOINT_URL`` /
  ``STORAGE_EMULATOR_HOST`` and ``AZURE_STORAGE_ENDPOINT`` for an emulator's address.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import obstore
from obstore.exceptions import (
    AlreadyExistsError,
    BaseError,
    InvalidPathError,
    NotSupportedError,
    PermissionDeniedError,
    PreconditionError,
    UnauthenticatedError,
    UnknownConfigurationKeyError,
)

from gluecat.errors import StorageError
from gluecat.store.fs import Unanswered, WarehouseFS

if TYPE_CHECKING:
    from obstore.store import AzureConfig, ClientConfig, GCSConfig, RetryConfig, S3Config

_TIMEOUTS = {"connect_timeout": "10s", "timeout": "60s"}
_RETRIES: RetryConfig = {
    "max_retries": 10,
    "retry_timeout": timedelta(seconds=120),
    "backoff": {"init_backoff": timedelta(milliseconds=50), "max_backoff": timedelta(seconds=5), "base": 2},
}


class ObjectStoreFS(WarehouseFS):
    """A warehouse under a prefix of a bucket (or container)."""

    listing_is_cheap = True
    parallelism = 16
    takes_turns = True
    requests_may_land_late = True

    def __init__(self, store: Any, scheme: str, bucket: str, prefix: str) -> None:
        self.store = store
        self.scheme = scheme
        self.bucket = bucket
        self.prefix = prefix.strip("/")

    @classmethod
    def at(cls, warehouse: str) -> ObjectStoreFS:
        parts = urlsplit(warehouse)
        scheme = parts.scheme.lower()
        if scheme in ("s3", "s3a", "s3n"):
            bucket, prefix = parts.netloc, parts.path
            return cls(_s3_store(bucket), "s3", bucket, prefix)
        if scheme in ("gs", "gcs"):
            bucket, prefix = parts.netloc, parts.path
            return cls(_gcs_store(bucket), "gs", bucket, prefix)
        if scheme in ("az", "azure"):
            bucket, prefix = parts.netloc, parts.path
            return cls(_azure_store(bucket, None), "az", bucket, prefix)
        if scheme in ("abfs", "abfss"):
            container, _, host = parts.netloc.partition("@")
            account = host.split(".", 1)[0] if host else None
            return cls(_azure_store(container, account), "az", container, parts.path)
        raise StorageError(f"{warehouse}: not an object store URI gluecat commits to")

    def key(self, rel: str) -> str:
        return f"{self.prefix}/{rel}" if self.prefix else rel

    def uri(self, rel: str) -> str:
        return f"{self.scheme}://{self.bucket}/{self.key(rel)}"

    def exists(self, rel: str) -> bool:
        try:
            with self._failures(rel):
                obstore.head(self.store, self.key(rel))
        except FileNotFoundError:
            return False
        return True

    def read_bytes(self, rel: str) -> bytes:
        with self._failures(rel):
            return bytes(obstore.get(self.store, self.key(rel)).bytes())

    def write_new(self, rel: str, data: bytes) -> None:
        # Overwrite, not create: the name is this writer's own, and a retry of a write whose first
        # attempt landed must not fail.
        with self._failures(rel):
            obstore.put(self.store, self.key(rel), data, mode="overwrite", use_multipart=False)

    def publish(self, rel: str, data: bytes) -> bool:
        with self._failures(rel):
            try:
                obstore.put(self.store, self.key(rel), data, mode="create", use_multipart=False)
            except (AlreadyExistsError, PreconditionError):
                return False
        return True

    def replace(self, rel: str, data: bytes) -> None:
        with self._failures(rel):
            obstore.put(self.store, self.key(rel), data, mode="overwrite", use_multipart=False)

    def _folder(self, rel_dir: str) -> str:
        return self.key(rel_dir).rstrip("/") + "/"

    def list_names(self, rel_dir: str) -> list[str]:
        folder = self._folder(rel_dir)
        with self._failures(rel_dir):
            listed = obstore.list_with_delimiter(self.store, folder)
        return [m["path"][len(folder) :] for m in listed["objects"]]

    def list_after(self, rel_dir: str, after: str) -> list[str]:
        folder = self._folder(rel_dir)
        out = []
        with self._failures(rel_dir):
            for batch in obstore.list(self.store, folder, offset=folder + after):
                for meta in batch:
                    name = meta["path"][len(folder) :]
                    if "/" not in name:
                        out.append(name)
        return sorted(out)

    def list_folders(self, rel_dir: str) -> list[str]:
        folder = self._folder(rel_dir)
        with self._failures(rel_dir):
            listed = obstore.list_with_delimiter(self.store, folder)
        return [p[len(folder) :].rstrip("/") for p in listed["common_prefixes"]]

    def delete(self, rel: str) -> None:
        with contextlib.suppress(FileNotFoundError), self._failures(rel):
            obstore.delete(self.store, self.key(rel))

    def mtime(self, rel: str) -> datetime | None:
        try:
            with self._failures(rel):
                meta = obstore.head(self.store, self.key(rel))
        except FileNotFoundError:
            return None
        when: datetime = meta["last_modified"]
        return when if when.tzinfo is not None else when.replace(tzinfo=UTC)

    @contextlib.contextmanager
    def _failures(self, rel: str) -> Iterator[None]:
        """obstore's errors as a WarehouseFS raises them: OSError (PermissionError for credentials
        refused, Unanswered for a request that failed; StorageError for what no retry can help, a
        store that cannot do what was asked). The store tells a failed request from an answer by
        OSError: a commit whose write failed reads its name back to learn whether it landed
        (Log.publish), and a look that failed is only a look. obstore has retried what it could."""
        try:
            yield
        except (PermissionDeniedError, UnauthenticatedError) as e:
            raise PermissionError(f"{self.uri(rel)}: {_first_line(e)}") from e
        except (NotSupportedError, InvalidPathError, UnknownConfigurationKeyError) as e:
            raise StorageError(f"{self.uri(rel)}: {_first_line(e)}") from e  # no retry can help
        except BaseError as e:
            raise Unanswered(f"{self.uri(rel)}: {_first_line(e)}") from e


def _first_line(e: BaseException) -> str:
    """What an obstore error says, without the debug dump of the request it appends."""
    return str(e).strip().split("\n", 1)[0]


def _client_options(endpoint: str | None, ca_bundle: str | None = None) -> ClientConfig:
    options: ClientConfig = {"connect_timeout": _TIMEOUTS["connect_timeout"], "timeout": _TIMEOUTS["timeout"]}
    if endpoint is not None and endpoint.lower().startswith("http://"):
        options["allow_http"] = True
    if ca_bundle:
        try:
            with open(ca_bundle, "rb") as f:
                options["root_certificate"] = f.read()
        except OSError as e:
            raise StorageError(f"the CA bundle {ca_bundle} could not be read ({e})") from e
    return options


def _s3_store(bucket: str) -> Any:
    """An S3 bucket, configured as botocore configures an S3 client."""
    import botocore.configprovider
    import botocore.session

    session = botocore.session.Session()
    try:
        credentials = session.get_credentials()
        scoped = session.get_scoped_config()
    except Exception as e:  # a profile that does not exist, a malformed config file
        raise StorageError(f"s3://{bucket}: the AWS configuration could not be read ({e})") from e
    if credentials is None:
        raise StorageError(
            f"s3://{bucket}: no AWS credentials found (looked where boto3 looks: the environment, "
            "AWS_PROFILE and ~/.aws/credentials, ~/.aws/config, instance and container roles)"
        )
    region = session.get_config_variable("region") or "us-east-1"
    endpoint = None
    if not session.get_config_variable("ignore_configured_endpoint_urls"):
        endpoint = botocore.configprovider.ConfiguredEndpointProvider(
            full_config=session.full_config, scoped_config=scoped, client_name="s3"
        ).provide()
    addressing = ((scoped.get("s3") or {}) if isinstance(scoped.get("s3"), dict) else {}).get(
        "addressing_style"
    )
    # A configured endpoint (a local server, a gateway) is addressed by path unless the profile says
    # otherwise, as most such servers expect; AWS's own, by virtual host as botocore does.
    virtual = addressing == "virtual" if endpoint else addressing != "path"
    config: S3Config = {"region": region, "virtual_hosted_style_request": virtual}
    if endpoint:
        config["endpoint"] = endpoint.rstrip("/")
    from obstore.store import S3Store

    return S3Store(
        bucket,
        config=config,
        client_options=_client_options(endpoint, session.get_config_variable("ca_bundle")),
        retry_config=_RETRIES,
        credential_provider=_BotocoreCredentials(credentials),
    )


class _BotocoreCredentials:
    """obstore's credential callback over botocore's credentials (which refresh themselves: roles, SSO,
    session tokens)."""

    def __init__(self, credentials: Any) -> None:
        self.credentials = credentials
        self.lock = threading.Lock()

    def __call__(self) -> Any:
        with self.lock:
            frozen = self.credentials.get_frozen_credentials()
            expiry = getattr(self.credentials, "_expiry_time", None)
        return {
            "access_key_id": frozen.access_key,
            "secret_access_key": frozen.secret_key,
            "token": frozen.token,
            # Asked again a little before a refreshable credential expires; static ones never expire.
            "expires_at": expiry - timedelta(minutes=5) if isinstance(expiry, datetime) else None,
        }


_GOOGLE_CREDENTIALS = (
    "GOOGLE_SERVICE_ACCOUNT",
    "GOOGLE_SERVICE_ACCOUNT_PATH",
    "GOOGLE_SERVICE_ACCOUNT_KEY",
    "GOOGLE_APPLICATION_CREDENTIALS",
)


def _gcs_store(bucket: str) -> Any:
    from obstore.store import GCSStore

    # obstore reads GOOGLE_SERVICE_ACCOUNT, GOOGLE_BASE_URL and the rest itself; an emulator is named by
    # STORAGE_EMULATOR_HOST, as Google's own clients take it, and signs nothing.
    config: GCSConfig = {}
    emulator = os.environ.get("STORAGE_EMULATOR_HOST")
    endpoint = os.environ.get("GOOGLE_BASE_URL")
    if emulator and not endpoint:
        endpoint = emulator if "://" in emulator else f"http://{emulator}"
        config["base_url"] = endpoint.rstrip("/")
        config["skip_signature"] = True
        if not any(os.environ.get(name) for name in _GOOGLE_CREDENTIALS):
            # object_store asks the cloud's metadata server for a token before each write even when it
            # signs nothing (apache/arrow-rs-object-store#520): an account without OAuth stops it.
            config["service_account_key"] = json.dumps(
                {"disable_oauth": True, "client_email": "", "private_key": "", "private_key_id": ""}
            )
    return GCSStore(bucket, config=config, client_options=_client_options(endpoint), retry_config=_RETRIES)


def _azure_store(container: str, account: str | None) -> Any:
    from obstore.store import AzureStore

    # obstore reads AZURE_STORAGE_ACCOUNT_NAME, AZURE_STORAGE_ACCOUNT_KEY, AZURE_STORAGE_USE_EMULATOR
    # (Azurite) and the rest itself.
    config: AzureConfig = {}
    if account:
        config["account_name"] = account
    endpoint = os.environ.get("AZURE_STORAGE_ENDPOINT")
    return AzureStore(
        container, config=config, client_options=_client_options(endpoint), retry_config=_RETRIES
    )
