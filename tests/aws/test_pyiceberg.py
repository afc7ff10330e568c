"""pyiceberg's GlueCatalog against gluecat's AWS endpoint (its ``glue.endpoint`` property): namespaces,
an Iceberg table with Arrow data on a local warehouse path, Glue's VersionId check turning a
concurrent commit into pyiceberg's CommitFailedException, and writers sharing a lake on S3 through two
servers."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from pyiceberg.catalog.glue import GlueCatalog
from pyiceberg.exceptions import CommitFailedException, NoSuchTableError

from gluecat import Catalog
from tests.aws_wire import REGION, Served, make_credentials, serve_processes
from tests.object_stores.fixtures import use


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


def test_iceberg_writers_through_two_servers_on_one_s3_warehouse_lose_no_append(
    moto_bucket: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A lake on S3 as a team shares it: four pyiceberg writers, two through each of two `gluecat serve`
    processes on one S3 warehouse, their Iceberg files in the same bucket. In each round every writer
    with an append left loads the table, and all append at once. One commit wins; each of the others is
    refused at least once (pyiceberg's own check of the snapshot it loaded, or Glue's VersionId check in
    the server when both read the table before either wrote) and pyiceberg retries it on the newer
    snapshot. Every append is in the table, once, on one line of snapshots."""
    warehouse = use(monkeypatch, moto_bucket)
    Catalog(warehouse).close()  # a new warehouse
    credentials = make_credentials(tmp_path / "users")
    appends, writers = 2, 4
    with serve_processes(warehouse, credentials, 2, tmp_path) as servers:

        def connect(url: str) -> GlueCatalog:
            return GlueCatalog(
                "lake",
                **{
                    "glue.endpoint": url,
                    "glue.region": REGION,
                    "glue.access-key-id": credentials.key_id,
                    "glue.secret-access-key": credentials.secret,
                    "warehouse": f"{moto_bucket.url}/lake",
                    "s3.endpoint": moto_bucket.endpoint,
                    "s3.region": moto_bucket.region,
                    "s3.access-key-id": moto_bucket.access_key_id,
                    "s3.secret-access-key": moto_bucket.secret_access_key,
                },
            )

        catalogs = [connect(servers[w % 2].url) for w in range(writers)]
        catalogs[0].create_namespace("sales")
        catalogs[0].create_table("sales.orders", schema=ORDERS.schema)
        left, refused, must_be_refused = [appends] * writers, 0, 0
        while any(left):
            active = [w for w in range(writers) if left[w]]
            together = threading.Barrier(len(active))

            def append(w: int, together: threading.Barrier) -> bool:
                table = catalogs[w].load_table("sales.orders")
                together.wait(timeout=60)
                rows = pa.table({"id": pa.array([10 * w + left[w]], pa.int64()), "country": [f"w{w}"]})
                try:
                    table.append(rows)  # pyiceberg retries a refused commit a few times itself
                except CommitFailedException:
                    return False
                return True

            with ThreadPoolExecutor(len(active)) as pool:
                won = dict(zip(active, pool.map(append, active, [together] * len(active)), strict=True))
            assert any(won.values()), won
            refused += sum(not ok for ok in won.values())
            must_be_refused += len(active) - 1  # all loaded one snapshot: all but the first are stale
            for w, ok in won.items():
                left[w] -= ok

        refused += sum("concurrent update" in r.getMessage() for r in caplog.records)
        assert refused >= must_be_refused, (refused, must_be_refused)
        table = connect(servers[1].url).load_table("sales.orders")
        ids = sorted(table.scan().to_arrow()["id"].to_pylist())
        assert ids == sorted(10 * w + n for w in range(writers) for n in range(1, appends + 1))
        assert table.metadata_location.startswith(f"{moto_bucket.url}/lake/")
        line, current = [], table.current_snapshot()
        while current is not None:
            line.append(current.snapshot_id)
            parent = current.parent_snapshot_id
            current = table.snapshot_by_id(parent) if parent is not None else None
        assert len(line) == len(table.metadata.snapshots) == writers * appends
