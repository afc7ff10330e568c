"""The commit log's entries as typed values, and the one place where an entry is checked.

``parse`` turns an entry's bytes into an ``Entry`` of typed actions and runs every check an entry gets:
its shape and field types, the version its name says, the format, its own checksum, its link to the
entry before it, and (for each action) the names of the files it brings in, which must carry their
checksums. ``encode`` is the way back. A new kind of action is a class with a ``KEY`` registered with
``@action``: its fields are read through ``Fields``, which raises StorageError naming the entry, so no
action can skip the checks.

Adding an action: a frozen dataclass subclassing ``Action`` with a ``KEY``, ``to_json``, ``from_json``
(reading its fields through ``Fields``) and ``files()`` if it brings data files in, registered with
``@action``; then ``Store._apply_entry`` says what it does to a snapshot. An entry holding an action the
store does not apply is refused there, never skipped, and one holding an unknown key is refused here.

An entry of format 4 ends with its own checksum: ``..., "checksum": "<xxh3-128 of the entry's bytes
before that member, with the closing brace>"}``, and names the checksum of the entry before it in
``prev``; an expired entry is replaced by a stub that keeps its version, commit id, time and place in
that chain (docs/storage.md).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar

import xxhash

from gluecat.errors import StorageError
from gluecat.store import files, layout
from gluecat.store.snapshot import Key, Link

CHECKSUMMED_FORMAT = 4
"""The first format whose entries carry their own checksum; every later entry of such a log must too."""
ROW_SETS_FORMAT = 5
"""The first format with governed tables: a table's objects as a row set of their own (its key ends in
``OBJECTS``), records carried inline, and transaction commits."""
TABLE_LOGS_FORMAT = 6
"""The first format with a log per table: markers (``decided_by``) in a table's log of commits the root
log decides, and ``marks`` actions in the root naming them."""
OBJECTS = "objects"

_CHECKSUM_MEMBER = b',"checksum":"'
_TRAILER = len(_CHECKSUM_MEMBER) + 32 + 2  # the member, 32 hex digits, the closing quote and brace


def checksum(data: bytes) -> str:
    """The checksum the store records for bytes: XXH3-128 in hex (fast enough to verify every read)."""
    return xxhash.xxh3_128_hexdigest(data)


def verify_named(data: bytes, path: str, uri: str) -> None:
    """Check a file's bytes against the checksum its name carries (names without one are older formats)."""
    expected = layout.name_checksum(path)
    if expected is not None and checksum(data) != expected:
        raise StorageError(
            f"{uri}: damaged: its content ({len(data)} bytes) does not match the checksum its name records"
        )


class Fields:
    """An action's JSON object, read field by field: anything missing or of the wrong type is a
    StorageError naming the entry and the action."""

    def __init__(
        self,
        doc: dict[str, Any],
        where: str,
        version: int,
        checksummed: bool,
        format: int = 0,
        layout: layout.LogLayout = layout.ROOT_LOG,
    ) -> None:
        self.doc = doc
        self.where = where
        self.version = version
        self.checksummed = checksummed
        self.format = format
        """The storage format of the entry (0 where it does not matter)."""
        self.layout = layout
        """The log the entry is in."""

    def fail(self, why: str) -> StorageError:
        return StorageError(f"{self.where}: {why}")

    def text(self, key: str) -> str:
        value = self.doc.get(key)
        if not isinstance(value, str):
            raise self.fail(f"field {key!r} is not a string ({value!r:.60})")
        return value

    def opt_text(self, key: str) -> str | None:
        return None if self.doc.get(key) is None else self.text(key)

    def count(self, key: str) -> int:
        value = self.doc.get(key)
        if type(value) is not int or value < 0:
            raise self.fail(f"field {key!r} is not a count ({value!r:.60})")
        return value

    def opt_count(self, key: str) -> int | None:
        return None if key not in self.doc else self.count(key)

    def table(self, key: str = "table") -> Key:
        """A row set's key: [database, table] for its partitions, [database, table, "objects"] for a
        governed table's objects (format 5)."""
        value = self.doc.get(key)
        if (
            not isinstance(value, list)
            or not 2 <= len(value) <= 3
            or not all(isinstance(v, str) for v in value)
            or (len(value) == 3 and (value[2] != OBJECTS or self.format < ROW_SETS_FORMAT))
        ):
            raise self.fail(
                f'field {key!r} is not [database, name] or [database, name, "objects"] ({value!r:.60})'
            )
        return tuple(value)

    def text_list(self, key: str) -> list[str]:
        value = self.doc.get(key)
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise self.fail(f"field {key!r} is not a list of strings ({value!r:.60})")
        return value

    def data_file(self, key: str) -> str:
        """The name of a data file: in the data folder, and with its checksum in an entry that has one."""
        path = self.text(key)
        if not layout.is_data_path(path):
            raise self.fail(f"field {key!r} is not a data file name ({path!r:.80})")
        if self.checksummed and layout.name_checksum(path) is None:
            raise self.fail(f"field {key!r} names a data file without its checksum ({path!r:.80})")
        return path

    def segment(self, path: str) -> str:
        """A segment name: a data file, or a segment carried inline by some entry."""
        entry = layout.inline_segment_entry(path)
        if entry is None:
            if not layout.is_data_path(path) or (self.checksummed and layout.name_checksum(path) is None):
                raise self.fail(f"{path!r:.80} is not a segment name")
        elif layout.parse_log_path(entry) is None:
            raise self.fail(f"{path!r:.80} is not a segment name")
        return path


