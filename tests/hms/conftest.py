"""A gluecat Hive Metastore endpoint over a small lake, on 127.0.0.1, over HTTP and HTTPS."""

from __future__ import annotations

import base64
import ssl
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from thrift.protocol import TBinaryProtocol, TJSONProtocol
from thrift.transport import THttpClient

from gluecat import Catalog
from gluecat.hms.gen.hive_metastore import ThriftHiveMetastore
from gluecat.hms.server import HiveMetastoreServer
from gluecat.serving import users
from tests.certificates import make_certificate

PASSWORD = "s3cret pass:word"


def make_lake(warehouse: str) -> Catalog:
    glue = Catalog(warehouse)
    glue.create_database(
        DatabaseInput={"Name": "sales", "Description": "sales data", "LocationUri": "s3://lake/sales"}
    )
    glue.create_database(DatabaseInput={"Name": "crm", "Parameters": {"owner": "crm-team"}})
    columns = [{"Name": "id", "Type": "bigint"}, {"Name": "amount", "Type": "double", "Comment": "USD"}]
    glue.create_table(
        DatabaseName="sales",
        TableInput={
            "Name": "orders",
            "Owner": "etl",
            "TableType": "EXTERNAL_TABLE",
            "Parameters": {"classification": "parquet"},
            "StorageDescriptor": {
                "Columns": columns,
                "Location": "s3://lake/sales/orders",
                "InputFormat": "org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat",
                "OutputFormat": "org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat",
                "SerdeInfo": {
                    "SerializationLibrary": "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe"
                },
            },
            "PartitionKeys": [{"Name": "Country", "Type": "string"}, {"Name": "dt", "Type": "string"}],
        },
    )
    glue.create_table(
        DatabaseName="sales",
        TableInput={
            "Name": "order_items",
            "StorageDescriptor": {"Columns": columns},
            "TableType": "GOVERNED",
        },
    )
    glue.create_table(
        DatabaseName="sales",
        TableInput={"Name": "big_orders", "TableType": "VIRTUAL_VIEW", "ViewOriginalText": "select 1"},
    )
    parts = [
        {"Values": [c, d], "StorageDescriptor": {"Location": f"s3://lake/sales/orders/{c}/{d}"}}
        for c in ("US", "UK", "a/b=c")
        for d in ("2024-01-01", "2024-01-02")
    ]
    glue.batch_create_partition(DatabaseName="sales", TableName="orders", PartitionInputList=parts)
    return glue


@pytest.fixture(scope="package")
def lake(tmp_path_factory: pytest.TempPathFactory) -> Catalog:
    return make_lake(str(tmp_path_factory.mktemp("hms") / "warehouse"))


@pytest.fixture(scope="package")
def users_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("users") / "users.json"
    users.add(path, "alice", PASSWORD, n=2**10)  # a cheaper hash than the default, for test speed
    return path


@pytest.fixture(scope="package")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1, made with the cryptography package."""
    return make_certificate(tmp_path_factory.mktemp("tls"))


@pytest.fixture(scope="package")
def http_server(lake: Catalog, users_file: Path) -> Iterator[HiveMetastoreServer]:
    server = HiveMetastoreServer(lake, users_file, path="/hms").start()
    yield server
    server.stop()


@pytest.fixture(scope="package")
def https_server(
    lake: Catalog, users_file: Path, certificate: tuple[Path, Path]
) -> Iterator[HiveMetastoreServer]:
    cert, key = certificate
    server = HiveMetastoreServer(lake, users_file, path="/hms", tls_cert=str(cert), tls_key=str(key)).start()
    yield server
    server.stop()


def basic(user: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


def client(server: HiveMetastoreServer, protocol: str, cafile: Path | None = None) -> Any:
    """A client made of the Apache thrift library's own pieces: THttpClient and a protocol."""
    context = ssl.create_default_context(cafile=str(cafile)) if cafile else None
    transport = THttpClient.THttpClient(server.url, ssl_context=context)
    headers = {"Authorization": basic("alice", PASSWORD)}
    if protocol == "json":
        headers["Content-Type"] = "application/vnd.apache.thrift.json"
        proto = TJSONProtocol.TJSONProtocol(transport)
    else:
        proto = TBinaryProtocol.TBinaryProtocol(transport)
    transport.setCustomHeaders(headers)
    return ThriftHiveMetastore.Client(proto)


def databases(server: HiveMetastoreServer, protocol: str = "json") -> list[str]:
    """One get_all_databases call through a fresh client, closed afterwards."""
    c = client(server, protocol)
    try:
        return list(c.get_all_databases())
    finally:
        c._iprot.trans.close()
