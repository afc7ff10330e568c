"""The warehouse's file system: the few operations the store needs, on a local disk or an object store,
among them the one primitive a commit needs beyond reading and writing: an exclusive create that
publishes a whole file or nothing (put-if-absent).

- A local (or network, POSIX) file system: a fully written and fsynced unnamed file is hard-linked to
  its final name, which fails atomically if the name exists (the trick Delta Lake's local log store
  uses). ``LocalFS``.
- S3, Google Cloud Storage and Azure Blob storage: their conditional writes (``If-None-Match: *``,
  ``ifGenerationMatch=0``), through obstore (gluecat/store/object_store.py).
- Any other file system pyarrow opens (``filesystem=``, or a URI of another scheme) has no conditional
  write: it is read-only unless the caller declares itself the only writer (``single_writer``).

With ``fsync`` (the default) every local file, and its name in its folder, is on stable storage before
the commit naming it is published, and the commit's log entry is before the call returns, so a commit
survives a power failure; without it a commit survives the death of the process (the operating system
still holds it) but not of the machine. An object store acknowledges a write once it is durable.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import threading
import uuid
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from typing import BinaryIO

import pyarrow.fs as pafs

from gluecat.errors import StorageError

_proc: tuple[int, int | None] | None = None


def _proc_fds() -> int | None:
    """A handle on this process's /proc/self/fd, through which an unnamed (O_TMPFILE) file can be
    linked to a name without privileges; None where there is no such folder or no O_TMPFILE. Opened
    again in a forked child: the parent's handle names the parent's descriptors."""
    global _proc
    pid = os.getpid()
    if _proc is None or _proc[0] != pid:
        fds = None
        if hasattr(os, "O_TMPFILE"):
            with contextlib.suppress(OSError):
                fds = os.open("/proc/self/fd", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        _proc = (pid, fds)
    return _proc[1]


_queues: dict[str, list[int]] = {}
"""Lock files of this process in use, by path: [pid, descriptor, users]. One descriptor a file for the
whole process, so that its own threads and Store instances share a turn (flock excludes other open
files, even of this process: a thread of one Store waiting for another's turn, which waited for it,
would never end). Closed when its last user is done: a process that publishes in many logs over its
life (a server, a test run) would otherwise hold a descriptor for each, past what select() takes."""
_queues_lock = threading.Lock()


@contextlib.contextmanager
def _queue_fd(path: str) -> Iterator[int | None]:
    pid = os.getpid()
    with _queues_lock:
        found = _queues.get(path)
        if found is None or found[0] != pid:  # a forked child opens its own
            try:
                fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
            except OSError:
                fd = None  # a read-only folder: no queue, the exclusive create still decides
            found = [pid, fd, 0] if fd is not None else None
            if found is not None:
                _queues[path] = found
        if found is not None:
            found[2] += 1
    if found is None:
        yield None
        return
    try:
        yield found[1]
    finally:
        with _queues_lock:
            found[2] -= 1
            if found[2] == 0:
                os.close(found[1])
                if _queues.get(path) is found:
                    del _queues[path]


class Unanswered(OSError):
    """A request the store did not answer, after the client's own retries (an object store down or
    unreachable): it says nothing of the file, which may be whole."""


class WarehouseFS:
    """A warehouse root on some file system, with paths relative to that root ("rel" paths, always
    with "/"). Every method may raise OSError for a failure of the file system itself; a missing file is
    FileNotFoundError."""

    local: bool = False
    """A POSIX file system (the transaction journal appends and locks there)."""
    requests_may_land_late: bool = False
    """A request that failed may still take effect later (an object store's, given up on by its client
    while the store still works on it); elsewhere a call that failed did nothing."""
    listing_is_cheap: bool = False
    """One listing costs no more than one look at a name (an object store's LIST returns up to a
    thousand names in one request; a local folder of a million entries is slow to list)."""
    fsync: bool = True
    parallelism: int = 1
    """How many reads are worth making at once (object stores: many; local disks: one)."""
    takes_turns: bool = False
    """Writers of a busy log, on any machine, offer each other turns (gluecat/store/turns.py): an
    object store's. A local disk's queue on their machine instead (``queued``)."""

    def uri(self, rel: str) -> str:
        """A fully qualified name of a file, for messages."""
        raise NotImplementedError

    def exists(self, rel: str) -> bool:
        raise NotImplementedError

    def read_bytes(self, rel: str) -> bytes:
        raise NotImplementedError

    def read_many(self, rels: Sequence[str]) -> list[bytes | None]:
        """The bytes of each file (None for one that is missing), read at once where that is faster."""
        if self.parallelism <= 1 or len(rels) <= 1:
            return [self.read_or_none(r) for r in rels]
        with ThreadPoolExecutor(min(self.parallelism, len(rels))) as pool:
            return list(pool.map(self.read_or_none, rels))

    def read_or_none(self, rel: str) -> bytes | None:
        """The bytes of a file, or None if it is missing."""
        try:
            return self.read_bytes(rel)
        except FileNotFoundError:
            return None

    def write_new(self, rel: str, data: bytes) -> None:
        """Write a file under a name nobody else uses (data files carry a random id in their name)."""
        raise NotImplementedError

    def publish(self, rel: str, data: bytes) -> bool:
        """Create ``rel`` holding exactly ``data`` if no file has that name; False if one already has.

        Readers see either no file or the whole file. False may also mean that this very call's write
        landed and a retry of it (by the file system's client) then found it: a caller that must know
        reads the name back. An OSError escaping from here means the outcome is unknown: the caller
        must re-read the name to learn whether its content is there.
        """
        raise NotImplementedError

    def replace(self, rel: str, data: bytes) -> None:
        """Put ``data`` in place of the file ``rel`` atomically: readers see the old or the new content."""
        raise NotImplementedError

    def list_names(self, rel_dir: str) -> list[str]:
        """Names of the files directly in a folder, or [] if it does not exist."""
        raise NotImplementedError

    def list_after(self, rel_dir: str, after: str) -> list[str]:
        """Names of the files directly in a folder that sort after ``after``, in order."""
        return sorted(n for n in self.list_names(rel_dir) if n > after)

    def list_folders(self, rel_dir: str) -> list[str]:
        """Names of the folders directly in a folder (on an object store: the common prefixes)."""
        raise NotImplementedError

    def delete(self, rel: str) -> None:
        """Delete a file; one that is gone already counts as deleted."""
        raise NotImplementedError

    def mtime(self, rel: str) -> datetime | None:
        """When a file was last written (None if it is missing)."""
        raise NotImplementedError

    def mkdirs(self, rel: str) -> None:
        """Make a folder and its parents (nothing to do on an object store)."""

    def queued(self, rel_dir: str) -> contextlib.AbstractContextManager[bool]:
        """Wait for the other writers of this machine that publish in ``rel_dir`` (True once this one's
        turn has come; False where there is no such queue). Only an economy: a publication is decided
        by the exclusive create alone; queued, a writer that would lose sees the name taken before it
        writes and syncs its entry."""
        return contextlib.nullcontext(False)

    def sync_folder(self, rel_dir: str) -> None:
        """With ``fsync``, put the names of the files written in a local folder on stable storage (a
        file's fsync does not cover its name)."""

    def close(self) -> None:
        """Let go of what the file system holds (connections, descriptors)."""


class LocalFS(WarehouseFS):
    """A warehouse in a folder of a POSIX file system."""

    local = True

    def __init__(self, root: str, *, fsync: bool = True) -> None:
        self.root = root
        self.fsync = fsync
        self.fs = pafs.LocalFileSystem()

    @contextlib.contextmanager
    def queued(self, rel_dir: str) -> Iterator[bool]:
        with _queue_fd(self.full(f"{rel_dir}/publish.lock")) as fd:
            if fd is None:
                yield False
                return
            fcntl.flock(fd, fcntl.LOCK_EX)
            try:
                yield True
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)

    def full(self, rel: str) -> str:
        return f"{self.root}/{rel}"

    def uri(self, rel: str) -> str:
        return "file://" + self.full(rel)

    def mkdirs(self, rel: str) -> None:
        os.makedirs(self.full(rel), exist_ok=True)

    def exists(self, rel: str) -> bool:
        return os.path.exists(self.full(rel))

    def read_bytes(self, rel: str) -> bytes:
        with open(self.full(rel), "rb") as f:
            return f.read()

    def write_new(self, rel: str, data: bytes) -> None:
        with open(self.full(rel), "xb") as f:
            self._write(f, data)

    def publish(self, rel: str, data: bytes) -> bool:
        path = self.full(rel)
        proc_fds = _proc_fds()
        if proc_fds is not None:
            try:
                fd = os.open(os.path.dirname(path), os.O_TMPFILE | os.O_WRONLY, 0o644)
            except OSError as e:
                if e.errno not in (errno.EOPNOTSUPP, errno.EISDIR, errno.EINVAL):
                    raise
            else:
                return self._publish_unnamed(fd, proc_fds, path, data)
        return self._publish_via_temporary(path, data)

    def _publish_unnamed(self, fd: int, proc_fds: int, path: str, data: bytes) -> bool:
        # An unnamed file given its name once written: no temporary name to create and delete. On ext4
        # a create searches past recently deleted inodes, so deleting a temporary file a commit made
        # every create slower (0.1 to 1 ms a commit on the test machine).
        try:
            with open(fd, "wb", closefd=False) as f:
                self._write(f, data)
            os.link(str(fd), path, src_dir_fd=proc_fds, follow_symlinks=True)
        except FileExistsError:
            return False
        finally:
            os.close(fd)
        self._sync_folder(os.path.dirname(path))
        return True

    def _publish_via_temporary(self, path: str, data: bytes) -> bool:
        tmp = f"{os.path.dirname(path)}/.tmp-{uuid.uuid4().hex}"
        self._write_temporary(tmp, data)
        try:
            os.link(tmp, path)
        except FileExistsError:
            return False
        finally:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        self._sync_folder(os.path.dirname(path))
        return True

    def replace(self, rel: str, data: bytes) -> None:
        path = self.full(rel)
        tmp = f"{os.path.dirname(path)}/.tmp-{uuid.uuid4().hex}"
        self._write_temporary(tmp, data)
        try:
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        self._sync_folder(os.path.dirname(path))

    def _write_temporary(self, tmp: str, data: bytes) -> None:
        """Write ``data`` to the new file ``tmp``, deleted again if the write fails (a full disk, a
        failed sync): a long-lived process must not leave a file behind for each failure."""
        try:
            with open(tmp, "xb") as f:
                self._write(f, data)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise

    def _write(self, f: BinaryIO, data: bytes) -> None:
        """Write ``data`` to a new local file and, with ``fsync``, onto stable storage."""
        f.write(data)
        if self.fsync:
            f.flush()
            os.fsync(f.fileno())

    def sync_folder(self, rel_dir: str) -> None:
        self._sync_folder(self.full(rel_dir))

    def _sync_folder(self, folder: str) -> None:
        if not self.fsync:
            return
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)

    def list_names(self, rel_dir: str) -> list[str]:
        try:
            with os.scandir(self.full(rel_dir)) as it:
                return [e.name for e in it if not e.is_dir(follow_symlinks=False)]
        except (FileNotFoundError, NotADirectoryError):
            return []

    def list_folders(self, rel_dir: str) -> list[str]:
        try:
            with os.scandir(self.full(rel_dir)) as it:
                return [e.name for e in it if e.is_dir(follow_symlinks=False)]
        except (FileNotFoundError, NotADirectoryError):
            return []

    def delete(self, rel: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.full(rel))

    def mtime(self, rel: str) -> datetime | None:
        try:
            return datetime.fromtimestamp(os.stat(self.full(rel)).st_mtime, UTC)
        except FileNotFoundError:
            return None


