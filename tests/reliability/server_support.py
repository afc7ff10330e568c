"""What the server's battery shares: a small lake, a users file, a certificate and raw clients."""

from __future__ import annotations

import base64
import http.client
import socket
import ssl
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from thrift.protocol import TBinaryProtocol, TJSONProtocol
from thrift.transport import TTransport

from gluecat import Catalog
from gluecat.hms.gen.hive_metastore import ThriftHiveMetastore
from gluecat.hms.server import HiveMetastoreServer
from gluecat.serving import users
from tests.certificates import make_certificate

PASSWORD = "battery pass:word"
JSON = "application/vnd.apache.thrift.json"
BINARY = "application/x-thrift"
LONG_NAME = "e" * 250


@dataclass(frozen=True)
class Address:
    """Where a server listens (a HiveMetastoreServer has the same attributes)."""

    host: str
    port: int
    path: str = "/"


def basic(user: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


AUTH = basic("alice", PASSWORD)


def message(name: str, protocol: str = "binary", **args: Any) -> bytes:
    """A Thrift call of ``name`` with ``args``, encoded as a client encodes it."""
    out = TTransport.TMemoryBuffer()
    proto = (TJSONProtocol.TJSONProtocol if protocol == "json" else TBinaryProtocol.TBinaryProtocol)(out)
    proto.writeMessageBegin(name, 1, 1)
    getattr(ThriftHiveMetastore, f"{name}_args")(**args).write(proto)
    proto.writeMessageEnd()
    return out.getvalue()


def reply(name: str, body: bytes) -> Any:
    """The ``success`` (or raised exception) of a binary reply of ``name``."""
    proto = TBinaryProtocol.TBinaryProtocol(TTransport.TMemoryBuffer(body))
    proto.readMessageBegin()
    result = getattr(ThriftHiveMetastore, f"{name}_result")()
    result.read(proto)
    for key, value in vars(result).items():
        if key != "success" and value is not None:
            return value
    return result.success


def make_lake(warehouse: str) -> Catalog:
    glue = Catalog(warehouse)
    glue.create_database(DatabaseInput={"Name": "sales"})
    glue.create_table(
        DatabaseName="sales",
        TableInput={
            "Name": "orders",
            "StorageDescriptor": {"Columns": [{"Name": "id", "Type": "bigint"}], "Location": "s3://l/o"},
            "PartitionKeys": [{"Name": "dt", "Type": "string"}],
        },
    )
    glue.create_table(DatabaseName="sales", TableInput={"Name": LONG_NAME})
    glue.batch_create_partition(
        DatabaseName="sales",
        TableName="orders",
        PartitionInputList=[{"Values": [f"2024-01-0{d}"]} for d in range(1, 4)],
    )
    return glue


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A self-signed ECDSA certificate for 127.0.0.1."""
    return make_certificate(tmp_path_factory.mktemp("tls"))


@pytest.fixture(scope="module")
def lake(tmp_path_factory: pytest.TempPathFactory) -> Catalog:
    return make_lake(str(tmp_path_factory.mktemp("battery") / "warehouse"))


@pytest.fixture
def users_file(tmp_path: Path) -> Path:
    path = tmp_path / "users.json"
    users.add(path, "alice", PASSWORD, n=2**10)  # a cheap hash, for test speed
    return path


@pytest.fixture
def https(lake: Catalog, users_file: Path, certificate: tuple[Path, Path]) -> Iterator[HiveMetastoreServer]:
    cert, key = certificate
    server = HiveMetastoreServer(lake, users_file, tls_cert=str(cert), tls_key=str(key)).start()
    yield server
    server.stop()


def post(
    server: HiveMetastoreServer | Address,
    body: bytes,
    *,
    cafile: Path | None = None,
    content_type: str = BINARY,
    authorization: str = AUTH,
    timeout: float = 5.0,
) -> tuple[int, bytes]:
    """One POST on a new connection: (status, body)."""
    if cafile is not None:
        context = ssl.create_default_context(cafile=str(cafile))
        conn: http.client.HTTPConnection = http.client.HTTPSConnection(
            server.host, server.port, timeout=timeout, context=context
        )
    else:
        conn = http.client.HTTPConnection(server.host, server.port, timeout=timeout)
    try:
        conn.request(
            "POST",
            server.path,
            body=body,
            headers={"Content-Type": content_type, "Authorization": authorization},
        )
        resp = conn.getresponse()
        return resp.status, resp.read()
    finally:
        conn.close()


def get_table(server: HiveMetastoreServer | Address, cafile: Path | None = None, timeout: float = 5.0) -> Any:
    status, body = post(
        server, message("get_table", dbname="sales", tbl_name="orders"), cafile=cafile, timeout=timeout
    )
    assert status == 200, (status, body)
    return reply("get_table", body)


def connect(server: HiveMetastoreServer | Address) -> socket.socket:
    return socket.create_connection((server.host, server.port), timeout=5)
