"""Spark with tables' data on S3: a Spark application with Hadoop's S3A (hadoop-aws from Maven Central by
``spark.jars.packages``) over a local S3 server, every statement of a table's data life cycle, its files
checked with boto3 behind Spark's back. The application runs in a process of its own (s3_app.py says
why); its only S3 settings are Spark's ``spark.hadoop.fs.s3a.*``."""

from __future__ import annotations

import itertools
import json
import os
import selectors
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from tests import s3_server

pytestmark = pytest.mark.slow

BUCKET = "lake-spark"
_START_SECONDS = 900  # a cold start downloads hadoop-aws and the AWS SDK bundle (about 660 MB) first
_STATEMENT_SECONDS = 300
_namespaces = itertools.count()


class SparkError(Exception):
    """A statement Spark refused or failed, with Spark's message."""


class SparkApp:
    """The application of s3_app.py: statements in, rows or Spark's error out."""

    def __init__(
        self, warehouse: Path | str, settings: dict[str, str], log: Path, aws: dict[str, str] | None = None
    ) -> None:
        """``aws``: the AWS settings of the application's environment (none by default: the data's S3
        is reached through the ``spark.hadoop.fs.s3a.*`` settings alone)."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
        env.update(
            AWS_CONFIG_FILE=os.devnull,
            AWS_SHARED_CREDENTIALS_FILE=os.devnull,
            AWS_EC2_METADATA_DISABLED="true",
            PYSPARK_PYTHON=sys.executable,
            **(aws or {}),
        )
        self.log = log
        self._log = log.open("w")
        self._process = subprocess.Popen(
            [
                sys.executable,
                str(Path(__file__).with_name("s3_app.py")),
                str(warehouse),
                json.dumps(settings),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._log,
            env=env,
            text=True,
        )
        self._answer(_START_SECONDS)

    def _answer(self, timeout: float) -> dict[str, Any]:
        assert self._process.stdout is not None
        with selectors.DefaultSelector() as selector:
            selector.register(self._process.stdout, selectors.EVENT_READ)
            if not selector.select(timeout):
                raise TimeoutError(f"no answer in {timeout} s; {self._tail()}")
        line = self._process.stdout.readline()
        if not line:
            raise RuntimeError(f"the Spark application ended ({self._process.wait()}); {self._tail()}")
        answer: dict[str, Any] = json.loads(line)
        return answer

    def _tail(self) -> str:
        return "its output ends with:\n" + self.log.read_text()[-4000:]

    def sql(self, statement: str) -> list[tuple[Any, ...]]:
        assert self._process.stdin is not None
        self._process.stdin.write(json.dumps({"sql": statement}) + "\n")
        self._process.stdin.flush()
        answer = self._answer(_STATEMENT_SECONDS)
        if "error" in answer:
            raise SparkError(answer["error"])
        return [tuple(row) for row in answer["rows"]]

    def stop(self) -> None:
        assert self._process.stdin is not None
        self._process.stdin.close()
        try:
            self._process.wait(timeout=120)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        finally:
            assert self._process.stdout is not None
            self._process.stdout.close()
            self._log.close()


@pytest.fixture(scope="module")
def s3() -> Iterator[Any]:
    with s3_server.moto_s3() as endpoint:
        client = s3_server.client(endpoint)
        client.create_bucket(Bucket=BUCKET)
        client.endpoint = endpoint
        yield client


@pytest.fixture(scope="module")
def app(s3: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[SparkApp]:
    folder = tmp_path_factory.mktemp("s3-app")
    started = time.monotonic()
    settings = {
        **s3_server.s3a_settings(s3.endpoint),
        # Glue's own spelling of a location (crawlers, Athena): s3://, read through S3A as well.
        "spark.hadoop.fs.s3.impl": "org.apache.hadoop.fs.s3a.S3AFileSystem",
    }
    application = SparkApp(folder / "warehouse", settings, folder / "spark.log")
    print(f"Spark application with S3A started in {time.monotonic() - started:.1f} s")
    yield application
    application.stop()


@pytest.fixture
def ns(app: SparkApp) -> Iterator[str]:
    """A fresh namespace whose tables live in the bucket, under its own name."""
    name = f"s3ns{next(_namespaces)}"
    app.sql(f"CREATE NAMESPACE glue.{name} LOCATION 's3a://{BUCKET}/{name}'")
    yield name
    app.sql(f"DROP NAMESPACE IF EXISTS glue.{name} CASCADE")


def files(s3: Any, prefix: str) -> list[str]:
    """The data files under a prefix of the bucket, relative to it (not folder markers, not Spark's
    hidden files)."""
    found = [k[len(prefix) :] for k in s3_server.keys(s3, BUCKET, prefix) if not k.endswith("/")]
    return sorted(f for f in found if not f.rsplit("/", 1)[-1].startswith(("_", ".")))


def folders(s3: Any, prefix: str) -> list[str]:
    """The folders that hold data files under a prefix."""
    return sorted({f.rsplit("/", 1)[0] if "/" in f else "" for f in files(s3, prefix)})


def test_writes_and_overwrites_of_a_partitioned_table_leave_exactly_its_rows_files(
    app: SparkApp, s3: Any, ns: str
) -> None:
    t = f"glue.{ns}.t"
    app.sql(f"CREATE TABLE {t} (v INT, p STRING) USING parquet PARTITIONED BY (p)")
    app.sql(f"INSERT INTO {t} VALUES (1, 'a'), (2, 'b'), (3, 'a b'), (4, 'x:y')")
    # Spark's folder names are the keys: p=x%3Ay for x:y, p=a b with its space.
    assert folders(s3, f"{ns}/t/") == ["p=a", "p=a b", "p=b", "p=x%3Ay"]
    app.sql(f"INSERT OVERWRITE {t} PARTITION (p = 'a') VALUES (10)")
    app.sql("SET spark.sql.sources.partitionOverwriteMode = dynamic")
    app.sql(f"INSERT OVERWRITE {t} VALUES (20, 'b'), (30, 'c')")
    app.sql("SET spark.sql.sources.partitionOverwriteMode = static")
    assert app.sql(f"SELECT v, p FROM {t} ORDER BY v") == [
        (3, "a b"),
        (4, "x:y"),
        (10, "a"),
        (20, "b"),
        (30, "c"),
    ]
    assert folders(s3, f"{ns}/t/") == ["p=a", "p=a b", "p=b", "p=c", "p=x%3Ay"]
    assert len(files(s3, f"{ns}/t/")) == 5  # each replaced file gone

    # A whole-table overwrite drops the partitions it does not write, folders and all.
    app.sql(f"INSERT OVERWRITE {t} VALUES (40, 'd')")
    assert app.sql(f"SELECT v, p FROM {t}") == [(40, "d")]
    assert app.sql(f"SHOW PARTITIONS {t}") == [("p=d",)]
    assert s3_server.keys(s3, BUCKET, f"{ns}/t/p=a") == []
    assert [k for k in s3_server.keys(s3, BUCKET, f"{ns}/") if ".gluecat-staging-" in k] == []

    copy = f"glue.{ns}.copy"
    app.sql(f"CREATE TABLE {copy} USING parquet AS SELECT * FROM {t}")
    assert app.sql(f"SELECT v, p FROM {copy}") == [(40, "d")]
    # REPLACE TABLE stages the new rows in the old table's folder, and deletes only the old ones.
    old = files(s3, f"{ns}/copy/")
    app.sql(f"CREATE OR REPLACE TABLE {copy} USING parquet AS SELECT v + 1 AS v FROM {t}")
    assert app.sql(f"SELECT * FROM {copy}") == [(41,)]
    new = files(s3, f"{ns}/copy/")
    assert new and not set(new) & set(old)
    assert not [k for k in s3_server.keys(s3, BUCKET, f"{ns}/") if ".gluecat-dropped-" in k]
    app.sql(f"TRUNCATE TABLE {copy}")
    assert app.sql(f"SELECT * FROM {copy}") == [] and files(s3, f"{ns}/copy/") == []


def test_rename_drop_and_truncate_move_and_delete_managed_data_and_keep_external_data(
    app: SparkApp, s3: Any, ns: str
) -> None:
    t = f"glue.{ns}.t"
    app.sql(f"CREATE TABLE {t} (v INT, p STRING) USING parquet PARTITIONED BY (p)")
    app.sql(f"INSERT INTO {t} VALUES (1, 'a'), (2, 'b'), (3, 'c')")
    app.sql(f"ALTER TABLE {t} RENAME TO {ns}.moved")
    assert s3_server.keys(s3, BUCKET, f"{ns}/t/") == []
    assert folders(s3, f"{ns}/moved/") == ["p=a", "p=b", "p=c"]
    moved = f"glue.{ns}.moved"
    app.sql(f"ALTER TABLE {moved} PARTITION (p = 'a') RENAME TO PARTITION (p = 'z')")
    app.sql(f"ALTER TABLE {moved} DROP PARTITION (p = 'b') PURGE")
    app.sql(f"TRUNCATE TABLE {moved} PARTITION (p = 'c')")
    assert app.sql(f"SELECT v, p FROM {moved}") == [(1, "z")]
    assert folders(s3, f"{ns}/moved/") == ["p=z"]

    # A new table of the old name starts empty; one over a folder that holds files is refused.
    app.sql(f"CREATE TABLE {t} (v INT) USING parquet")
    assert app.sql(f"SELECT * FROM {t}") == []
    s3.put_object(Bucket=BUCKET, Key=f"{ns}/taken/part-0.parquet", Body=b"left behind")
    with pytest.raises(SparkError, match="LOCATION_ALREADY_EXISTS"):
        app.sql(f"CREATE TABLE glue.{ns}.taken (v INT) USING parquet")

    ext = f"glue.{ns}.ext"
    app.sql(f"CREATE TABLE {ext} (v INT) USING parquet LOCATION 's3a://{BUCKET}/{ns}-external/ext'")
    app.sql(f"INSERT INTO {ext} VALUES (7)")
    with pytest.raises(SparkError, match="CANNOT_TRUNCATE_EXTERNAL_TABLE"):
        app.sql(f"TRUNCATE TABLE {ext}")
    app.sql(f"DROP TABLE {ext} PURGE")
    assert len(files(s3, f"{ns}-external/ext/")) == 1  # external data stays, PURGE too
    # A table registered at an s3:// location, as Glue's crawlers register them: the same objects.
    app.sql(f"CREATE TABLE {ext} (v INT) USING parquet LOCATION 's3://{BUCKET}/{ns}-external/ext'")
    app.sql(f"INSERT OVERWRITE {ext} VALUES (8)")
    assert app.sql(f"SELECT * FROM {ext}") == [(8,)]
    assert len(files(s3, f"{ns}-external/ext/")) == 1
    app.sql(f"DROP TABLE {moved}")
    assert s3_server.keys(s3, BUCKET, f"{ns}/moved/") == []


def test_repair_set_location_and_analyze_read_the_folders_on_s3(app: SparkApp, s3: Any, ns: str) -> None:
    t = f"glue.{ns}.t"
    app.sql(f"CREATE TABLE {t} (v INT, p STRING) USING parquet PARTITIONED BY (p)")
    app.sql(f"INSERT INTO {t} VALUES (1, 'a')")
    # Files that another writer put in k=v folders: MSCK REPAIR TABLE registers their partitions.
    for key in s3_server.keys(s3, BUCKET, f"{ns}/t/p=a/"):
        if not key.endswith("/"):
            s3.copy_object(
                Bucket=BUCKET, Key=key.replace("p=a", "p=b"), CopySource={"Bucket": BUCKET, "Key": key}
            )
    assert app.sql(f"MSCK REPAIR TABLE {t}") == [("added", "p=b")]
    assert app.sql(f"SELECT v, p FROM {t} ORDER BY p") == [(1, "a"), (1, "b")]
    app.sql(f"ALTER TABLE {t} PARTITION (p = 'b') SET LOCATION 's3a://{BUCKET}/{ns}/elsewhere'")
    assert app.sql(f"SELECT v, p FROM {t} ORDER BY p") == [(1, "a")]  # nothing there yet

    sizes = [
        o["Size"]
        for o in s3.list_objects_v2(Bucket=BUCKET, Prefix=f"{ns}/t/p=a/")["Contents"]
        if not o["Key"].endswith("/")
    ]
    stats = dict(app.sql(f"ANALYZE TABLE {t} COMPUTE STATISTICS"))
    assert (stats["totalSize"], stats["numFiles"], stats["numRows"]) == (
        str(sum(sizes)),
        str(len(sizes)),
        "1",
    )


def test_governed_writes_keep_their_files_on_s3_as_objects(app: SparkApp, s3: Any, ns: str) -> None:
    t = f"glue.{ns}.g"
    app.sql(
        f"CREATE TABLE {t} (v INT, p STRING) USING parquet PARTITIONED BY (p) TBLPROPERTIES ('table_type' = 'GOVERNED')"
    )
    app.sql(f"INSERT INTO {t} VALUES (1, 'a'), (2, 'b')")
    app.sql(f"INSERT OVERWRITE {t} VALUES (3, 'a')")
    assert app.sql(f"SELECT v, p FROM {t} ORDER BY v") == [(3, "a")]
    # The replaced files stay for reads of earlier versions; no job's folder is left.
    assert len(files(s3, f"{ns}/g/")) == 3
    assert [k for k in s3_server.keys(s3, BUCKET, f"{ns}/g/") if ".gluecat-tx-" in k] == []


def test_two_applications_share_a_catalog_warehouse_on_s3(s3: Any, tmp_path: Path) -> None:
    """The catalog's warehouse on S3 as well (``spark.sql.catalog.glue.warehouse=s3://...``, the keys
    in the driver's environment, as docs/deploy.md says): two Spark applications, as on two machines,
    write one table at once, and each reads every row both wrote."""
    warehouse = f"s3://{BUCKET}/shared-catalog"
    aws = {
        "AWS_ENDPOINT_URL_S3": s3.endpoint,
        "AWS_ACCESS_KEY_ID": s3_server.ACCESS_KEY,
        "AWS_SECRET_ACCESS_KEY": s3_server.SECRET_KEY,
        "AWS_REGION": s3_server.REGION,
        "AWS_ALLOW_HTTP": "true",
    }
    settings = s3_server.s3a_settings(s3.endpoint)
    apps: list[SparkApp] = []
    try:
        # One after the other: two Spark applications resolving spark.jars.packages at once share
        # Ivy's cache folder, which Ivy does not lock.
        for i in range(2):
            apps.append(SparkApp(warehouse, settings, tmp_path / f"spark{i}.log", aws))
        first = apps[0]
        first.sql(f"CREATE NAMESPACE glue.shared LOCATION 's3a://{BUCKET}/shared'")
        first.sql("CREATE TABLE glue.shared.events (id INT, app STRING) USING parquet PARTITIONED BY (app)")

        def write(app: SparkApp, name: str) -> None:
            for batch in range(3):  # several commits each, so that the two applications' interleave
                app.sql(
                    f"INSERT INTO glue.shared.events SELECT CAST(id AS INT), '{name}' "
                    f"FROM range({batch * 10}, {batch * 10 + 10})"
                )

        with ThreadPoolExecutor(2) as pool:
            list(pool.map(write, apps, ["one", "two"]))
        for app in apps:
            counts = app.sql(
                "SELECT app, count(DISTINCT id) FROM glue.shared.events GROUP BY app ORDER BY app"
            )
            assert counts == [("one", 30), ("two", 30)]
            assert app.sql("SHOW PARTITIONS glue.shared.events") == [("app=one",), ("app=two",)]
        assert s3_server.keys(s3, BUCKET, "shared-catalog/_gluecat/log/")  # the catalog is on S3
        assert folders(s3, "shared/events/") == ["app=one", "app=two"]
    finally:
        for app in apps:
            app.stop()
