"""``gluecat fsck`` (alias ``gluecat check``) verifies every file of a warehouse and names each damaged one."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from gluecat import Catalog
from gluecat.cli import main as cli
from gluecat.store import layout
from gluecat.store.fsck import check
from tests.int_partitions import add, make


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
    assert report.entries == report.version + 1 and report.checkpoints == 1 and report.inline_segments == 13
    assert cli(["fsck", "-w", filled]) == 0
    assert "0 damaged" in capsys.readouterr().out


def test_each_damaged_file_is_named_and_the_exit_code_says_so(filled: str, capsys) -> None:
    glue = Catalog(filled)
    entry = os.path.join(filled, layout.log_path(5))
    data = bytearray(Path(entry).read_bytes())
    data[len(data) // 2] ^= 0x20
    Path(entry).write_bytes(data)
    (records,) = [p for p in glue.store._read_entry(2).files()]
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
    os.unlink(os.path.join(filled, layout.log_path(3)))
    Path(filled, layout.DATA_DIR, "leftover.partitions.parquet").write_bytes(b"x")
    report = check(filled)
    assert [(f.path.rsplit("/", 1)[-1], f.damage) for f in report.findings if "gap" in f.problem] == [
        (os.path.basename(layout.log_path(3)), True)
    ]
    assert [f.damage for f in report.findings if "leftover" in f.path] == [False]


def test_a_directory_that_is_not_a_warehouse_is_damage_and_is_left_untouched(tmp_path) -> None:
    report = check(str(tmp_path))
    assert report.damaged and os.listdir(tmp_path) == []


def test_many_notes_of_one_kind_are_counted_not_listed_unless_verbose(filled: str, capsys) -> None:
    strays = [os.path.join(filled, layout.DATA_DIR, f"stray{i}.records.parquet") for i in range(5)]
    for path in strays:
        Path(path).write_bytes(b"left by a writer that stopped")
    entry = os.path.join(filled, layout.log_path(3))
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
