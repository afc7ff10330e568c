"""A writer killed with SIGKILL at random moments never leaves a warehouse that fails to open or
that lost a commit it acknowledged.

The writer (writer_process.py, mode "stream") creates tables, adds partitions and updates them, and
prints each acknowledgement only after the call returned. After each kill a fresh Catalog must open
the warehouse, hold everything acknowledged, and be consistent: every table's versions are 1..N with
N its current VersionId, and every read call works. The next round writes on the same warehouse,
so later rounds also start from whatever the kills left behind.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

import gluecat
from gluecat import Catalog
from tests.object_stores.fixtures import use

WRITER = Path(__file__).with_name("writer_process.py")
# The writers import the same gluecat as this test does.
PYTHON_DIR = Path(gluecat.__file__).resolve().parents[1]
KILLS = 20


def run_until_killed(
    warehouse: str, run: int, rng: random.Random, longest: float = 0.6
) -> list[dict[str, Any]]:
    """Start a writer, kill it at a random moment once it is writing, return what it acknowledged."""
    proc = subprocess.Popen(
        [sys.executable, str(WRITER), "stream", warehouse, str(run)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(PYTHON_DIR)},
    )
    assert proc.stdout is not None
    ready = proc.stdout.readline()
    assert ready.strip() == '{"ready": true}', (
        f"writer did not start: {ready!r} {proc.stderr.read() if proc.stderr else ''}"
    )
    time.sleep(rng.uniform(0.0, longest))
    proc.send_signal(signal.SIGKILL)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == -signal.SIGKILL, f"writer stopped by itself ({proc.returncode}):\n{err}"
    return [json.loads(line) for line in out.splitlines() if line.endswith("}")]


def check_consistent(warehouse: str, acknowledged: dict[str, dict[str, Any]], deep: set[str]) -> int:
    """Open the warehouse afresh and check it against every acknowledgement so far; the tables in
    ``deep`` also have their versions and partitions checked. Returns the number of tables."""
    catalog = Catalog(warehouse)
    tables: dict[str, dict[str, Any]] = {}
    token: str | None = None
    while True:
        page = catalog.get_tables(DatabaseName="db", MaxResults=50, NextToken=token)
        tables.update((t["Name"], t) for t in page["TableList"])
        token = page.get("NextToken")
        if not token:
            break
    missing = sorted(set(acknowledged) - set(tables))
    assert missing == [], "acknowledged tables are gone"
    for name, listed in tables.items():
        table = catalog.get_table(DatabaseName="db", Name=name)["Table"]
        assert table == listed
        current = int(table["VersionId"])
        assert table["Description"] == f"v{current}"
        ack = acknowledged.get(name, {})
        assert current >= ack.get("version", 0), f"{name}: acknowledged VersionId {ack['version']} lost"
        if name not in deep:
            continue
        versions = catalog.get_table_versions(DatabaseName="db", TableName=name)["TableVersions"]
        assert [v["VersionId"] for v in versions] == [str(i) for i in range(1, current + 1)], name
        assert [v["Table"]["Description"] for v in versions] == [f"v{i}" for i in range(1, current + 1)]
        partitions = catalog.get_partitions(DatabaseName="db", TableName=name)["Partitions"]
        # A partition batch is one commit: all five or none, and all five once acknowledged.
        assert len(partitions) in (0, 5), name
        if "partitions" in ack:
            assert sorted(p["Values"][0] for p in partitions) == ack["partitions"], name
    return len(tables)


@pytest.mark.slow
@pytest.mark.parametrize("store", ["local", "s3"])
def test_a_writer_killed_at_random_moments_leaves_the_last_committed_state(
    warehouse: str, store: str, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a local disk, and on S3 behind a proxy that makes each request take 5 ms (so that the kills
    land between any two of a commit's requests: its files, its markers, its root entry)."""
    seed = int(os.environ.get("GLUECAT_TEST_SEED", random.randrange(1 << 30)))
    print(f"seed {seed} (rerun with GLUECAT_TEST_SEED={seed})")
    rng = random.Random(seed)
    kills, longest = KILLS, 0.6
    if store == "s3":
        _, bucket = request.getfixturevalue("proxied")(request.getfixturevalue("moto_bucket"), latency=0.005)
        warehouse, kills, longest = use(monkeypatch, bucket), KILLS // 2, 1.2
    Catalog(warehouse).create_database(DatabaseInput={"Name": "db"})
    acknowledged: dict[str, dict[str, Any]] = {}
    for run in range(kills):
        for ack in run_until_killed(warehouse, run, rng, longest):
            acknowledged.setdefault(ack["table"], {}).update({k: v for k, v in ack.items() if k != "table"})
        # Every table is listed and read; the deep checks cover this run's tables (the ones the kill
        # could have caught mid-write) and a sample of older ones, to keep the test fast.
        this_run = {name for name in acknowledged if name.startswith(f"r{run}_")}
        deep = this_run | set(rng.sample(sorted(acknowledged), min(10, len(acknowledged))))
        try:
            check_consistent(warehouse, acknowledged, deep)
        except Exception as e:
            raise AssertionError(
                f"after kill {run + 1} (seed {seed}, rerun with GLUECAT_TEST_SEED={seed}): {e!r}"
            ) from e
    assert len(acknowledged) > kills, f"seed {seed}: the writer hardly committed anything before the kills"


def test_a_checkpoint_that_cannot_be_written_does_not_fail_the_commit_before_it(warehouse: str) -> None:
    """The commit is published before its writer folds a checkpoint; if the checkpoint cannot be
    written (disk full, permissions, an object-store hiccup), the call must still report its landed
    commit. Otherwise the caller retries an update that is already there and it applies twice."""
    catalog = Catalog(warehouse)
    catalog.create_database(DatabaseInput={"Name": "db"})
    catalog.create_table(DatabaseName="db", TableInput={"Name": "t", "Description": "v1"})
    # A file where the checkpoints folder should be: every checkpoint write fails with an OSError.
    checkpoints = Path(warehouse) / "_gluecat" / "checkpoints"
    for leftover in checkpoints.iterdir():
        leftover.unlink()
    checkpoints.rmdir()
    checkpoints.write_bytes(b"")
    updates = catalog.store.checkpoint_interval - catalog.store.latest().version + 1
    for n in range(2, updates + 2):
        catalog.update_table(DatabaseName="db", TableInput={"Name": "t", "Description": f"v{n}"})
    assert catalog.get_table(DatabaseName="db", Name="t")["Table"]["VersionId"] == str(updates + 1)
