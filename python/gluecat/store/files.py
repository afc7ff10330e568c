"""Reading and writing the store's files: log entries (JSON), record files (Parquet) and the segments a
log entry carries inline (a compressed Arrow IPC stream).

A record file holds rows (kind, key, doc): a document as canonical JSON text, or null for a deletion.
Commits write small record files; checkpoints write one with the whole folded state plus a row per live
partition segment. Anything unreadable raises StorageError naming the file, never an empty result.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterable
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from gluecat.errors import StorageError
from gluecat.store import codec
from gluecat.store.layout import FORMAT_VERSION
from gluecat.store.snapshot import Key, Raw

RECORD_SCHEMA = pa.schema(
    [
        pa.field("kind", pa.string(), nullable=False),
        pa.field("key", pa.list_(pa.string()), nullable=False),
        pa.field("doc", pa.large_string()),
    ],
    metadata={b"gluecat.format": str(FORMAT_VERSION).encode()},
)

SEGMENT_KIND = "$segment"
"""Checkpoint rows naming a live partition segment: key = table key + (path,)."""


class Base64Text(str):
    """Text of the base64 alphabet only, which a JSON string holds as it is: ``encode_entry`` splices it
    into the entry's text instead of escaping it a character at a time (for an inline segment, a third
    of encoding a commit's entry)."""


_SLOT = "\x00"
_SLOT_JSON = json.dumps(_SLOT)


def encode_entry(entry: dict[str, Any]) -> bytes:
    spliced: list[str] = []
    actions = []
    for action in entry.get("actions") or ():
        text = action.get("inline")
        if type(text) is Base64Text:
            action = {**action, "inline": _SLOT}
            spliced.append(text)
        actions.append(action)
    if spliced:
        parts = _dumps_entry({**entry, "actions": actions}).split(_SLOT_JSON)
        if len(parts) == len(spliced) + 1:  # else some other string of the entry is the slot
            out = [parts[0]]
            for text, part in zip(spliced, parts[1:], strict=True):
                out += ['"', text, '"', part]
            return "".join(out).encode()
    return _dumps_entry(entry).encode()


def _dumps_entry(entry: dict[str, Any]) -> str:
    return json.dumps(entry, sort_keys=True, separators=(",", ":"))


def record_table(rows: Iterable[tuple[str, Key, Any | None]]) -> pa.Table:
    kinds: list[str] = []
    keys: list[list[str]] = []
    docs: list[str | None] = []
    for kind, key, doc in rows:
        kinds.append(kind)
        keys.append(list(key))
        docs.append(None if doc is None else doc.text if isinstance(doc, Raw) else codec.dumps(doc))
    return pa.Table.from_arrays(
        [
            pa.array(kinds, pa.string()),
            pa.array(keys, pa.list_(pa.string())),
            pa.array(docs, pa.large_string()),
        ],
        schema=RECORD_SCHEMA,
    )


def to_parquet_bytes(table: pa.Table, metadata: dict[str, str] | None = None, **options: Any) -> bytes:
    if metadata:
        merged = dict(table.schema.metadata or {})
        merged.update({k.encode(): v.encode() for k, v in metadata.items()})
        table = table.replace_schema_metadata(merged)
    buf = io.BytesIO()
    pq.write_table(table, buf, **options)
    return buf.getvalue()


SEGMENT_ROW_GROUP = 8192
ENCODING = b"gluecat.encoding"
"""Field metadata saying how to store a segment column: ``plain`` (values seldom repeat, or are too
small for a dictionary to gain anything) or ``text`` (free text, unique per row: neither a dictionary
nor min/max statistics would help a reader). Other columns get both."""


def segment_parquet_bytes(rows: pa.Table) -> bytes:
    """A segment as Parquet. Dictionary pages only for columns whose values repeat, and statistics only
    for those a reader could prune by: on a 100,000-row segment that halves the time to write it and to
    read it back, and the file is a fifth smaller. A segment smaller than one row group gets neither
    (in a commit's few rows they cost a third of the write, and nothing reads them)."""
    if rows.num_rows < SEGMENT_ROW_GROUP:
        return to_parquet_bytes(
            rows, row_group_size=SEGMENT_ROW_GROUP, use_dictionary=False, write_statistics=False
        )
    encoding = {f.name: (f.metadata or {}).get(ENCODING) for f in rows.schema}
    return to_parquet_bytes(
        rows,
        row_group_size=SEGMENT_ROW_GROUP,
        use_dictionary=[name for name, e in encoding.items() if e is None],
        write_statistics=[name for name, e in encoding.items() if e != b"text"],
    )


