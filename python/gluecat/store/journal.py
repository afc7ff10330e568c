"""The transaction journal: one append-only file of small records that every process of a warehouse
shares, for state that must be durable and visible to all before it is a commit (a transaction's start,
its staged writes, its extensions, its end).

Appending a record costs one write and, when asked, one ``fdatasync`` of a file that already exists
(about 0.2 ms here), where a commit creates a file and syncs it and its folder (about 0.6 ms). Writers
append under an advisory lock (``flock`` on ``transactions/lock``); readers need none. A line is
``<xxh3-128 of the JSON> <JSON>\\n``, written with one ``write``:

- a reader stops at a line not ended yet (one being written, or the torn tail of a writer that died),
  and reads it once it is whole;
- a writer, holding the lock, first cuts such a tail off (no one else can be writing it), so a torn
  record is never followed by another, and a line that ended but does not match its checksum is
  damage, a StorageError.

The journal grows until a writer rewrites it (``rewrite``): the records it is given go to the next
generation's file (``journal-<n+1>.jsonl``, created whole and exclusively), and the old file is deleted.
A reader that finds a newer generation starts over from it.

On an object store, which has neither appends nor locks, the journal is ``ObjectJournal``: a log of
objects, one an append, each created exclusively at the next number, so that an append made on a state
that is no longer the last fails (``JournalConflict``) and its caller decides again.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import threading
from collections.abc import Iterator
from typing import Any

from gluecat.errors import StorageError
from gluecat.store import codec, layout, log
from gluecat.store.fs import LocalFS, WarehouseFS

Record = dict[str, Any]


class JournalConflict(Exception):
    """Another process appended since this one last read the journal: what it decided may no longer
    hold. Read again and decide again (``Journal.exclusively`` does)."""


def open_journal(fs: WarehouseFS) -> Journal | ObjectJournal:
    """The journal of a warehouse: a shared file where it can be appended to and locked, else a log
    of objects."""
    return Journal(fs) if isinstance(fs, LocalFS) else ObjectJournal(fs)


class Journal:
    """One process's handle on a warehouse's transaction journal; safe to share between threads."""

    def __init__(self, fs: LocalFS) -> None:
        self.fs = fs
        self._mutex = threading.RLock()
        self._generation: int | None = None
        self._offset = 0
        """Where the records read so far end in the current generation's file."""
        self._fd: int | None = None
        self._lock_fd: tuple[int, int] | None = None  # (pid, fd): a forked child opens its own
        self._locked = 0

    # -- reading -------------------------------------------------------------------------------

    def poll(self) -> tuple[bool, list[Record]]:
        """The records appended since the last poll, oldest first. True first if the journal was
        rewritten since (or this is the first look): the records are then all of it, from the start."""
        with self._mutex:
            newest = self._newest_generation()
            reset = False
            if newest != self._generation:
                self._open(newest)
                reset = True
            if self._fd is None:
                return reset, []
            # A rewrite meanwhile leaves this open file readable, and the next poll finds it.
            records, used = self._parse(self._read_from(self._offset), self._offset)
            self._offset += used
            return reset, records

    def _newest_generation(self) -> int | None:
        # A rewrite creates the next generation before it deletes this one: while this one is still
        # there, one look tells. Once it is gone, later rewrites may have deleted the next one too (a
        # handle that missed two rewrites would otherwise stay on its deleted file, and append there).
        if (
            self._generation is not None
            and self._fd is not None
            and not self.fs.exists(layout.journal_path(self._generation + 1))
            and os.fstat(self._fd).st_nlink > 0
        ):
            return self._generation
        found = [layout.parse_journal_name(n) for n in self.fs.list_names(layout.JOURNAL_DIR)]
        generations = [g for g in found if g is not None]
        return max(generations) if generations else None

    def _open(self, generation: int | None) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        self._generation, self._offset = generation, 0
        if generation is not None:
            try:
                self._fd = os.open(self.fs.full(layout.journal_path(generation)), os.O_RDWR | os.O_APPEND)
            except FileNotFoundError:
                self._generation = None

    def _read_from(self, offset: int) -> bytes:
        assert self._fd is not None
        size = os.fstat(self._fd).st_size
        return os.pread(self._fd, max(size - offset, 0), offset) if size > offset else b""

    def _parse(self, data: bytes, offset: int) -> tuple[list[Record], int]:
        """The whole, checked records at the start of ``data``, and how many bytes they take."""
        records: list[Record] = []
        used = 0
        while True:
            end = data.find(b"\n", used)
            if end < 0:
                return records, used  # nothing, or a line not ended yet
            line = data[used:end]
            record = _decode(line)
            if record is None:
                # A record is written with one write and ends with its newline, so a line that ended
                # was written whole: it does not match its checksum because it was changed since.
                raise StorageError(
                    f"{self._name()}: damaged: the record at byte {offset + used} does not match its checksum"
                )
            records.append(record)
            used = end + 1

    # -- writing -------------------------------------------------------------------------------

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the journal's lock (against the other processes and threads): poll, decide, append."""
        with self._mutex:
            fd = self._lock_file()
            if self._locked == 0:
                fcntl.flock(fd, fcntl.LOCK_EX)
            self._locked += 1
            try:
                yield
            finally:
                self._locked -= 1
                if self._locked == 0:
                    fcntl.flock(fd, fcntl.LOCK_UN)

    def _lock_file(self) -> int:
        pid = os.getpid()
        if self._lock_fd is None or self._lock_fd[0] != pid:
            self.fs.mkdirs(layout.JOURNAL_DIR)
            fd = os.open(self.fs.full(layout.JOURNAL_LOCK), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
            self._lock_fd = (pid, fd)
        return self._lock_fd[1]

    def append(self, records: list[Record], *, sync: bool) -> None:
        """Append records, in order, as one write (holding the lock, after a poll that read to the end);
        with ``sync``, on stable storage when this returns (given the warehouse's fsync)."""
        if self._locked == 0:
            raise AssertionError("Journal.append outside Journal.locked")
        with self._mutex:
            if self._fd is None:
                self._create_first()
            assert self._fd is not None
            size = os.fstat(self._fd).st_size
            if size > self._offset:
                unread, _ = self._parse(self._read_from(self._offset), self._offset)
                if unread:
                    raise AssertionError("Journal.append without a poll under the lock: records are unread")
                # Bytes past the last whole record, with the lock held and everything read: the torn
                # tail of a writer that died mid-record. Nobody has read it as a record.
                os.ftruncate(self._fd, self._offset)
            data = b"".join(_encode(r) for r in records)
            try:
                written = os.write(self._fd, data)
            except OSError as e:  # a full disk, an I/O error: nothing of the record counts
                with contextlib.suppress(OSError):  # else the next append cuts the torn tail
                    os.ftruncate(self._fd, self._offset)
                raise StorageError(f"{self._name()}: a record could not be written ({e})") from e
            if written != len(data):
                os.ftruncate(self._fd, self._offset)
                raise StorageError(
                    f"{self._name()}: a record could not be written whole ({written} of {len(data)} bytes)"
                )
            self._offset += len(data)
            if sync and self.fs.fsync:
                try:
                    os.fdatasync(self._fd)
                except OSError as e:
                    # Other processes may have read the record already, so it stays; a second fdatasync
                    # may report success for pages the kernel dropped, so the caller is told.
                    raise StorageError(
                        f"{self._name()}: a record was written but could not be put on stable storage "
                        f"({e}); it counts unless the machine stops before the next sync"
                    ) from e

    def _name(self) -> str:
        """The current generation's file, for messages."""
        return self.fs.uri(layout.journal_path(self._generation or 0))

    def _create_first(self) -> None:
        """Start generation 0 (or find the one another process started)."""
        self.fs.mkdirs(layout.JOURNAL_DIR)
        self.fs.publish(layout.journal_path(0), b"")
        self._open(self._newest_generation())
        if self._fd is None:
            raise StorageError(f"{self.fs.uri(layout.JOURNAL_DIR)}: the journal could not be created")
        self._read_rest()

    def _read_rest(self) -> None:
        records, used = self._parse(self._read_from(self._offset), self._offset)
        if records:
            raise AssertionError("the journal was written between a poll and an append under the lock")
        self._offset += used

    def rewrite(self, records: list[Record]) -> None:
        """Replace the journal by ``records`` (holding the lock, after a poll that read to the end): the
        next generation holds exactly them, and the old file is deleted."""
        if self._locked == 0:
            raise AssertionError("Journal.rewrite outside Journal.locked")
        with self._mutex:
            old = self._generation
            generation = 0 if old is None else old + 1
            data = b"".join(_encode(r) for r in records)
            if not self.fs.publish(layout.journal_path(generation), data):
                raise StorageError(
                    f"{self.fs.uri(layout.journal_path(generation))}: exists already, while the lock was held"
                )
            self._open(generation)
            self._offset = len(data)
            if old is not None:
                self.fs.delete(layout.journal_path(old))

    def size(self) -> int:
        """How many bytes the current generation holds (what a rewrite would shrink)."""
        with self._mutex:
            return self._offset

    def close(self) -> None:
        with self._mutex:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None
            if self._lock_fd is not None and self._lock_fd[0] == os.getpid():
                os.close(self._lock_fd[1])
            self._lock_fd = None

    def __del__(self) -> None:
        # Descriptors are plain ints, which nothing else closes: a process that opens and drops catalogs
        # (a test run, a driver opening a LakeFormation per job) would keep two for each, for its life.
        with contextlib.suppress(Exception):
            self.close()


def _encode(record: Record) -> bytes:
    body = codec.dumps(record).encode()
    return log.checksum(body).encode() + b" " + body + b"\n"


def _decode(line: bytes) -> Record | None:
    """A line's record, or None if it is not a whole, checked one."""
    if len(line) < 34 or line[32:33] != b" ":
        return None
    body = line[33:]
    if log.checksum(body).encode() != line[:32]:
        return None
    try:
        record = codec.loads(body)
    except ValueError:
        return None
    return record if isinstance(record, dict) else None


JOURNAL_ENTRY_BATCH = 256


class ObjectJournal:
    """The journal on an object store: ``transactions/log/N.json`` objects, each a batch of records
    appended by one call, created exclusively at the next N. A rewrite is an entry that says it is a
    ``base``: it holds the whole journal, and the entries before it are deleted. Safe to share between
    threads."""

    def __init__(self, fs: WarehouseFS) -> None:
        self.fs = fs
        self._mutex = threading.RLock()
        self._seq = -1
        """The last entry read (or appended) by this process."""
        self._size = 0
        """Bytes since the last base."""
        self._locked = 0
        self._polled = False

    def _name(self, seq: int) -> str:
        return f"{layout.JOURNAL_LOG_DIR}/{seq:020d}.json"

    def poll(self) -> tuple[bool, list[Record]]:
        with self._mutex:
            names = self.fs.list_after(
                layout.JOURNAL_LOG_DIR, f"{self._seq:020d}.json" if self._seq >= 0 else ""
            )
            seqs = [v for v in (layout.parse_log_name(n) for n in names) if v is not None]
            reset, self._polled = not self._polled, True
            if seqs and seqs[0] != self._seq + 1:
                # Entries this process had not read were deleted by a rewrite: start over from its base.
                return self._from_newest_base()
            out: list[Record] = []
            for seq, data in zip(seqs, self.fs.read_many([self._name(v) for v in seqs]), strict=True):
                if data is None:
                    return self._from_newest_base()
                base, records = self._parse(seq, data)
                if base:
                    reset, out, self._size = True, [], 0
                out.extend(records)
                self._seq = seq
                self._size += len(data)
            return reset, out

    def _from_newest_base(self) -> tuple[bool, list[Record]]:
        self._seq, self._size = -1, 0
        names = self.fs.list_names(layout.JOURNAL_LOG_DIR)
        seqs = sorted(v for v in (layout.parse_log_name(n) for n in names) if v is not None)
        out: list[Record] = []
        for seq, data in zip(seqs, self.fs.read_many([self._name(v) for v in seqs]), strict=True):
            if data is None:
                continue  # deleted by a rewrite now: a base after it holds what it held
            base, records = self._parse(seq, data)
            if base:
                out, self._size = [], 0
            out.extend(records)
            self._seq = seq
            self._size += len(data)
        return True, out

    def _parse(self, seq: int, data: bytes) -> tuple[bool, list[Record]]:
        body, _, digest = data.rpartition(b"\n")
        if log.checksum(body).encode() != digest:
            raise StorageError(
                f"{self.fs.uri(self._name(seq))}: damaged: the journal entry does not match its checksum"
            )
        try:
            doc = codec.loads(body)
        except ValueError as e:
            raise StorageError(f"{self.fs.uri(self._name(seq))}: not a journal entry ({e})") from e
        if not isinstance(doc, dict) or not isinstance(doc.get("records"), list):
            raise StorageError(f"{self.fs.uri(self._name(seq))}: not a journal entry")
        return bool(doc.get("base")), [r for r in doc["records"] if isinstance(r, dict)]

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """No lock exists on an object store: appends within are conditional on the journal being as
        last read (JournalConflict otherwise)."""
        with self._mutex:
            self._locked += 1
            try:
                yield
            finally:
                self._locked -= 1

    def _publish(self, records: list[Record], base: bool) -> None:
        body = codec.dumps({"records": records, "base": base}).encode()
        data = body + b"\n" + log.checksum(body).encode()
        seq = self._seq + 1
        if seq == 0:
            self.fs.mkdirs(layout.JOURNAL_LOG_DIR)
        if not self._create(seq, data):
            raise JournalConflict(f"{self.fs.uri(self._name(seq))} was appended by another process")
        self._seq = seq
        self._size = (0 if base else self._size) + len(data)

    def _create(self, seq: int, data: bytes) -> bool:
        """Whether entry ``seq`` now holds ``data``, this write's: False if another process's entry took
        it. A create that failed, or found the name taken, reads it back: the client's retry of a write
        whose reply was lost finds the first attempt's entry. A failed create whose name is free may
        not have arrived: it is created again, but only at the journal's end, since a rewrite frees the
        names below its base and an entry there counts for no one. OSError if the store keeps failing."""
        name = self._name(seq)
        for attempt in range(3):
            try:
                if self.fs.publish(name, data):
                    return True
                failed = False
            except OSError:
                if attempt == 2:
                    raise
                failed = True
            try:
                return self.fs.read_bytes(name) == data
            except FileNotFoundError:
                if not failed or self.fs.list_after(layout.JOURNAL_LOG_DIR, f"{seq:020d}.json"):
                    return False  # taken, then freed by a rewrite: the journal has moved on
            except OSError:
                if attempt == 2:
                    raise
        return False

    def append(self, records: list[Record], *, sync: bool) -> None:
        """Append records, in order, as one entry (within ``locked``, after a poll); JournalConflict if
        another process appended since. Every entry is durable once written (``sync`` is moot)."""
        if self._locked == 0:
            raise AssertionError("ObjectJournal.append outside ObjectJournal.locked")
        with self._mutex:
            self._publish(records, base=False)

    def rewrite(self, records: list[Record]) -> None:
        """Replace the journal by ``records``: a base entry holding exactly them; the entries before it
        are deleted."""
        if self._locked == 0:
            raise AssertionError("ObjectJournal.rewrite outside ObjectJournal.locked")
        with self._mutex:
            self._publish(records, base=True)
            for name in self.fs.list_names(layout.JOURNAL_LOG_DIR):
                seq = layout.parse_log_name(name)
                if seq is not None and seq < self._seq:
                    self.fs.delete(f"{layout.JOURNAL_LOG_DIR}/{name}")

    def size(self) -> int:
        with self._mutex:
            return self._size

    def close(self) -> None:
        pass