class PyArrowFS(WarehouseFS):
    """A warehouse on a file system pyarrow opens that offers no exclusive create: readable by all,
    writable only by a caller that promises to be the only writer."""

    def __init__(self, fs: pafs.FileSystem, root: str, *, single_writer: bool) -> None:
        self.fs = fs
        self.root = root
        self.single_writer = single_writer
        self.listing_is_cheap = not isinstance(fs, pafs.LocalFileSystem)

    def full(self, rel: str) -> str:
        return f"{self.root}/{rel}"

    def uri(self, rel: str) -> str:
        return f"{self.fs.type_name}://{self.full(rel)}"

    def mkdirs(self, rel: str) -> None:
        self.fs.create_dir(self.full(rel), recursive=True)

    def exists(self, rel: str) -> bool:
        return bool(self.fs.get_file_info(self.full(rel)).type != pafs.FileType.NotFound)

    def read_bytes(self, rel: str) -> bytes:
        with self.fs.open_input_stream(self.full(rel)) as f:
            return bytes(f.read())

    def write_new(self, rel: str, data: bytes) -> None:
        with self.fs.open_output_stream(self.full(rel)) as f:
            f.write(data)

    def publish(self, rel: str, data: bytes) -> bool:
        if not self.single_writer:
            raise StorageError(
                f"the warehouse {self.uri('')} is on a file system ({self.fs.type_name}) without an "
                "exclusive create, so gluecat cannot commit to it safely with concurrent writers; open "
                "it with single_writer=True if this process is the only writer, or use an s3://, gs:// or "
                "az:// URI, whose conditional writes gluecat commits with (see docs/storage.md)"
            )
        if self.exists(rel):
            return False
        self.write_new(rel, data)
        return True

    def replace(self, rel: str, data: bytes) -> None:
        self.write_new(rel, data)

    def list_names(self, rel_dir: str) -> list[str]:
        sel = pafs.FileSelector(self.full(rel_dir), allow_not_found=True)
        return [i.base_name for i in self.fs.get_file_info(sel) if i.type != pafs.FileType.Directory]

    def list_folders(self, rel_dir: str) -> list[str]:
        sel = pafs.FileSelector(self.full(rel_dir), allow_not_found=True)
        return [i.base_name for i in self.fs.get_file_info(sel) if i.type == pafs.FileType.Directory]

    def delete(self, rel: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.fs.delete_file(self.full(rel))

    def mtime(self, rel: str) -> datetime | None:
        info = self.fs.get_file_info(self.full(rel))
        if info.type == pafs.FileType.NotFound or info.mtime is None:
            return None
        when: datetime = info.mtime
        return when if when.tzinfo is not None else when.replace(tzinfo=UTC)
