"""The store: atomic commits, optimistic concurrency, checkpoints, time travel, corrupt files."""

from __future__ import annotations

import base64
import json
import os
import time
from datetime import UTC, datetime

import pyarrow as pa
import pytest

from gluecat.errors import AlreadyExistsException, StorageError
from gluecat.store import files, layout, placement
from gluecat.store import store as store_module
from gluecat.store.snapshot import Changes, Snapshot
from gluecat.store.store import Store
from tests.store.legacy import legacy_warehouse


def put(kind: str, key: tuple[str, ...], doc: object):
    def build(snap: Snapshot) -> tuple[Changes, None]:
        changes = Changes()
        changes.put(kind, key, doc)
        return changes, None

    return build


def create(key: tuple[str, ...], doc: object):
    """A commit body with a precondition: the record must not exist yet."""

    def build(snap: Snapshot) -> tuple[Changes, None]:
        if snap.get("thing", key) is not None:
            raise AlreadyExistsException(f"{key} exists")
        changes = Changes()
        changes.put("thing", key, doc)
        return changes, None

    return build


def test_a_commit_is_visible_to_a_new_process_and_to_the_next_call_of_an_open_one(warehouse: str) -> None:
    a, b = Store(warehouse), Store(warehouse)
    a.commit(
        "Put", put("thing", ("x",), {"n": 1, "when": datetime(2024, 1, 2, tzinfo=UTC), "raw": b"\x00\x01"})
    )
    assert b.latest().get("thing", ("x",)) == {
        "n": 1,
        "when": datetime(2024, 1, 2, tzinfo=UTC),
        "raw": b"\x00\x01",
    }
    assert Store(warehouse).latest().version == 1


def test_deletes_remove_records(warehouse: str) -> None:
    s = Store(warehouse)
    s.commit("Put", put("thing", ("x",), 1))

    def delete(snap: Snapshot) -> tuple[Changes, None]:
        changes = Changes()
        changes.delete("thing", ("x",))
        return changes, None

    s.commit("Delete", delete)
    assert Store(warehouse).latest().get("thing", ("x",)) is None


def test_a_writer_that_lost_the_race_rechecks_its_precondition(warehouse: str) -> None:
    a, b = Store(warehouse), Store(warehouse)
    b.latest()  # b's view is now stale
    a.commit("Create", create(("k",), "from a"))
    with pytest.raises(AlreadyExistsException):
        b.commit("Create", create(("k",), "from b"))
    assert Store(warehouse).latest().get("thing", ("k",)) == "from a"


def test_a_lost_race_leaves_no_orphan_file_behind(warehouse: str) -> None:
    a, b = Store(warehouse), Store(warehouse)
    stale = b.latest()
    a.commit("Put", put("thing", ("a",), 1))
    # Simulate b having built its change on the stale snapshot: it must retry on version 2.
    b.root._state = stale.root
    b.commit("Put", put("thing", ("b",), 2))
    entries = {p for v in (1, 2) for p in b.root.read_entry(v).files()}
    data = {f"{layout.DATA_DIR}/{n}" for n in os.listdir(os.path.join(warehouse, layout.DATA_DIR))}
    assert data == entries


def test_an_empty_change_commits_nothing(warehouse: str) -> None:
    s = Store(warehouse)
    assert s.commit("Noop", lambda snap: (Changes(), "result")) == "result"
    assert s.latest().version == 0


def test_checkpoints_fold_the_log_and_opening_uses_them(warehouse: str) -> None:
    s = Store(warehouse, checkpoint_interval=10)
    for i in range(25):
        s.commit("Put", put("thing", (f"{i:03d}",), i))
    names = sorted(os.listdir(os.path.join(warehouse, layout.CHECKPOINT_DIR)))
    assert [layout.parse_checkpoint_name(n)[0] for n in names] == [10, 20]  # type: ignore[index]
    # Even with the early log gone, the warehouse opens from the checkpoint with the whole state.
    for v in range(0, 20):
        os.unlink(os.path.join(warehouse, layout.log_path(v)))
    reopened = Store(warehouse)
    assert reopened.latest().version == 25
    assert [reopened.latest().get("thing", (f"{i:03d}",)) for i in range(25)] == list(range(25))


def test_time_travel_returns_the_state_as_of_a_moment(warehouse: str) -> None:
    s = Store(warehouse, checkpoint_interval=3)
    moments = []
    for i in range(7):
        s.commit("Put", put("thing", ("x",), i))
        moments.append(datetime.now(UTC))
        time.sleep(0.002)
    other = Store(warehouse)
    for i, when in enumerate(moments):
        assert other.as_of(when).get("thing", ("x",)) == i
    assert other.as_of(datetime(2000, 1, 1, tzinfo=UTC)).get("thing", ("x",)) is None