class Action:
    """One change a commit makes. Subclasses are frozen dataclasses registered with ``@action``."""

    KEY: ClassVar[str]
    """The member that names the action's kind in its JSON object."""

    def to_json(self) -> dict[str, Any]:
        raise NotImplementedError

    @classmethod
    def from_json(cls, f: Fields) -> Action:
        raise NotImplementedError

    def files(self) -> list[str]:
        """The data files this action brings into the state (kept by expiry while a version needs them)."""
        return []


_ACTIONS: dict[str, type[Action]] = {}
A = TypeVar("A", bound=type[Action])


def action(cls: A) -> A:
    """Register an action class under its KEY."""
    if cls.KEY in _ACTIONS:
        raise ValueError(f"two actions have the key {cls.KEY!r}")
    _ACTIONS[cls.KEY] = cls
    return cls


@action
@dataclass(frozen=True)
class AddRecords(Action):
    """Records put or deleted, in a record file."""

    KEY: ClassVar[str] = "records"
    path: str

    def to_json(self) -> dict[str, Any]:
        return {"records": self.path}

    @classmethod
    def from_json(cls, f: Fields) -> AddRecords:
        return cls(f.data_file("records"))

    def files(self) -> list[str]:
        return [self.path]


@dataclass(frozen=True)
class Inline:
    """A segment carried inside its entry: base64 text, how it is encoded (None: format 2's Parquet),
    and its uncompressed size."""

    data: str
    encoding: str | None
    size: int | None


@action
@dataclass(frozen=True)
class AddSegment(Action):
    """A partition segment added to a table: a data file, or carried inline (path ``log/N.json#i``)."""

    KEY: ClassVar[str] = "add_segment"
    path: str
    table: Key
    rows: int
    inline: Inline | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"add_segment": self.path, "table": list(self.table), "rows": self.rows}
        if self.inline is not None:
            out["inline"] = files.Base64Text(self.inline.data)
            if self.inline.encoding is not None:
                out["inline_encoding"] = self.inline.encoding
                out["inline_size"] = self.inline.size
        return out

    @classmethod
    def from_json(cls, f: Fields) -> AddSegment:
        path = f.text("add_segment")
        inline = None
        if "inline" in f.doc:
            if path != f.layout.inline_segment_path(f.version, _inline_index(path)):
                raise f.fail(f"an inline segment of version {f.version} is named {path!r:.80}")
            inline = Inline(f.text("inline"), f.opt_text("inline_encoding"), f.opt_count("inline_size"))
        else:
            f.data_file("add_segment")
        return cls(path, f.table(), f.count("rows"), inline)

    def files(self) -> list[str]:
        return [] if self.inline is not None else [self.path]


def _inline_index(path: str) -> int:
    _, _, n = path.partition("#")
    return int(n) if n.isascii() and n.isdigit() else -1


