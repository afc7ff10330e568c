"""One SparkSession for the whole test run: starting Spark costs seconds, each test uses its own namespace.

Beside ``glue`` (the warehouse, opened by the driver's own Python), the session mounts ``glue_remote``: the
same warehouse served by `gluecat serve` in a process of its own, reached over the Glue API as any
catalog service is. Tests about catalog behaviour take ``cat`` (both catalogs, one run each) and its
namespace ``ns``; the rest use ``glue``.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gluecat.spark import CATALOG_CLASS, session
from tests.spark.remote_support import PROFILE, Serving, environment, serve


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


@pytest.fixture(scope="session")
def serving(warehouse: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Serving]:
    """`gluecat serve` over the session's warehouse, on 127.0.0.1."""
    served = serve(warehouse, tmp_path_factory.mktemp("serve"))
    yield served
    served.stop()


REMOTE = "glue_remote"


@pytest.fixture(scope="session")
def remote(spark: Any, serving: Serving) -> str:
    """The served warehouse as Spark catalog ``glue_remote``, set at run time: its endpoint, and a profile
    whose credentials, region and CA bundle botocore finds in the files the environment names (read
    when the catalog first opens)."""
    spark.conf.set(f"spark.sql.catalog.{REMOTE}", CATALOG_CLASS)
    spark.conf.set(f"spark.sql.catalog.{REMOTE}.endpoint", serving.url)
    spark.conf.set(f"spark.sql.catalog.{REMOTE}.profile", PROFILE)
    with environment(serving.environment):
        spark.sql(f"SHOW NAMESPACES IN {REMOTE}").collect()
    return REMOTE


@pytest.fixture(params=["glue", REMOTE], ids=["local", "remote"])
def cat(request: pytest.FixtureRequest) -> str:
    """The catalog a catalog-behaviour test runs against: the warehouse opened here, then served."""
    if request.param == REMOTE:
        return str(request.getfixturevalue("remote"))
    request.getfixturevalue("spark")
    return "glue"


_made = iter(range(1_000_000))


@pytest.fixture
def ns(spark: Any) -> Iterator[str]:
    """A fresh namespace (Glue database) per test, dropped with its tables afterwards."""
    name = f"ns{next(_made)}"
    spark.sql(f"CREATE NAMESPACE glue.{name}")
    yield name
    spark.sql(f"DROP NAMESPACE glue.{name} CASCADE")


@pytest.fixture
def cat_ns(spark: Any, cat: str) -> Iterator[str]:
    """A fresh namespace made through ``cat`` (modules about catalog behaviour use it as their ``ns``)."""
    name = f"ns{next(_made)}"
    spark.sql(f"CREATE NAMESPACE {cat}.{name}")
    yield name
    spark.sql(f"DROP NAMESPACE {cat}.{name} CASCADE")
