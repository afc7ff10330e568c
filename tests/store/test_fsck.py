"""``gluecat fsck`` (alias ``gluecat check``) verifies every file of a warehouse and names each damaged one."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pyarrow as pa
import pytest

from gluecat import Catalog
from gluecat.catalog.rows import merging
from gluecat.cli import main as cli
from gluecat.store import layout, placement
from gluecat.store.fsck import check
from gluecat.store.snapshot import Changes
from tests.int_partitions import KEY, add, make, segments

TABLE_LOG = layout.table_log(placement.log_name(KEY))
"""The log of db.t's own: its partitions' commits."""


@pytest.fixture
def filled(warehouse: str) -> str:
    glue = make(Catalog(warehouse, background_merges=False))
    for k in range(12):
        add(glue, k)
    glue.store.checkpoint()
    add(glue, 100)
    return warehouse


def test_a_sound_warehouse_has_nothing_damaged(filled: str, capsys) -> None:
    report = check(filled)
    assert not report.damaged and report.findings == []
    glue = Catalog(filled)
    assert report.entries == (glue.warehouse_version() + 1) + (glue.table_version("db", "t") + 1)
    assert report.checkpoints == 2 and report.inline_segments == 13  # the root's and the table's
    assert cli(["fsck", "-w", filled]) == 0
    assert "0 damaged" in capsys.readouterr().out


def test_each_damaged_file_is_named_and_the_exit_code_says_so(
    record_files: None, filled: str, capsys
) -> None:
    glue = Catalog(filled)
    entry = os.path.join(filled, TABLE_LOG.log_path(5))
    data = bytearray(Path(entry).read_bytes())
    data[len(data) // 2] ^= 0x20
    Path(entry).write_bytes(data)
    (records,) = [p for p in glue.store.root.read_entry(2).files()]
    os.unlink(os.path.join(filled, records))
    (checkpoint,) = os.listdir(os.path.join(filled, layout.CHECKPOINT_DIR))
    Path(filled, layout.CHECKPOINT_DIR, checkpoint).write_bytes(b"")
    report = check(filled)
    damaged = {f.path.rsplit("/", 1)[-1] for f in report.findings if f.damage}
    assert damaged == {os.path.basename(entry), os.path.basename(records), checkpoint}
    assert cli(["check", "-w", filled, "--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["damaged"] is True and len([f for f in out["findings"] if f["damage"]]) == 3


def test_a_gap_is_damage_and_a_stray_file_a_note(filled: str) -> None:
    os.unlink(os.path.join(filled, TABLE_LOG.log_path(3)))
    Path(filled, layout.DATA_DIR, "leftover.partitions.parquet").write_bytes(b"x")
    report = check(filled)
    assert [
        (f.path.rsplit("/", 1)[-1], f.damage) for f in report.findings if "a gap in the log" in f.problem
    ] == [(os.path.basename(TABLE_LOG.log_path(3)), True)]
    assert [f.damage for f in report.findings if "leftover" in f.path] == [False]


def test_a_directory_that_is_not_a_warehouse_is_damage_and_is_left_untouched(tmp_path) -> None:
    report = check(str(tmp_path))
    assert report.damaged and os.listdir(tmp_path) == []


def test_many_notes_of_one_kind_are_counted_not_listed_unless_verbose(filled: str, capsys) -> None:
    strays = [os.path.join(filled, layout.DATA_DIR, f"stray{i}.records.parquet") for i in range(5)]
    for path in strays:
        Path(path).write_bytes(b"left by a writer that stopped")
    entry = os.path.join(filled, TABLE_LOG.log_path(3))
    data = bytearray(Path(entry).read_bytes())
    data[len(data) // 2] ^= 0x20
    Path(entry).write_bytes(bytes(data))

    assert cli(["fsck", "-w", filled]) == 1
    out = capsys.readouterr().out
    assert out.count("DAMAGED") == 1 and "00000000000000000003.json" in out
    assert sum(name in out for name in ("stray0", "stray1", "stray2", "stray3", "stray4")) == 3
    assert "and 2 more of the same" in out

    assert cli(["fsck", "-w", filled, "--verbose"]) == 1
    out = capsys.readouterr().out
    assert all(f"stray{i}" in out for i in range(5))


def test_merges_that_kept_or_dropped_deletions_are_sound(warehouse: str) -> None:
    glue = make(Catalog(warehouse, background_merges=False))
    for k in range(0, 400, 40):
        add(glue, *range(k, k + 40))  # runs of segments are merged as they fill (deletions kept)
    glue.batch_delete_partition(DatabaseName="db", TableName="t", PartitionsToDelete=[{"Values": ["3"]}])
    add(glue, 3)  # deleted, then made again: the newest row of its identity is live
    glue.batch_delete_partition(DatabaseName="db", TableName="t", PartitionsToDelete=[{"Values": ["104"]}])
    for k in range(400, 720, 40):
        add(glue, *range(k, k + 40))  # the deletions merged into a run, and kept there
    assert merging.merge(glue.store, KEY, whole=True)  # everything merged, deletions dropped
    merges = [
        e
        for e in glue.store.table_entries(KEY, -1, glue.table_version("db", "t"))
        if e.operation == merging.OPERATION
    ]
    assert len(merges) >= 2
    report = check(warehouse)
    assert not report.damaged and report.findings == []


def test_a_merge_that_does_not_hold_its_runs_rows_is_damage(warehouse: str) -> None:
    """What gluecat before 2026-11-27 could write when another process's commit took a version this one
    tried for: the merge held the loser's rows under the winner's segment, and lost the winner's."""
    glue = make(Catalog(warehouse, background_merges=False))
    for k in range(8):
        add(glue, k)
    run = segments(glue)
    rows = [glue.store.read_segment(p) for p in run]
    other = make(Catalog(warehouse + "-other", background_merges=False))
    add(other, 70)  # a row of another writer
    (theirs,) = segments(other)
    wrong = pa.concat_tables([*rows[:-1], other.store.read_segment(theirs).cast(rows[0].schema)])
    into = glue.store.write_segment(wrong)

    def build(snap):
        changes = Changes()
        changes.segment_merges.append((KEY, run, into))
        return changes, None

    glue.store.commit(merging.OPERATION, build, table=KEY)
    report = check(warehouse)
    (finding,) = [f for f in report.findings if f.damage]
    assert finding.path.endswith(into)
    assert f"the merge of version {glue.table_version('db', 't')} (8 segments of db.t)" in finding.problem
    assert '1 rows lost or changed (first ["7"])' in finding.problem
    assert '1 rows it did not hold (first ["70"])' in finding.problem
