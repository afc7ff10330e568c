"""The transaction journal: records appended under a lock by any process, read by all, a torn tail
cut off, damage found, rewrites followed."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from gluecat.errors import StorageError
from gluecat.store import layout
from gluecat.store.filesystems import open_fs
from gluecat.store.journal import Journal, JournalConflict, ObjectJournal, open_journal


def journal(warehouse: str) -> Journal:
    return Journal(open_fs(warehouse))


def append(j: Journal, *records: dict[str, object], sync: bool = True) -> None:
    with j.locked():
        j.poll()
        for r in records:
            j.append([r], sync=sync)


def current_file(warehouse: str) -> str:
    names = sorted(os.listdir(f"{warehouse}/{layout.JOURNAL_DIR}"))
    return f"{warehouse}/{layout.JOURNAL_DIR}/{[n for n in names if n.startswith('journal-')][-1]}"


def test_records_appended_by_one_handle_are_read_by_another(warehouse: str) -> None:
    writer, reader = journal(warehouse), journal(warehouse)
    assert reader.poll() == (False, [])  # no journal yet
    append(writer, {"op": "a", "n": 1}, {"op": "b", "n": 2})
    assert reader.poll() == (True, [{"op": "a", "n": 1}, {"op": "b", "n": 2}])
    append(writer, {"op": "c"})
    assert reader.poll() == (False, [{"op": "c"}])
    assert reader.poll() == (False, [])


def test_a_record_being_written_is_read_once_whole_and_a_torn_one_is_cut_off(warehouse: str) -> None:
    writer, reader = journal(warehouse), journal(warehouse)
    append(writer, {"op": "whole"})
    path = current_file(warehouse)
    with open(path, "ab") as f:  # what a writer killed half way through its write leaves
        f.write(b'0123456789abcdef0123456789abcdef {"op": "to')
    assert reader.poll() == (True, [{"op": "whole"}])  # the unfinished line is not a record (yet)
    append(writer, {"op": "next"})  # the next writer, holding the lock, cuts it off first
    assert reader.poll() == (False, [{"op": "next"}])
    assert Path(path).read_bytes().count(b"\n") == 2


def test_a_changed_record_is_damage(warehouse: str) -> None:
    writer = journal(warehouse)
    append(writer, {"op": "a", "n": 1}, {"op": "b"})
    path = current_file(warehouse)
    Path(path).write_bytes(Path(path).read_bytes().replace(b'"n":1', b'"n":7'))
    with pytest.raises(StorageError, match="damaged: the record at byte 0 does not match its checksum"):
        journal(warehouse).poll()


def test_a_record_the_disk_refuses_is_a_storage_error_naming_the_journal_and_leaves_no_trace(
    warehouse: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    writer = journal(warehouse)
    append(writer, {"op": "a"})
    path = current_file(warehouse)
    size = os.path.getsize(path)

    def full_disk(fd: int, data: bytes) -> int:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("gluecat.store.journal.os.write", full_disk)
    with pytest.raises(StorageError, match=r"journal.*a record could not be written \(\[Errno 28\]"):
        append(writer, {"op": "b"})
    monkeypatch.undo()
    assert os.path.getsize(path) == size
    append(writer, {"op": "c"})
    assert journal(warehouse).poll() == (True, [{"op": "a"}, {"op": "c"}])


def test_a_rewrite_replaces_the_journal_and_readers_start_over(warehouse: str) -> None:
    writer, reader = journal(warehouse), journal(warehouse)
    append(writer, {"op": "a"}, {"op": "b"})
    assert reader.poll()[1] == [{"op": "a"}, {"op": "b"}]
    with writer.locked():
        writer.poll()
        writer.rewrite([{"op": "b"}])
    append(writer, {"op": "c"})
    assert reader.poll() == (True, [{"op": "b"}, {"op": "c"}])
    assert [n for n in os.listdir(f"{warehouse}/{layout.JOURNAL_DIR}") if n.startswith("journal-")] == [
        "journal-00000000000000000001.jsonl"
    ]


def test_a_reader_that_missed_two_rewrites_follows_them_and_appends_where_all_read(warehouse: str) -> None:
    """Each rewrite deletes the generation before it, so after two the generation after a slow
    reader's is gone too: the reader must not take its own deleted file for the current one."""
    writer, slow = journal(warehouse), journal(warehouse)
    append(writer, {"op": "a"})
    assert slow.poll() == (True, [{"op": "a"}])
    for n in range(2):
        with writer.locked():
            writer.poll()
            writer.rewrite([{"op": f"rewritten {n}"}])
    assert slow.poll() == (True, [{"op": "rewritten 1"}])
    append(slow, {"op": "b"})
    assert journal(warehouse).poll() == (True, [{"op": "rewritten 1"}, {"op": "b"}])


def test_appending_without_having_read_everything_is_refused(warehouse: str) -> None:
    first, second = journal(warehouse), journal(warehouse)
    append(first, {"op": "a"})
    with second.locked(), pytest.raises(AssertionError, match="poll"):
        second.append([{"op": "b"}], sync=False)  # it would have cut off a's record as a torn tail


