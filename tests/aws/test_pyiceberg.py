"""pyiceberg's GlueCatalog against gluecat's AWS endpoint (its ``glue.endpoint`` property): namespaces,
an Iceberg table with Arrow data on a local warehouse path, and Glue's VersionId check turning a
concurrent commit into pyiceberg's CommitFailedException."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from pyiceberg.catalog.glue import GlueCatalog
from pyiceberg.exceptions import CommitFailedException, NoSuchTableError

from tests.aws_wire import REGION, Served


@pytest.fixture
def connect(served: Served, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[[], GlueCatalog]:
    """A new pyiceberg GlueCatalog, with a boto3 client of its own, as another process would have."""
    monkeypatch.setenv("AWS_CA_BUNDLE", served.ca_bundle)  # pyiceberg makes its own boto3 client

    def catalog() -> GlueCatalog:
        return GlueCatalog(
            "gluecat",
            **{
                "glue.endpoint": served.url,
                "glue.region": REGION,
                "glue.access-key-id": served.credentials.key_id,
                "glue.secret-access-key": served.credentials.secret,
                "warehouse": (tmp_path / "lake").as_uri(),
            },
        )

    return catalog


@pytest.fixture
def iceberg(connect: Callable[[], GlueCatalog]) -> GlueCatalog:
    return connect()


ORDERS = pa.table({"id": pa.array([1, 2, 3], pa.int64()), "country": ["US", "UK", "US"]})


def test_a_table_is_created_written_and_read_back(
    iceberg: GlueCatalog, served: Served, tmp_path: Path
) -> None:
    iceberg.create_namespace("sales", {"owner": "etl"})
    assert ("sales",) in iceberg.list_namespaces()
    assert iceberg.load_namespace_properties("sales")["owner"] == "etl"
    table = iceberg.create_table("sales.orders", schema=ORDERS.schema)
    table.append(ORDERS)

    again = iceberg.load_table("sales.orders")
    assert again.scan().to_arrow().sort_by("id").equals(ORDERS)
    assert iceberg.list_tables("sales") == [("sales", "orders")]
    # What Glue holds: an Iceberg pointer, its metadata file under the local warehouse path.
    glue_table = served.catalog.get_table(DatabaseName="sales", Name="orders")["Table"]
    assert glue_table["Parameters"]["table_type"] == "ICEBERG"
    metadata = glue_table["Parameters"]["metadata_location"]
    assert (
        metadata.startswith((tmp_path / "lake").as_uri()) and Path(metadata.removeprefix("file://")).exists()
    )

    iceberg.drop_table("sales.orders")
    with pytest.raises(NoSuchTableError):
        iceberg.load_table("sales.orders")
    iceberg.drop_namespace("sales")
    assert ("sales",) not in iceberg.list_namespaces()


def test_of_two_concurrent_commits_the_one_that_read_the_older_version_fails(
    connect: Callable[[], GlueCatalog], served: Served
) -> None:
    """pyiceberg commits by reading the Glue table (and its VersionId), writing new metadata, then
    UpdateTable with that VersionId. Here the other writer's whole commit lands between the read and
    the UpdateTable (run from botocore's before-call event of that UpdateTable), so only Glue's
    VersionId check can see the conflict."""
    late, racer = connect(), connect()
    late.create_namespace("sales")
    late.create_table("sales.orders", schema=ORDERS.schema)
    before: Any = served.catalog.get_table(DatabaseName="sales", Name="orders")["Table"]["VersionId"]

    def commit_first(**_: Any) -> None:
        late.glue.meta.events.unregister("before-call.glue.UpdateTable", commit_first)
        racer.load_table("sales.orders").append(ORDERS)

    late.glue.meta.events.register("before-call.glue.UpdateTable", commit_first)
    with pytest.raises(CommitFailedException, match="concurrent update"):
        late.load_table("sales.orders").transaction().set_properties(note="late").commit_transaction()

    committed = served.catalog.get_table(DatabaseName="sales", Name="orders")["Table"]
    assert int(committed["VersionId"]) == int(before) + 1  # the racer's commit, and only it
    table = late.load_table("sales.orders")
    assert table.scan().to_arrow().num_rows == 3 and "note" not in table.properties
