"""gluecat serving the AWS APIs over HTTPS on 127.0.0.1, and real boto3 clients of it.

Shared by tests/aws (the endpoint's own tests) and tests/api (the API suite run over the wire).
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import boto3
from botocore.config import Config

from gluecat.aws import keys
from gluecat.aws.endpoint import AwsEndpoint
from gluecat.aws.route import aws_route
from gluecat.hms.server import HiveMetastoreServer
from tests.object_stores.servers import free_port, process

REGION = "us-east-1"
USER = "alice"

# One botocore session for every client: it loads each service model once.
_session = boto3.session.Session()


@dataclass(frozen=True)
class Credentials:
    users_file: Path
    key_id: str
    secret: str


def make_credentials(folder: Path) -> Credentials:
    """A users file with one access key of user alice."""
    folder.mkdir(parents=True, exist_ok=True)
    users_file = folder / "users.json"
    key_id, secret = keys.add(users_file, USER)
    return Credentials(users_file, key_id, secret)


class Served:
    """A catalog served over HTTPS, the Hive Metastore protocol and the AWS APIs on one port."""

    def __init__(
        self, catalog: Any, credentials: Credentials, certificate: tuple[Path, Path], **endpoint: Any
    ) -> None:
        self.catalog = catalog
        self.credentials = credentials
        self.ca_bundle = str(certificate[0])
        self.endpoint = AwsEndpoint(
            catalog, keys.AccessKeys(credentials.users_file), region=REGION, **endpoint
        )
        self.server = HiveMetastoreServer(
            catalog,
            credentials.users_file,
            tls_cert=str(certificate[0]),
            tls_key=str(certificate[1]),
            routes=[aws_route(self.endpoint)],
        ).start()
        self.url = f"https://127.0.0.1:{self.server.port}"

    def client(self, service: str = "glue", *, secret: str | None = None, **config: Any) -> Any:
        """A boto3 client of this server; no retries, so that each call is one request."""
        return _session.client(
            service,
            endpoint_url=self.url,
            region_name=config.pop("region_name", REGION),
            aws_access_key_id=config.pop("aws_access_key_id", self.credentials.key_id),
            aws_secret_access_key=secret if secret is not None else self.credentials.secret,
            verify=self.ca_bundle,
            config=Config(retries={"max_attempts": 1}, **config),
        )

    def stop(self) -> None:
        self.server.stop()


def sales_orders(warehouse: str, location: str) -> Any:
    """A gluecat Catalog of ``warehouse``, made with database sales and its table orders (an id column,
    partitioned by dt, its folder at ``location``)."""
    from gluecat import Catalog

    lake = Catalog(warehouse)
    lake.create_database(DatabaseInput={"Name": "sales"})
    lake.create_table(
        DatabaseName="sales",
        TableInput={
            "Name": "orders",
            "StorageDescriptor": {"Columns": [{"Name": "id", "Type": "bigint"}], "Location": location},
            "PartitionKeys": [{"Name": "dt", "Type": "string"}],
        },
    )
    return lake


@dataclass(frozen=True)
class ServeProcess:
    url: str
    thrift_port: int | None


@contextlib.contextmanager
def serve_processes(
    warehouse: str,
    credentials: Credentials,
    count: int,
    folder: Path,
    *,
    thrift: bool = False,
    options: tuple[str, ...] = (),
) -> Iterator[list[ServeProcess]]:
    """``count`` `gluecat serve` processes on one warehouse, as behind a load balancer (plain HTTP on
    127.0.0.1, and with ``thrift`` the Hive Metastore over binary Thrift on a TCP port of its own; the
    environment, an object store's configuration included, is theirs too), each with ``options``."""
    python = Path(__file__).resolve().parents[1] / "python"
    env = {**os.environ, "PYTHONPATH": str(python)}
    serve = [
        sys.executable,
        "-m",
        "gluecat",
        "serve",
        "-w",
        warehouse,
        "--users",
        str(credentials.users_file),
    ]
    with contextlib.ExitStack() as servers:
        started = []
        for _ in range(count):
            port, thrift_port = free_port(), free_port() if thrift else None
            command = [*serve, "--port", str(port), "--insecure-http", *options]
            if thrift_port is not None:
                command += ["--thrift-port", str(thrift_port)]
            also = () if thrift_port is None else (thrift_port,)
            servers.enter_context(process(command, port, f"serve-{port}", folder, env, also=also))
            started.append(ServeProcess(f"http://127.0.0.1:{port}", thrift_port))
        yield started
