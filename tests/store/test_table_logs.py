"""Each table's own log (format 6): commits to one table's partitions never touch the root log or another
table's; what the root decides about a table leaves a marker in the table's log that counts exactly if
the root's entry is published; a writer that lost its version republishes without building again when
what won changed nothing it read."""

from __future__ import annotations

import os
import threading
from datetime import UTC, datetime
from typing import Any

import pytest

from gluecat import Catalog
from gluecat.errors import StorageError
from gluecat.store import layout, log, placement
from gluecat.store import store as store_module
from gluecat.store.fs import LocalFS
from gluecat.store.store import Store

TABLES = [("db", "a"), ("db", "b")]


def catalog(warehouse: str) -> Catalog:
    glue = Catalog(warehouse, background_merges=False)
    glue.create_database(DatabaseInput={"Name": "db"})
    for _, name in TABLES:
        glue.create_table(
            DatabaseName="db",
            TableInput={"Name": name, "PartitionKeys": [{"Name": "k", "Type": "string"}]},
        )
    return glue


def add(glue: Catalog, table: str, *values: str) -> dict[str, Any]:
    return glue.batch_create_partition(
        DatabaseName="db", TableName=table, PartitionInputList=[{"Values": [v]} for v in values]
    )


def values(glue: Catalog, table: str) -> list[str]:
    pages = glue.get_paginator("get_partitions").paginate(DatabaseName="db", TableName=table)
    return sorted(p["Values"][0] for p in pages.search("Partitions[]"))


def table_log(warehouse: str, table: tuple[str, str]) -> list[log.Entry]:
    where = layout.table_log(placement.log_name(table))
    fs = LocalFS(warehouse)
    out, v = [], 0
    while fs.exists(where.log_path(v)):
        out.append(log.parse(fs.read_bytes(where.log_path(v)), where.log_path(v), v, where=where))
        v += 1
    return out


def test_partition_commits_go_to_the_tables_own_log_and_leave_the_root_alone(warehouse: str) -> None:
    glue = catalog(warehouse)
    root = glue.warehouse_version()
    add(glue, "a", "1", "2")
    add(glue, "b", "x")
    glue.update_column_statistics_for_table(
        DatabaseName="db",
        TableName="a",
        ColumnStatisticsList=[],
    )
    assert glue.warehouse_version() == root
    assert [e.operation for e in table_log(warehouse, ("db", "a"))] == ["CreateTable", "BatchCreatePartition"]
    assert [e.operation for e in table_log(warehouse, ("db", "b"))] == ["CreateTable", "BatchCreatePartition"]
    # The table's creation is the root's decision: a marker naming the root entry that is the commit.
    (created, _) = table_log(warehouse, ("db", "a"))
    assert created.decided_by is not None
    assert glue.store.root.commit_id(created.decided_by.version) == created.decided_by.commit_id
    assert values(Catalog(warehouse), "a") == ["1", "2"]


def test_reading_an_unchanged_table_is_one_look_at_its_log(warehouse: str, monkeypatch) -> None:
    glue = catalog(warehouse)
    add(glue, "a", "1")
    reader = Catalog(warehouse)
    assert values(reader, "a") == ["1"]
    looks: list[str] = []
    real = LocalFS.exists

    def counted(self: LocalFS, rel: str) -> bool:
        looks.append(rel)
        return real(self, rel)

    monkeypatch.setattr(LocalFS, "exists", counted)
    reader.get_table(DatabaseName="db", Name="a")
    assert looks == [layout.table_log(placement.log_name(("db", "a"))).log_path(2)]


def test_a_table_changed_by_the_root_is_seen_by_a_reader_of_its_log_alone(warehouse: str) -> None:
    """A reader that reads only a table's log still sees every change of it the root decides: its
    definition, its drop, its database's drop."""
    glue = catalog(warehouse)
    reader = Catalog(warehouse)
    assert reader.get_table(DatabaseName="db", Name="a")["Table"].get("Description") is None
    glue.update_table(
        DatabaseName="db",
        TableInput={"Name": "a", "Description": "now", "PartitionKeys": [{"Name": "k", "Type": "string"}]},
    )
    assert reader.get_table(DatabaseName="db", Name="a")["Table"]["Description"] == "now"
    glue.delete_table(DatabaseName="db", Name="a")
    with pytest.raises(reader.exceptions.EntityNotFoundException):
        reader.get_table(DatabaseName="db", Name="a")
    glue.delete_database(Name="db")
    with pytest.raises(reader.exceptions.EntityNotFoundException):
        reader.get_partitions(DatabaseName="db", TableName="b")