def test_processes_appending_at_once_lose_no_record(warehouse: str) -> None:
    script = textwrap.dedent(
        f"""
        import sys
        from gluecat.store.filesystems import open_fs
        from gluecat.store.journal import Journal
        j = Journal(open_fs({warehouse!r}, fsync=False))
        for i in range(200):
            with j.locked():
                j.poll()
                j.append([{{"op": "w", "who": int(sys.argv[1]), "i": i}}], sync=False)
        """
    )
    procs = [subprocess.Popen([sys.executable, "-c", script, str(n)]) for n in range(4)]
    assert [p.wait(timeout=120) for p in procs] == [0, 0, 0, 0]
    _, records = journal(warehouse).poll()
    for who in range(4):
        assert [r["i"] for r in records if r["who"] == who] == list(range(200))


def test_without_appends_and_locks_the_journal_is_a_log_of_objects(tmp_path: Path) -> None:
    """A file system that cannot append or lock (an object store) keeps the journal as objects, each
    created exclusively at the next number: an append decided on a journal that has moved on fails, to
    be decided again, and a rewrite replaces all before it."""
    import pyarrow.fs as pafs

    fs = open_fs(
        "wh", filesystem=pafs.SubTreeFileSystem(str(tmp_path), pafs.LocalFileSystem()), single_writer=True
    )
    mine, theirs = open_journal(fs), open_journal(fs)
    assert isinstance(mine, ObjectJournal)
    assert mine.poll() == (True, []) and theirs.poll() == (True, [])
    with mine.locked():
        mine.append([{"op": "start", "tx": "a"}], sync=True)
    with theirs.locked(), pytest.raises(JournalConflict):  # theirs decided before reading mine
        theirs.append([{"op": "start", "tx": "b"}], sync=True)
    assert theirs.poll() == (False, [{"op": "start", "tx": "a"}])
    with theirs.locked():
        theirs.append([{"op": "start", "tx": "b"}], sync=True)
        theirs.rewrite([{"op": "horizon", "tx": "", "time": 1}])
    assert mine.poll() == (True, [{"op": "horizon", "tx": "", "time": 1}])
    assert open_journal(fs).poll() == (True, [{"op": "horizon", "tx": "", "time": 1}])


def test_an_append_that_finds_its_entry_taken_and_then_freed_by_a_rewrite_is_decided_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another process's entry took the name, and its rewrite deleted it before this append read it
    back: the journal has moved on (a base after the name holds all before it), so this append is a
    conflict, decided again at the end. Created again at the freed name, it would be acknowledged and
    then count for no one: every reader starts from the base."""
    import pyarrow.fs as pafs

    fs = open_fs(
        "wh", filesystem=pafs.SubTreeFileSystem(str(tmp_path), pafs.LocalFileSystem()), single_writer=True
    )
    mine, theirs = open_journal(fs), open_journal(fs)
    with mine.locked():
        mine.poll()
        mine.append([{"op": "start", "tx": "a"}], sync=True)
    with theirs.locked():
        theirs.poll()
        theirs.append([{"op": "start", "tx": "b"}], sync=True)
    publish = fs.publish

    def then_rewritten(rel: str, data: bytes) -> bool:
        monkeypatch.setattr(fs, "publish", publish)
        created = publish(rel, data)
        with theirs.locked():
            theirs.rewrite([{"op": "start", "tx": "a"}, {"op": "start", "tx": "b"}])
        return created

    monkeypatch.setattr(fs, "publish", then_rewritten)
    with mine.locked(), pytest.raises(JournalConflict):
        mine.append([{"op": "start", "tx": "c"}], sync=True)
    with mine.locked():
        mine.poll()
        mine.append([{"op": "start", "tx": "c"}], sync=True)
    everyone = [{"op": "start", "tx": tx} for tx in "abc"]
    assert open_journal(fs).poll() == (True, everyone)


def test_a_handle_let_go_closes_its_descriptors(warehouse: str) -> None:
    """A journal's descriptors are plain numbers nothing else closes: a process that opens catalogs and
    lets them go (a test run, a driver opening a LakeFormation per job) must not keep two for each."""
    if not os.path.isdir("/proc/self/fd"):
        pytest.skip("no /proc here")
    import gc

    from gluecat import LakeFormation

    first = LakeFormation(warehouse)
    first.cancel_transaction(TransactionId=first.start_transaction()["TransactionId"])
    del first
    gc.collect()
    before = len(os.listdir("/proc/self/fd"))
    for _ in range(30):
        j = journal(warehouse)
        append(j)  # its lock file and its journal file open
        lf = LakeFormation(warehouse)
        lf.cancel_transaction(TransactionId=lf.start_transaction()["TransactionId"])
        del j, lf
    gc.collect()
    assert len(os.listdir("/proc/self/fd")) - before < 5
