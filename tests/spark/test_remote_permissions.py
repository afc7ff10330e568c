"""Spark against a catalog service whose Lake Formation permissions are set up: each Spark catalog signs
as one user, and what that user may do is what its statements may do (gluecat's own operations, which
the plugin uses for INSERT, ALTER and RENAME, included). A refused statement says why and changes
nothing."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gluecat.spark import CATALOG_CLASS
from tests.serving.permission_lake import PermissionLake
from tests.spark.remote_support import aws_files, environment

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def lake(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PermissionLake]:
    served = PermissionLake(tmp_path_factory.mktemp("permissions"))
    yield served
    served.stop()


@pytest.fixture(scope="module")
def as_user(spark: Any, lake: PermissionLake, tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The Spark catalog that signs as ``user`` (made on first use)."""
    opened: dict[str, str] = {}

    def catalog(user: str) -> str:
        if user not in opened:
            name = opened[user] = f"glue_as_{user}"
            key_id, secret = lake.keys[user]
            folder = tmp_path_factory.mktemp(f"aws-{user}")
            spark.conf.set(f"spark.sql.catalog.{name}", CATALOG_CLASS)
            spark.conf.set(f"spark.sql.catalog.{name}.endpoint", lake.url)
            spark.conf.set(f"spark.sql.catalog.{name}.profile", user)
            with environment(aws_files(folder, user, key_id, secret, lake.cert)):
                spark.sql(f"SHOW NAMESPACES IN {name}").collect()  # opens it: the clients read the files now
        return opened[user]

    return catalog


def refused(spark: Any, sql: str) -> str:
    with pytest.raises(Exception) as caught:
        spark.sql(sql).collect()
    return str(caught.value)


def rows(spark: Any, sql: str) -> list[tuple[Any, ...]]:
    return [tuple(r) for r in spark.sql(sql).collect()]


def test_each_user_does_what_their_grants_allow_and_a_refusal_changes_nothing(
    spark: Any, lake: PermissionLake, as_user: Any, tmp_path: Path
) -> None:
    admin, reader, stranger = as_user("alice"), as_user("granted"), as_user("denied")
    location = tmp_path / "orders"
    # The administrator makes and fills a table (CreateTable, CommitPartitions, UpdateTableAsRead).
    spark.sql(f"CREATE NAMESPACE {admin}.shop")
    spark.sql(
        f"CREATE TABLE {admin}.shop.orders (id INT, dt STRING) USING parquet PARTITIONED BY (dt) "
        f"LOCATION '{location}'"
    )
    spark.sql(f"INSERT INTO {admin}.shop.orders VALUES (1, 'a'), (2, 'b')")
    spark.sql(f"ALTER TABLE {admin}.shop.orders SET TBLPROPERTIES ('owner.team' = 'shop')")
    lake.grant("granted", "SELECT", ("table", "shop", "orders"))
    lake.grant("granted", "DESCRIBE", ("database", "shop"))

    # SELECT: the reader reads every row; nothing it may not do goes through.
    assert rows(spark, f"SELECT id, dt FROM {reader}.shop.orders ORDER BY id") == [(1, "a"), (2, "b")]
    required = "AccessDeniedException: Insufficient Lake Formation permission(s): Required"
    insert = f"INSERT INTO {reader}.shop.orders VALUES (3, 'c')"  # CommitPartitions
    assert f"{required} INSERT on table shop.orders" in refused(spark, insert)
    alter = (
        f"ALTER TABLE {reader}.shop.orders SET TBLPROPERTIES ('owner.team' = 'other')"  # UpdateTableAsRead
    )
    assert f"{required} ALTER on table shop.orders" in refused(spark, alter)
    rename = f"ALTER TABLE {reader}.shop.orders RENAME TO shop.renamed"  # RenameTable
    assert f"{required} ALTER on table shop.orders" in refused(spark, rename)
    assert f"{required} DROP on table shop.orders" in refused(spark, f"DROP TABLE {reader}.shop.orders")

    # Someone with no grant is refused, as AWS Glue refuses them: the database and the table.
    assert "Required DESCRIBE on database shop" in refused(spark, f"SHOW TABLES IN {stranger}.shop")
    assert "AccessDeniedException" in refused(spark, f"SELECT * FROM {stranger}.shop.orders")

    # Nothing the refusals touched changed: rows, properties, name.
    table = lake.glue.get_table(DatabaseName="shop", Name="orders")["Table"]
    assert table["Parameters"]["owner.team"] == "shop"
    assert rows(spark, f"SELECT id FROM {admin}.shop.orders ORDER BY id") == [(1,), (2,)]

    # INSERT on the table lets the reader add rows (CommitPartitions), still not drop the table.
    lake.grant("granted", "INSERT", ("table", "shop", "orders"))
    spark.sql(f"INSERT INTO {reader}.shop.orders VALUES (3, 'c')")
    assert rows(spark, f"SELECT id FROM {admin}.shop.orders ORDER BY id") == [(1,), (2,), (3,)]
    assert "AccessDeniedException" in refused(spark, f"DROP TABLE {reader}.shop.orders")
    spark.sql(f"DROP NAMESPACE {admin}.shop CASCADE")


def test_a_user_granted_create_table_makes_and_fills_a_table_and_may_not_see_others(
    spark: Any, lake: PermissionLake, as_user: Any
) -> None:
    """Spark asks whether a table exists before it makes one: one who may see the database is told it
    does not (EntityNotFoundException, as AWS Glue answers), not refused, so CREATE TABLE goes on; the
    maker then holds every permission on its table, and nothing on its neighbours'."""
    admin, maker = as_user("alice"), as_user("carol")
    spark.sql(f"CREATE NAMESPACE {admin}.made")
    spark.sql(f"CREATE TABLE {admin}.made.theirs (id INT) USING parquet")
    lake.grant("carol", "CREATE_TABLE", ("database", "made"))
    spark.sql(f"CREATE TABLE {maker}.made.mine (id INT, dt STRING) USING parquet PARTITIONED BY (dt)")
    spark.sql(f"INSERT INTO {maker}.made.mine VALUES (1, 'a')")
    spark.sql(f"ALTER TABLE {maker}.made.mine RENAME TO made.ours")
    assert rows(spark, f"SELECT * FROM {maker}.made.ours") == [(1, "a")]
    assert rows(spark, f"SHOW TABLES IN {maker}.made") == [("made", "ours", False)]
    refusal = refused(spark, f"SELECT * FROM {maker}.made.theirs")
    assert "Required DESCRIBE on table made.theirs" in refusal
    assert "TABLE_OR_VIEW_NOT_FOUND" in refused(spark, f"SELECT * FROM {maker}.made.nothing")
    spark.sql(f"DROP NAMESPACE {admin}.made CASCADE")