def test_a_write_built_before_a_drop_is_refused_not_lost(warehouse: str, monkeypatch) -> None:
    """A partition write that read the table before another process dropped it loses its version to the
    drop's marker, builds again, and answers that the table is gone: it never lands in a dropped
    table's log, to come back if a table of that name is made again."""
    glue = catalog(warehouse)
    other = Catalog(warehouse)
    real = Store._publish_to_table
    dropped: list[bool] = []

    def drop_first(self: Store, *args: Any) -> Any:
        if not dropped:
            dropped.append(True)
            other.delete_table(DatabaseName="db", Name="a")
        return real(self, *args)

    monkeypatch.setattr(Store, "_publish_to_table", drop_first)
    with pytest.raises(glue.exceptions.EntityNotFoundException):
        add(glue, "a", "late")
    monkeypatch.undo()
    glue.create_table(
        DatabaseName="db", TableInput={"Name": "a", "PartitionKeys": [{"Name": "k", "Type": "string"}]}
    )
    assert values(Catalog(warehouse), "a") == []


def test_a_writer_that_lost_to_other_partitions_republishes_without_building_again(
    warehouse: str, monkeypatch
) -> None:
    glue = catalog(warehouse)
    other = Catalog(warehouse)
    builds: list[int] = []
    real = Store._publish_to_table

    def count_and_race(self: Store, operation: str, where: Any, table: Any, base: Any, *rest: Any) -> Any:
        if self is not glue.store:
            return real(self, operation, where, table, base, *rest)
        builds.append(base.version)
        if len(builds) == 1:
            add(other, "a", "theirs")  # takes the version this commit was built for
        return real(self, operation, where, table, base, *rest)

    monkeypatch.setattr(Store, "_publish_to_table", count_and_race)
    assert add(glue, "a", "mine")["Errors"] == []
    monkeypatch.undo()
    assert len(builds) == 1  # published again after "theirs", not built again
    assert values(Catalog(warehouse), "a") == ["mine", "theirs"]


def test_a_writer_that_lost_to_the_same_partition_builds_again_and_answers_as_glue(
    warehouse: str, monkeypatch
) -> None:
    glue = catalog(warehouse)
    other = Catalog(warehouse)
    real = Store._publish_to_table
    raced: list[bool] = []

    def race(self: Store, *args: Any) -> Any:
        if not raced:
            raced.append(True)
            add(other, "a", "same")
        return real(self, *args)

    monkeypatch.setattr(Store, "_publish_to_table", race)
    errors = add(glue, "a", "same", "new")["Errors"]
    monkeypatch.undo()
    assert [(e["PartitionValues"], e["ErrorDetail"]["ErrorCode"]) for e in errors] == [
        (["same"], "AlreadyExistsException")
    ]
    assert values(Catalog(warehouse), "a") == ["new", "same"]


def test_a_writer_that_loses_every_race_gives_up_at_its_deadline_and_commits_nothing(
    warehouse: str, monkeypatch
) -> None:
    """However many attempts it has left: a client would time out long before they ran out."""
    glue = catalog(warehouse)
    glue.store.max_attempts = 10**6
    glue.store.commit_seconds = 0.3
    other = Catalog(warehouse, background_merges=False)
    where = glue.store.table_log(("db", "a"))
    real, theirs = where.publish, []

    def always_overtaken(*args: Any, **kwargs: Any) -> bool:
        theirs.append(f"theirs-{len(theirs)}")
        add(other, "a", theirs[-1])  # takes the version first, every time
        return real(*args, **kwargs)

    monkeypatch.setattr(where, "publish", always_overtaken)
    with pytest.raises(glue.exceptions.OperationTimeoutException, match="0.3 s"):
        add(glue, "a", "mine")
    monkeypatch.undo()
    assert len(theirs) > 1
    assert values(Catalog(warehouse), "a") == sorted(theirs)