@action
@dataclass(frozen=True)
class RemoveSegment(Action):
    """A segment taken out of a table's list (its rows no longer count)."""

    KEY: ClassVar[str] = "remove_segment"
    path: str
    table: Key

    def to_json(self) -> dict[str, Any]:
        return {"remove_segment": self.path, "table": list(self.table)}

    @classmethod
    def from_json(cls, f: Fields) -> RemoveSegment:
        return cls(f.segment(f.text("remove_segment")), f.table())


@action
@dataclass(frozen=True)
class MergeSegments(Action):
    """A contiguous run of a table's segments replaced, in its place, by one segment holding their rows."""

    KEY: ClassVar[str] = "merge_segments"
    run: tuple[str, ...]
    into: str
    table: Key
    rows: int

    def to_json(self) -> dict[str, Any]:
        return {
            "merge_segments": list(self.run),
            "into": self.into,
            "table": list(self.table),
            "rows": self.rows,
        }

    @classmethod
    def from_json(cls, f: Fields) -> MergeSegments:
        run = f.doc.get("merge_segments")
        if not isinstance(run, list) or not run or not all(isinstance(p, str) for p in run):
            raise f.fail(f"field 'merge_segments' is not a list of segment names ({run!r:.60})")
        return cls(tuple(f.segment(p) for p in run), f.data_file("into"), f.table(), f.count("rows"))

    def files(self) -> list[str]:
        return [self.into]


@action
@dataclass(frozen=True)
class InlineRecords(Action):
    """Records put or deleted, carried in the entry (format 5): a small commit's record changes need no
    file of their own. Each is (kind, key, the document's canonical JSON or None for a deletion)."""

    KEY: ClassVar[str] = "inline_records"
    records: tuple[tuple[str, Key, str | None], ...]

    def to_json(self) -> dict[str, Any]:
        return {"inline_records": [[kind, list(key), doc] for kind, key, doc in self.records]}

    @classmethod
    def from_json(cls, f: Fields) -> InlineRecords:
        value = f.doc.get("inline_records")
        if not isinstance(value, list):
            raise f.fail(f"field 'inline_records' is not a list ({value!r:.60})")
        records = []
        for item in value:
            if (
                not isinstance(item, list)
                or len(item) != 3
                or not isinstance(item[0], str)
                or not isinstance(item[1], list)
                or not all(isinstance(k, str) for k in item[1])
                or not (item[2] is None or isinstance(item[2], str))
            ):
                raise f.fail(f"an inline record is not [kind, [key, ...], document or null] ({item!r:.80})")
            records.append((item[0], tuple(item[1]), item[2]))
        return cls(tuple(records))


@action
@dataclass(frozen=True)
class CommitTransaction(Action):
    """Names the Lake Formation transaction whose writes the entry's other actions are (format 5), and
    what it changed, for the conflict checks of transactions committed after it: the tables whose
    definitions it wrote, and the partitions (identities) whose objects it changed, by table. It
    changes nothing in the state by itself."""

    KEY: ClassVar[str] = "commit_transaction"
    transaction: str
    read_version: int
    """The version the transaction read (its start)."""
    tables: tuple[Key, ...] = ()
    objects: tuple[tuple[Key, tuple[str, ...]], ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "commit_transaction": self.transaction,
            "read_version": self.read_version,
            "tables": [list(t) for t in self.tables],
            "objects": [{"table": list(t), "partitions": list(p)} for t, p in self.objects],
        }

    @classmethod
    def from_json(cls, f: Fields) -> CommitTransaction:
        tables = f.doc.get("tables")
        objects = f.doc.get("objects")
        if not isinstance(tables, list) or not isinstance(objects, list):
            raise f.fail("fields 'tables' and 'objects' are not lists")
        table_keys = tuple(
            Fields({"table": t}, f.where, f.version, f.checksummed, f.format).table() for t in tables
        )
        changed = []
        for item in objects:
            if not isinstance(item, dict):
                raise f.fail(f"an entry of 'objects' is not an object ({item!r:.60})")
            sub = Fields(item, f.where, f.version, f.checksummed, f.format)
            changed.append((sub.table(), tuple(sub.text_list("partitions"))))
        return cls(f.text("commit_transaction"), f.count("read_version"), table_keys, tuple(changed))


