"""How rows are laid out in segment files, and the row-level operations on them.

A segment is an immutable table of rows keyed by partition values: the values as strings (p0..pN-1),
the row's identity ``_vk`` (a compact JSON array: the partition values for a partition, the partition
values and the Uri for a table object), ``_bucket`` (a stable hash of the identity, for GetPartitions
Segments), ``_tomb`` (a deletion), ``Location`` and the rest of the row as JSON (``doc``). Later rows of
an identity override earlier ones.
"""

from __future__ import annotations

import functools
import itertools
import json
import zlib
from collections.abc import Sequence
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from gluecat import uniform
from gluecat.expressions.lookup import first_true
from gluecat.store import codec, files

BUCKETS = 2520  # divisible by every TotalSegments 1..10, so bucket % total splits evenly and stably


_VK = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


def _own_json_text(text: str) -> bool:
    """Whether ``text`` is its own JSON string body (printable ASCII without quote or backslash)."""
    return text.isascii() and text.isprintable() and '"' not in text and "\\" not in text


def value_key(values: Sequence[str]) -> str:
    """A partition's identity: its values as compact JSON (injective, whatever characters they hold)."""
    if values and all(type(v) is str for v in values) and _own_json_text("".join(values)):
        return '["' + '","'.join(values) + '"]'  # only brackets and commas to add
    return _VK.encode(list(values))


def value_keys(values: list[list[str]]) -> list[str]:
    """value_key of each; a batch whose values are all printable ASCII without quote or backslash (the
    common case) is checked once as a whole."""
    if values and min(map(len, values)) > 0:
        try:
            text = "".join(itertools.chain.from_iterable(values))
        except TypeError:  # not all strings
            return [value_key(v) for v in values]
        if _own_json_text(text):
            return ['["' + '","'.join(v) + '"]' for v in values]
    return [value_key(v) for v in values]


def bucket_of(vk: str) -> int:
    return zlib.crc32(vk.encode()) % BUCKETS


_PLAIN = {files.ENCODING: b"plain"}
_TEXT = {files.ENCODING: b"text"}


@functools.lru_cache(maxsize=64)
def segment_schema(n_keys: int) -> pa.Schema:
    return pa.schema(
        [pa.field(f"p{i}", pa.string()) for i in range(n_keys)]
        + [
            pa.field("_vk", pa.string(), nullable=False, metadata=_PLAIN),
            pa.field("_bucket", pa.int32(), nullable=False, metadata=_PLAIN),
            pa.field("_tomb", pa.bool_(), nullable=False, metadata=_PLAIN),
            pa.field("Location", pa.string(), metadata=_TEXT),
            pa.field("doc", pa.large_string(), metadata=_TEXT),
        ]
    )


_PLACE = "\x00gluecat:location\x00"  # no Glue location holds NUL characters
_PLACE_JSON = codec.dumps(_PLACE)


def _shape(doc: dict[str, Any]) -> tuple[Any, ...] | None:
    """What a partition document is apart from its location, as identities of its members; None if it
    has no storage descriptor with a location."""
    sd = doc.get("StorageDescriptor")
    if type(sd) is not dict or type(sd.get("Location")) is not str:
        return None
    return (
        tuple((k, id(v)) for k, v in doc.items() if k != "StorageDescriptor"),
        tuple((k, id(v)) for k, v in sd.items() if k != "Location"),
    )


def _template(doc: dict[str, Any]) -> tuple[str, str] | None:
    """A document's JSON text before and after its location's JSON text (None if it cannot be split)."""
    text = codec.dumps({**doc, "StorageDescriptor": {**doc["StorageDescriptor"], "Location": _PLACE}})
    head, found, tail = text.partition(_PLACE_JSON)
    return (head, tail) if found and _PLACE_JSON not in tail else None