def test_a_marker_whose_root_entry_never_comes_counts_for_nothing_and_is_fenced(
    warehouse: str, monkeypatch
) -> None:
    """A root commit publishes its markers, then its root entry. One whose writer dies in between
    leaves a marker that readers pass over, and that the table's next writer fences once it has waited
    long enough: an empty root entry takes the version the marker names, so it can never count."""
    glue = catalog(warehouse)
    add(glue, "a", "1")
    monkeypatch.setattr(store_module, "FENCE_AFTER", 0.2)
    dying = Catalog(warehouse)

    def die(*args: Any, **kwargs: Any) -> bool:
        raise SystemExit("the writer died after publishing its marker")

    monkeypatch.setattr(dying.store.root, "publish", die)
    monkeypatch.setattr(Store, "_abandon", lambda self, markers, fence: False)  # no cleanup: it died
    with pytest.raises(SystemExit):
        dying.update_table(
            DatabaseName="db",
            TableInput={
                "Name": "a",
                "Description": "never",
                "PartitionKeys": [{"Name": "k", "Type": "string"}],
            },
        )
    monkeypatch.undo()
    monkeypatch.setattr(store_module, "FENCE_AFTER", 0.2)
    marker = table_log(warehouse, ("db", "a"))[-1]
    assert marker.decided_by is not None and marker.operation == "UpdateTable"
    reader = Catalog(warehouse)
    assert reader.get_table(DatabaseName="db", Name="a")["Table"].get("Description") is None
    assert values(reader, "a") == ["1"]
    add(reader, "a", "2")  # waits for the marker's root entry, then fences it
    fence = reader.store.root.read_entry(marker.decided_by.version)
    assert fence.operation == "FenceMarkers" and fence.commit_id != marker.decided_by.commit_id
    for fresh in (reader, Catalog(warehouse)):
        assert fresh.get_table(DatabaseName="db", Name="a")["Table"].get("Description") is None
        assert values(fresh, "a") == ["1", "2"]


def test_writers_of_two_tables_never_wait_for_each_other(warehouse: str) -> None:
    """Two threads of two processes' handles fill two tables at once: neither commit goes through the
    root, and every partition is there once."""
    catalog(warehouse)
    handles = [Catalog(warehouse, background_merges=False) for _ in TABLES]
    errors: list[BaseException] = []

    def fill(glue: Catalog, table: str) -> None:
        try:
            for i in range(30):
                add(glue, table, *(f"{i}-{j}" for j in range(5)))
        except BaseException as e:
            errors.append(e)

    threads = [threading.Thread(target=fill, args=(h, t)) for h, (_, t) in zip(handles, TABLES, strict=True)]
    root = handles[0].warehouse_version()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert handles[0].warehouse_version() == root
    for _, table in TABLES:
        assert len(values(Catalog(warehouse), table)) == 150


def test_a_table_log_that_lost_a_marker_the_root_committed_is_damage(warehouse: str) -> None:
    glue = catalog(warehouse)
    add(glue, "a", "1")
    glue.update_table(
        DatabaseName="db",
        TableInput={"Name": "a", "Description": "now", "PartitionKeys": [{"Name": "k", "Type": "string"}]},
    )
    where = layout.table_log(placement.log_name(("db", "a")))
    newest = len(table_log(warehouse, ("db", "a"))) - 1
    os.unlink(os.path.join(warehouse, where.log_path(newest)))
    with pytest.raises(
        StorageError, match=rf"{newest:020d}\.json: missing, while root version \d+ committed it"
    ):
        Catalog(warehouse).get_table(DatabaseName="db", Name="a")


def test_time_travel_reads_every_table_as_of_one_moment(warehouse: str) -> None:
    glue = catalog(warehouse)
    add(glue, "a", "1")
    add(glue, "b", "1")
    then = datetime.now(UTC)
    add(glue, "a", "2")
    glue.update_table(
        DatabaseName="db",
        TableInput={"Name": "b", "Description": "later", "PartitionKeys": [{"Name": "k", "Type": "string"}]},
    )
    past = Catalog(warehouse)
    assert [
        p["Values"][0]
        for p in past.get_partitions(DatabaseName="db", TableName="a", QueryAsOfTime=then)["Partitions"]
    ] == ["1"]
    assert past.get_table(DatabaseName="db", Name="b", QueryAsOfTime=then)["Table"].get("Description") is None
    assert past.get_table(DatabaseName="db", Name="b")["Table"]["Description"] == "later"


def test_a_merge_that_lost_to_a_merge_of_its_segments_is_never_published_over_them(
    warehouse: str, monkeypatch
) -> None:
    """A merge of all of a table's segments (compaction) that loses its version to another process's
    merge of some of them is built again (and finds its run gone): published as it was, its entry would
    name segments the table no longer holds, and no reader could apply it."""
    from gluecat.catalog.rows import RowEngine, merging

    glue = catalog(warehouse)
    monkeypatch.setattr(RowEngine, "after_write", lambda *args: None)  # no merge but the test's
    for i in range(33):
        add(glue, "a", str(i))
    other = Catalog(warehouse, background_merges=False)
    real = Store._publish_to_table
    raced: list[bool] = []

    def merge_first(self: Store, *args: Any) -> Any:
        if self is glue.store and not raced:
            raced.append(True)
            assert merging.merge(other.store, ("db", "a"), whole=False)  # the newest run of the tier
        return real(self, *args)

    monkeypatch.setattr(Store, "_publish_to_table", merge_first)
    assert not merging.merge(glue.store, ("db", "a"), whole=True)  # its run is gone: nothing committed
    monkeypatch.undo()
    assert raced
    for fresh in (glue, Catalog(warehouse)):
        assert values(fresh, "a") == sorted(str(i) for i in range(33))