@action
@dataclass(frozen=True)
class Marks(Action):
    """In a root entry (format 6): the commit also changed a table's log, with the marker it published
    there as ``version``; the marker counts exactly if this entry is published. It changes nothing in
    the root's state."""

    KEY: ClassVar[str] = "marks"
    table: Key
    version: int

    def to_json(self) -> dict[str, Any]:
        return {"marks": list(self.table), "version": self.version}

    @classmethod
    def from_json(cls, f: Fields) -> Marks:
        if f.format < TABLE_LOGS_FORMAT:
            raise f.fail(f"a 'marks' action in an entry of format {f.format}")
        return cls(f.table("marks"), f.count("version"))


@dataclass(frozen=True)
class Decision:
    """Where the root log decides a table log's marker: the marker counts exactly if the root's entry of
    ``version`` is the commit ``commit_id``."""

    version: int
    commit_id: str


@dataclass(frozen=True)
class Entry:
    """A log entry: one commit, or the stub an expiry left in its place (``expired`` set)."""

    version: int
    commit_id: str
    timestamp_us: int
    operation: str
    actions: tuple[Action, ...] = ()
    prev: str = ""
    """The chain value of the entry before (format 4; "" for version 0 or where it was not known)."""
    secret: str | None = None
    expired: int | None = None
    """For a stub: the checkpoint the expiry that wrote it kept (a newer one may exist)."""
    chain: str = ""
    """This entry's place in the chain: its checksum (for a stub, that of the entry it replaced; before
    format 4, the checksum of the file)."""
    format: int = layout.FORMAT_VERSION
    decided_by: Decision | None = None
    """For a marker in a table's log (format 6): the root entry that decides whether it counts."""

    @property
    def link(self) -> Link:
        return Link(self.chain, self.format >= CHECKSUMMED_FORMAT)

    def files(self) -> list[str]:
        return [p for a in self.actions for p in a.files()]

    def stub(self, checkpoint: int) -> Entry:
        """The stub an expiry puts in this entry's place."""
        return Entry(
            version=self.version,
            commit_id=self.commit_id,
            timestamp_us=self.timestamp_us,
            operation=self.operation,
            prev=self.prev,
            expired=checkpoint,
            chain=self.chain,
            decided_by=self.decided_by,
        )


def encode(entry: Entry) -> tuple[bytes, str]:
    """An entry's bytes (format 4, ending with its checksum) and its chain value."""
    doc: dict[str, Any] = {
        "format": layout.FORMAT_VERSION,
        "version": entry.version,
        "commit_id": entry.commit_id,
        "timestamp_us": entry.timestamp_us,
        "operation": entry.operation,
        "actions": [a.to_json() for a in entry.actions],
        "prev": entry.prev,
    }
    if entry.secret is not None:
        doc["secret"] = entry.secret
    if entry.decided_by is not None:
        doc["decided_by"] = {"version": entry.decided_by.version, "commit_id": entry.decided_by.commit_id}
    if entry.expired is not None:
        doc["expired"] = {"checkpoint": entry.expired}
        doc["replaced"] = entry.chain
    body = files.encode_entry(doc)
    digest = checksum(body)
    return body[:-1] + _CHECKSUM_MEMBER + digest.encode() + b'"}', (
        entry.chain if entry.expired is not None else digest
    )


def _split(data: bytes) -> tuple[bytes, str | None]:
    """The entry's bytes as they were checksummed, and the checksum it ends with (None if none)."""
    if len(data) > _TRAILER and data[-_TRAILER:].startswith(_CHECKSUM_MEMBER) and data.endswith(b'"}'):
        digest = data[-34:-2]
        if all(c in b"0123456789abcdef" for c in digest):
            return data[:-_TRAILER] + b"}", digest.decode()
    return data, None