def test_a_corrupt_log_entry_is_reported_with_its_file_name(warehouse: str) -> None:
    s = Store(warehouse)
    s.commit("Put", put("thing", ("x",), 1))
    with open(os.path.join(warehouse, layout.log_path(2)), "w") as f:
        f.write("{not json")
    with pytest.raises(StorageError, match=r"00000000000000000002\.json"):
        Store(warehouse)


def test_a_log_entry_of_a_newer_format_is_refused(warehouse: str) -> None:
    Store(warehouse)
    with open(os.path.join(warehouse, layout.log_path(1)), "w") as f:
        json.dump({"format": 99, "version": 1, "actions": []}, f)
    with pytest.raises(StorageError, match="format 99"):
        Store(warehouse)


def test_a_missing_or_foreign_record_file_is_an_error_not_lost_state(
    record_files: None, warehouse: str
) -> None:
    s = Store(warehouse)
    s.commit("Put", put("thing", ("x",), 1))
    (path,) = s.root.read_entry(1).files()
    with open(os.path.join(warehouse, path), "wb") as f:
        f.write(b"PAR1garbage")
    with pytest.raises(StorageError, match=path.split("/")[-1]):
        Store(warehouse)
    os.unlink(os.path.join(warehouse, path))
    with pytest.raises(StorageError, match="missing"):
        Store(warehouse)


def test_a_small_commits_records_travel_in_its_entry_and_a_large_ones_in_a_file(warehouse: str) -> None:
    s = Store(warehouse)
    s.commit("Put", put("thing", ("small",), "x"))
    large = "x" * store_module.INLINE_RECORDS_BYTES
    s.commit("Put", put("thing", ("large",), large))
    assert s.root.read_entry(1).files() == []  # no file to write (a round trip on an object store)
    assert len(s.root.read_entry(2).files()) == 1
    fresh = Store(warehouse).latest()
    assert fresh.get("thing", ("small",)) == "x" and fresh.get("thing", ("large",)) == large


def test_a_foreign_file_among_the_checkpoints_is_named(warehouse: str) -> None:
    Store(warehouse)
    open(os.path.join(warehouse, layout.CHECKPOINT_DIR, "notes.txt"), "w").close()
    with pytest.raises(StorageError, match=r"notes\.txt"):
        Store(warehouse)


def test_a_log_without_its_beginning_is_not_silently_restarted(warehouse: str) -> None:
    s = Store(warehouse)
    s.commit("Put", put("thing", ("x",), 1))
    os.unlink(os.path.join(warehouse, layout.log_path(0)))
    with pytest.raises(StorageError, match="no version 0"):
        Store(warehouse)


def test_opening_a_new_warehouse_that_another_process_starts_and_commits_to_meanwhile(
    warehouse: str, monkeypatch
) -> None:
    """Two processes open a new warehouse at once: the second found no version 0, and by the time it
    lists the log the first has started it and committed more. The second opens what the first made."""
    from gluecat.store.fs import LocalFS

    real_exists = LocalFS.exists

    def first_commits_meanwhile(self: LocalFS, rel: str) -> bool:
        if rel != layout.log_path(0):
            return real_exists(self, rel)
        monkeypatch.setattr(LocalFS, "exists", real_exists)
        Store(warehouse).commit("Put", put("thing", ("x",), 1))
        return False  # what the second process saw before the first began

    monkeypatch.setattr(LocalFS, "exists", first_commits_meanwhile)
    second = Store(warehouse)
    assert second.latest().get("thing", ("x",)) == 1 and second.latest().version == 1


def test_an_unknown_publish_outcome_is_resolved_by_reading_the_log(warehouse: str, monkeypatch) -> None:
    from gluecat.store.fs import LocalFS as WarehouseFS

    s = Store(warehouse)
    real_publish = WarehouseFS.publish

    def publish_then_fail(self: WarehouseFS, rel: str, data: bytes) -> bool:
        real_publish(self, rel, data)
        raise OSError("connection reset after the write")

    monkeypatch.setattr(WarehouseFS, "publish", publish_then_fail)
    s.commit("Put", put("thing", ("x",), 1))
    monkeypatch.undo()
    # Exactly one commit happened, although the writer saw an error.
    assert Store(warehouse).latest().version == 1


