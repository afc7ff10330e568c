"""Object-store servers on 127.0.0.1, each started by a context manager and stopped when it exits.

    with servers.moto_s3() as server:          # or versitygw(), fake_gcs(), azurite()
        bucket = server.new_bucket()           # a fresh bucket (a container on Azure) per call
        bucket.store()                         # an obstore store on it
        bucket.client()                        # the service's own client (boto3, azure-storage-blob)
        bucket.env                             # the variables a client reads to reach it
        bucket.through(proxy.endpoint)         # the same bucket, reached through a proxy

Each server runs as a process of its own (moto too, unless ``thread=True``), on a free port, with its
data in a temporary folder or in memory, and is stopped (then killed, if it lingers) on exit.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.object_stores import install

HOST = "127.0.0.1"
ACCESS_KEY_ID = "AKIAGLUECATTESTING01"
SECRET_ACCESS_KEY = "gluecat-object-store-tests-secret"
REGION = "us-east-1"
# Azurite's own development account, which every Azure client knows as the emulator's.
AZURE_ACCOUNT = "devstoreaccount1"
AZURE_KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
START_TIMEOUT = 60.0


class ServerNotInstalled(RuntimeError):
    """A server this test needs is not installed; the message says how to install it."""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def unique_name(prefix: str) -> str:
    """A bucket or container name valid on S3, GCS and Azure: lower case, digits and hyphens."""
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


@contextlib.contextmanager
def process(
    command: list[str],
    port: int,
    name: str,
    cwd: Path,
    env: dict[str, str] | None = None,
    *,
    also: tuple[int, ...] = (),
) -> Iterator[None]:
    """Runs ``command`` until the block ends; returns once something listens on ``port`` (and on each
    port of ``also``)."""
    log_path = cwd / f"{name}.log"
    with log_path.open("wb") as log:
        child = subprocess.Popen(
            ended_with_this_process(command),
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + START_TIMEOUT
        for listening in (port, *also):
            while True:
                if child.poll() is not None:
                    raise RuntimeError(f"{name} exited with {child.returncode} at start:\n{tail(log_path)}")
                with contextlib.suppress(OSError), socket.create_connection((HOST, listening), timeout=1):
                    break
                if time.monotonic() > deadline:
                    raise RuntimeError(
                        f"{name} did not listen on {HOST}:{listening} in {START_TIMEOUT:.0f} s:\n{tail(log_path)}"
                    )
                time.sleep(0.05)
        yield
    finally:
        child.terminate()
        try:
            child.wait(timeout=10)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()


def ended_with_this_process(command: list[str]) -> list[str]:
    """``command``, made to receive SIGTERM if the thread that starts it ends first.

    So a test run that is killed (a CI time limit, ^C twice) leaves no server behind. The thread, not
    the process: start servers from a thread that outlives them (pytest's fixtures run in the main one).
    """
    setpriv = shutil.which("setpriv")  # util-linux, on every Debian
    return command if setpriv is None else [setpriv, "--pdeathsig", "TERM", "--", *command]


def tail(path: Path, lines: int = 30) -> str:
    return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])


_install_tried: set[str] = set()


def installed(name: str) -> str:
    """The server's program, installed on first need in a checkout where it is not (README's test command
    on a fresh machine; .ci/run installs them all beforehand, meanwhile)."""
    executable = install.executable(name)
    if executable is None and name not in _install_tried:
        _install_tried.add(name)
        ok, _, output = install.install([name])[name]
        if not ok:
            raise ServerNotInstalled(f"{install.not_installed(name)}\n{output.strip()[-2000:]}")
        executable = install.executable(name)
    if executable is None:
        raise ServerNotInstalled(install.not_installed(name))
    return str(executable)


# S3: moto's server mode and versitygw.


@dataclass(frozen=True)
class S3Bucket:
    server: str
    endpoint: str
    bucket: str
    access_key_id: str = ACCESS_KEY_ID
    secret_access_key: str = SECRET_ACCESS_KEY
    region: str = REGION

    @property
    def url(self) -> str:
        return f"s3://{self.bucket}"

    @property
    def env(self) -> dict[str, str]:
        """What boto3, pyarrow and obstore read to reach this bucket with no other configuration."""
        return {
            "AWS_ENDPOINT_URL_S3": self.endpoint,
            "AWS_ACCESS_KEY_ID": self.access_key_id,
            "AWS_SECRET_ACCESS_KEY": self.secret_access_key,
            "AWS_REGION": self.region,
            "AWS_DEFAULT_REGION": self.region,
            "AWS_ALLOW_HTTP": "true",  # obstore refuses an http:// endpoint without it
            "AWS_EC2_METADATA_DISABLED": "true",  # never ask an instance metadata service for keys
        }

    def through(self, endpoint: str) -> S3Bucket:
        return dataclasses.replace(self, endpoint=endpoint)

    def client(self, **config: Any) -> Any:
        import boto3
        from botocore.config import Config

        return boto3.client(
            "s3",
            endpoint_url=self.endpoint,
            aws_access_key_id=self.access_key_id,
            aws_secret_access_key=self.secret_access_key,
            region_name=self.region,
            config=Config(s3={"addressing_style": "path"}, **config),
        )

    def store(self, prefix: str | None = None, **options: Any) -> Any:
        from obstore.store import S3Store

        client_options = {"allow_http": True, **options.pop("client_options", {})}
        return S3Store(
            self.bucket,
            prefix=prefix,
            endpoint=self.endpoint,
            access_key_id=self.access_key_id,
            secret_access_key=self.secret_access_key,
            region=self.region,
            client_options=client_options,
            **options,
        )


@dataclass(frozen=True)
class S3Server:
    name: str
    endpoint: str

    def new_bucket(self, prefix: str | None = None) -> S3Bucket:
        bucket = S3Bucket(self.name, self.endpoint, unique_name(prefix or self.name))
        bucket.client().create_bucket(Bucket=bucket.bucket)
        return bucket


@contextlib.contextmanager
def moto_s3(thread: bool = False) -> Iterator[S3Server]:
    """moto's S3 in server mode: a process of its own, or a thread of this one where that is enough."""
    port = free_port()
    if thread:
        from moto.server import ThreadedMotoServer

        server = ThreadedMotoServer(ip_address=HOST, port=port, verbose=False)
        server.start()
        try:
            yield S3Server("moto", f"http://{HOST}:{port}")
        finally:
            server.stop()
        return
    with tempfile.TemporaryDirectory(prefix="moto-") as folder:
        command = [sys.executable, "-m", "moto.server", "-H", HOST, "-p", str(port)]
        with process(command, port, "moto", Path(folder)):
            yield S3Server("moto", f"http://{HOST}:{port}")


