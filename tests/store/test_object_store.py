"""A warehouse on an object store (S3 on moto and versitygw, Azure Blob on Azurite): commits from many
processes with the store's put-if-absent and no lock server, reads that see every acknowledged commit,
the transaction journal as a log of objects, maintenance, and what each costs in requests.

GCS is not here: obstore uploads through GCS's XML API, which no emulator reachable from this machine
takes (fake-gcs-server answers it 400, fsouza/fake-gcs-server#331); see docs/deploy.md.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import obstore
import pytest

import gluecat
from gluecat import Catalog, LakeFormation, cli
from gluecat.catalog.rows import merging
from gluecat.errors import StorageError
from gluecat.store import maintenance, object_store
from gluecat.store import store as store_module
from gluecat.store.filesystems import open_fs
from gluecat.store.fsck import check
from gluecat.store.object_store import ObjectStoreFS
from gluecat.store.store import Changes
from tests import int_partitions
from tests.catalog.test_transaction_processes import check_concurrent_transactions
from tests.object_stores.fixtures import use
from tests.store.test_concurrency import check_racing_writers

pytestmark = pytest.mark.slow

WRITER = Path(__file__).with_name("writer_process.py")
PYTHON_DIR = Path(gluecat.__file__).resolve().parents[1]


@pytest.fixture(params=["moto", "versitygw", "azurite"])
def remote(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, Any]]:
    """A warehouse URI on each object store in turn, with its client environment set."""
    fixture = {"moto": "moto_bucket", "versitygw": "versitygw_bucket", "azurite": "azure_container"}
    bucket = request.getfixturevalue(fixture[request.param])
    yield use(monkeypatch, bucket), bucket


def make(warehouse: str, tables: tuple[str, ...] = ("t",)) -> Catalog:
    glue = Catalog(warehouse, background_merges=False)
    glue.create_database(DatabaseInput={"Name": "db"})
    for name in tables:
        glue.create_table(
            DatabaseName="db",
            TableInput={"Name": name, "PartitionKeys": [{"Name": "dt", "Type": "string"}]},
        )
    return glue


def values(glue: Catalog, table: str = "t") -> list[str]:
    pages = glue.get_paginator("get_partitions").paginate(DatabaseName="db", TableName=table)
    return sorted(p["Values"][0] for p in pages.search("Partitions[]"))


def test_a_warehouse_on_an_object_store_commits_and_reads_back(remote: tuple[str, Any]) -> None:
    warehouse, _ = remote
    glue = make(warehouse)
    assert isinstance(glue.store.fs, ObjectStoreFS)
    glue.batch_create_partition(
        DatabaseName="db",
        TableName="t",
        PartitionInputList=[{"Values": [f"2024-01-0{d}"]} for d in range(1, 4)],
    )
    glue.update_table(
        DatabaseName="db",
        TableInput={"Name": "t", "Description": "d", "PartitionKeys": [{"Name": "dt", "Type": "string"}]},
    )
    other = Catalog(warehouse)  # another process's view
    assert values(other) == ["2024-01-01", "2024-01-02", "2024-01-03"]
    assert other.get_table(DatabaseName="db", Name="t")["Table"]["Description"] == "d"
    glue.delete_partition(DatabaseName="db", TableName="t", PartitionValues=["2024-01-02"])
    assert values(other) == ["2024-01-01", "2024-01-03"]  # seen at the next call


def test_processes_that_open_a_new_warehouse_at_once_share_it(remote: tuple[str, Any]) -> None:
    """Several processes open a warehouse nobody has made yet and commit to it at once (Spark drivers
    started together on a new prefix): one history is started, and every commit is in it."""
    warehouse, _ = remote
    code = (
        "import sys, time\nfrom gluecat import Catalog\n"
        "time.sleep(max(0.0, float(sys.argv[3]) - time.time()))  # all at once, once imported\n"
        "Catalog(sys.argv[1]).create_database(DatabaseInput={'Name': sys.argv[2]})\n"
    )
    env = {**os.environ, "PYTHONPATH": str(PYTHON_DIR)}
    start = str(time.time() + 3)
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", code, warehouse, f"db{w}", start],
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for w in range(4)
    ]
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
    listed = Catalog(warehouse).get_databases()["DatabaseList"]
    assert sorted(d["Name"] for d in listed) == [f"db{w}" for w in range(4)]


def test_writer_processes_on_an_object_store_lose_nothing_and_bring_nothing_back(
    remote: tuple[str, Any],
) -> None:
    """Processes add batches of partitions to one table and delete some of their own again, with no lock
    but the store's conditional writes: every acknowledged partition not deleted since is there, once."""
    warehouse, _ = remote
    make(warehouse, ("shared",))
    env = {**os.environ, "PYTHONPATH": str(PYTHON_DIR)}
    procs = [
        subprocess.Popen(
            [sys.executable, str(WRITER), "partitions", warehouse, str(w), "7", "12"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for w in range(4)
    ]
    outcomes = []
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
        outcomes += [json.loads(line) for line in out.splitlines()]
    assert all(o["errors"] == [] for o in outcomes)
    expected: Counter[str] = Counter()
    for o in outcomes:
        expected.update({v: 1 if o["op"] == "add" else -1 for v in o["values"]})
    assert values(Catalog(warehouse), "shared") == sorted(+expected)


def test_racing_processes_lose_no_acknowledged_table_change_and_accept_no_stale_version(
    remote: tuple[str, Any],
) -> None:
    """Processes create, update (naming the VersionId they read) and delete a few shared tables: on an
    object store too, exactly the acknowledged calls are in the log and no stale VersionId is accepted
    (the root's decision and the tables' markers, test_concurrency.py)."""
    warehouse, _ = remote
    check_racing_writers(warehouse, ops=120)
    assert check(warehouse).findings == []


def test_racing_lake_formation_transactions_commit_each_once_and_all_or_nothing(
    remote: tuple[str, Any],
) -> None:
    """Processes run transactions that add and delete a governed table's objects, committing or
    canceling them: on an object store too, the root log holds each committed one once, and the table
    what replaying them gives (test_transaction_processes.py)."""
    warehouse, _ = remote
    check_concurrent_transactions(warehouse, workers=4, count=30)
    assert check(warehouse).findings == []


def test_a_database_dropped_while_another_process_adds_to_it_leaves_nothing_behind(
    remote: tuple[str, Any],
) -> None:
    """One catalog drops a database while another (a process of its own as far as the store goes)
    creates a table in it and adds a partition, the drop starting from 0 to 100 ms later: whichever
    wins, no table or partition of a dropped database is left behind to come back with a database of
    its name."""
    warehouse, _ = remote
    dropper, creator = (
        Catalog(warehouse, background_merges=False),
        Catalog(warehouse, background_merges=False),
    )

    def drop(together: threading.Barrier, name: str, delay: float) -> str:
        together.wait(timeout=30)
        time.sleep(delay)
        dropper.delete_database(Name=name)
        return "dropped"

    def create(together: threading.Barrier, name: str) -> str:
        together.wait(timeout=30)
        try:
            keys = [{"Name": "k", "Type": "string"}]
            creator.create_table(DatabaseName=name, TableInput={"Name": "t", "PartitionKeys": keys})
            creator.create_partition(DatabaseName=name, TableName="t", PartitionInput={"Values": ["v"]})
        except gluecat.GlueError as e:
            return e.code
        return "created"

    delays = [0.0, 0.005, 0.02, 0.1] * 3
    outcomes: Counter[str] = Counter()
    for i, delay in enumerate(delays):
        dropper.create_database(DatabaseInput={"Name": f"d{i}"})
        together = threading.Barrier(2)
        with ThreadPoolExecutor(2) as pool:
            dropped = pool.submit(drop, together, f"d{i}", delay)
            outcomes[pool.submit(create, together, f"d{i}").result()] += 1
            assert dropped.result() == "dropped"
    assert outcomes["created"] > 0, outcomes  # some tables were made before their database was dropped
    fresh = Catalog(warehouse)
    assert fresh.get_databases()["DatabaseList"] == []
    for i in range(len(delays)):
        fresh.create_database(DatabaseInput={"Name": f"d{i}"})  # nothing of the old one comes back
        assert fresh.get_tables(DatabaseName=f"d{i}")["TableList"] == []
        with pytest.raises(gluecat.GlueError, match="EntityNotFound"):
            fresh.get_partitions(DatabaseName=f"d{i}", TableName="t")
    assert not check(warehouse).damaged


def test_reads_as_of_a_time_see_what_every_process_had_committed_by_then(remote: tuple[str, Any]) -> None:
    """Time travel over the logs of several processes: two catalogs (stores of their own) take turns at
    changing a table's partitions and definition; a third reads, as of each moment between their
    commits, exactly what both had committed by then."""
    from datetime import UTC, datetime

    warehouse, _ = remote
    first = make(warehouse)
    second = Catalog(warehouse, background_merges=False)
    moments: list[tuple[datetime, list[str], str]] = []

    def moment(parts: list[str], description: str) -> None:
        time.sleep(0.02)
        moments.append((datetime.now(UTC), parts, description))
        time.sleep(0.02)

    moment([], "")
    first.create_partition(DatabaseName="db", TableName="t", PartitionInput={"Values": ["a"]})
    moment(["a"], "")
    second.create_partition(DatabaseName="db", TableName="t", PartitionInput={"Values": ["b"]})
    moment(["a", "b"], "")
    described = {"Name": "t", "Description": "v2", "PartitionKeys": [{"Name": "dt", "Type": "string"}]}
    first.update_table(DatabaseName="db", TableInput=described)
    moment(["a", "b"], "v2")
    second.delete_partition(DatabaseName="db", TableName="t", PartitionValues=["a"])
    first.create_partition(DatabaseName="db", TableName="t", PartitionInput={"Values": ["c"]})
    moment(["b", "c"], "v2")

    reader = Catalog(warehouse)
    for when, parts, description in moments:
        got = reader.get_partitions(DatabaseName="db", TableName="t", QueryAsOfTime=when)["Partitions"]
        assert sorted(p["Values"][0] for p in got) == parts, when
        table = reader.get_table(DatabaseName="db", Name="t", QueryAsOfTime=when)["Table"]
        assert table.get("Description", "") == description, when


def test_a_write_answers_from_every_commit_acknowledged_before_it(remote: tuple[str, Any]) -> None:
    """A commit's first attempt builds on what its process saw of the table a moment ago (no listing),
    so what it answers without publishing is checked against the log: a partition another process
    just added is there to delete, and there already to create."""
    warehouse, _ = remote
    glue = make(warehouse)
    other = Catalog(warehouse, background_merges=False)
    assert values(glue) == []  # glue has just looked at the table
    other.create_partition(DatabaseName="db", TableName="t", PartitionInput={"Values": ["x"]})
    with pytest.raises(glue.exceptions.AlreadyExistsException):
        glue.create_partition(DatabaseName="db", TableName="t", PartitionInput={"Values": ["x"]})
    other.create_partition(DatabaseName="db", TableName="t", PartitionInput={"Values": ["y"]})
    glue.delete_partition(DatabaseName="db", TableName="t", PartitionValues=["y"])
    other.create_partition(DatabaseName="db", TableName="t", PartitionInput={"Values": ["z"]})
    out = glue.batch_delete_partition(
        DatabaseName="db", TableName="t", PartitionsToDelete=[{"Values": ["z"]}]
    )
    assert out["Errors"] == []
    assert values(Catalog(warehouse)) == ["x"]


def test_lake_formation_transactions_keep_their_journal_in_objects(remote: tuple[str, Any]) -> None:
    warehouse, _ = remote
    glue = make(warehouse)
    glue.create_table(
        DatabaseName="db",
        TableInput={
            "Name": "g",
            "TableType": "GOVERNED",
            "StorageDescriptor": {"Columns": [], "Location": "s3://lake/g/"},
        },
    )
    lf, other = LakeFormation(warehouse), LakeFormation(Catalog(warehouse))
    tx = lf.start_transaction()["TransactionId"]
    lf.update_table_objects(
        DatabaseName="db",
        TableName="g",
        TransactionId=tx,
        WriteOperations=[{"AddObject": {"Uri": "s3://lake/g/a", "ETag": "e", "Size": 1}}],
    )
    assert (
        other.describe_transaction(TransactionId=tx)["TransactionDescription"]["TransactionStatus"]
        == "ACTIVE"
    )
    assert lf.commit_transaction(TransactionId=tx)["TransactionStatus"] == "COMMITTED"
    got = other.get_table_objects(DatabaseName="db", TableName="g")["Objects"]
    assert [o["Uri"] for part in got for o in part["Objects"]] == ["s3://lake/g/a"]
    assert (
        other.describe_transaction(TransactionId=tx)["TransactionDescription"]["TransactionStatus"]
        == "COMMITTED"
    )


def test_fsck_and_compaction_work_on_an_object_store(remote: tuple[str, Any]) -> None:
    warehouse, _ = remote
    glue = make(warehouse)
    for k in range(12):
        glue.create_partition(DatabaseName="db", TableName="t", PartitionInput={"Values": [str(k)]})
    glue.store.checkpoint()
    glue.create_partition(DatabaseName="db", TableName="t", PartitionInput={"Values": ["last"]})
    report = check(warehouse)
    assert not report.damaged, report.findings
    from datetime import UTC, datetime, timedelta

    later = datetime.now(UTC) + timedelta(seconds=1)
    expired = maintenance.expire(
        glue.store, retain=timedelta(0), grace=timedelta(0), dry_run=False, now=later
    )
    assert expired.log_entries
    assert values(Catalog(warehouse)) == sorted([*map(str, range(12)), "last"])
    assert not check(warehouse).damaged


def test_a_look_at_a_log_that_others_keep_writing_reads_what_it_listed(
    moto_bucket: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A process behind a busy table (just opened, or idle a while) reads the entries listed when its
    look began; those published while it reads them wait for its next look. Chasing them instead, it
    read for as long as the others kept writing: of eight writers of one table, those that started a
    moment late never committed again."""
    warehouse = use(monkeypatch, moto_bucket)
    writer = make(warehouse)
    reader = Catalog(warehouse, background_merges=False)
    reader.table_version("db", "t")
    for i in range(5):
        writer.create_partition(DatabaseName="db", TableName="t", PartitionInput={"Values": [str(i)]})
    acknowledged = writer.table_version("db", "t")
    real, published = reader.store.fs.read_many, []

    def busy(rels: Any) -> Any:  # every read of the reader's is overtaken by another commit
        if len(published) < 20:
            published.append(len(published) + 5)
            writer.create_partition(
                DatabaseName="db", TableName="t", PartitionInput={"Values": [str(published[-1])]}
            )
        return real(rels)

    monkeypatch.setattr(reader.store.fs, "read_many", busy)
    assert reader.table_version("db", "t") == acknowledged
    assert published == [5]
    monkeypatch.setattr(reader.store.fs, "read_many", real)
    assert reader.table_version("db", "t") == acknowledged + 1
    assert values(reader) == [str(i) for i in range(6)]


def test_writers_of_one_table_committing_back_to_back_take_turns(
    moto_bucket: Any, proxied: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On an object store the writer that has won a version publishes its next a round trip later, and
    a loser needs two (it reads what won first): a process committing back to back took every version,
    and a second writer of the table waited until it gave up. Now a winner that knows another writer
    waits lets it have the next version (gluecat/store/turns.py), and the two alternate."""
    _, bucket = proxied(moto_bucket, latency=0.01)
    warehouse = use(monkeypatch, bucket)
    make(warehouse)
    began = time.monotonic()
    second_begins, ends = began + 1.0, began + 5.0
    made: dict[str, list[tuple[float, str]]] = {"first": [], "second": []}
    errors: list[BaseException] = []

    def write(name: str, start: float) -> None:
        time.sleep(max(0.0, start - time.monotonic()))
        glue = Catalog(warehouse, background_merges=False)
        try:
            for n in itertools.count():
                if time.monotonic() >= ends:
                    return
                value = f"{name}-{n}"
                glue.create_partition(DatabaseName="db", TableName="t", PartitionInput={"Values": [value]})
                made[name].append((time.monotonic(), value))
        except BaseException as e:
            errors.append(e)

    writers = [
        threading.Thread(target=write, args=("first", began)),
        threading.Thread(target=write, args=("second", second_begins)),
    ]
    for w in writers:
        w.start()
    for w in writers:
        w.join()
    assert errors == []
    first_meanwhile = sum(1 for at, _ in made["first"] if at > second_begins)
    # About a third (it waits a moment for its first turn, and the two share one interpreter);
    # without turns, none.
    assert len(made["second"]) >= 0.2 * (first_meanwhile + len(made["second"])), (
        first_meanwhile,
        len(made["second"]),
    )
    assert values(Catalog(warehouse)) == sorted(v for m in made.values() for _, v in m)
    listed = obstore.list(moto_bucket.store(), "warehouse/_gluecat/tables/").collect()
    assert any(o["path"].endswith("/waiting") for o in listed)  # the second writer's note
    assert check(warehouse).findings == []  # which is no part of the log


def begin_together(warehouse: str, tables: list[str], seconds: float) -> list[list[str]]:
    """UpdateTable back to back by one process per entry of ``tables``, all begun at once; the
    Descriptions each had acknowledged, in order."""
    writers = [
        subprocess.Popen(
            [sys.executable, str(WRITER), "updates", warehouse, table, str(worker), str(seconds)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONPATH": f"{PYTHON_DIR}:{PYTHON_DIR.parent}"},
        )
        for worker, table in enumerate(tables)
    ]
    for writer in writers:
        assert writer.stdout is not None and json.loads(writer.stdout.readline()) == {"ready": True}
    for writer in writers:
        assert writer.stdin is not None
        writer.stdin.write("go\n")
        writer.stdin.flush()
    made = []
    for writer in writers:
        out, err = writer.communicate(timeout=120)
        assert writer.returncode == 0, err
        made.append([json.loads(line)["description"] for line in out.splitlines()])
    return made


@pytest.mark.parametrize("shared", [False, True], ids=["two tables", "one table"])
def test_writers_of_table_changes_begun_together_take_turns(
    moto_bucket: Any, proxied: Any, monkeypatch: pytest.MonkeyPatch, shared: bool
) -> None:
    """A change of a table's definition (UpdateTable here) is decided by the root log. Its writers take
    turns as a table's do, and one that lost builds again on the entry that won, without a look: two
    processes updating tables back to back both commit. Before, the one that won the first version won
    nearly every one after it (the other made 1 of 34-60 on S3)."""
    _, bucket = proxied(moto_bucket, latency=0.01)
    warehouse = use(monkeypatch, bucket)
    tables = ["t", "t"] if shared else ["t", "u"]
    make(warehouse, tables=tuple(sorted(set(tables))))
    made = begin_together(warehouse, tables, seconds=4.0)
    fewer, more = sorted(len(m) for m in made)
    assert fewer >= 0.25 * (fewer + more), made
    fresh = Catalog(warehouse)
    for table in set(tables):
        versions = fresh.get_paginator("get_table_versions").paginate(DatabaseName="db", TableName=table)
        described = [v["Table"].get("Description") for v in versions.search("TableVersions[]")]
        ours = [m for m, t in zip(made, tables, strict=True) if t == table]
        # Each acknowledged update is one version of the table, and nothing else is.
        assert sorted(d for d in described if d is not None) == sorted(d for m in ours for d in m)
    assert check(warehouse).findings == []  # the turns' notes are no part of the warehouse's state


def test_a_snapshot_attaches_a_table_with_the_root_it_holds_not_one_rebuilt_by_version(
    moto_bucket: Any, proxied: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A snapshot holds the root as it read it and attaches each table's log when first read. After
    others' commits moved the root log on, the root was rebuilt by version from the log's start or a
    checkpoint: on S3 about a second for each retry of a root commit that lost a race (4 processes
    updating 4 tables through a 20 ms proxy: the losers made 5-7 attempts in 8 s). The root in hand
    is used."""
    proxy, bucket = proxied(moto_bucket)
    warehouse = use(monkeypatch, bucket)
    glue = make(warehouse, tables=("t", "u"))
    snap = glue.store.latest()
    other = Catalog(warehouse, background_merges=False)
    for n in range(10):
        other.update_table(DatabaseName="db", TableInput={"Name": "u", "Description": str(n)})
    proxy.reset()
    state = snap.table_state(("db", "t"))
    assert proxy.total() == 1  # one look at the table's log; the root log is not read (31 before)
    assert state is not None and state.get("table", ("db", "t"))["Name"] == "t"


def test_a_failed_look_for_another_writers_turn_fails_no_commit(
    moto_bucket: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    warehouse = use(monkeypatch, moto_bucket)
    glue = make(warehouse)
    where = glue.store.table_log(("db", "t"))
    where.turns.published(0.01, won=False)  # it has met another writer of the table ...
    where.turns.published(0.01, won=True)  # ... and won the last version: it offers the next
    assert where.turns.wait() > 0

    def unreachable() -> bool:
        raise ConnectionResetError("the look's request failed")

    monkeypatch.setattr(where, "peek", unreachable)
    glue.create_partition(DatabaseName="db", TableName="t", PartitionInput={"Values": ["a"]})
    assert values(Catalog(warehouse)) == ["a"]


def test_a_read_of_an_unchanged_table_is_one_request_and_a_commit_at_most_three(
    moto_bucket: Any, proxied: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Counted by a proxy in front of the S3 server: what each call costs in object-store requests."""
    proxy, bucket = proxied(moto_bucket)
    warehouse = use(monkeypatch, bucket)
    glue = make(warehouse, ("t", "u"))
    glue.create_partition(DatabaseName="db", TableName="t", PartitionInput={"Values": ["a"]})
    glue.get_partitions(DatabaseName="db", TableName="t")
    proxy.reset()
    glue.get_table(DatabaseName="db", Name="t")
    assert proxy.counts() == {**zero(proxy), "list": 1}
    proxy.reset()
    glue.get_partitions(DatabaseName="db", TableName="t")
    assert proxy.total() == 1
    proxy.reset()
    for i in range(100):
        glue.create_partition(DatabaseName="db", TableName="u", PartitionInput={"Values": [str(i)]})
    commits = proxy.total() / 100
    assert commits <= 3, proxy.counts()
    assert proxy.counts()["conditional_put"] >= 100  # each commit is a put-if-absent

    def update_table(description: str) -> list[str]:
        proxy.reset()
        described = {
            "Name": "t",
            "PartitionKeys": [{"Name": "dt", "Type": "string"}],
            "Description": description,
        }
        glue.update_table(DatabaseName="db", TableInput=described)
        # Not counted: a read of the root's note, made in the background by a writer that won a
        # version in the last second (turns.py).
        return sorted(r["kind"] for r in proxy.log() if not r["key"].endswith("_gluecat/waiting"))

    # By a process that has not looked at the logs for a while (BUILD_ON_SEEN): a look at the root's
    # tail and at the table's, then the table's marker and the root's entry (the records travel
    # inside them); docs/deploy.md.
    monkeypatch.setattr(store_module, "BUILD_ON_SEEN", 0.0)
    assert update_table("changed") == ["conditional_put"] * 2 + ["list"] * 2
    # Just after a look (or a commit): built on what it saw, as a table's commit is; a log that moved
    # on would refuse the marker or the root's entry.
    monkeypatch.setattr(store_module, "BUILD_ON_SEEN", 60.0)
    assert update_table("changed again") == ["conditional_put"] * 2
    # Glue's usual read-modify-write, once the root is no longer fresh: GetTable looks at the table's
    # log, UpdateTable at the root's.
    monkeypatch.setattr(store_module, "BUILD_ON_SEEN", 1.0)
    time.sleep(1.1)
    proxy.reset()
    glue.get_table(DatabaseName="db", Name="t")
    assert update_table("read, then changed") == ["conditional_put"] * 2 + ["list"]
    assert (
        Catalog(warehouse).get_table(DatabaseName="db", Name="t")["Table"]["Description"]
        == "read, then changed"
    )


def test_a_root_commit_built_on_what_its_process_saw_still_answers_from_every_acknowledged_commit(
    moto_bucket: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A root commit's first attempt is built on the logs as its process last saw them (within
    BUILD_ON_SEEN): the root's entry and the markers are put-if-absent, so a log another process moved
    on refuses them. What no publication checks is read again first: an answer given without a
    publication (an error, nothing to do), and a table the commit reads but does not change."""
    monkeypatch.setattr(store_module, "BUILD_ON_SEEN", 60.0)
    warehouse = use(monkeypatch, moto_bucket)
    a = make(warehouse)
    b = Catalog(warehouse, background_merges=False)
    assert b.get_table(DatabaseName="db", Name="t")["Table"]["VersionId"] == "1"  # b has looked just now

    a.create_table(DatabaseName="db", TableInput={"Name": "new"})
    b.update_table(DatabaseName="db", TableInput={"Name": "new", "Description": "by b"})
    assert a.get_table(DatabaseName="db", Name="new")["Table"]["Description"] == "by b"

    # A VersionId b read, which a's update made stale: refused, as Glue refuses it.
    a.update_table(DatabaseName="db", TableInput={"Name": "t", "Description": "by a"})
    with pytest.raises(gluecat.errors.ConcurrentModificationException, match="VersionId 2, not 1"):
        b.update_table(DatabaseName="db", TableInput={"Name": "t", "Description": "by b"}, VersionId="1")

    # Commits of the store's own that read a record of t's log, which a commit to that log alone (as a
    # partition's) changed after c looked: the root has not moved, so only a look at t's log shows it.
    # (c, not b: b has just lost a race for the root, and looks at the logs first while others commit.)
    c = Catalog(warehouse, background_merges=False)
    numbers = itertools.count(1)

    def stats_commit(answer: Any) -> Any:
        c.get_table(DatabaseName="db", Name="t")
        n = next(numbers)
        a.store.commit("Stats", put_record("column_statistics", ("db", "t", str(n)), n), table=("db", "t"))
        return c.store.commit(
            "Read", lambda snap: answer(snap, snap.get("column_statistics", ("db", "t", str(n))))
        )

    def required(snap: Any, stats: Any) -> tuple[Changes, Any]:
        if stats is None:
            raise gluecat.errors.EntityNotFoundException("no statistics")
        return Changes(), stats

    def read_only(snap: Any, stats: Any) -> tuple[Changes, Any]:
        changes = Changes()
        changes.put("thing", ("read",), {str(stats): True})
        return changes, stats

    assert stats_commit(required) == 1  # an error, from b's view
    assert stats_commit(lambda snap, stats: (Changes(), stats)) == 2  # nothing to do, from b's view
    assert stats_commit(read_only) == 3  # the table only read


def put_record(kind: str, key: tuple[str, ...], doc: object) -> Any:
    def build(snap: Any) -> tuple[Changes, None]:
        changes = Changes()
        changes.put(kind, key, doc)
        return changes, None

    return build


def test_a_commit_lands_when_no_thread_can_start_to_read_the_note(
    moto_bucket: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As while the interpreter exits (a background merge still committing): the note is only a hint."""
    warehouse = use(monkeypatch, moto_bucket)
    glue = make(warehouse)
    glue.create_partition(DatabaseName="db", TableName="t", PartitionInput={"Values": ["a"]})
    exited = ThreadPoolExecutor(1)
    exited.shutdown()
    glue.store._background_pool = exited  # the next commit, after a win, reads the note
    glue.create_partition(DatabaseName="db", TableName="t", PartitionInput={"Values": ["b"]})
    assert values(Catalog(warehouse)) == ["a", "b"]


def test_a_read_of_a_changed_table_lists_its_log_once_and_reads_the_new_entries_at_once(
    moto_bucket: Any, proxied: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    proxy, bucket = proxied(moto_bucket)
    warehouse = use(monkeypatch, bucket)
    writer = make(warehouse)
    reader = Catalog(warehouse, background_merges=False)
    assert values(reader) == []
    for i in range(3):
        writer.create_partition(DatabaseName="db", TableName="t", PartitionInput={"Values": [str(i)]})
    proxy.reset()
    assert values(reader) == ["0", "1", "2"]
    assert proxy.counts() == {**zero(proxy), "list": 1, "get": 3}


def zero(proxy: Any) -> dict[str, int]:
    return dict.fromkeys(proxy.counts(), 0)


def test_transient_failures_are_retried_and_a_retried_create_finds_its_own_entry(
    moto_bucket: Any, proxied: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """503 SlowDown and 500 are retried; a create whose reply was lost (it took effect) is retried by
    the client, finds its name taken by its own entry, and is taken for the commit it is: one commit,
    acknowledged once, not a lost race committed again."""
    proxy, bucket = proxied(moto_bucket)
    warehouse = use(monkeypatch, bucket)
    glue = make(warehouse)
    version = glue.table_version("db", "t")
    proxy.inject("slow_down", kinds=["conditional_put"], times=2)
    proxy.inject("internal_error", kinds=["list"], times=1)
    glue.create_partition(DatabaseName="db", TableName="t", PartitionInput={"Values": ["a"]})
    assert glue.table_version("db", "t") == version + 1
    lost = proxy.inject("drop_after", kinds=["conditional_put"], times=1)
    glue.create_partition(DatabaseName="db", TableName="t", PartitionInput={"Values": ["b"]})
    assert proxy.fired(lost) == 1
    fresh = Catalog(warehouse)
    assert fresh.table_version("db", "t") == version + 2  # exactly one commit each
    assert values(fresh) == ["a", "b"]
    assert not check(warehouse).damaged


@pytest.fixture
def unretried(monkeypatch: pytest.MonkeyPatch) -> None:
    """Stores opened from here on give up on a failed request at once (the client would otherwise
    retry it for up to two minutes): the store's own handling of a failure is what is left."""
    monkeypatch.setattr(object_store, "_RETRIES", {"max_retries": 0})
    monkeypatch.setattr(store_module, "INLINE_SEGMENT_BYTES", 0)  # a commit's rows in a file of their own


def test_a_commit_whose_publication_failed_learns_whether_it_landed(
    moto_bucket: Any, proxied: Any, monkeypatch: pytest.MonkeyPatch, unretried: None
) -> None:
    """A create that failed is not taken for a commit that failed: its name is read back. Taken by its
    own entry (the reply was lost), it is the commit; still free (the request was lost), it is created
    again, so that a late arrival of the lost request finds it taken. One commit each, acknowledged."""
    proxy, bucket = proxied(moto_bucket)
    warehouse = use(monkeypatch, bucket)
    glue = make(warehouse)
    version = glue.table_version("db", "t")
    landed = proxy.inject("drop_after", kinds=["conditional_put"], times=1)
    glue.create_partition(DatabaseName="db", TableName="t", PartitionInput={"Values": ["a"]})
    lost = proxy.inject("drop_before", kinds=["conditional_put"], times=1)
    glue.create_partition(DatabaseName="db", TableName="t", PartitionInput={"Values": ["b"]})
    assert (proxy.fired(landed), proxy.fired(lost)) == (1, 1)
    fresh = Catalog(warehouse)
    assert fresh.table_version("db", "t") == version + 2
    assert values(fresh) == ["a", "b"]
    assert not check(warehouse).damaged


def test_a_commit_that_cannot_learn_whether_it_landed_says_so_and_deletes_nothing(
    moto_bucket: Any, proxied: Any, monkeypatch: pytest.MonkeyPatch, unretried: None
) -> None:
    """Its create failed and the store stopped answering: the entry may be there, or may land later, so
    the files it names stay. Here it did land: the commit is whole once the store answers again."""
    proxy, bucket = proxied(moto_bucket)
    warehouse = use(monkeypatch, bucket)
    glue = make(warehouse)
    version = glue.table_version("db", "t")
    proxy.inject("drop_after", kinds=["conditional_put"], times=1)
    proxy.inject("internal_error", kinds=["get", "head", "conditional_put"], skip=0)
    with pytest.raises(StorageError, match="is not known"):
        glue.create_partition(DatabaseName="db", TableName="t", PartitionInput={"Values": ["a"]})
    proxy.clear_faults()
    fresh = Catalog(warehouse)
    assert fresh.table_version("db", "t") == version + 1
    assert values(fresh) == ["a"]
    assert check(warehouse).findings == []  # its segment is there


def test_a_root_commit_whose_marker_may_have_landed_fences_it_and_commits_once(
    moto_bucket: Any, proxied: Any, monkeypatch: pytest.MonkeyPatch, unretried: None
) -> None:
    """A table change publishes a marker in the table's log, then the root entry that decides it. A
    marker whose outcome could not be learnt may be there: the root version it names is fenced, so it
    never counts, and the change is built again after it."""
    proxy, bucket = proxied(moto_bucket)
    warehouse = use(monkeypatch, bucket)
    glue = make(warehouse)
    table_log = r"/tables/[0-9a-f]+/log/"
    proxy.inject("drop_after", kinds=["conditional_put"], key=table_log, times=1)
    unreadable = proxy.inject("internal_error", kinds=["get"], key=table_log, times=3)
    table = {"Name": "t", "PartitionKeys": [{"Name": "dt", "Type": "string"}], "Description": "new"}
    glue.update_table(DatabaseName="db", TableInput=table)
    assert proxy.fired(unreadable) == 3
    fresh = Catalog(warehouse)
    operations = [e.operation for e in fresh.store.log_entries(-1, fresh.store.root.latest().version)]
    assert "FenceMarkers" in operations
    assert fresh.get_table(DatabaseName="db", Name="t")["Table"]["Description"] == "new"
    versions = fresh.get_table_versions(DatabaseName="db", TableName="t")["TableVersions"]
    assert len(versions) == 2  # created, updated once
    assert check(warehouse).findings == []


def test_a_journal_append_whose_request_failed_learns_whether_it_landed(
    moto_bucket: Any, proxied: Any, monkeypatch: pytest.MonkeyPatch, unretried: None
) -> None:
    """The transaction journal's entries are created as a log's are: an append whose reply was lost
    finds its own entry, one whose request was lost is created again; each record counts once."""
    proxy, bucket = proxied(moto_bucket)
    warehouse = use(monkeypatch, bucket)
    make(warehouse)
    lf = LakeFormation(warehouse)
    journal = r"/transactions/log/"
    replies = proxy.inject("drop_after", kinds=["conditional_put"], key=journal, times=1)
    first = lf.start_transaction()["TransactionId"]
    requests = proxy.inject("drop_before", kinds=["conditional_put"], key=journal, times=1)
    second = lf.start_transaction()["TransactionId"]
    assert (proxy.fired(replies), proxy.fired(requests)) == (1, 1)
    listed = LakeFormation(warehouse).list_transactions()["Transactions"]
    assert sorted(t["TransactionId"] for t in listed) == sorted([first, second])
    assert lf.commit_transaction(TransactionId=first)["TransactionStatus"] == "COMMITTED"


def test_a_create_that_arrives_after_the_client_gave_up_on_it_commits_once(
    moto_bucket: Any, proxied: Any, monkeypatch: pytest.MonkeyPatch, unretried: None
) -> None:
    """The client gives up on a create that is slow to arrive; the writer finds the name free and
    creates it again; the first request then arrives, and finds the name taken. One commit."""
    monkeypatch.setitem(object_store._TIMEOUTS, "timeout", "1s")
    proxy, bucket = proxied(moto_bucket)
    warehouse = use(monkeypatch, bucket)
    glue = make(warehouse)
    version = glue.table_version("db", "t")
    slow = proxy.inject("delay", kinds=["conditional_put"], key=r"/tables/[0-9a-f]+/log/", times=1, seconds=3)
    glue.create_partition(DatabaseName="db", TableName="t", PartitionInput={"Values": ["a"]})
    assert proxy.fired(slow) == 1
    deadline = time.monotonic() + 30
    while not any(r["fault"] == "delay" and r["status"] for r in proxy.log()):  # it has arrived
        assert time.monotonic() < deadline, proxy.log()
        time.sleep(0.1)
    assert next(r["status"] for r in proxy.log() if r["fault"] == "delay") == 412
    fresh = Catalog(warehouse)
    assert fresh.table_version("db", "t") == version + 1
    assert values(fresh) == ["a"]
    assert check(warehouse).findings == []


def test_a_merge_whose_commit_may_have_landed_keeps_its_segment(
    moto_bucket: Any, proxied: Any, monkeypatch: pytest.MonkeyPatch, unretried: None
) -> None:
    """A merge writes its segment before its commit. A commit that cannot learn whether it landed must
    leave the segment: here it did land, and the table reads whole once the store answers again."""
    proxy, bucket = proxied(moto_bucket)
    warehouse = use(monkeypatch, bucket)
    glue = int_partitions.make(Catalog(warehouse, background_merges=False))
    int_partitions.add(glue, 1, 2)
    int_partitions.add(glue, 3, 4)
    table_log = r"/tables/[0-9a-f]+/log/"
    proxy.inject("drop_after", kinds=["conditional_put"], key=table_log, times=1)
    proxy.inject("internal_error", kinds=["get", "head", "conditional_put"], key=table_log)
    with pytest.raises(StorageError, match="is not known"):
        merging.merge(glue.store, int_partitions.KEY, whole=True)
    proxy.clear_faults()
    fresh = Catalog(warehouse, background_merges=False)
    assert int_partitions.live(fresh) == [1, 2, 3, 4]
    assert len(int_partitions.segments(fresh)) == 1  # the merge is in
    assert check(warehouse).findings == []


def test_fsck_on_a_store_that_does_not_answer_says_so_rather_than_calling_it_damaged(
    moto_bucket: Any, proxied: Any, monkeypatch: pytest.MonkeyPatch, unretried: None, capsys: Any
) -> None:
    proxy, bucket = proxied(moto_bucket)
    warehouse = use(monkeypatch, bucket)
    make(warehouse).create_partition(DatabaseName="db", TableName="t", PartitionInput={"Values": ["a"]})
    proxy.inject("internal_error", kinds=["get"], key=r"/_gluecat/log/0+1\.json", times=1)
    assert cli.main(["fsck", "-w", warehouse]) == 1
    said = capsys.readouterr()
    assert said.err.startswith("gluecat fsck: s3://") and "0001.json" in said.err, said
    assert "damage" not in said.out + said.err
    assert not check(warehouse).damaged  # the store answers again: the warehouse is whole


def test_a_failed_request_is_an_os_error_that_names_the_object(
    moto_bucket: Any, proxied: Any, monkeypatch: pytest.MonkeyPatch, unretried: None
) -> None:
    proxy, bucket = proxied(moto_bucket)
    fs = ObjectStoreFS.at(use(monkeypatch, bucket))
    fs.write_new("x", b"1")
    proxy.inject("internal_error")
    for call in (lambda: fs.read_bytes("x"), lambda: fs.list_names(""), lambda: fs.publish("y", b"2")):
        with pytest.raises(OSError, match=r"^s3://.*/warehouse/.*Generic S3 error") as failed:
            call()
        assert "\n" not in str(failed.value)  # not the client's debug dump


def test_opening_a_table_reads_its_segments_at_once(
    moto_bucket: Any, proxied: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A table of several segment files, opened by a new process behind a slow store: its segments are
    read with parallel GETs, so opening takes a few round trips, not one per segment."""
    import time

    from gluecat.store import store as store_module

    proxy, bucket = proxied(moto_bucket)
    warehouse = use(monkeypatch, bucket)
    monkeypatch.setattr(store_module, "INLINE_SEGMENT_BYTES", 64)  # every batch a file of its own
    glue = make(warehouse)
    for k in range(10):
        glue.batch_create_partition(
            DatabaseName="db", TableName="t", PartitionInputList=[{"Values": [f"{k}-{i}"]} for i in range(20)]
        )
    proxy.set_latency(0.1)
    fresh = Catalog(warehouse)
    start = time.monotonic()
    assert len(values(fresh)) == 200
    elapsed = time.monotonic() - start
    gets = proxy.counts()["get"]
    assert gets >= 10 and elapsed < 0.1 * gets / 2, (elapsed, proxy.counts())


def test_two_servers_on_one_warehouse_see_each_others_writes_at_the_next_request(
    moto_bucket: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Two `gluecat serve` processes, stateless but for caches, on one S3 warehouse (as behind a load
    balancer): a write through one is read through the other at the next request."""
    import boto3

    from tests.aws_wire import make_credentials, serve_processes

    warehouse = use(monkeypatch, moto_bucket)
    make(warehouse)
    credentials = make_credentials(tmp_path)
    with serve_processes(warehouse, credentials, 2, tmp_path) as servers:
        clients = [
            boto3.client(
                "glue",
                endpoint_url=url,
                region_name="us-east-1",
                aws_access_key_id=credentials.key_id,
                aws_secret_access_key=credentials.secret,
            )
            for url in (s.url for s in servers)
        ]
        a, b = clients
        for i in range(5):
            writer, reader = (a, b) if i % 2 == 0 else (b, a)
            writer.create_partition(DatabaseName="db", TableName="t", PartitionInput={"Values": [str(i)]})
            got = reader.get_partitions(DatabaseName="db", TableName="t")["Partitions"]
            assert sorted(p["Values"][0] for p in got) == [str(j) for j in range(i + 1)]
            reader.update_table(
                DatabaseName="db",
                TableInput={
                    "Name": "t",
                    "Description": f"v{i}",
                    "PartitionKeys": [{"Name": "dt", "Type": "string"}],
                },
            )
            assert writer.get_table(DatabaseName="db", Name="t")["Table"]["Description"] == f"v{i}"


def test_a_transaction_begun_through_one_server_is_written_and_committed_through_the_other(
    moto_bucket: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Lake Formation transactions live in the warehouse (their journal on S3), not in a server: a load
    balancer may send each call of one transaction to another server."""
    import boto3

    from tests.aws_wire import make_credentials, serve_processes

    warehouse = use(monkeypatch, moto_bucket)
    make(warehouse)
    credentials = make_credentials(tmp_path)
    with serve_processes(warehouse, credentials, 2, tmp_path) as servers:

        def client(service: str, url: str) -> Any:
            return boto3.client(
                service,
                endpoint_url=url,
                region_name="us-east-1",
                aws_access_key_id=credentials.key_id,
                aws_secret_access_key=credentials.secret,
            )

        (glue_a, lf_a), (glue_b, lf_b) = [
            (client("glue", s.url), client("lakeformation", s.url)) for s in servers
        ]
        for commit in (True, False):
            name = "kept" if commit else "cancelled"
            tx = lf_a.start_transaction()["TransactionId"]
            glue_b.create_table(DatabaseName="db", TableInput={"Name": name}, TransactionId=tx)
            assert glue_a.get_table(DatabaseName="db", Name=name, TransactionId=tx)["Table"]["Name"] == name
            with pytest.raises(glue_a.exceptions.EntityNotFoundException):
                glue_a.get_table(DatabaseName="db", Name=name)  # not before the commit
            if commit:
                assert lf_b.commit_transaction(TransactionId=tx)["TransactionStatus"] == "COMMITTED"
                assert glue_a.get_table(DatabaseName="db", Name=name)["Table"]["Name"] == name
            else:
                lf_b.cancel_transaction(TransactionId=tx)
                with pytest.raises(glue_a.exceptions.EntityNotFoundException):
                    glue_a.get_table(DatabaseName="db", Name=name)
            assert lf_a.describe_transaction(TransactionId=tx)["TransactionDescription"][
                "TransactionStatus"
            ] == ("COMMITTED" if commit else "ABORTED")


def test_an_object_store_warehouse_is_configured_as_botocore_configures_s3(
    moto_bucket: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """No gluecat variable: a profile in ~/.aws/config whose services section names the endpoint, and
    its keys in ~/.aws/credentials, as the AWS CLI reads them."""
    for name in list(os.environ):
        if name.startswith("AWS_"):
            monkeypatch.delenv(name)
    (tmp_path / "config").write_text(
        "[profile lake]\nregion = us-east-1\nservices = local-s3\n\n"
        f"[services local-s3]\ns3 =\n  endpoint_url = {moto_bucket.endpoint}\n"
    )
    (tmp_path / "credentials").write_text(
        f"[lake]\naws_access_key_id = {moto_bucket.access_key_id}\n"
        f"aws_secret_access_key = {moto_bucket.secret_access_key}\n"
    )
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "credentials"))
    monkeypatch.setenv("AWS_PROFILE", "lake")
    warehouse = f"{moto_bucket.url}/configured"
    make(warehouse)
    assert Catalog(warehouse).get_table(DatabaseName="db", Name="t")["Table"]["Name"] == "t"

    assert obstore.list(moto_bucket.store(), "configured/").collect()  # there, where the profile says
    monkeypatch.setenv("AWS_PROFILE", "nosuch")
    with pytest.raises(Exception, match="nosuch"):
        open_fs(warehouse)


def test_the_command_line_takes_an_object_store_warehouse(
    moto_bucket: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from gluecat.cli import main

    warehouse = use(monkeypatch, moto_bucket)
    glue = make(warehouse)
    glue.create_partition(DatabaseName="db", TableName="t", PartitionInput={"Values": ["2024-01-01"]})
    assert main(["tables", "db", "-w", warehouse]) == 0
    assert "t" in capsys.readouterr().out.split()
    assert main(["partitions", "list", "db.t", "-w", warehouse]) == 0
    assert "2024-01-01" in capsys.readouterr().out
    assert main(["fsck", "-w", warehouse]) == 0
    assert "0 damaged" in capsys.readouterr().out
    assert main(["compact", "--apply", "-w", warehouse]) == 0
    capsys.readouterr()
    assert main(["tables", "db", "-w", f"{moto_bucket.url}/nosuch"]) == 1
    assert "not a gluecat warehouse" in capsys.readouterr().err  # a prefix holds no warehouse: never made