def test_a_reader_keeps_a_bounded_number_of_the_entries_it_caught_up_on(tmp_path: Any) -> None:
    """Entries read while catching up are kept for the conflict check right after, not for ever: a server
    reading thousands of tables' logs would otherwise keep a thousand entries (each up to 128 KiB) of each."""
    from gluecat.store.logs import PARSED_KEPT

    warehouse = str(tmp_path / "wh")
    writer = Catalog(warehouse)
    writer.create_database(DatabaseInput={"Name": "db"})
    writer.create_table(
        DatabaseName="db", TableInput={"Name": "t", "PartitionKeys": [{"Name": "k", "Type": "string"}]}
    )
    reader = Catalog(warehouse)
    assert reader.get_partitions(DatabaseName="db", TableName="t")["Partitions"] == []
    for i in range(PARSED_KEPT + 40):
        writer.create_partition(DatabaseName="db", TableName="t", PartitionInput={"Values": [str(i)]})
        assert len(reader.get_partitions(DatabaseName="db", TableName="t")["Partitions"]) == i + 1
    kept = reader.store.table_log(("db", "t"))._parsed
    assert 0 < len(kept) <= PARSED_KEPT


def test_a_reader_keeps_a_bounded_number_of_the_markers_it_read_and_still_cuts_tables_at_old_root_versions(
    warehouse: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every change of a table the root decides leaves a marker in the table's log; a server reading
    another process's changes keeps the newest of them, not every one, and a cut at a root version older
    than those it kept reads the log again."""
    from gluecat.store import logs

    monkeypatch.setattr(logs, "MARKERS_KEPT", 4, raising=False)
    writer = catalog(warehouse)
    reader = Catalog(warehouse)
    assert values(reader, "a") == []
    root_versions = []
    for i in range(30):
        _update(writer, i)
        add(writer, "a", str(i))
        assert values(reader, "a") == sorted(str(j) for j in range(i + 1))
        root_versions.append(writer.store.root.state.version)
    kept = reader.store.table_log(("db", "a"))._markers
    assert 0 < len(kept) <= 2 * 4
    monkeypatch.undo()
    fresh = Store(warehouse)  # keeps every marker
    for root_version in [root_versions[0] - 1, *root_versions[::7], root_versions[-1]]:
        ours = reader.store.table_log(("db", "a")).at_root_cut(root_version)
        theirs = fresh.table_log(("db", "a")).at_root_cut(root_version)
        assert (ours.version, ours.decided) == (theirs.version, theirs.decided), root_version


def test_a_process_keeps_a_tables_commit_lock_only_while_its_commits_are_under_way(warehouse: str) -> None:
    """A server commits to thousands of tables over its life: the lock that takes a table's commits one
    at a time goes with the last of them, whether it committed or failed."""
    glue = Catalog(warehouse, background_merges=False)
    glue.create_database(DatabaseInput={"Name": "db"})
    for i in range(40):
        glue.create_table(
            DatabaseName="db",
            TableInput={"Name": f"t{i}", "PartitionKeys": [{"Name": "k", "Type": "string"}]},
        )
        add(glue, f"t{i}", "a")
        assert add(glue, f"t{i}", "a")["Errors"]  # a failed write, to the same table
    threads = [threading.Thread(target=add, args=(glue, "t0", str(n))) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert values(glue, "t0") == sorted(["a", *(str(n) for n in range(8))])
    assert glue.store._table_commit_locks == {}


def test_a_process_keeps_a_bounded_number_of_tables_logs_open_and_answers_the_same(
    warehouse: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A server reads and writes thousands of tables (made and dropped) over its life: it keeps the logs
    of those used last open, up to a bound, and one it let go is opened again when next used, with the
    same partitions, its own commits and others' alike, and the same history."""
    monkeypatch.setattr(store_module, "TABLE_LOGS_KEPT", 4, raising=False)
    writer = Catalog(warehouse, background_merges=False)
    writer.create_database(DatabaseInput={"Name": "db"})
    reader = Catalog(warehouse)
    names = [f"t{i}" for i in range(20)]
    for name in names:
        writer.create_table(
            DatabaseName="db", TableInput={"Name": name, "PartitionKeys": [{"Name": "k", "Type": "string"}]}
        )
        add(writer, name, "a")
        assert values(reader, name) == ["a"]
    then = datetime.now(UTC)
    for round_ in ("b", "c"):
        for name in names:
            add(writer, name, round_)
            add(reader, name, round_ + "2")
    for glue in (writer, reader, Catalog(warehouse)):
        for name in names:
            assert values(glue, name) == ["a", "b", "b2", "c", "c2"]
            past = glue.get_partitions(DatabaseName="db", TableName=name, QueryAsOfTime=then)["Partitions"]
            assert [p["Values"][0] for p in past] == ["a"]
    for glue in (writer, reader):
        assert len(glue.store._tables) <= 4


def test_a_reader_keeps_the_times_of_fewer_versions_of_a_table_than_of_the_root_and_still_travels(
    warehouse: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A server keeps thousands of tables' logs open: each keeps the times of its newest versions only,
    and time travel to an older one reads them again."""
    from gluecat.store import logs

    monkeypatch.setattr(logs, "TABLE_TIMES_KEPT", 8, raising=False)
    writer = catalog(warehouse)
    reader = Catalog(warehouse)
    times = []
    for i in range(30):
        add(writer, "a", f"{i:02d}")
        assert values(reader, "a")[-1] == f"{i:02d}"
        times.append(datetime.now(UTC))
    assert len(reader.store.table_log(("db", "a"))._entry_times) <= 8
    for i in (0, 7, 29):
        past = reader.get_partitions(DatabaseName="db", TableName="a", QueryAsOfTime=times[i])["Partitions"]
        assert sorted(p["Values"][0] for p in past) == [f"{j:02d}" for j in range(i + 1)]
    assert len(reader.store.table_log(("db", "a"))._entry_times) <= 8


def test_the_entries_a_reader_keeps_carry_a_bounded_number_of_bytes(
    warehouse: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each entry kept as read may carry up to 128 KiB of inline segments, and a server keeps thousands
    of tables' logs open: what a log's kept entries carry together is bounded too, past the newest."""
    from gluecat.store import logs

    monkeypatch.setattr(logs, "PARSED_BYTES", 4096, raising=False)
    writer = catalog(warehouse)
    reader = Catalog(warehouse)
    for i in range(20):
        add(writer, "a", *(f"{i:02d}-{j:03d}" for j in range(100)))
        assert len(values(reader, "a")) == 100 * (i + 1)
    kept = reader.store.table_log(("db", "a"))._parsed
    carried = [logs._carried(entry) for entry, _ in kept.values()]
    assert carried[-1] > 1000  # entries carry their segments inline
    assert len(kept) == 1 or sum(carried) <= 4096
    assert len(kept) < 20
    assert values(Catalog(warehouse), "a") == values(reader, "a")


def _update(glue: Catalog, n: int) -> None:
    glue.update_table(
        DatabaseName="db",
        TableInput={
            "Name": "a",
            "Parameters": {"n": str(n)},
            "PartitionKeys": [{"Name": "k", "Type": "string"}],
        },
    )


@pytest.mark.parametrize("time_travel_first", [False, True], ids=["opened", "after-time-travel"])
def test_a_cut_older_than_a_marker_before_the_tables_checkpoint_is_the_table_before_that_marker(
    warehouse: str, time_travel_first: bool
) -> None:
    """A reader that opened a table's log from a checkpoint knows the markers after it only. A cut at a
    root version older than a marker inside the checkpoint is the table before that marker, not before
    the first marker it happens to know (time travel on the same log, which rebuilds an older state from
    an older checkpoint, must not change that either)."""
    writer = catalog(warehouse)
    add(writer, "a", "0")
    writer.store.table_log(("db", "a")).checkpoint()
    before = writer.store.root.state.version
    _update(writer, 1)  # a marker, decided after ``before``
    add(writer, "a", "1")
    writer.store.table_log(("db", "a")).checkpoint()  # holds that marker
    _update(writer, 2)  # a marker after the checkpoint
    add(writer, "a", "2")

    reader = Store(warehouse)
    where = reader.table_log(("db", "a"))
    first = min(v for v, decided in where._scan_markers(where.latest().version) if decided > before)
    if time_travel_first:
        where.at_version(1)  # rebuilt from the log's first checkpoint
    cut = where.at_root_cut(before)
    assert cut.version == first - 1
    assert "n" not in (reader.at_version(before).get("table", ("db", "a")).get("Parameters") or {})
