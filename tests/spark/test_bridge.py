"""JVM-only Spark (pyspark's own bin/spark-sql) reaches the catalog through the Python bridge it starts: a
warehouse, and a catalog service over the Glue API (gluecat serve, found through the AWS chain)."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pyspark

from gluecat import Catalog
from gluecat.spark import spark_conf
from tests.spark.remote_support import PROFILE, Serving

SPARK_SQL = Path(pyspark.__file__).parent / "bin" / "spark-sql"

STATEMENTS = [
    "CREATE NAMESPACE glue.cli",
    "CREATE TABLE glue.cli.t (v INT, p STRING) USING parquet PARTITIONED BY (p)",
    "INSERT INTO glue.cli.t VALUES (1, 'a'), (2, 'b')",
    "SELECT concat('row:', v, ':', p) FROM glue.cli.t WHERE p = 'b'",
    "SHOW PARTITIONS glue.cli.t",
    "CREATE NAMESPACE served.cli_remote",
    "CREATE TABLE served.cli_remote.t (v INT, p STRING) USING parquet PARTITIONED BY (p)",
    "INSERT INTO served.cli_remote.t VALUES (3, 'c'), (4, 'd')",
    "SELECT concat('remote:', v, ':', p) FROM served.cli_remote.t WHERE p = 'd'",
    # Last, since spark-sql stops at the first failing statement: a catalog whose interpreter is missing.
    "SHOW NAMESPACES IN broken",
]


def bridge_children(warehouse: Path) -> list[int]:
    """Processes whose environment names this warehouse as a bridge's."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            env = (proc / "environ").read_bytes().split(b"\0")
        except (OSError, ValueError):
            continue
        if f"GLUECAT_WAREHOUSE={warehouse}".encode() in env:
            found.append(int(proc.name))
    return found


def test_spark_sql_ddl_insert_select_through_the_bridge(
    tmp_path: Path, serving: Serving, warehouse: Path
) -> None:
    served_warehouse = warehouse
    warehouse = tmp_path / "wh"
    conf = {**spark_conf(str(warehouse)), "spark.ui.enabled": "false", "spark.sql.shuffle.partitions": "2"}
    # What `gluecat spark-conf --endpoint URL --profile P --name served` prints.
    conf.update(spark_conf(name="served", endpoint=serving.url, profile=PROFILE))
    conf["spark.sql.catalog.broken"] = conf["spark.sql.catalog.glue"]
    conf["spark.sql.catalog.broken.warehouse"] = str(tmp_path / "other")
    conf["spark.sql.catalog.broken.python"] = str(tmp_path / "no-such-python")
    properties = tmp_path / "spark-defaults.conf"
    properties.write_text("".join(f"{k} {v}\n" for k, v in conf.items()))

    run = subprocess.run(
        [str(SPARK_SQL), "--properties-file", str(properties), "-e", ";\n".join(STATEMENTS) + ";"],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,  # spark-sql's own session state (derby.log, metastore_db) lands here, not in the checkout
        env={**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", **serving.environment},
    )
    assert "row:2:b" in run.stdout.splitlines()
    assert "remote:4:d" in run.stdout.splitlines(), run.stderr[-3000:]
    served = Catalog(str(served_warehouse)).get_partitions(DatabaseName="cli_remote", TableName="t")
    assert sorted(p["Values"] for p in served["Partitions"]) == [["c"], ["d"]]
    assert [line for line in run.stdout.splitlines() if line.startswith("p=")] == ["p=a", "p=b"]
    assert "cannot start the Python catalog with" in run.stderr and "no-such-python" in run.stderr
    assert run.returncode != 0  # the broken catalog's statement failed

    cat = Catalog(str(warehouse))
    assert cat.get_table(DatabaseName="cli", Name="t")["Table"]["PartitionKeys"][0]["Name"] == "p"
    assert len(cat.get_partitions(DatabaseName="cli", TableName="t")["Partitions"]) == 2
    deadline = time.monotonic() + 15  # the child sees its stdin close as the JVM goes, and exits
    while bridge_children(warehouse) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert bridge_children(warehouse) == []
