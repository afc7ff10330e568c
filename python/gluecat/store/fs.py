"""The warehouse's file system: pyarrow file systems for reading and writing, plus the one primitive a
commit needs beyond them, an exclusive create that publishes a whole file or nothing.

pyarrow's file systems have no conditional (put-if-absent) write, so the publish primitive is provided
here per file system kind: on a local disk a fully written and fsynced temporary file is hard-linked to
its final name, which fails atomically if the name exists (the same trick Delta Lake's local log store
uses). File systems without such a primitive are opened read-only unless the caller declares itself the
only writer; docs/storage.md says what an object store must offer.

With ``fsync`` (the default) every file, and its name in its folder, is on stable storage before the
commit naming it is published, and the commit's log entry is before the call returns, so a commit
survives a power failure; without it a commit survives the death of the process (the operating system
still holds it) but not of the machine.
"""

from __future__ import annotations

import contextlib
import errno
import os
import uuid
from dataclasses import dataclass
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


@dataclass(frozen=True)
class WarehouseFS:
    """A warehouse root on some file system, with paths relative to that root."""

    fs: pafs.FileSystem
    root: str
    local: bool
    single_writer: bool = False
    fsync: bool = True

    @classmethod
    def open(
        cls,
        warehouse: str,
        *,
        single_writer: bool = False,
        fsync: bool = True,
        filesystem: pafs.FileSystem | None = None,
    ) -> WarehouseFS:
        """Resolve a local path or a URI (file://, s3://, gs://, ...) to a file system and root; or use
        ``filesystem`` (e.g. an S3FileSystem with its own credentials) with ``warehouse`` a path in it."""
        if filesystem is not None:
            fs, root = filesystem, warehouse
        elif "://" in warehouse:
            fs, root = pafs.FileSystem.from_uri(warehouse)
        else:
            fs, root = pafs.LocalFileSystem(), os.path.abspath(warehouse)
        local = isinstance(fs, pafs.LocalFileSystem)
        if local:
            root = os.path.abspath(root)
        return cls(fs=fs, root=root.rstrip("/"), local=local, single_writer=single_writer, fsync=fsync)

    def full(self, rel: str) -> str:
        return f"{self.root}/{rel}"

    def uri(self, rel: str) -> str:
        """A fully qualified name of a file, for messages."""
        return ("file://" if self.local else f"{self.fs.type_name}://") + self.full(rel)

    def mkdirs(self, rel: str) -> None:
        self.fs.create_dir(self.full(rel), recursive=True)

    def exists(self, rel: str) -> bool:
        if self.local:
            return os.path.exists(self.full(rel))
        return self.fs.get_file_info(self.full(rel)).type != pafs.FileType.NotFound

    def read_bytes(self, rel: str) -> bytes:
        if self.local:
            with open(self.full(rel), "rb") as f:
                return f.read()
        with self.fs.open_input_stream(self.full(rel)) as f:
            return bytes(f.read())

    def write_new(self, rel: str, data: bytes) -> None:
        """Write a file under a name nobody else uses (data files carry a random id in their name)."""
        if self.local:
            path = self.full(rel)
            with open(path, "xb") as f:
                self._write(f, data)
            return
        with self.fs.open_output_stream(self.full(rel)) as f:
            f.write(data)

    def publish(self, rel: str, data: bytes) -> bool:
        """Create ``rel`` holding exactly ``data`` if no file has that name; False if one already has.

        Readers see either no file or the whole file. An OSError escaping from here means the outcome
        is unknown: the caller must re-read the name to learn whether its content is there.
        """
        if self.local:
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
        if not self.single_writer:
            raise StorageError(
                f"the warehouse {self.uri('')} is on a file system ({self.fs.type_name}) without an "
                "exclusive create, so gluecat cannot commit to it safely with concurrent writers; open "
                "it with single_writer=True if this process is the only writer (see docs/storage.md)"
            )
        if self.exists(rel):
            return False
        with self.fs.open_output_stream(self.full(rel)) as f:
            f.write(data)
        return True

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
        with open(tmp, "xb") as f:
            self._write(f, data)
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
        """Put ``data`` in place of the file ``rel`` atomically: readers see the old or the new content."""
        if self.local:
            path = self.full(rel)
            tmp = f"{os.path.dirname(path)}/.tmp-{uuid.uuid4().hex}"
            with open(tmp, "xb") as f:
                self._write(f, data)
            try:
                os.replace(tmp, path)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
                raise
            self._sync_folder(os.path.dirname(path))
            return
        with self.fs.open_output_stream(self.full(rel)) as f:  # object stores replace whole objects
            f.write(data)

    def _write(self, f: BinaryIO, data: bytes) -> None:
        """Write ``data`` to a new local file and, with ``fsync``, onto stable storage."""
        f.write(data)
        if self.fsync:
            f.flush()
            os.fsync(f.fileno())

    def sync_folder(self, rel_dir: str) -> None:
        """With ``fsync``, put the names of the files written in a local folder on stable storage (a
        file's fsync does not cover its name)."""
        if self.local:
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
        """Names of the files directly in a folder, or [] if it does not exist."""
        if self.local:
            try:
                return os.listdir(self.full(rel_dir))
            except FileNotFoundError:
                return []
        sel = pafs.FileSelector(self.full(rel_dir), allow_not_found=True)
        return [info.base_name for info in self.fs.get_file_info(sel)]

    def delete(self, rel: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.fs.delete_file(self.full(rel))
