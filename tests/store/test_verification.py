"""Every file the store reads is verified: damage is a StorageError naming the file, never a different
answer (log entries by their own checksum and their link to the entry before, data files and
checkpoints by the checksum their names carry; a gap in the log is damage)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pyarrow as pa
import pytest

from gluecat.errors import StorageError
from gluecat.store import layout, log
from gluecat.store.snapshot import Changes, Snapshot
from gluecat.store.store import Store


def put(key: str, doc: object):
    def build(snap: Snapshot) -> tuple[Changes, None]:
        changes = Changes()
        changes.put("thing", (key,), doc)
        return changes, None

    return build


def full(warehouse: str, rel: str) -> str:
    return os.path.join(warehouse, rel)


def flip(path: str, offset: int) -> None:
    with open(path, "r+b") as f:
        f.seek(offset)
        byte = f.read(1)
        f.seek(offset)
        f.write(bytes([byte[0] ^ 0x01]))


def test_a_flipped_digit_in_a_log_entry_is_damage_not_another_time(warehouse: str) -> None:
    s = Store(warehouse)
    s.commit("Put", put("x", 1))
    path = full(warehouse, layout.log_path(1))
    data = Path(path).read_bytes()
    flip(path, data.index(b'"timestamp_us":') + len(b'"timestamp_us":') + 3)
    with pytest.raises(StorageError, match=r"00000000000000000001\.json: damaged"):
        Store(warehouse)


def test_a_data_file_replaced_by_another_valid_one_is_damage_not_its_records(
    record_files: None, warehouse: str
) -> None:
    s = Store(warehouse)
    s.commit("Put", put("x", 1))
    s.commit("Put", put("y", 2))
    (first,) = s.root.read_entry(1).files()
    (second,) = s.root.read_entry(2).files()
    shutil.copyfile(full(warehouse, second), full(warehouse, first))
    with pytest.raises(StorageError, match=os.path.basename(first)):
        Store(warehouse)


def test_a_missing_segment_file_is_a_storage_error_naming_it(warehouse: str) -> None:
    s = Store(warehouse)
    path = s.write_segment(pa.table({"x": list(range(10))}))
    os.unlink(full(warehouse, path))
    with pytest.raises(StorageError, match=os.path.basename(path)):
        Store(warehouse).read_segment(path)


def test_a_deleted_entry_in_the_middle_of_the_log_is_a_gap_not_an_older_version(warehouse: str) -> None:
    s = Store(warehouse)
    for i in range(4):
        s.commit("Put", put(str(i), i))
    os.unlink(full(warehouse, layout.log_path(2)))
    with pytest.raises(StorageError, match=r"00000000000000000002\.json: missing.*gap"):
        Store(warehouse)


def test_a_writer_behind_a_gap_does_not_commit_under_the_entries_after_it(warehouse: str) -> None:
    stale = Store(warehouse)
    stale.commit("Put", put("a", 1))
    other = Store(warehouse)
    for i in range(3):
        other.commit("Put", put(str(i), i))
    os.unlink(full(warehouse, layout.log_path(2)))
    with pytest.raises(StorageError, match="gap"):
        stale.commit("Put", put("late", 1))
    assert not os.path.exists(full(warehouse, layout.log_path(2)))


def test_a_re_created_entry_breaks_the_chain(warehouse: str) -> None:
    s = Store(warehouse)
    for i in range(3):
        s.commit("Put", put(str(i), i))
    # Entry 2 replaced by another commit made on version 1 (as a stale writer over a freed name would).
    original = log.parse(Path(full(warehouse, layout.log_path(2))).read_bytes(), "2", 2)
    again = log.Entry(
        version=2, commit_id="f" * 32, timestamp_us=original.timestamp_us, operation="Put", prev=original.prev
    )
    with open(full(warehouse, layout.log_path(2)), "wb") as f:
        f.write(log.encode(again)[0])
    with pytest.raises(StorageError, match=r"00000000000000000003\.json: damaged log"):
        Store(warehouse)


def test_an_entry_stripped_of_its_checksum_is_damage_in_a_checksummed_log(warehouse: str) -> None:
    s = Store(warehouse)
    s.commit("Put", put("x", 1))
    path = full(warehouse, layout.log_path(1))
    entry = json.loads(Path(path).read_bytes())
    del entry["checksum"]
    entry["format"] = 3  # as a flip that made it look like an older format's entry would
    with open(path, "w") as f:
        json.dump(entry, f)
    with pytest.raises(
        StorageError, match=r"00000000000000000001\.json: damaged: the entry carries no checksum"
    ):
        Store(warehouse)


def test_an_entry_without_its_fields_is_a_storage_error_not_a_key_error(warehouse: str) -> None:
    Store(warehouse)
    path = full(warehouse, layout.log_path(1))
    with open(path, "w") as f:  # an old-format entry, as a damaged one may parse
        json.dump({"format": 3, "version": 1, "actions": []}, f)
    for name in os.listdir(full(warehouse, layout.LOG_DIR)):  # a format 3 log throughout
        entry = json.loads(Path(full(warehouse, f"{layout.LOG_DIR}/{name}")).read_bytes())
        entry.pop("checksum", None), entry.pop("prev", None)
        entry["format"] = 3
        with open(full(warehouse, f"{layout.LOG_DIR}/{name}"), "w") as f:
            json.dump(entry, f)
    with pytest.raises(StorageError, match=r"00000000000000000001\.json: field 'commit_id'"):
        Store(warehouse)


def test_a_flipped_checkpoint_is_damage_naming_it(warehouse: str) -> None:
    s = Store(warehouse, checkpoint_interval=5)
    for i in range(6):
        s.commit("Put", put(str(i), i))
    (name,) = os.listdir(full(warehouse, layout.CHECKPOINT_DIR))
    path = full(warehouse, f"{layout.CHECKPOINT_DIR}/{name}")
    flip(path, os.path.getsize(path) - 40)  # inside the footer
    with pytest.raises(StorageError, match=name):
        Store(warehouse)


def test_a_data_file_path_outside_the_data_folder_is_refused(warehouse: str) -> None:
    s = Store(warehouse)
    s.commit("Put", put("x", 1))
    entry = s.root.read_entry(1)
    forged = log.Entry(
        version=1,
        commit_id=entry.commit_id,
        timestamp_us=entry.timestamp_us,
        operation="Put",
        actions=(log.AddRecords("../../etc/passwd"),),
        prev=entry.prev,
    )
    with open(full(warehouse, layout.log_path(1)), "wb") as f:
        f.write(log.encode(forged)[0])
    with pytest.raises(StorageError, match="not a data file name"):
        Store(warehouse)


def test_a_missing_segment_s_footer_is_a_storage_error_naming_it(warehouse: str) -> None:
    s = Store(warehouse)
    path = s.write_segment(pa.table({"x": list(range(10))}))
    os.unlink(full(warehouse, path))
    with pytest.raises(StorageError, match=os.path.basename(path)):
        Store(warehouse).segment_footer(path)
