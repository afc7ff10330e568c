"""TIMESTAMP AS OF and VERSION AS OF read a Glue table (and its partitions) as it was."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from gluecat import Catalog


@pytest.fixture
def ns(cat_ns: str) -> str:
    """The module's tests run against both catalogs, the warehouse opened here and served (conftest's cat)."""
    return cat_ns


def micros_now() -> int:
    return int(datetime.now(UTC).timestamp() * 1_000_000)


def test_timestamp_and_version_as_of(spark: Any, cat: str, warehouse: Path, ns: str) -> None:
    table = f"{cat}.{ns}.history"
    spark.sql(f"CREATE TABLE {table} (v INT, p STRING) USING parquet PARTITIONED BY (p)")
    spark.sql(f"INSERT INTO {table} VALUES (1, 'a')")
    time.sleep(0.05)
    before = micros_now()
    time.sleep(0.05)
    spark.sql(f"ALTER TABLE {table} ADD COLUMNS (w STRING)")
    spark.sql(f"INSERT INTO {table} VALUES (2, 'x', 'b')")  # columns are now v, w, then the key p

    then = spark.sql(f"SELECT * FROM {table} TIMESTAMP AS OF timestamp_micros({before})")
    assert then.columns == ["v", "p"]
    assert [tuple(r) for r in then.collect()] == [(1, "a")]

    versions = Catalog(str(warehouse)).get_table_versions(DatabaseName=ns, TableName="history")[
        "TableVersions"
    ]
    assert sorted(v["VersionId"] for v in versions) == ["1", "2"]
    first = spark.sql(f"SELECT * FROM {table} VERSION AS OF '1'")
    assert first.columns == ["v", "p"]
    assert [tuple(r) for r in first.collect()] == [
        (1, "a")
    ]  # partitions as they were while version 1 was current
    latest = spark.sql(f"SELECT * FROM {table} VERSION AS OF '2' ORDER BY v")
    assert [tuple(r) for r in latest.collect()] == [(1, None, "a"), (2, "x", "b")]

    with pytest.raises(Exception, match="has no version 7"):
        spark.sql(f"SELECT * FROM {table} VERSION AS OF '7'").collect()


@pytest.mark.parametrize(
    "properties", ["", "TBLPROPERTIES ('table_type' = 'GOVERNED')"], ids=["plain", "governed"]
)
def test_timestamp_as_of_before_the_table_existed_says_so(spark: Any, ns: str, properties: str) -> None:
    """Not TABLE_OR_VIEW_NOT_FOUND, which tells the user there is no such table: there is, made later."""
    before = micros_now()
    time.sleep(0.01)
    spark.sql(f"CREATE TABLE glue.{ns}.newer (v INT, p STRING) USING parquet PARTITIONED BY (p) {properties}")
    with pytest.raises(Exception) as info:
        spark.sql(f"SELECT * FROM glue.{ns}.newer TIMESTAMP AS OF timestamp_micros({before})").collect()
    message = str(info.value)
    assert (
        f"TIMESTAMP AS OF {(datetime(1970, 1, 1, tzinfo=UTC) + timedelta(microseconds=before)).isoformat()} of table {ns}.newer"
        in message
    )
    assert "the table did not exist at that time (it was made at " in message
    with pytest.raises(Exception, match="TABLE_OR_VIEW_NOT_FOUND"):
        spark.sql(f"SELECT * FROM glue.{ns}.never TIMESTAMP AS OF timestamp_micros({before})").collect()
