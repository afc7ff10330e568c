"""Segment merges: by size tier, on a background thread, in the place of the run they replace."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from gluecat import Catalog
from gluecat.catalog import compact
from gluecat.catalog.rows import RowEngine, latest, merging
from gluecat.store.log import MergeSegments
from gluecat.store.store import Store
from tests.int_partitions import KEY, add, live, make, segments

PRODUCTION_MIN_MERGE_ROWS = merging.MIN_MERGE_ROWS


@pytest.fixture(autouse=True)
def runs_of_any_size_merge(monkeypatch: pytest.MonkeyPatch) -> None:
    """Most tests here are about the size tiers, written with one-row segments: in them, runs of any
    number of rows merge."""
    monkeypatch.setattr(merging, "MIN_MERGE_ROWS", 0)


def test_writes_of_a_few_rows_gather_until_their_run_is_worth_a_merge(
    warehouse: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(merging, "MIN_MERGE_ROWS", PRODUCTION_MIN_MERGE_ROWS)
    assert merging.MAX_RUN == 32 and merging.MIN_MERGE_ROWS == 256
    glue = make(Catalog(warehouse, background_merges=False))
    for i in range(31):  # one row each: the run waits until it is MAX_RUN segments long
        add(glue, i)
    assert len(segments(glue)) == 31
    add(glue, 31)
    assert len(segments(glue)) == 1
    for i in range(25):  # ten rows each: the run waits until it holds MIN_MERGE_ROWS rows
        add(glue, *range(100 + 10 * i, 110 + 10 * i))
    assert len(segments(glue)) == 26
    add(glue, *range(350, 360))
    assert len(segments(glue)) == 2  # the 32 rows, then the 260 of the second run
    assert live(glue) == list(range(32)) + list(range(100, 360))


def test_eight_writes_of_one_size_become_one_segment(warehouse: str) -> None:
    glue = make(Catalog(warehouse, background_merges=False))
    for i in range(7):
        add(glue, i)
    assert len(segments(glue)) == 7
    add(glue, 7)
    assert len(segments(glue)) == 1
    assert live(glue) == list(range(8))


def test_writes_that_outpace_merging_are_merged_with_their_tier(warehouse: str) -> None:
    glue = make(Catalog(warehouse, background_merges=False))
    with glue._ctx.rows.merger.lock:  # as if the merge thread were busy with something else
        blocker = threading.Thread(target=lambda: [add(glue, 100 + i) for i in range(11)])
        glue._ctx.rows.background_merges = True
        blocker.start()
        blocker.join()
        assert len(segments(glue)) == 11
    glue._ctx.rows.merger.maybe_merge(KEY)
    # All eleven one-row segments go into one: none is left behind to be rewritten with bigger ones.
    assert len(segments(glue)) == 1
    assert live(glue) == list(range(100, 111))


def test_a_merge_is_placed_where_its_run_was_so_later_writes_still_win(warehouse: str, monkeypatch) -> None:
    glue = make(Catalog(warehouse, background_merges=False))
    for i in range(7):
        add(glue, i)
    write_segment = glue.store.write_segment

    other = Catalog(warehouse)  # another process's handle on the warehouse

    def meanwhile(rows: Any) -> str:
        # The other writer commits while the merged file is being written: it deletes a partition that
        # the run being merged adds, and adds one of its own (and leaves merging to later).
        monkeypatch.setattr(glue.store, "write_segment", write_segment)
        monkeypatch.setattr(RowEngine, "after_write", lambda *args: None)
        other.delete_partition(DatabaseName="db", TableName="t", PartitionValues=["3"])
        add(other, 50)
        return write_segment(rows)

    monkeypatch.setattr(glue.store, "write_segment", meanwhile)
    add(glue, 7)
    now = segments(glue)
    assert len(now) == 3  # the merged run, then the deletion and the addition that came after it
    assert live(glue) == [0, 1, 2, 4, 5, 6, 7, 50]
    assert live(Catalog(warehouse)) == [0, 1, 2, 4, 5, 6, 7, 50]  # read back from the log alone
    log = glue.store.table_entries(KEY, -1, glue.table_version(*KEY))
    merge = [a for e in log for a in e.actions if isinstance(a, MergeSegments)]
    assert len(merge) == 1 and len(merge[0].run) == 8 and merge[0].into == now[0]


def test_a_merge_whose_run_is_gone_commits_nothing_and_leaves_no_file(warehouse: str, monkeypatch) -> None:
    glue = make(Catalog(warehouse, background_merges=False))
    for i in range(7):
        add(glue, i)
    write_segment = glue.store.write_segment
    written: list[str] = []

    def meanwhile(rows: Any) -> str:
        monkeypatch.setattr(glue.store, "write_segment", write_segment)
        assert compact.compact_table(glue._ctx, *KEY)  # merges everything first (same process)
        written.append(write_segment(rows))
        return written[-1]

    # compact_table takes the merge lock, which this thread already holds: the lock is reentrant, and
    # the first merge then finds its run replaced.
    monkeypatch.setattr(glue.store, "write_segment", meanwhile)
    before = glue.table_version(*KEY)
    add(glue, 7)
    assert glue.table_version(*KEY) == before + 2  # the write and the compaction, not the stale merge
    assert not glue.store.fs.exists(written[0])
    assert live(glue) == list(range(8))


def test_background_merges_keep_up_and_lose_nothing(warehouse: str) -> None:
    glue = make(Catalog(warehouse))
    expected: set[int] = set()
    for i in range(300):
        add(glue, i)
        expected.add(i)
        if i % 7 == 0:
            glue.delete_partition(DatabaseName="db", TableName="t", PartitionValues=[str(i // 2)])
            expected.discard(i // 2)
        assert len(segments(glue)) <= merging.BACKLOG + 1
    glue._ctx.rows.wait_for_merges()
    assert len(segments(glue)) < 20
    assert live(glue) == sorted(expected)
    assert live(Catalog(warehouse)) == sorted(expected)


def test_writers_in_threads_with_background_merges(warehouse: str) -> None:
    glue = make(Catalog(warehouse))
    errors: list[BaseException] = []

    def writer(n: int) -> None:
        try:
            for i in range(60):
                add(glue, n * 1000 + i)
        except BaseException as e:  # reported below, in the test thread
            errors.append(e)

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    glue._ctx.rows.wait_for_merges()
    assert errors == []
    assert live(glue) == sorted(n * 1000 + i for n in range(3) for i in range(60))


def test_of_two_processes_writing_a_table_the_writer_of_a_runs_oldest_segment_merges_it(
    warehouse: str,
) -> None:
    first = make(Catalog(warehouse, background_merges=False))
    second = Catalog(warehouse, background_merges=False)  # another process, as far as merging knows
    for i in range(8):
        add(first, i)
    assert len(segments(first)) == 1
    for i in range(8, 16):  # the second writes the run's oldest segment, the first its last
        add(second if i % 2 == 0 else first, i)
    assert len(segments(first)) == 9  # the merged segment, and a run the first left to the second
    add(second, 16)
    assert len(segments(first)) == 2
    merges = [e.operation for e in first.store.table_entries(KEY, 0, first.store.table_version(KEY))]
    assert merges.count(merging.OPERATION) == 2
    assert live(first) == list(range(17))


def test_runs_a_process_found_when_it_began_writing_are_anyones(warehouse: str) -> None:
    gone = make(Catalog(warehouse, background_merges=False))
    for i in range(7):
        add(gone, i)
    gone.close()
    job = Catalog(warehouse, background_merges=False)  # one write, say, and then it ends
    add(job, 7)
    assert len(segments(job)) == 1
    assert live(job) == list(range(8))


def test_a_run_whose_writer_stopped_is_merged_after_a_while(warehouse: str, monkeypatch) -> None:
    monkeypatch.setattr(merging, "DUTY_SECONDS", 0.0)
    glue = make(Catalog(warehouse, background_merges=False))
    for i in range(8):
        add(glue, i)
    gone = Catalog(warehouse, background_merges=False)
    add(gone, 8)  # while glue writes the table too: the run this begins is gone's to merge
    gone.close()
    for i in range(9, 16):
        add(glue, i)
    assert len(segments(glue)) == 9  # glue's merged segment, then the run it left to gone
    add(glue, 16)  # left once already: glue merges it
    assert len(segments(glue)) == 2
    assert live(glue) == list(range(17))


@pytest.mark.parametrize("background", [True, False])
def test_a_failed_merge_changes_nothing(warehouse: str, monkeypatch, background: bool) -> None:
    glue = make(Catalog(warehouse, background_merges=background))

    def broken(self: Store, rows: Any) -> str:
        raise OSError("disk full")

    monkeypatch.setattr(Store, "write_segment", broken)
    for i in range(8):
        add(glue, i)  # a writer merging itself does not report it either: its partitions are committed
    glue._ctx.rows.wait_for_merges()
    assert len(segments(glue)) == 8
    assert live(glue) == list(range(8))


def test_closing_a_catalog_waits_for_its_merges(warehouse: str) -> None:
    with make(Catalog(warehouse)) as glue:
        for i in range(64):
            add(glue, i)
    assert not merging.run_to_merge(glue.store, segments(glue))  # nothing left to merge
    assert live(glue) == list(range(64))


def test_a_reader_catches_up_on_merges_of_merges_without_rereading_the_table(
    warehouse: str, monkeypatch
) -> None:
    glue = make(Catalog(warehouse, background_merges=False))
    monkeypatch.setattr(RowEngine, "after_write", lambda *args: None)  # merges only when asked below
    for i in range(5):
        add(glue, i)
    assert live(glue) == list(range(5))  # this process's view now holds the five segments
    other = Catalog(warehouse)  # another process
    assert live(other) == list(range(5))
    folds: list[int] = []
    fold = latest.fold
    monkeypatch.setattr(latest, "fold", lambda *args: folds.append(1) or fold(*args))
    # Two merges the view does not see in between: the second replaces the first and a newer segment.
    assert compact.compact_table(glue._ctx, *KEY)
    add(other, 5)
    assert compact.compact_table(glue._ctx, *KEY)
    assert live(glue) == list(range(6))
    assert folds == []  # it swapped names and read only the new segment


def test_a_merged_run_holds_each_identity_once_with_its_newest_row(warehouse: str) -> None:
    """A run whose identities are all distinct is kept in commit order (nothing to drop); one that
    repeats an identity keeps its newest row, and deletions stay to cancel older segments' rows."""
    glue = make(Catalog(warehouse, background_merges=False))
    add(glue, 9, 3)
    add(glue, 1)
    merged = merging.merged_rows(glue.store, segments(glue), keep_deletions=True)
    assert merged.column("p0").to_pylist() == ["9", "3", "1"]
    glue.delete_partition(DatabaseName="db", TableName="t", PartitionValues=["3"])
    glue.update_partition(
        DatabaseName="db",
        TableName="t",
        PartitionValueList=["9"],
        PartitionInput={"Values": ["9"], "StorageDescriptor": {"Location": "s3://b/t/new"}},
    )
    merged = merging.merged_rows(glue.store, segments(glue), keep_deletions=True)
    newest = {
        vk: (tomb, loc)
        for vk, tomb, loc in zip(
            *(merged.column(c).to_pylist() for c in ("p0", "_tomb", "Location")), strict=True
        )
    }
    assert merged.num_rows == 3 and newest == {
        "1": (False, "s3://b/t/k=1/"),
        "3": (True, None),
        "9": (False, "s3://b/t/new"),
    }
    dropped = merging.merged_rows(glue.store, segments(glue), keep_deletions=False)
    assert sorted(dropped.column("p0").to_pylist()) == ["1", "9"]
