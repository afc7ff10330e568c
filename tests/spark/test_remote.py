"""The plugin over the Glue API (gluecat.spark.remote): against gluecat serve, and against moto's server as a
Glue that is not gluecat. The catalog-behaviour modules run against gluecat serve too (the ``cat`` fixture);
here is what is about being remote: statement-scoped reads, another application's commits, pushed filters
as an Expression, Segments, every request valid against botocore's model, what moto lacks."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import botocore.session
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from botocore.model import ServiceModel
from botocore.validate import ParamValidator
from moto.server import ThreadedMotoServer

from gluecat import Catalog
from gluecat.api import extensions
from gluecat.cli import main
from gluecat.hms.reference import free_port
from gluecat.spark import CATALOG_CLASS, catalogs
from gluecat.spark.remote import RemoteCatalog
from tests.spark.remote_support import Serving, aws_files, environment

pytestmark = pytest.mark.slow


class Requests:
    """Every request a remote catalog's botocore clients make: (service, operation, params, model)."""

    def __init__(self) -> None:
        self.made: list[tuple[str, str, dict[str, Any], Any]] = []

    def __call__(self, params: dict[str, Any], model: Any, **_: Any) -> None:
        service = model.service_model.service_name
        self.made.append((service, model.name, dict(params), model))

    def of(self, operation: str) -> list[dict[str, Any]]:
        return [params for _, name, params, _ in self.made if name == operation]


def remote_catalog(spark: Any, name: str) -> RemoteCatalog:
    """The RemoteCatalog the driver opened for Spark catalog ``name``."""
    endpoint = spark.conf.get(f"spark.sql.catalog.{name}.endpoint")
    found = [b.catalog for b in catalogs.OPENED if isinstance(b.catalog, RemoteCatalog)]
    return next(c for c in found if c.endpoint == endpoint)


@pytest.fixture
def requests(spark: Any, remote: str) -> Iterator[Requests]:
    """The requests glue_remote makes while the test runs."""
    recorded = Requests()
    catalog = remote_catalog(spark, remote)
    clients = [catalog._glue, catalog._lf, catalog._gluecat_client]
    for client in clients:
        client.meta.events.register("before-parameter-build", recorded)
    yield recorded
    for client in clients:
        client.meta.events.unregister("before-parameter-build", recorded)


def valid(made: list[tuple[str, str, dict[str, Any], Any]]) -> list[str]:
    """What botocore's parameter validation finds wrong in each request, against its operation's model."""
    problems = []
    for service, name, params, model in made:
        report = ParamValidator().validate(params, model.input_shape)
        if report.has_errors():
            problems.append(f"{service}.{name}: {report.generate_report()}")
    return problems


def documented_operations() -> set[str]:
    """The operations docs/spark.md lists as the plugin's (its IAM actions are glue:<Operation>)."""
    text = (Path(__file__).parents[2] / "docs" / "spark.md").read_text()
    section = text.split("### Operations and IAM actions", 1)[1].split("\n## ", 1)[0]
    return set(re.findall(r"`(?:glue|lakeformation):(\w+)`", section))


# -- against gluecat serve -------------------------------------------------------------------------


def test_a_statement_reads_a_table_once_and_the_next_statement_sees_another_applications_commit(
    spark: Any, remote: str, serving: Serving, requests: Requests, tmp_path: Path
) -> None:
    spark.sql(f"CREATE NAMESPACE {remote}.seen")
    try:
        spark.sql(f"CREATE TABLE {remote}.seen.t (v INT, p STRING) USING parquet PARTITIONED BY (p)")
        spark.sql(f"INSERT INTO {remote}.seen.t VALUES (1, 'a')")
        requests.made.clear()
        assert spark.sql(f"SELECT count(*) FROM {remote}.seen.t").collect()[0][0] == 1
        # Spark loads the table several times for one statement; the service is asked once per phase.
        assert 1 <= len(requests.of("GetTable")) <= 2

        # Another application commits through the service: a column, and a partition with a row.
        with environment(serving.environment):
            glue = boto3.session.Session(profile_name="gluecat-test").client("glue", endpoint_url=serving.url)
            table = glue.get_table(DatabaseName="seen", Name="t")["Table"]
            folder = tmp_path / "p=b"
            folder.mkdir()
            pq.write_table(pa.table({"v": pa.array([2], pa.int32())}), folder / "part-0.parquet")
            sd = {**table["StorageDescriptor"], "Location": str(folder)}
            glue.batch_create_partition(
                DatabaseName="seen",
                TableName="t",
                PartitionInputList=[{"Values": ["b"], "StorageDescriptor": sd}],
            )
            new = {
                k: table[k] for k in ("Name", "StorageDescriptor", "PartitionKeys", "TableType", "Parameters")
            }
            new["StorageDescriptor"] = {
                **table["StorageDescriptor"],
                "Columns": [*table["StorageDescriptor"]["Columns"], {"Name": "w", "Type": "string"}],
            }
            glue.update_table(DatabaseName="seen", TableInput=new)
        rows = spark.sql(f"SELECT v, w, p FROM {remote}.seen.t ORDER BY v").collect()
        assert [tuple(r) for r in rows] == [(1, None, "a"), (2, None, "b")]
    finally:
        spark.sql(f"DROP NAMESPACE {remote}.seen CASCADE")


