"""PySpark jobs that set the catalog with plain Spark settings (no gluecat.spark.session) start the Python bridge
with the driver's own interpreter and exit when they end, the bridge with them. One test, two real jobs run
side by side: a spark-submit of a script (the JVM first), and a script run by the virtual environment's python
without activating it (Python first)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pyspark

from gluecat.spark import jar_path
from tests.spark.test_bridge import bridge_children

SPARK_SUBMIT = Path(pyspark.__file__).parent / "bin" / "spark-submit"

JOB = """
import sys
from pyspark.sql import SparkSession

builder = SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")
for pair in sys.argv[1:]:
    key, value = pair.split("=", 1)
    builder = builder.config(key, value)
spark = builder.getOrCreate()
spark.sql("CREATE NAMESPACE glue.job")
spark.sql("CREATE TABLE glue.job.t (v INT) USING parquet")
spark.sql("INSERT INTO glue.job.t VALUES (41), (1)")
print("answer:", spark.sql("SELECT sum(v) FROM glue.job.t").collect()[0][0], flush=True)
# A governed table: the job's transaction is kept alive and committed by the bridge's Python child.
spark.sql("SELECT 40 AS v, 'a' AS p").writeTo("glue.job.g").partitionedBy("p").tableProperty(
    "table_type", "GOVERNED").create()
spark.sql("INSERT INTO glue.job.g VALUES (2, 'b')")
print("governed:", spark.sql("SELECT sum(v) FROM glue.job.g").collect()[0][0], flush=True)
"""


def test_jobs_find_the_drivers_interpreter_and_exit_when_they_end(tmp_path: Path) -> None:
    # A python3 first on the PATH that is not ours: the bridge must not pick it.
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "python3").write_text("#!/bin/sh\necho 'not the driver interpreter' >&2\nexit 3\n")
    (fake / "python3").chmod(0o755)
    venv_bin = str(Path(sys.executable).parent)
    path = os.pathsep.join([str(fake)] + [p for p in os.environ["PATH"].split(os.pathsep) if p != venv_bin])
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYSPARK_", "VIRTUAL_ENV"))}
    env.update(PATH=path, SPARK_LOCAL_IP="127.0.0.1")
    script = tmp_path / "job.py"
    script.write_text(JOB)

    def conf(warehouse: Path) -> list[str]:
        return [
            f"spark.jars={jar_path()}",
            "spark.sql.catalog.glue=io.gluecat.spark.GlueCatalog",
            f"spark.sql.catalog.glue.warehouse={warehouse}",
        ]

    submitted_wh, direct_wh = tmp_path / "submitted", tmp_path / "direct"
    submit = [str(SPARK_SUBMIT), "--conf", f"spark.pyspark.python={sys.executable}", "--master", "local[1]"]
    for pair in conf(submitted_wh):
        submit += ["--conf", pair]
    started = time.monotonic()
    jobs = {
        "spark-submit": subprocess.Popen(
            [*submit, str(script)],
            cwd=tmp_path,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        ),
        "venv python": subprocess.Popen(
            [sys.executable, str(script), *conf(direct_wh)],
            cwd=tmp_path,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        ),
    }
    for name, job in jobs.items():
        out, err = job.communicate(timeout=300)  # a job that never exits fails here
        assert job.returncode == 0, f"{name}: {err[-3000:]}"
        assert "answer: 42" in out, name
        assert "governed: 42" in out, name
    assert time.monotonic() - started < 300
    deadline = time.monotonic() + 15
    while (bridge_children(submitted_wh) or bridge_children(direct_wh)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert bridge_children(submitted_wh) == [] and bridge_children(direct_wh) == []