def test_a_log_entry_the_file_system_refuses_fails_the_commit_at_once(warehouse: str, monkeypatch) -> None:
    """Not a lost race, so not retried: the caller learns which file could not be written, and the
    attempt leaves nothing behind."""
    from gluecat.store.fs import LocalFS as WarehouseFS

    s = Store(warehouse)
    s.commit("Put", put("thing", ("x",), 1))

    def refuse(self: WarehouseFS, rel: str, data: bytes) -> bool:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(WarehouseFS, "publish", refuse)
    with pytest.raises(StorageError, match=r"log/0*2\.json: the commit's log entry could not be written"):
        s.commit("Put", put("thing", ("y",), 2))
    monkeypatch.undo()
    assert Store(warehouse).latest().version == 1
    assert s.commit("Put", put("thing", ("y",), 2)) is None and Store(warehouse).latest().version == 2


def test_temporary_files_of_an_interrupted_writer_are_ignored(warehouse: str) -> None:
    s = Store(warehouse)
    open(os.path.join(warehouse, layout.LOG_DIR, ".tmp-deadbeef"), "w").close()
    s.commit("Put", put("thing", ("x",), 1))
    assert Store(warehouse).latest().get("thing", ("x",)) == 1


def test_a_warehouse_on_another_pyarrow_file_system(tmp_path) -> None:
    """Any pyarrow file system reads a warehouse; one without an exclusive create (object stores)
    commits only when the caller promises to be the only writer."""
    import pyarrow.fs as pafs

    local = Store(str(tmp_path / "w"))
    local.commit("Put", put("thing", ("x",), 1))
    # SubTreeFileSystem stands for a non-local file system: gluecat uses only pyarrow's API on it.
    other_fs = pafs.SubTreeFileSystem(str(tmp_path), pafs.LocalFileSystem())
    reader = Store("w", filesystem=other_fs)
    assert reader.latest().get("thing", ("x",)) == 1
    with pytest.raises(StorageError, match="exclusive create"):
        reader.commit("Put", put("thing", ("y",), 2))
    writer = Store("w", filesystem=other_fs, single_writer=True)
    writer.commit("Put", put("thing", ("y",), 2))
    assert local.latest().get("thing", ("y",)) == 2


def test_a_small_segment_travels_in_its_log_entry_and_a_lost_race_forgets_its_name(warehouse: str) -> None:
    first, second = Store(warehouse), Store(warehouse)
    table = ("db", "t")

    def adding(rows: pa.Table, meanwhile=None):
        def build(snap: Snapshot) -> tuple[Changes, None]:
            if meanwhile is not None:
                meanwhile()  # the other writer takes this version first
            changes = Changes()
            changes.segment_adds.append((table, rows))
            return changes, None

        return build

    mine, theirs = pa.table({"who": ["mine"]}), pa.table({"who": ["theirs"]})
    raced: list[bool] = []

    def once() -> None:
        if not raced:
            raced.append(True)
            second.commit("Theirs", adding(theirs))

    first.commit("Mine", adding(mine, once))
    theirs_path, mine_path = first.latest().table_segments(table)
    own_log = layout.table_log(placement.log_name(table))  # a table's partitions are in its own log
    assert theirs_path == own_log.inline_segment_path(0, 0)
    assert layout.inline_segment_entry(mine_path) in {own_log.log_path(v) for v in (1, 2)}
    assert first.read_segment(theirs_path).column("who").to_pylist() == ["theirs"]
    assert Store(warehouse).read_segment(mine_path).column("who").to_pylist() == ["mine"]
    assert os.listdir(os.path.join(warehouse, layout.DATA_DIR)) == []


def test_with_fsync_a_commits_data_files_and_their_names_are_synced_before_its_entry(
    record_files: None, warehouse: str, monkeypatch
) -> None:
    """After a power failure a published entry must not name a file whose folder entry was lost."""
    from tests.store.test_fs import synced

    s = Store(warehouse)
    s.commit("Put", put("thing", ("x",), 1))
    calls = synced(monkeypatch)
    s.commit("Put", put("thing", ("y",), 2))  # writes a record file, then the entry
    data, log = f"{warehouse}/{layout.DATA_DIR}/", f"{warehouse}/{layout.LOG_DIR}/"
    assert data in calls and log in calls
    assert calls.index(data) < calls.index(log) == len(calls) - 1


