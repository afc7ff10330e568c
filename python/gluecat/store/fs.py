"""The warehouse's file system: pyarrow file systems for reading and writing, plus the one primitive a
commit needs beyond them, an exclusive create that publishes a whole file or nothing.

pyarrow's file systems have no conditional (put-if-absent) write, so the publish primitive is provided
here per file system kind: on a local disk a fully written and fsynced temporary file is hard-linked to
its final name, which fails atomically if the name exists (the same trick Delta Lake's local log store
uses). File systems without such a primitive are opened read-only unless the caller declares itself the
only writer; docs/storage.md says what an object store must offer.

With ``fsync`` (the default) every file is on stable storage before the commit naming it is published,
so a commit survives a power failure; without it a commit survives the death of the process (the
operating system still holds it) but not of the machine.
"""

from __future__ import annotations

import contextlib
import errno
import os
import uuid
from dataclasses import dataclass

import pyarrow.fs as pafs

from gluecat.errors import StorageError


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
                f.write(data)
                if self.fsync:
                    f.flush()
                    os.fsync(f.fileno())
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
            tmp = f"{os.path.dirname(path)}/.tmp-{uuid.uuid4().hex}"
            with open(tmp, "xb") as f:
                f.write(data)
                if self.fsync:
                    f.flush()
                    os.fsync(f.fileno())
            try:
                os.link(tmp, path)
            except FileExistsError:
                return False
            except OSError as e:
                if e.errno == errno.EEXIST:
                    return False
                raise
            finally:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
            return True
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
