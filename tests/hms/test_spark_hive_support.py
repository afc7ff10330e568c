"""Spark's own Hive catalog (enableHiveSupport, hive.metastore.uris=thrift://...) on gluecat's TCP
endpoint: databases, tables in Spark's and Hive's formats, INSERT, SELECT with partition filters,
partition DDL, rename and drop, run by one Spark application and seen by a second one, through
gluecat's own Spark catalog and through the Python API.

Each application is a process of its own (tests/hms/spark_hive_app.py): the test run's shared Spark
session uses an embedded Derby metastore, and a session's metastore cannot be changed once made.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gluecat import Catalog
from gluecat.server import Server

pytestmark = pytest.mark.slow

APP = Path(__file__).with_name("spark_hive_app.py")


def run_app(part: str, server: Server, warehouse: Path, data: Path) -> dict[str, Any]:
    assert server.thrift_uri is not None
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable}
    done = subprocess.run(
        [sys.executable, str(APP), part, server.thrift_uri, str(warehouse), str(data)],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        cwd=data,
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    assert done.returncode == 0 and lines, done.stdout[-3000:] + done.stderr[-6000:]
    result: dict[str, Any] = json.loads(lines[-1][len("RESULT ") :])
    return result


@pytest.fixture(scope="module")
def apps(tmp_path_factory: pytest.TempPathFactory, users_file: Path) -> Iterator[tuple[Any, ...]]:
    root = tmp_path_factory.mktemp("spark-hive")
    warehouse, data = root / "warehouse", root / "data"
    data.mkdir()
    glue = Catalog(str(warehouse))
    server = Server(glue, users_file, thrift_port=0).start()
    try:
        first = run_app("write", server, warehouse, data)
        second = run_app("read", server, warehouse, data)
        yield glue, first, second, data
    finally:
        server.stop()


def test_spark_writes_and_reads_through_its_own_hive_catalog(apps: tuple[Any, ...]) -> None:
    _, first, _, _ = apps
    assert "hs" in first["databases"]
    assert first["events_eq"] == [[2]]
    assert first["events_in"] == [[1], [3]]
    assert first["events_like"] == [[1], [2], [3]]
    assert first["metrics_gt"] == [[20, "yy", 2]]
    assert first["metrics_range"] == [[1], [20]]
    assert first["partitions"] == ["p=1", "p=2", "p=4"]
    assert first["partitions_after_drop"] == ["p=1", "p=2"]
    assert first["scratch"] == [[0]]
    assert first["tables"] == ["events_renamed", "metrics", "scratch"]
    assert first["missing"] is False


def test_a_second_application_and_the_glue_catalog_see_the_first_ones_writes(apps: tuple[Any, ...]) -> None:
    _, _, second, _ = apps
    events = [[1, "a", "2024-01-01"], [2, "b", "2024-01-02"], [3, "c", "2024-01-03"]]
    assert second["hive_events"] == events
    assert second["glue_events"] == events
    assert second["hive_metrics"] == [[1, "x", 1], [20, "yy", 2]]
    assert second["glue_metrics"] == [[20, "yy", 2]]
    assert second["properties"] == "core"


def test_the_python_api_sees_the_same_tables(apps: tuple[Any, ...]) -> None:
    glue, _, _, data = apps
    table = glue.get_table(DatabaseName="hs", Name="events_renamed")["Table"]
    # Spark's own schema properties are kept, and the renamed managed table's folder moved with it.
    assert any(k.startswith("spark.sql.sources.schema") for k in table["Parameters"])
    assert table["StorageDescriptor"]["Location"].endswith("/hs.db/events_renamed")
    assert not (data / "hs.db" / "events").exists()
    parts = glue.get_partitions(DatabaseName="hs", TableName="metrics", Expression="p >= 1")["Partitions"]
    assert sorted(p["Values"] for p in parts) == [["1"], ["2"]]