def parse(
    data: bytes,
    name: str,
    version: int,
    after: Link | None = None,
    where: layout.LogLayout = layout.ROOT_LOG,
) -> Entry:
    """The entry ``name`` (version ``version`` of the log ``where``), checked; ``after`` is the link of
    the entry before it when the caller holds it, so that a replaced or re-created entry is found out."""
    body, digest = _split(data)
    if digest is not None and checksum(body) != digest:
        raise StorageError(f"{name}: damaged: the entry does not match the checksum it ends with")
    try:
        doc = json.loads(body)
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise StorageError(f"{name}: not a gluecat log entry (invalid JSON: {e})") from e
    if not isinstance(doc, dict) or not isinstance(doc.get("actions"), list):
        raise StorageError(f"{name}: not a gluecat log entry (no actions list)")
    fmt = doc.get("format")
    if type(fmt) is not int or fmt < 1 or fmt > layout.FORMAT_VERSION:
        raise StorageError(
            f"{name}: written in storage format {fmt!r}, this gluecat reads format "
            f"{layout.FORMAT_VERSION} or older"
        )
    checksummed = digest is not None
    if not checksummed and (fmt >= CHECKSUMMED_FORMAT or (after is not None and after.strict)):
        raise StorageError(
            f"{name}: damaged: the entry carries no checksum, and every entry of this log from format "
            f"{CHECKSUMMED_FORMAT} on must"
        )
    if checksummed and fmt < CHECKSUMMED_FORMAT:
        raise StorageError(f"{name}: damaged: an entry of format {fmt} with a checksum")
    if doc.get("version") != version or type(doc.get("version")) is not int:
        raise StorageError(f"{name}: says it is version {doc.get('version')!r:.40}, its name says {version}")
    head = Fields(doc, name, version, checksummed)
    commit_id = head.text("commit_id")
    timestamp_us = head.count("timestamp_us")
    operation = head.text("operation")
    secret = head.opt_text("secret")
    prev = head.text("prev") if checksummed else ""
    if after is not None and after.chain and checksummed and prev != after.chain:
        raise StorageError(
            f"{name}: damaged log: the entry does not follow the version {version - 1} this process "
            "read (that entry was replaced, or this one was written over a gap)"
        )
    decided_by = None
    if "decided_by" in doc:
        ref = doc["decided_by"]
        if fmt < TABLE_LOGS_FORMAT or not isinstance(ref, dict):
            raise StorageError(f"{name}: not a gluecat log entry (a malformed decided_by)")
        ref_fields = Fields(ref, name, version, checksummed)
        decided_by = Decision(ref_fields.count("version"), ref_fields.text("commit_id"))
    expired = None
    chain = digest if digest is not None else checksum(data)
    if "expired" in doc:
        stub = doc["expired"]
        if not checksummed or not isinstance(stub, dict) or doc["actions"]:
            raise StorageError(f"{name}: not a gluecat log entry (a malformed expired entry)")
        expired = Fields(stub, name, version, True).count("checkpoint")
        chain = head.text("replaced")
    actions = []
    for i, obj in enumerate(doc["actions"]):
        if not isinstance(obj, dict):
            raise StorageError(f"{name}: action {i}: not an object")
        kinds = [k for k in obj if k in _ACTIONS]
        if len(kinds) != 1:
            raise StorageError(f"{name}: action {i}: unknown action {sorted(obj)!r:.100}")
        fields = Fields(obj, f"{name}: action {i}", version, checksummed, fmt, where)
        actions.append(_ACTIONS[kinds[0]].from_json(fields))
    return Entry(
        version=version,
        commit_id=commit_id,
        timestamp_us=timestamp_us,
        operation=operation,
        actions=tuple(actions),
        prev=prev,
        secret=secret,
        expired=expired,
        chain=chain,
        format=fmt,
        decided_by=decided_by,
    )


def read(
    read_bytes: Callable[[str], bytes],
    uri: Callable[[str], str],
    version: int,
    where: layout.LogLayout = layout.ROOT_LOG,
) -> Entry:
    """Entry ``version`` read through a file system's ``read_bytes`` (missing: StorageError naming it)."""
    path = where.log_path(version)
    try:
        data = read_bytes(path)
    except FileNotFoundError as e:
        raise StorageError(f"{uri(path)}: the log entry of version {version} is missing") from e
    return parse(data, uri(path), version, where=where)