@contextlib.contextmanager
def versitygw() -> Iterator[S3Server]:
    """versitygw serving S3 from a temporary folder (one sub-folder per bucket)."""
    executable = installed("versitygw")
    port = free_port()
    with tempfile.TemporaryDirectory(prefix="versitygw-") as folder:
        root = Path(folder) / "buckets"
        root.mkdir()
        command = [
            executable,
            "--access",
            ACCESS_KEY_ID,
            "--secret",
            SECRET_ACCESS_KEY,
            "--region",
            REGION,
            "--port",
            f"{HOST}:{port}",
            "--keep-alive",  # as S3 does; versitygw closes each connection after one request otherwise
            "--quiet",
            "posix",
            str(root),
        ]
        with process(command, port, "versitygw", Path(folder)):
            yield S3Server("versitygw", f"http://{HOST}:{port}")


S3_SERVERS = {"moto": moto_s3, "versitygw": versitygw}


# GCS: fake-gcs-server.


@dataclass(frozen=True)
class GCSBucket:
    server: str
    endpoint: str
    bucket: str
    folder: Path  # where service-account files for obstore are written

    @property
    def url(self) -> str:
        return f"gs://{self.bucket}"

    @property
    def service_account(self) -> Path:
        """The service-account file obstore (Rust's object_store) reads: endpoint, and no OAuth."""
        port = self.endpoint.rsplit(":", 1)[1]
        path = self.folder / f"service-account-{port}.json"
        if not path.exists():
            account = {
                "gcs_base_url": self.endpoint,
                "disable_oauth": True,
                "client_email": "",
                "private_key": "",
                "private_key_id": "",
            }
            path.write_text(json.dumps(account))
        return path

    @property
    def env(self) -> dict[str, str]:
        return {
            "STORAGE_EMULATOR_HOST": self.endpoint,  # Google's own clients
            "GOOGLE_SERVICE_ACCOUNT": str(self.service_account),  # obstore
            "GOOGLE_CLOUD_PROJECT": "gluecat-tests",
        }

    def through(self, endpoint: str) -> GCSBucket:
        return dataclasses.replace(self, endpoint=endpoint)

    def store(self, prefix: str | None = None, **options: Any) -> Any:
        from obstore.store import GCSStore

        client_options = {"allow_http": True, **options.pop("client_options", {})}
        return GCSStore(
            self.bucket,
            prefix=prefix,
            service_account=str(self.service_account),
            client_options=client_options,
            **options,
        )

    def upload(self, name: str, data: bytes, if_generation_match: int | None = None) -> int:
        """An upload through GCS's JSON API (what fake-gcs-server implements); its HTTP status."""
        query = urllib.parse.urlencode(
            {"uploadType": "media", "name": name}
            | ({} if if_generation_match is None else {"ifGenerationMatch": if_generation_match})
        )
        url = f"{self.endpoint}/upload/storage/v1/b/{self.bucket}/o?{query}"
        request = urllib.request.Request(
            url, data=data, method="POST", headers={"Content-Type": "application/octet-stream"}
        )
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return int(response.status)
        except urllib.error.HTTPError as error:
            return int(error.code)