def _encode_docs(docs: list[dict[str, Any] | None]) -> list[str | None]:
    """Each document's JSON text (codec.dumps). The partitions of one write usually share everything
    but their location (the same column, SerDe and parameter objects): such documents are encoded once,
    with a placeholder location, and each gets its own location spliced in."""
    out: list[str | None] = []
    templates: dict[tuple[Any, ...], tuple[str, str] | None] = {}
    for doc in docs:
        if doc is None:
            out.append(None)
            continue
        shape = _shape(doc)
        if shape is None:
            out.append(codec.dumps(doc))
            continue
        if shape not in templates:
            # The ids in a shape are of objects this batch holds, so no other object can take one over.
            templates[shape] = _template(doc)
        template = templates[shape]
        if template is None:
            out.append(codec.dumps(doc))
        else:
            out.append(template[0] + codec.dumps(doc["StorageDescriptor"]["Location"]) + template[1])
    return out


def _shared_locations(docs: list[Any]) -> list[str] | None:
    """The documents' locations, if every document holds the very objects the first holds but for its
    location (a string); else None."""
    sds = uniform.all_but(docs, "StorageDescriptor")
    locations = None if sds is None else uniform.all_but(sds, "Location")
    if locations is None or set(map(type, locations)) != {str}:
        return None
    return locations


def _location(doc: dict[str, Any] | None) -> Any:
    return None if doc is None else (doc.get("StorageDescriptor") or {}).get("Location")


def _doc_column(docs: list[dict[str, Any] | None], locations: list[str] | None) -> pa.Array:
    """The documents' JSON text as a column. When all share one shape (``locations`` is their
    _shared_locations: a batch of partitions of one table usually does) and their locations need no
    escaping, the shape is encoded once and each location spliced into its text."""
    if locations is not None:
        template = _template(docs[0])  # type: ignore[arg-type]
        if template is not None and _own_json_text("".join(locations)):
            head, tail = template[0] + '"', '"' + template[1]
            # (Python's concatenation is faster than pyarrow's binary_join_element_wise for a batch.)
            return pa.array([head + location + tail for location in locations], pa.large_string())
    return pa.array(_encode_docs(docs), pa.large_string())


def _docs_and_locations(docs: list[dict[str, Any] | None]) -> tuple[pa.Array, list[Any]]:
    """The doc column and the locations of a run of documents."""
    shared = _shared_locations(docs) if docs and type(docs[0]) is dict else None
    return _doc_column(docs, shared), shared if shared is not None else list(map(_location, docs))


def segment_table(
    n_keys: int,
    rows: list[tuple[list[str], dict[str, Any] | None]],
    vks: list[str] | None = None,
    runs: Sequence[int] = (),
) -> pa.Table:
    """Rows of (values, partition document or None for a deletion) as a segment table; ``vks`` are the
    rows' identities when the caller has them already. ``runs`` are the lengths of the requests the rows
    came from, if several: the documents of one request usually share their objects, those of different
    requests do not, so each run's documents are encoded as a batch of their own."""
    values_list = [values for values, _ in rows]
    docs = [doc for _, doc in rows]
    if vks is None:
        vks = value_keys(values_list)
    if set(map(len, values_list)) <= {n_keys}:
        cols = [list(c) for c in zip(*values_list, strict=True)] or [[] for _ in range(n_keys)]
    else:
        cols = [[values[i] if i < len(values) else None for values in values_list] for i in range(n_keys)]
    if len(runs) < 2:
        doc_column, locations = _docs_and_locations(docs)
    else:
        parts = [
            _docs_and_locations(docs[end - n : end])
            for n, end in zip(runs, itertools.accumulate(runs), strict=True)
        ]
        doc_column = pa.concat_arrays([column for column, _ in parts])
        locations = list(itertools.chain.from_iterable(locs for _, locs in parts))
    return pa.Table.from_arrays(
        [pa.array(c, pa.string()) for c in cols]
        + [
            pa.array(vks, pa.string()),
            pa.array([zlib.crc32(vk.encode()) % BUCKETS for vk in vks], pa.int32()),
            pa.array([doc is None for doc in docs], pa.bool_()),
            pa.array(locations, pa.string()),
            doc_column,
        ],
        schema=segment_schema(n_keys),
    )


