"""One SparkSession for the whole test run: starting Spark costs seconds, each test uses its own namespace."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gluecat.spark import session


@pytest.fixture(scope="session")
def warehouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("spark-warehouse")


@pytest.fixture(scope="session")
def spark(warehouse: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    # Spark's built-in catalog with Hive support (Derby in a temporary folder) beside gluecat, for the
    # differential test; it starts its metastore only when first used.
    hive = tmp_path_factory.mktemp("spark-hive")
    os.environ["PYSPARK_PYTHON"] = sys.executable  # Python UDFs run where gluecat is installed
    s = session(
        str(warehouse),
        **{
            "spark.sql.shuffle.partitions": "2",
            "spark.sql.catalogImplementation": "hive",
            "spark.sql.warehouse.dir": str(hive / "warehouse"),
            "spark.driver.extraJavaOptions": f"-Dderby.system.home={hive}",
            "spark.hadoop.javax.jdo.option.ConnectionURL": f"jdbc:derby:;databaseName={hive}/metastore_db;create=true",
        },
    )
    s.sparkContext.setLogLevel("ERROR")
    yield s
    s.stop()


_made = iter(range(1_000_000))


@pytest.fixture
def ns(spark: Any) -> Iterator[str]:
    """A fresh namespace (Glue database) per test, dropped with its tables afterwards."""
    name = f"ns{next(_made)}"
    spark.sql(f"CREATE NAMESPACE glue.{name}")
    yield name
    spark.sql(f"DROP NAMESPACE glue.{name} CASCADE")