def test_pushed_filters_travel_as_an_expression_and_a_large_table_is_read_in_segments(
    spark: Any, remote: str, warehouse: Path, requests: Requests
) -> None:
    spark.sql(f"CREATE NAMESPACE {remote}.big")
    try:
        spark.sql(f"CREATE TABLE {remote}.big.t (v INT, k INT) USING parquet PARTITIONED BY (k)")
        cat = Catalog(str(warehouse))  # 2,500 partitions, registered as another client would
        sd = cat.get_table(DatabaseName="big", Name="t")["Table"]["StorageDescriptor"]
        for start in range(0, 2500, 100):
            cat.batch_create_partition(
                DatabaseName="big",
                TableName="t",
                PartitionInputList=[
                    {"Values": [str(k)], "StorageDescriptor": {**sd, "Location": f"{sd['Location']}/k={k}"}}
                    for k in range(start, start + 100)
                ],
            )
        requests.made.clear()
        assert spark.sql(f"SELECT * FROM {remote}.big.t WHERE k = 1234 OR k > 2497").collect() == []
        expressions = {p.get("Expression") for p in requests.of("GetPartitions")}
        assert expressions == {"k = 1234 OR k > 2497"}
        requests.made.clear()
        assert spark.sql(f"SHOW PARTITIONS {remote}.big.t").count() == 2500
        segments = sorted(
            p["Segment"]["SegmentNumber"] for p in requests.of("GetPartitions") if "Segment" in p
        )
        assert set(segments) == {0, 1, 2, 3}
    finally:
        spark.sql(f"DROP NAMESPACE {remote}.big CASCADE")


def test_every_request_to_gluecat_serve_is_valid_against_botocores_model_and_documented(
    spark: Any, remote: str, requests: Requests, tmp_path: Path
) -> None:
    """A representative workload: every request passes botocore's validation against its operation's model
    (Glue's, Lake Formation's, or gluecat's own operations'), and docs/spark.md lists every operation."""
    workload(spark, f"{remote}.valid", tmp_path)
    assert not valid(requests.made)
    used = {name for _, name, _, _ in requests.made}
    assert {"CommitPartitions", "RenameTable", "UpdateTableAsRead"} <= used
    assert used - set(extensions.OPERATIONS) <= documented_operations()


def workload(spark: Any, db: str, folder: Path) -> None:
    """DDL, writes and reads a Spark application makes (left behind: nothing)."""
    statements = [
        f"CREATE NAMESPACE {db}",
        f"CREATE TABLE {db}.t (v INT, s STRING, p STRING) USING parquet PARTITIONED BY (p)",
        f"INSERT INTO {db}.t VALUES (1, 'x', 'a'), (2, 'y', 'b')",
        f"SELECT * FROM {db}.t WHERE p = 'b'",
        f"INSERT OVERWRITE {db}.t PARTITION (p = 'a') VALUES (3, 'z')",
        f"ALTER TABLE {db}.t ADD PARTITION (p = 'c')",
        f"ALTER TABLE {db}.t DROP PARTITION (p = 'c')",
        f"ALTER TABLE {db}.t PARTITION (p = 'b') RENAME TO PARTITION (p = 'e')",
        f"ALTER TABLE {db}.t ADD COLUMN w STRING",
        f"ALTER TABLE {db}.t SET TBLPROPERTIES ('team' = 'bi')",
        f"ANALYZE TABLE {db}.t COMPUTE STATISTICS FOR ALL COLUMNS",
        f"SHOW PARTITIONS {db}.t",
        f"CREATE VIEW {db}.v AS SELECT v FROM {db}.t",
        f"SELECT * FROM {db}.v",
        f"ALTER TABLE {db}.t RENAME TO {db.split('.', 1)[1]}.t2",
        f"CREATE TABLE {db}.c USING parquet AS SELECT * FROM {db}.t2",
        f"TRUNCATE TABLE {db}.c",
        f"DESCRIBE TABLE EXTENDED {db}.t2",
        f"DROP VIEW {db}.v",
        f"DROP TABLE {db}.t2",
        f"DROP NAMESPACE {db} CASCADE",
    ]
    for sql in statements:
        spark.sql(sql).collect()


# -- against a Glue that is not gluecat: moto's server ------------------------------------------------


