"""Governed writes by separate Spark applications (real processes): concurrent jobs commit or conflict as
their partitions say, and a job killed with SIGKILL mid-write leaves no object and, once a later process
writes to the table, no file."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

from gluecat import LakeFormation

# Two applications meet inside their jobs' tasks (so both jobs' transactions have started before either
# commits): first each writes a partition of its own, then both write the same partition.
CONCURRENT = textwrap.dedent(
    """
    import os, sys, time
    from gluecat.spark import session
    warehouse, table, me, other, meeting = sys.argv[1:]
    # A 1 s idle timeout, and jobs that run past it: the running job keeps its transaction alive.
    spark = session(warehouse, **{"spark.sql.shuffle.partitions": "2", "spark.sql.catalog.glue.transaction-timeout": "1"})
    met = set()

    def meet(step):
        if step not in met:
            open(os.path.join(meeting, f"{me}-{step}"), "w").close()
            deadline = time.time() + 180
            while not os.path.exists(os.path.join(meeting, f"{other}-{step}")) and time.time() < deadline:
                time.sleep(0.05)
            time.sleep(2.5)
            met.add(step)
        return 0

    spark.udf.register("meet", meet, "int")
    for step, part in ((1, me), (2, "shared")):
        try:
            spark.sql(f"INSERT INTO {table} SELECT CAST(id AS INT) + meet({step}), '{part}' FROM range(0, 10, 1, 1)")
            print(f"step {step}: committed", flush=True)
        except Exception as e:
            said = [line for line in str(e).splitlines() if "gluecat" in line]
            print(f"step {step}: failed: {said[0] if said else e}", flush=True)
    spark.stop()
    """
)

# A job whose first task writes and commits its files while the second hangs: killed then.
HANGING = textwrap.dedent(
    """
    import os, sys, time
    from gluecat.spark import session
    warehouse, table, meeting = sys.argv[1:]
    spark = session(warehouse, **{"spark.sql.catalog.glue.transaction-timeout": "2"})

    def hang(i):
        if i >= 50:
            open(os.path.join(meeting, "hanging"), "w").close()
            time.sleep(600)
        return i

    spark.udf.register("hang", hang, "int")
    spark.sql(f"INSERT INTO {table} SELECT hang(CAST(id AS INT)), 'k' FROM range(0, 100, 1, 2)")
    """
)


def files_in(folder: Path) -> set[str]:
    return {"file://" + os.path.join(root, f) for root, _, names in os.walk(folder) for f in names}


def uris(warehouse: Path, ns: str, name: str) -> set[str]:
    got = LakeFormation(str(warehouse)).get_table_objects(DatabaseName=ns, TableName=name)["Objects"]
    return {o["Uri"] for part in got for o in part["Objects"]}


def test_concurrent_jobs_commit_on_different_partitions_and_conflict_on_the_same(
    spark: Any, warehouse: Path, ns: str, tmp_path: Path
) -> None:
    table = f"glue.{ns}.shared"
    spark.sql(
        f"CREATE TABLE {table} (v INT, app STRING) USING parquet PARTITIONED BY (app) "
        "TBLPROPERTIES ('table_type' = 'GOVERNED')"
    )
    apps = [
        subprocess.Popen(
            [sys.executable, "-c", CONCURRENT, str(warehouse), table, me, other, str(tmp_path)],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        for me, other in (("left", "right"), ("right", "left"))
    ]
    outputs = []
    for app in apps:
        out, _ = app.communicate(timeout=300)
        assert app.returncode == 0, out.decode()[-3000:]
        outputs.append([line for line in out.decode().splitlines() if line.startswith("step ")])
    for lines in outputs:
        assert lines[0] == "step 1: committed", outputs
    second = sorted(lines[1] for lines in outputs)
    assert second[0] == "step 2: committed", outputs
    assert second[1].startswith("step 2: failed:") and "ConcurrentModificationException" in second[1], outputs
    counts = dict(spark.sql(f"SELECT app, count(*) FROM {table} GROUP BY app").collect())  # type: ignore[arg-type]
    assert counts == {"left": 10, "right": 10, "shared": 10}
    # The loser left nothing: every file in the table's folder is an object.
    assert files_in(warehouse / f"{ns}.db" / "shared") == uris(warehouse, ns, "shared")


def test_a_killed_job_leaves_no_object_and_a_later_write_removes_its_files(
    spark: Any, warehouse: Path, ns: str, tmp_path: Path
) -> None:
    table = f"glue.{ns}.killed"
    spark.sql(
        f"CREATE TABLE {table} (v INT, p STRING) USING parquet PARTITIONED BY (p) "
        "TBLPROPERTIES ('table_type' = 'GOVERNED')"
    )
    folder = warehouse / f"{ns}.db" / "killed"
    job = subprocess.Popen(
        [sys.executable, "-c", HANGING, str(warehouse), table, str(tmp_path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # its own process group: the driver and its JVM die together
    )
    try:
        deadline = time.time() + 180
        while time.time() < deadline and job.poll() is None:
            written = [f for f in files_in(folder) if f.endswith(".parquet") and "/.gluecat-tx-" in f]
            if (tmp_path / "hanging").exists() and written:
                break
            time.sleep(0.1)
        assert job.poll() is None, job.communicate()[0].decode()[-3000:]
        assert written, "the first task's files should be in the job's folder"
    finally:
        os.killpg(job.pid, signal.SIGKILL)
        job.communicate(timeout=60)
    assert uris(warehouse, ns, "killed") == set()
    assert spark.sql(f"SELECT * FROM {table}").collect() == []  # nothing visible, files or not
    time.sleep(2.5)  # the killed job's transaction idles past its 2 s timeout

    spark.sql(f"INSERT INTO {table} VALUES (1000, 'later')")  # a later process's write to the table
    assert [tuple(r) for r in spark.sql(f"SELECT * FROM {table}").collect()] == [(1000, "later")]
    assert files_in(folder) == uris(warehouse, ns, "killed")
    killed = written[0].split("/.gluecat-tx-")[1].split("/")[0]
    got = LakeFormation(str(warehouse)).describe_transaction(TransactionId=killed)
    assert got["TransactionDescription"]["TransactionStatus"] == "ABORTED"