INLINE_ENCODING = "arrow-ipc+lz4"
"""How a log entry carries a commit's segment: an Arrow IPC stream compressed whole (LZ4 frame). For a
commit's few rows that costs a seventh of what writing Parquet in memory does (Parquet sets up a writer,
an encoder and a page per column). zstd (also read) makes it a third smaller for three times the time."""
_INLINE_CODECS = {"arrow-ipc+lz4": pa.Codec("lz4"), "arrow-ipc+zstd": pa.Codec("zstd")}
"""One-shot (de)compression calls are stateless: safe to share between threads."""


def inline_segment_bytes(rows: pa.Table, limit: int) -> tuple[bytes, int] | None:
    """A segment as a log entry carries it (the compressed stream and its uncompressed size), or None
    if it would take more than ``limit`` bytes."""
    if rows.get_total_buffer_size() > 32 * limit:  # no use compressing what cannot fit
        return None
    # The stream's messages joined as pa.ipc.new_stream writes them, without setting up a stream writer:
    # half the time for a commit's rows.
    messages = [rows.schema.serialize(), *(b.serialize() for b in rows.to_batches())]
    stream = b"".join([*(m.to_pybytes() for m in messages), _EOS])
    data = _INLINE_CODECS[INLINE_ENCODING].compress(stream, asbytes=True)
    return (data, len(stream)) if len(data) <= limit else None


_EOS = b"\xff\xff\xff\xff\x00\x00\x00\x00"  # an IPC stream's end: continuation marker, zero length


def read_inline_segment(data: bytes, encoding: Any, size: Any, name: str) -> pa.Table:
    """The rows of a segment carried inline, as the entry says it encoded them (``inline_segment_bytes``)."""
    codec = _INLINE_CODECS.get(encoding) if isinstance(encoding, str) else None
    if codec is None:
        raise StorageError(
            f"{name}: the inline segment's encoding {encoding!r} is not one this gluecat reads"
        )
    if type(size) is not int or size < 0:
        raise StorageError(f"{name}: the inline segment's size is not a byte count ({size!r})")
    try:
        return pa.ipc.open_stream(codec.decompress(data, decompressed_size=size)).read_all()
    except (pa.ArrowException, OSError, ValueError) as e:
        raise StorageError(f"{name}: not a readable inline segment ({e})") from e


def read_parquet_bytes(data: bytes, name: str) -> pa.Table:
    # ParquetFile.read, not pq.read_table: the latter's threaded dataset path makes pyarrow 26 abort
    # ("terminate called without an active exception") at interpreter exit.
    try:
        return pq.ParquetFile(pa.BufferReader(data)).read(use_threads=False)
    except (pa.ArrowException, OSError, ValueError) as e:
        raise StorageError(f"{name}: not a readable Parquet file ({e})") from e


def read_records(data: bytes, name: str) -> list[tuple[str, Key, Any | None]]:
    """The rows of a record file, in order; documents stay encoded (Raw) until first read."""
    table = read_parquet_bytes(data, name)
    if not {"kind", "key", "doc"} <= set(table.column_names):
        raise StorageError(f"{name}: not a gluecat record file (columns {table.column_names})")
    fmt = (table.schema.metadata or {}).get(b"gluecat.format")
    if fmt is None or not fmt.isdigit() or int(fmt) > FORMAT_VERSION:
        raise StorageError(f"{name}: not a gluecat record file of a format this version reads ({fmt!r})")
    out: list[tuple[str, Key, Any | None]] = []
    try:
        for kind, key, doc in zip(
            table.column("kind").to_pylist(),
            table.column("key").to_pylist(),
            table.column("doc").to_pylist(),
            strict=True,
        ):
            out.append((str(kind), tuple(key or ()), None if doc is None else Raw(str(doc), name)))
    except (ValueError, TypeError) as e:
        raise StorageError(f"{name}: a record could not be decoded ({e})") from e
    return out


def footer(data: bytes, name: str) -> tuple[int, dict[bytes, bytes]]:
    """Row count and key-value metadata of a Parquet file, without reading its rows."""
    try:
        md = pq.read_metadata(pa.BufferReader(data))
    except (pa.ArrowException, OSError) as e:
        raise StorageError(f"{name}: not a readable Parquet file ({e})") from e
    return md.num_rows, dict(md.metadata or {})


def file_metadata(data: bytes, name: str) -> dict[str, str]:
    try:
        md = pq.read_metadata(io.BytesIO(data)).metadata or {}
        return {k.decode(): v.decode() for k, v in md.items()}
    except (pa.ArrowException, OSError, UnicodeDecodeError) as e:
        raise StorageError(f"{name}: not a readable Parquet file ({e})") from e