@pytest.fixture(scope="module")
def moto(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """moto's Glue server on 127.0.0.1 as Spark catalog glue_moto (a warehouse folder for its tables)."""
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=free_port(), verbose=False)
    server.start()
    folder = tmp_path_factory.mktemp("moto")
    host, port = server.get_host_and_port()
    name = "glue_moto"
    spark.conf.set(f"spark.sql.catalog.{name}", CATALOG_CLASS)
    spark.conf.set(f"spark.sql.catalog.{name}.endpoint", f"http://{host}:{port}")
    spark.conf.set(f"spark.sql.catalog.{name}.profile", "moto")
    spark.conf.set(f"spark.sql.catalog.{name}.warehouse", str(folder / "warehouse"))
    with environment(aws_files(folder / "aws", "moto", "testing", "testing", None)):
        spark.sql(f"SHOW NAMESPACES IN {name}").collect()
    yield name
    server.stop()


def test_moto_namespaces_tables_partitions_and_pruned_reads(spark: Any, moto: str, tmp_path: Path) -> None:
    catalog = remote_catalog(spark, moto)
    assert not catalog.gluecat
    recorded = Requests()
    catalog._glue.meta.events.register("before-parameter-build", recorded)
    try:
        spark.sql(f"CREATE NAMESPACE {moto}.m")
        spark.sql(f"CREATE TABLE {moto}.m.t (v INT, p STRING) USING parquet PARTITIONED BY (p)")
        spark.sql(f"INSERT INTO {moto}.m.t VALUES (1, 'a'), (2, 'b'), (3, 'c')")
        recorded.made.clear()
        assert [tuple(r) for r in spark.sql(f"SELECT * FROM {moto}.m.t WHERE p = 'b'").collect()] == [
            (2, "b")
        ]
        assert {p.get("Expression") for p in recorded.of("GetPartitions")} == {"p = 'b'"}
        spark.sql(f"ALTER TABLE {moto}.m.t ADD PARTITION (p = 'd')")
        spark.sql(f"ALTER TABLE {moto}.m.t DROP PARTITION (p = 'a')")
        spark.sql(f"INSERT OVERWRITE {moto}.m.t PARTITION (p = 'c') VALUES (30)")
        shown = sorted(r[0] for r in spark.sql(f"SHOW PARTITIONS {moto}.m.t").collect())
        assert shown == ["p=b", "p=c", "p=d"]
        # Glue has no rename: CreateTable, the partitions copied, DeleteTable (not atomic).
        spark.sql(f"ALTER TABLE {moto}.m.t RENAME TO m.t2")
        assert [tuple(r) for r in spark.sql(f"SELECT * FROM {moto}.m.t2 ORDER BY v").collect()] == [
            (2, "b"),
            (30, "c"),
        ]
        assert not spark.catalog.tableExists(f"{moto}.m.t")
        # What moto lacks is answered as AWS's clients answer it, not failed: column statistics.
        got = spark.sql(f"ANALYZE TABLE {moto}.m.t2 COMPUTE STATISTICS FOR ALL COLUMNS").collect()
        assert ("no column statistics", "the catalog service keeps no column statistics") in [
            tuple(r) for r in got
        ]
        spark.sql(f"DROP TABLE {moto}.m.t2")
        spark.sql(f"DROP NAMESPACE {moto}.m CASCADE")
    finally:
        catalog._glue.meta.events.unregister("before-parameter-build", recorded)
    used = {name for _, name, _, _ in recorded.made}
    assert not used & set(extensions.OPERATIONS), "gluecat's own operations go only to gluecat"
    assert {"BatchCreatePartition", "BatchDeletePartition", "CreateTable", "DeleteTable"} <= used
    assert not valid(recorded.made)
    assert used <= documented_operations()


# -- pieces --------------------------------------------------------------------------------------------


def test_spark_conf_prints_the_settings_of_a_catalog_service(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["spark-conf", "--endpoint", "https://catalog.example:8443", "--profile", "lake"]) == 0
    lines = dict(line.split(" ", 1) for line in capsys.readouterr().out.splitlines())
    assert lines["spark.sql.catalog.glue"] == CATALOG_CLASS
    assert lines["spark.sql.catalog.glue.endpoint"] == "https://catalog.example:8443"
    assert lines["spark.sql.catalog.glue.profile"] == "lake"
    assert "spark.sql.catalog.glue.warehouse" not in lines


def test_the_extension_model_is_botocores_format_with_glues_target_and_signing() -> None:
    model = botocore.session.get_session().get_service_model("glue")
    ours = ServiceModel(extensions.client_model(), service_name=extensions.SERVICE)
    assert ours.metadata["targetPrefix"] == model.metadata["targetPrefix"]
    assert ours.signing_name == model.signing_name == "glue"
    assert set(ours.operation_names) == set(extensions.OPERATIONS)
    assert not set(extensions.OPERATIONS) & set(model.operation_names)