def rows_segment(
    n_keys: int,
    values: Sequence[Sequence[str]],
    identities: Sequence[str],
    deleted: Sequence[bool],
    locations: Sequence[str | None],
    docs: Sequence[str | None],
) -> pa.Table:
    """A segment of rows given column by column: each row's partition values, identity, whether it is
    a deletion, location and document (JSON text)."""
    cols = [list(c) for c in zip(*values, strict=True)] if values else [[] for _ in range(n_keys)]
    return pa.Table.from_arrays(
        [pa.array(c, pa.string()) for c in cols]
        + [
            pa.array(identities, pa.string()),
            pa.array([zlib.crc32(vk.encode()) % BUCKETS for vk in identities], pa.int32()),
            pa.array(deleted, pa.bool_()),
            pa.array(locations, pa.string()),
            pa.array(docs, pa.large_string()),
        ],
        schema=segment_schema(n_keys),
    )


def flat_rows(values: Any) -> pa.Array:
    """Row numbers as one int64 array (compute functions answer a chunked column with chunks, and
    some with uint64)."""
    flat = values.combine_chunks() if isinstance(values, pa.ChunkedArray) else values
    return flat if flat.type == pa.int64() else flat.cast(pa.int64())


def distinct_identities(table: pa.Table) -> bool:
    """Whether no identity appears twice among the rows."""
    # pc.unique is a third of the time of pc.count_distinct on 100,000 identities.
    return table.num_rows == 0 or len(pc.unique(table.column("_vk"))) == table.num_rows


def last_of_each(table: pa.Table) -> pa.Array:
    """Row numbers of the last row of each identity (rows are in commit order), ascending."""
    if distinct_identities(table):
        # No identity repeats (always so for a query's few hits): no grouping plan to run.
        return pa.array(range(table.num_rows), pa.int64())
    ordinal = pa.array(range(table.num_rows), pa.int64())
    with_ord = pa.table([table.column("_vk"), ordinal], names=["_vk", "_ord"])
    last = with_ord.group_by("_vk", use_threads=False).aggregate([("_ord", "max")]).column("_ord_max")
    return flat_rows(pc.take(last, pc.sort_indices(last)))


def live_rows(table: pa.Table, rows: pa.Array) -> pa.Array:
    dead: Any = pc.take(table.column("_tomb"), rows)
    if isinstance(dead, pa.ChunkedArray):
        dead = dead.combine_chunks()
    return flat_rows(pc.filter(rows, pc.invert(dead)))


def by_identity(table: pa.Table, rows: pa.Array) -> pa.Array:
    """``rows`` ordered by their identities."""
    return flat_rows(pc.take(rows, pc.sort_indices(pc.take(table.column("_vk"), rows))))


# Each of these computes row numbers first and copies the rows once: at a million partitions a copy
# of the rows is some 300 MB.


def dedupe_last(table: pa.Table) -> pa.Table:
    """Keep the last row of each identity, in commit order, then drop deletions."""
    return table.take(live_rows(table, last_of_each(table)))


def latest_by_identity(table: pa.Table, *, keep_deletions: bool = False) -> pa.Table:
    """The last row of each identity, sorted by identity; deletions dropped unless ``keep_deletions``."""
    rows = last_of_each(table)
    return table.take(by_identity(table, rows if keep_deletions else live_rows(table, rows)))


def sort_by_identity(table: pa.Table) -> pa.Table:
    return table.take(pc.sort_indices(table, sort_keys=[("_vk", "ascending")]))


def position(rows: pa.Table, after: str) -> int:
    """How many of ``rows`` (sorted by identity) have identities up to ``after``."""
    identities = rows.column("_vk")
    return first_true(rows.num_rows, lambda i: identities[i].as_py() > after)


def whole_table(table: pa.Table) -> pa.Table:
    """One chunk a column (positional access to a chunked column searches its chunks)."""
    return table.combine_chunks() if any(c.num_chunks > 1 for c in table.columns) else table
