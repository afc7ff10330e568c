"""Transactions run by several processes at once, and by a process killed while it commits."""

from __future__ import annotations

import json
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from gluecat import Catalog, LakeFormation
from gluecat.catalog import transactions
from gluecat.store.fsck import check
from gluecat.store.log import CommitTransaction
from tests.governed_table import make_table
from tests.object_stores.fixtures import use

ROOT = Path(__file__).resolve().parents[2]


def worker(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "tests.catalog.transaction_worker", *args],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )


def all_objects(lf: LakeFormation) -> dict[str, str]:
    """Uri -> partition value of every object of db.t."""
    out: dict[str, str] = {}
    kwargs: dict[str, Any] = {}
    while True:
        page = lf.get_table_objects(DatabaseName="db", TableName="t", **kwargs)
        for group in page["Objects"]:
            for o in group["Objects"]:
                assert o["Uri"] not in out
                out[o["Uri"]] = group["PartitionValues"][0]
        if not page.get("NextToken"):
            return out
        kwargs = {"NextToken": page["NextToken"]}


def commit_order(glue: Catalog) -> list[str]:
    """The committed transactions, in the order of their commits in the log."""
    return [
        action.transaction
        for entry in glue.store.log_entries(0, glue.warehouse_version())
        for action in entry.actions
        if isinstance(action, CommitTransaction)
    ]


@pytest.mark.slow
def test_concurrent_processes_end_as_a_sequential_replay_of_the_transactions_that_committed(
    warehouse: str,
) -> None:
    check_concurrent_transactions(warehouse)


def check_concurrent_transactions(warehouse: str, workers: int = 8, count: int = 50) -> None:
    """``workers`` processes run ``count`` transactions each on db.t (adding and deleting objects,
    committing or canceling): the log holds each committed transaction once and no other, and the table
    holds what replaying them in log order gives."""
    seed = random.randrange(1 << 30)
    print(f"seed {seed}")
    glue = make_table(warehouse)
    procs = [worker("mix", warehouse, str(n), str(count), str(seed)) for n in range(workers)]
    reports = []
    for p in procs:
        out, _ = p.communicate(timeout=600)
        assert p.returncode == 0, f"a worker failed (seed {seed})"
        reports += [json.loads(line) for line in out.splitlines()]
    assert len(reports) == workers * count
    committed = {r["tx"]: r["ops"] for r in reports if r["status"] == "COMMITTED"}
    order = commit_order(glue)
    assert sorted(order) == sorted(committed), f"seed {seed}"  # each exactly once, and no other
    state: dict[str, str] = {}
    for tx in order:
        for kind, partition, uri in committed[tx]:
            if kind == "add":
                assert uri not in state, f"{tx} added {uri}, which was held (seed {seed})"
                state[uri] = partition
            else:
                assert state.pop(uri, None) == partition, (
                    f"{tx} deleted {uri}, which was not held (seed {seed})"
                )
    assert all_objects(LakeFormation(warehouse)) == state, f"seed {seed}"
    statuses = {r["status"] for r in reports}
    print(f"{len(committed)} committed, {sum(r['status'] != 'COMMITTED' for r in reports)} not; {statuses}")


@pytest.mark.slow
@pytest.mark.parametrize("store", ["local", "s3"])
def test_a_process_killed_while_committing_leaves_all_of_a_transaction_or_none(
    warehouse: str,
    store: str,
    tmp_path: Path,
    request: pytest.FixtureRequest,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """On a local disk, and on S3 behind a proxy that makes each request take 5 ms (so that the kills
    land between any two of a commit's requests: its journal records, its markers, its root entry)."""
    seed = random.randrange(1 << 30)
    rng = random.Random(seed)
    print(f"seed {seed}")
    if store == "s3":
        _, bucket = request.getfixturevalue("proxied")(request.getfixturevalue("moto_bucket"), latency=0.005)
        warehouse = use(monkeypatch, bucket)
    glue = make_table(warehouse)
    log = tmp_path / "committing.jsonl"
    for _ in range(5):
        p = worker("crash", warehouse, str(log))
        assert p.stdout is not None and p.stdout.readline().strip() == "ready"
        time.sleep(rng.uniform(0.1, 1.0))
        p.send_signal(signal.SIGKILL)
        p.wait(timeout=60)
        p.stdout.close()
    # A commit its committer left half done is finished by whoever looks at it, once it is stale.
    monkeypatch.setattr(transactions, "STALE_COMMIT_SECONDS", 0.0)
    lf = LakeFormation(warehouse)
    held = all_objects(lf)
    logged = [json.loads(line) for line in log.read_text().splitlines()]
    assert logged, f"the worker never got to a commit (seed {seed})"
    for entry in logged:
        status = lf.describe_transaction(TransactionId=entry["tx"])["TransactionDescription"][
            "TransactionStatus"
        ]
        held = all_objects(lf)
        present = [u in held for u in entry["uris"]]
        if status == "COMMITTED":
            assert all(present), f"{entry['tx']} committed in part (seed {seed})"
        else:
            # Killed before its commit (ACTIVE), or its commit, finished now, found that a transaction of
            # a later round wrote its partition meanwhile (ABORTED): nothing of it landed.
            reason = lf._ctx.transactions().get(entry["tx"]).reason or ""
            assert status == "ACTIVE" or reason.startswith("conflict: The objects of partition"), reason
            assert not any(present), f"{entry['tx']}: {status}, {present} (seed {seed})"
    order = commit_order(glue)
    assert len(order) == len(set(order)), f"a transaction was applied twice (seed {seed})"
    # Later transactions commit, in every partition the killed ones wrote to.
    tx = lf.start_transaction()["TransactionId"]
    lf.update_table_objects(
        DatabaseName="db",
        TableName="t",
        TransactionId=tx,
        WriteOperations=[
            {"AddObject": {"Uri": f"s3://lake/t/after-{k}", "ETag": "e", "Size": 1, "PartitionValues": [k]}}
            for k in ("1", "2", "3", "4")
        ],
    )
    assert lf.commit_transaction(TransactionId=tx)["TransactionStatus"] == "COMMITTED"
    assert len(all_objects(lf)) == len(held) + 4
    report = check(warehouse)  # a kill may leave a temporary file behind: a note, not damage
    assert not report.damaged, report.findings