def test_a_data_file_the_file_system_refuses_part_way_leaves_nothing_behind(
    record_files: None, warehouse: str, monkeypatch
) -> None:
    from gluecat.store.fs import LocalFS as WarehouseFS

    s = Store(warehouse)
    s.commit("Put", put("thing", ("x",), 1))
    data = os.path.join(warehouse, layout.DATA_DIR)
    before = sorted(os.listdir(data))
    write_new = WarehouseFS.write_new

    def disk_full(self: WarehouseFS, rel: str, content: bytes) -> None:
        write_new(self, rel, content[: len(content) // 2])  # half of it reached the disk
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(WarehouseFS, "write_new", disk_full)
    with pytest.raises(
        StorageError, match=r"records\.parquet: a file of the commit could not be written .*No space"
    ):
        s.commit("Put", put("thing", ("y",), 2))
    monkeypatch.undo()
    assert sorted(os.listdir(data)) == before
    assert Store(warehouse).latest().version == 1
    s.commit("Put", put("thing", ("y",), 2))
    assert Store(warehouse).latest().get("thing", ("y",)) == 2


def add_segment(rows: pa.Table):
    def build(snap: Snapshot) -> tuple[Changes, None]:
        changes = Changes()
        changes.segment_adds.append((("db", "t"), rows))
        return changes, None

    return build


def test_a_writer_that_loses_a_version_never_shows_its_rows_under_the_winners_segment_name(
    warehouse: str, monkeypatch
) -> None:
    """A segment carried in its log entry is named after the version its commit tries for. When another
    process takes that version first, the name is the winner's: a reader in the losing process (a
    background merge, a query) must get the winner's rows under it, not the loser's unpublished ones,
    which would otherwise be merged in place of the winner's and lose its write."""
    from gluecat.store.fs import LocalFS as WarehouseFS

    a, b = Store(warehouse), Store(warehouse)
    theirs, ours = pa.table({"who": ["a1", "a2"]}), pa.table({"who": ["b1"]})
    real_publish = WarehouseFS.publish
    during: dict[str, object] = {}

    def publish_after_the_other_process(self: WarehouseFS, rel: str, data: bytes) -> bool:
        if self is b.fs and not during:
            a.commit("Add", add_segment(theirs))  # the other process publishes this version first
            (path,) = b.latest().table_segments(("db", "t"))  # b's own reader catches up meanwhile
            during["footer rows"] = b.segment_footer(path)[0]
            during["rows"] = b.read_segment(path)
        return real_publish(self, rel, data)

    monkeypatch.setattr(WarehouseFS, "publish", publish_after_the_other_process)
    b.commit("Add", add_segment(ours))  # loses version 1, commits as version 2
    monkeypatch.undo()

    assert during == {"footer rows": 2, "rows": theirs}
    for s in (b, Store(warehouse)):
        segments = s.latest().table_segments(("db", "t"))
        assert [s.read_segment(p) for p in segments] == [theirs, ours]
        assert [s.segment_footer(p)[0] for p in segments] == [2, 1]


def rewrite_entry(warehouse: str, version: int, change, where: layout.LogLayout = layout.ROOT_LOG) -> None:
    path = os.path.join(warehouse, where.log_path(version))
    with open(path) as f:
        entry = json.load(f)
    change(entry)
    with open(path, "w") as f:
        json.dump(entry, f)


def as_format_3(entry: dict) -> None:
    """An entry as gluecat wrote it before entries carried checksums."""
    entry.pop("checksum", None), entry.pop("prev", None)
    entry["format"] = 3


def make_format_3(warehouse: str) -> None:
    """Rewrite a whole (checkpoint-free) warehouse's log as format 3 wrote it."""
    for name in os.listdir(os.path.join(warehouse, layout.LOG_DIR)):
        if (v := layout.parse_log_name(name)) is not None:
            rewrite_entry(warehouse, v, as_format_3)


def test_a_warehouse_of_storage_format_2_whose_entries_carry_parquet_is_still_read(warehouse: str) -> None:
    rows = pa.table({"who": ["old", "format"]})
    Store(legacy_warehouse(warehouse)).commit("Add", add_segment(rows))

    def as_format_2(entry: dict) -> None:
        (action,) = entry["actions"]
        del action["inline_encoding"], action["inline_size"]
        action["inline"] = base64.b64encode(files.segment_parquet_bytes(rows)).decode()
        entry["format"] = 2

    make_format_3(warehouse)
    rewrite_entry(warehouse, 1, as_format_2)
    s = Store(warehouse)
    (path,) = s.latest().table_segments(("db", "t"))
    assert s.read_segment(path).equals(rows)


def test_an_inline_segment_that_cannot_be_read_is_an_error_naming_its_entry(warehouse: str) -> None:
    Store(legacy_warehouse(warehouse)).commit("Add", add_segment(pa.table({"who": ["me"]})))

    def damaged(entry: dict) -> None:
        entry["actions"][0]["inline"] = entry["actions"][0]["inline"][:-8]

    rewrite_entry(warehouse, 1, damaged)
    with pytest.raises(StorageError, match=r"00000000000000000001\.json: damaged"):
        Store(warehouse)  # format 4: the entry's checksum finds it at once
    make_format_3(warehouse)  # format 3 had no checksum: the segment's decoding finds it
    s = Store(warehouse)
    (path,) = s.latest().table_segments(("db", "t"))
    with pytest.raises(StorageError, match=r"00000000000000000001\.json"):
        s.read_segment(path)


def test_a_format_3_warehouse_takes_format_4_commits_and_then_holds_them_to_it(warehouse: str) -> None:
    s = Store(warehouse)
    s.commit("Put", put("thing", ("old",), 1))
    make_format_3(warehouse)
    upgraded = Store(warehouse)
    upgraded.commit("Put", put("thing", ("new",), 2))
    reopened = Store(warehouse)
    assert [reopened.latest().get("thing", (k,)) for k in ("old", "new")] == [1, 2]
    assert reopened.root.read_entry(2).prev == reopened.root.read_entry(1).chain  # chained to the old entry
    upgraded.commit("Put", put("thing", ("newer",), 3))
    rewrite_entry(warehouse, 3, as_format_3)  # after a checksummed entry, one made to look old is damage
    with pytest.raises(
        StorageError, match=r"00000000000000000003\.json: damaged: the entry carries no checksum"
    ):
        Store(warehouse)


def test_a_time_travel_read_sees_a_commit_stamped_before_its_time_but_published_after(
    warehouse: str,
) -> None:
    """A commit carries the time it was stamped with, and becomes visible only when its log entry is
    published, a little later (its entry is written and synced first). A read as of a time between the
    two, made before the publication, must not answer the state before that commit: the same read made
    after would answer otherwise."""
    import threading

    writer, reader = Store(warehouse), Store(warehouse)  # two processes' views of the warehouse
    writer.commit("Put", put("thing", ("x",), 1))
    stamped = threading.Event()
    publish = writer.root.publish

    def slow_publish(version: int, data: bytes, commit_id: str) -> bool:
        stamped.set()  # the entry carries its time by now
        time.sleep(0.03)  # a slow disk's sync
        return publish(version, data, commit_id)

    writer.root.publish = slow_publish  # type: ignore[method-assign]
    commit = threading.Thread(target=writer.commit, args=("Put", put("thing", ("x",), 2)))
    commit.start()
    assert stamped.wait(10)
    when = datetime.now(UTC)
    first = reader.as_of(when).get("thing", ("x",))
    commit.join()
    assert reader.as_of(when).get("thing", ("x",)) == first == 2


def test_a_process_keeps_the_footers_of_a_bounded_number_of_segments(warehouse: str, monkeypatch) -> None:
    """A server writes a segment per commit over thousands of tables: the footers it read or wrote are
    kept up to a bound, and one pushed out is read again from its file."""
    from gluecat.store import store as store_module

    monkeypatch.setattr(store_module, "FOOTERS_KEPT", 8, raising=False)
    s = Store(warehouse)
    paths = [s.write_segment(pa.table({"n": list(range(i + 1))})) for i in range(20)]
    assert [s.segment_footer(p)[0] for p in paths] == list(range(1, 21))
    assert len(s._footers) <= 8
    assert s.segment_footer(paths[0])[0] == 1
    assert [Store(warehouse).segment_footer(p)[0] for p in paths] == list(range(1, 21))


def test_empty_segments_count_against_the_segment_caches_bounds(warehouse: str, monkeypatch) -> None:
    """A whole merge of a row set whose rows were all deleted writes an empty segment: the caches bounded
    in rows count each segment as one row at least, or such segments would gather in them without bound."""
    from gluecat.store import store as store_module

    monkeypatch.setattr(store_module, "SEGMENT_CACHE_ROWS", 10)
    monkeypatch.setattr(store_module, "RECENT_SEGMENT_ROWS", 8)
    writer = Store(warehouse)
    empty = pa.table({"n": pa.array([], pa.int64())})
    paths = [writer.write_segment(empty) for _ in range(50)]
    assert len(writer._recent) <= 8
    reader = Store(warehouse)
    assert all(reader.read_segment(p) == empty for p in paths)
    assert len(reader._segment_cache) <= 10
