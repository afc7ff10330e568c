"""The API suite runs twice: on ``gluecat.Catalog`` in this process (``[python]``), and on boto3's Glue
client against ``gluecat serve``'s AWS endpoint over HTTPS (``[wire]``), expecting the same results.

Every test that takes the ``catalog`` fixture (directly or through one built on it) is parametrised so,
unless it is marked ``in_process``: it reaches into the Python objects (the store, a second Catalog on
the warehouse, explain_partitions) or into Python's own calling conventions. The wire client has
parameter validation off, so that malformed requests reach the server and its own validation answers;
errors are caught as ``catalog.exceptions.X``, which both kinds of client offer. The served Catalog's
responses are checked against botocore's output shapes too (the recorder below patches the class).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from gluecat import Catalog, LakeFormation
from gluecat.api.service import operations
from tests.aws_wire import Credentials, Served, make_credentials
from tests.certificates import make_certificate

from .response_shapes import problems


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "catalog" in metafunc.fixturenames or "governed" in metafunc.fixturenames:
        in_process = metafunc.definition.get_closest_marker("in_process") is not None
        metafunc.parametrize("api", ["python"] if in_process else ["python", "wire"], indirect=True)


@pytest.fixture
def api(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(scope="session")
def wire_certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return make_certificate(tmp_path_factory.mktemp("api-tls"))


@pytest.fixture(scope="session")
def wire_credentials(tmp_path_factory: pytest.TempPathFactory) -> Credentials:
    return make_credentials(tmp_path_factory.mktemp("api-users"))


@pytest.fixture
def catalog(api: str, warehouse: str, request: pytest.FixtureRequest) -> Any:
    if api == "python":
        return Catalog(warehouse)
    served = Served(
        Catalog(warehouse),
        request.getfixturevalue("wire_credentials"),
        request.getfixturevalue("wire_certificate"),
    )
    request.addfinalizer(served.stop)
    return served.client(parameter_validation=False)


@dataclass
class Governed:
    """A Glue client and a Lake Formation client of one warehouse: gluecat.Catalog and
    gluecat.LakeFormation sharing it (``[python]``), or boto3's glue and lakeformation clients of a
    server that serves both (``[wire]``)."""

    glue: Any
    lf: Any
    warehouse: str
    catalog: Catalog
    """The Catalog in this process (the one served, over the wire)."""


@pytest.fixture
def governed(api: str, warehouse: str, request: pytest.FixtureRequest) -> Governed:
    """``@pytest.mark.transaction_timeout(seconds)`` sets the Lake Formation client's idle timeout."""
    marker = request.node.get_closest_marker("transaction_timeout")
    options = {"transaction_timeout": marker.args[0]} if marker is not None else {}
    catalog = Catalog(warehouse)
    lf = LakeFormation(catalog, **options)
    if api == "python":
        return Governed(catalog, lf, warehouse, catalog)
    served = Served(
        catalog,
        request.getfixturevalue("wire_credentials"),
        request.getfixturevalue("wire_certificate"),
        lake_formation=lf,
    )
    request.addfinalizer(served.stop)
    return Governed(
        served.client(parameter_validation=False),
        served.client("lakeformation", parameter_validation=False),
        warehouse,
        catalog,
    )


def in_process(client: Any) -> bool:
    """Whether a test's client is the Python API itself (for what only it can tell, e.g. query plans)."""
    return isinstance(client, Catalog)


@pytest.fixture(autouse=True)
def responses_conform_to_botocore(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Every response of every Glue and Lake Formation operation a test in tests/api makes is checked against botocore's
    output shape of the operation (member names, types, required members, enums); a test whose calls
    answered anything else fails, naming the response and what in it does not conform."""
    found: list[str] = []

    def recording(method: Callable[..., Any], api: str, service: str) -> Callable[..., Any]:
        @functools.wraps(method)
        def call(self: Any, *args: Any, **kwargs: Any) -> Any:
            response = method(self, *args, **kwargs)
            found.extend(problems(service, api, response))
            return response

        return call

    for name, api in operations(Catalog, "glue"):
        monkeypatch.setattr(Catalog, name, recording(getattr(Catalog, name), api, "glue"))
    for name, api in operations(LakeFormation, "lakeformation"):
        monkeypatch.setattr(
            LakeFormation, name, recording(getattr(LakeFormation, name), api, "lakeformation")
        )
    yield found
    assert found == [], "responses that botocore's output shapes do not allow:\n" + "\n".join(found[:20])


def table_input(name: str, **overrides: Any) -> dict[str, Any]:
    """A typical crawler-made Parquet table."""
    base: dict[str, Any] = {
        "Name": name,
        "Description": "orders by day",
        "Owner": "etl",
        "TableType": "EXTERNAL_TABLE",
        "Parameters": {"classification": "parquet"},
        "StorageDescriptor": {
            "Columns": [
                {"Name": "id", "Type": "bigint"},
                {"Name": "amount", "Type": "double", "Comment": "in USD"},
                {"Name": "note", "Type": "string"},
            ],
            "Location": f"s3://bucket/{name}/",
            "InputFormat": "org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat",
            "OutputFormat": "org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat",
            "SerdeInfo": {
                "SerializationLibrary": "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe"
            },
        },
        "PartitionKeys": [{"Name": "dt", "Type": "string"}],
    }
    base.update(overrides)
    return base