@dataclass(frozen=True)
class GCSServer:
    name: str
    endpoint: str
    folder: Path

    def new_bucket(self, prefix: str | None = None) -> GCSBucket:
        bucket = GCSBucket(self.name, self.endpoint, unique_name(prefix or "gcs"), self.folder)
        request = urllib.request.Request(
            f"{self.endpoint}/storage/v1/b?project=gluecat-tests",
            data=json.dumps({"name": bucket.bucket}).encode(),
            method="POST",
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            assert response.status == 200, response.status
        return bucket


@contextlib.contextmanager
def fake_gcs() -> Iterator[GCSServer]:
    """fake-gcs-server keeping objects in memory.

    Its public host is 127.0.0.1 without a port, so that requests through a proxy on another port are
    routed as the ones sent to it directly (it compares the Host header with it).
    """
    executable = installed("fake-gcs-server")
    port = free_port()
    endpoint = f"http://{HOST}:{port}"
    with tempfile.TemporaryDirectory(prefix="fake-gcs-") as folder:
        command = [
            executable,
            "-scheme",
            "http",
            "-host",
            HOST,
            "-port",
            str(port),
            "-backend",
            "memory",
            "-public-host",
            HOST,
            "-external-url",
            endpoint,
            "-log-level",
            "warn",
        ]
        with process(command, port, "fake-gcs-server", Path(folder)):
            yield GCSServer("fake-gcs-server", endpoint, Path(folder))


# Azure Blob: Azurite.


@dataclass(frozen=True)
class AzureContainer:
    server: str
    endpoint: str  # the account's blob endpoint: http://127.0.0.1:PORT/devstoreaccount1
    container: str
    account: str = AZURE_ACCOUNT
    key: str = AZURE_KEY

    @property
    def url(self) -> str:
        return f"az://{self.container}"

    @property
    def connection_string(self) -> str:
        return f"DefaultEndpointsProtocol=http;AccountName={self.account};AccountKey={self.key};BlobEndpoint={self.endpoint};"

    @property
    def env(self) -> dict[str, str]:
        return {
            "AZURE_STORAGE_ACCOUNT_NAME": self.account,  # obstore
            "AZURE_STORAGE_ACCOUNT_KEY": self.key,
            "AZURE_STORAGE_ENDPOINT": self.endpoint,
            "AZURE_ALLOW_HTTP": "true",
            "AZURE_STORAGE_CONNECTION_STRING": self.connection_string,  # Azure's own clients
        }

    def through(self, endpoint: str) -> AzureContainer:
        return dataclasses.replace(self, endpoint=f"{endpoint}/{self.account}")

    def client(self) -> Any:
        from azure.storage.blob import ContainerClient

        return ContainerClient.from_connection_string(self.connection_string, self.container)

    def store(self, prefix: str | None = None, **options: Any) -> Any:
        from obstore.store import AzureStore

        client_options = {"allow_http": True, **options.pop("client_options", {})}
        return AzureStore(
            self.container,
            prefix=prefix,
            account_name=self.account,
            account_key=self.key,
            endpoint=self.endpoint,
            client_options=client_options,
            **options,
        )


@dataclass(frozen=True)
class AzureServer:
    name: str
    endpoint: str

    def new_bucket(self, prefix: str | None = None) -> AzureContainer:
        container = AzureContainer(self.name, self.endpoint, unique_name(prefix or "azure"))
        container.client().create_container()
        return container


@contextlib.contextmanager
def azurite() -> Iterator[AzureServer]:
    """Azurite's Blob service, in memory, without telemetry (it would otherwise report to Microsoft)."""
    executable = installed("azurite")
    port = free_port()
    with tempfile.TemporaryDirectory(prefix="azurite-") as folder:
        command = [
            executable,
            "--blobHost",
            HOST,
            "--blobPort",
            str(port),
            "--inMemoryPersistence",
            "--disableTelemetry",
            # The Azure SDK speaks a newer API version than Azurite knows; its requests are the same.
            "--skipApiVersionCheck",
            "--blobKeepAliveTimeout",
            "60",
            "--silent",
        ]
        with process(command, port, "azurite", Path(folder)):
            yield AzureServer("azurite", f"http://{HOST}:{port}/{AZURE_ACCOUNT}")
