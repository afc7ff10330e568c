"""How a table's partitions are laid out in segment files, and the merged view of a table's segments.

A segment is an immutable Parquet file of partition rows: the values as strings (p0..pN-1), their
identity ``_vk`` (the values as a compact JSON array),
``_bucket`` (a stable hash of the identity for GetPartitions Segments), ``_tomb`` (a deletion),
``Location`` and the rest of the partition as JSON (``doc``). Later segments override earlier ones.

The merged view of a table is a *base* (the live rows of its older segments, deduplicated, sorted by
identity, with sorted lookup structures per partition index) plus *deltas* (newer segments, small, read
as they are). Queries filter base and deltas in bulk and let delta rows override base rows; the base is
refolded when the deltas grow, so writes cost O(batch) and reads stay fast.
"""

from __future__ import annotations

import functools
import itertools
import json
import operator
import threading
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import pyarrow as pa
import pyarrow.compute as pc

from gluecat import uniform
from gluecat.expressions.lookup import first_true
from gluecat.store import codec, files

BUCKETS = 2520  # divisible by every TotalSegments 1..10, so bucket % total splits evenly and stably

Key = tuple[str, ...]


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


def _flat(values: Any) -> pa.Array:
    """Row numbers as one int64 array (compute functions answer a chunked column with chunks, and
    some with uint64)."""
    flat = values.combine_chunks() if isinstance(values, pa.ChunkedArray) else values
    return flat if flat.type == pa.int64() else flat.cast(pa.int64())


def distinct_identities(table: pa.Table) -> bool:
    """Whether no identity appears twice among the rows."""
    # pc.unique is a third of the time of pc.count_distinct on 100,000 identities.
    return table.num_rows == 0 or len(pc.unique(table.column("_vk"))) == table.num_rows


def _last_of_each(table: pa.Table) -> pa.Array:
    """Row numbers of the last row of each identity (rows are in commit order), ascending."""
    if distinct_identities(table):
        # No identity repeats (always so for a query's few hits): no grouping plan to run.
        return pa.array(range(table.num_rows), pa.int64())
    ordinal = pa.array(range(table.num_rows), pa.int64())
    with_ord = pa.table([table.column("_vk"), ordinal], names=["_vk", "_ord"])
    last = with_ord.group_by("_vk", use_threads=False).aggregate([("_ord", "max")]).column("_ord_max")
    return _flat(pc.take(last, pc.sort_indices(last)))


def _live(table: pa.Table, rows: pa.Array) -> pa.Array:
    dead: Any = pc.take(table.column("_tomb"), rows)
    if isinstance(dead, pa.ChunkedArray):
        dead = dead.combine_chunks()
    return _flat(pc.filter(rows, pc.invert(dead)))


def _by_identity(table: pa.Table, rows: pa.Array) -> pa.Array:
    """``rows`` ordered by their identities."""
    return _flat(pc.take(rows, pc.sort_indices(pc.take(table.column("_vk"), rows))))


# Each of these computes row numbers first and copies the rows once: at a million partitions a copy
# of the rows is some 300 MB.


def dedupe_last(table: pa.Table) -> pa.Table:
    """Keep the last row of each identity, in commit order, then drop deletions."""
    return table.take(_live(table, _last_of_each(table)))


def latest_by_identity(table: pa.Table, *, keep_deletions: bool = False) -> pa.Table:
    """The last row of each identity, sorted by identity; deletions dropped unless ``keep_deletions``."""
    rows = _last_of_each(table)
    return table.take(_by_identity(table, rows if keep_deletions else _live(table, rows)))


def sort_by_identity(table: pa.Table) -> pa.Table:
    return table.take(pc.sort_indices(table, sort_keys=[("_vk", "ascending")]))


@dataclass
class IndexLookup:
    """A partition index over the base, in Arrow: the typed key columns of the base rows whose indexed
    values are all valid, sorted by those values, and the base row each came from.

    About 30 bytes a row for three keys, where Python tuples took about 250.
    """

    columns: list[pa.Array]
    rows: pa.Array  # int64

    def _prefix(self, i: int, n: int) -> tuple[Any, ...]:
        return tuple(self.columns[j][i].as_py() for j in range(n))

    def _past(self, i: int, bound: tuple[Any, ...], at: bool) -> bool:
        """Whether row i's key prefix is after ``bound`` (or equal to it, when ``at``)."""
        p = self._prefix(i, len(bound))
        return p > bound or (at and p == bound)

    def ranges(
        self, bounds: list[tuple[tuple[Any, ...] | None, bool, tuple[Any, ...] | None, bool]]
    ) -> pa.Array:
        """Base rows inside any of the (low, low inclusive, high, high inclusive) prefix ranges, sorted."""
        parts = []
        for lo, lo_inc, hi, hi_inc in bounds:
            start = (
                0
                if lo is None
                else first_true(len(self.rows), functools.partial(self._past, bound=lo, at=lo_inc))
            )
            end = (
                len(self.rows)
                if hi is None
                else first_true(len(self.rows), functools.partial(self._past, bound=hi, at=not hi_inc))
            )
            if start < end:
                parts.append(self.rows.slice(start, end - start))
        if not parts:
            return pa.array([], pa.int64())
        found = pa.concat_arrays(parts)
        return found.take(pc.array_sort_indices(found))


Identities = dict[str, Any]
"""A set of partition identities, held as the keys of a dict: a dict of strings is not tracked by
Python's garbage collector and a set is, so each collection walked the million members of a large
table's identity sets (10% of a million-partition fill went to collections)."""


def delta_map(segment: pa.Table) -> dict[str, bool]:
    """Identity -> alive, for the rows of one segment (the last row of an identity wins)."""
    identities = cast(list[str], segment.column("_vk").to_pylist())  # the column is non-null
    return dict(zip(identities, map(operator.not_, segment.column("_tomb").to_pylist()), strict=True))


def _merged_maps(maps: list[dict[str, bool]]) -> dict[str, bool]:
    """One identity -> alive map of several, in commit order (the newest wins)."""
    state: dict[str, bool] = {}
    for m in maps:
        state.update(m)
    return state


# How many filters' hits a view keeps (TableView.base_hits, delta_hits): enough for the pages of a few
# queries read at once, each at most 8 bytes a row. The most recently computed are kept.
_KEPT_FILTERS = 4


@dataclass
class TableView:
    """The merged partitions of one table at one list of segments."""

    n_keys: int
    base_segments: tuple[str, ...]
    base: pa.Table  # live rows, deduplicated, sorted by _vk
    deltas: list[pa.Table]  # raw rows of newer segments, in commit order
    delta_segments: tuple[str, ...]
    delta_maps: list[dict[str, bool]] = field(default_factory=list)  # one per delta, same order
    _live: Identities | None = None
    # Every identity the deltas name, and perhaps some that newer views of the same table name (views
    # extended from this one add to it): a filter that spares looking a new identity up in each delta.
    _delta_named: Identities | None = None
    _delta_table: pa.Table | None = None
    _delta_latest: pa.Table | None = None
    _lookups: dict[Any, Any] = field(default_factory=dict)  # index lookups, and base_hits
    _delta_hits: dict[Any, Any] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    # The key columns of the base and of delta_latest() cast to their types, for queries (evaluate_arrow).
    typed_base: dict[tuple[str, str], pa.Array] = field(default_factory=dict)
    typed_delta: dict[tuple[str, str], pa.Array] = field(default_factory=dict)

    @property
    def segments(self) -> tuple[str, ...]:
        return self.base_segments + self.delta_segments

    def renamed(self, segments: tuple[str, ...]) -> TableView:
        """The same rows under other segment names (after a merge replaced some segments)."""
        if segments == self.segments:
            return self
        return TableView(
            n_keys=self.n_keys,
            base_segments=segments,
            base=self.base,
            deltas=self.deltas,
            delta_segments=(),
            delta_maps=self.delta_maps,
            _live=self._live,
            _delta_named=self._delta_named,
            _lookups=self._lookups,
            typed_base=self.typed_base,
        )

    def squashed(self, keep: int = 0) -> TableView:
        """The same rows with the newest deltas (at least two) as one (the base and its lookup
        structures kept); the oldest ``keep`` deltas stay as they are.

        The squashed delta holds the chunks of those it replaces, so no row is copied (copying them,
        with every partition's document, took up to 10 ms in a write); their identity maps are merged
        into one. Older deltas join the squash while they hold no more rows than the newer ones
        squashed with them, as the carries of a binary counter: a stream of small writes copies each
        identity a logarithmic number of times before the next refold, not once per squash."""
        start = max(len(self.deltas) - 2, keep)
        rows = sum(d.num_rows for d in self.deltas[start:])
        while start > keep and self.deltas[start - 1].num_rows <= rows:
            start -= 1
            rows += self.deltas[start].num_rows
        return TableView(
            n_keys=self.n_keys,
            base_segments=self.segments,
            base=self.base,
            deltas=[*self.deltas[:start], pa.concat_tables(self.deltas[start:])],
            delta_segments=(),
            delta_maps=[*self.delta_maps[:start], _merged_maps(self.delta_maps[start:])],
            _live=self._live,
            _delta_named=self._delta_named,
            _lookups=self._lookups,
            typed_base=self.typed_base,
        )

    def delta_state(self) -> dict[str, bool]:
        """Identity -> alive, for every identity the deltas name (the newest delta wins)."""
        return _merged_maps(self.delta_maps)

    def delta_rows(self) -> int:
        return sum(d.num_rows for d in self.deltas)

    def base_identities(self) -> Identities:
        with self._lock:
            if self._live is None:
                self._live = dict.fromkeys(cast(list[str], self.base.column("_vk").to_pylist()))
            return self._live

    def exists(self, vk: str) -> bool:
        for state in reversed(self.delta_maps):
            if vk in state:
                return state[vk]
        return vk in self.base_identities()

    def existing(self, vks: set[str]) -> set[str]:
        """Those of ``vks`` that are live partitions (one set operation per delta, not per identity)."""
        found: set[str] = set()
        pending = set(vks)
        delta_named = self._delta_named
        named = pending if delta_named is None else delta_named.keys() & pending  # iterates the smaller side
        for state in reversed(self.delta_maps if named else ()):
            decided = state.keys() & named  # iterates the smaller side
            if decided:
                found.update(vk for vk in decided if state[vk])
                pending -= decided
                named -= decided
                if not named:
                    break
        return found | (self.base_identities().keys() & pending)

    def upper_bound(self) -> int:
        """At least the number of live partitions (cheap; exact when nothing was deleted)."""
        return self.base.num_rows + self.delta_rows()

    def count(self) -> int:
        """Live partitions (exact)."""
        state = self.delta_state()
        base = self.base_identities()
        added = sum(1 for vk, alive in state.items() if alive and vk not in base)
        removed = sum(1 for vk, alive in state.items() if not alive and vk in base)
        return self.base.num_rows + added - removed

    def base_position(self, after: str) -> int:
        """How many base rows have identities up to ``after`` (the base is sorted by identity)."""
        return position(self.base, after)

    def delta_position(self, after: str) -> int:
        """How many rows of ``delta_latest()`` have identities up to ``after``."""
        return position(self.delta_latest(), after)

    def base_hits(self, key: Any, build: Callable[[pa.Table], pa.Array]) -> pa.Array:
        """The positions (ascending) of the base rows a filter keeps, ``build(base)``, kept for the
        newest few ``key``s: the pages of one query then each cost what they return, where evaluating
        the filter over the whole base again cost what the table holds."""
        return cast(pa.Array, _kept(self._lookups, self._lock, key, lambda: build(self.base)))

    def delta_hits(self, key: Any, build: Callable[[pa.Table], pa.Array]) -> tuple[pa.Array, int]:
        """As base_hits, over ``delta_latest()`` (kept by this view only), with how many of those rows
        are deletions."""

        def make() -> tuple[pa.Array, int]:
            latest = self.delta_latest()
            hits = build(latest)
            deletions = pc.sum(pc.cast(latest.column("_tomb").take(hits), pa.int64())).as_py()
            return hits, deletions or 0

        return cast(tuple[pa.Array, int], _kept(self._delta_hits, self._lock, key, make))

    def lookup(self, name: Any, build: Callable[[pa.Table], IndexLookup]) -> IndexLookup:
        with self._lock:
            found = self._lookups.get(name)
        if found is None:
            found = build(self.base)
            with self._lock:
                self._lookups[name] = found
        return found

    def delta_table(self) -> pa.Table:
        """All delta rows in commit order, as one table."""
        with self._lock:
            if self._delta_table is None:
                self._delta_table = pa.concat_tables(self.deltas).combine_chunks()
            return self._delta_table

    def delta_latest(self) -> pa.Table:
        """The newest delta row of each identity, deletions kept, sorted by identity: what the deltas
        say of each partition they name, ready to merge with the base page by page."""
        with self._lock:
            found = self._delta_latest
        if found is None:
            found = _whole_table(latest_by_identity(self.delta_table(), keep_deletions=True))
            with self._lock:
                self._delta_latest = found
        return found

    def select(self, base_rows: pa.Table, delta_filter: Callable[[pa.Table], pa.Table]) -> pa.Table:
        """Merge already-filtered base rows with the rows of ``delta_latest()`` that pass
        ``delta_filter``: those override (or, if deletions, remove) the base rows of their identities."""
        if not self.deltas:
            return base_rows
        delta = delta_filter(self.delta_latest())
        if not delta.num_rows:
            return base_rows
        overridden = pc.is_in(base_rows.column("_vk"), value_set=delta.column("_vk"))
        kept = base_rows.filter(pc.invert(overridden))
        live = delta.filter(pc.invert(delta.column("_tomb")))
        return sort_by_identity(pa.concat_tables([kept, live.select(kept.column_names)]))


def _kept(cache: dict[Any, Any], lock: threading.Lock, key: Any, make: Callable[[], Any]) -> Any:
    """``make()``, kept in ``cache`` under ("hits", key) with the newest _KEPT_FILTERS - 1 others."""
    slot = ("hits", key)
    with lock:
        found = cache.get(slot)
    if found is None:
        found = make()
        with lock:
            hits = [k for k in cache if k[0] == "hits"]
            for old in hits[: max(len(hits) - _KEPT_FILTERS + 1, 0)]:
                del cache[old]
            cache[slot] = found
    return found


def position(rows: pa.Table, after: str) -> int:
    """How many of ``rows`` (sorted by identity) have identities up to ``after``."""
    identities = rows.column("_vk")
    return first_true(rows.num_rows, lambda i: identities[i].as_py() > after)


def _whole_table(table: pa.Table) -> pa.Table:
    """One chunk a column (positional access to a chunked column searches its chunks)."""
    return table.combine_chunks() if any(c.num_chunks > 1 for c in table.columns) else table


def fold(n_keys: int, segments: Sequence[str], tables: Sequence[pa.Table]) -> TableView:
    """A view whose base is all of ``segments``."""
    schema = segment_schema(n_keys)
    if tables:
        base = latest_by_identity(pa.concat_tables([t.select(schema.names) for t in tables]))
    else:
        base = schema.empty_table()
    return TableView(n_keys=n_keys, base_segments=tuple(segments), base=base, deltas=[], delta_segments=())


def refold(view: TableView, segments: Sequence[str]) -> TableView:
    """``view`` with its deltas folded into its base, as ``fold`` of all its segments would give.

    The base is already deduplicated, so only the delta rows are; base rows they override are dropped
    in one hash lookup, the rows are copied once, and the identity set is carried over rather than
    rebuilt (at a million partitions, 0.8 s instead of 1.8 s).
    """
    schema = segment_schema(view.n_keys)
    delta = view.delta_table().select(schema.names)
    overridden = pc.is_in(view.base.column("_vk"), value_set=delta.column("_vk"))
    both = pa.concat_tables([view.base.select(schema.names), delta])  # chunks side by side, not copied
    rows = pa.concat_arrays(
        [
            _flat(pc.indices_nonzero(pc.invert(overridden))),
            pc.add(_live(delta, _last_of_each(delta)), pa.scalar(view.base.num_rows, pa.int64())),
        ]
    )
    base = both.take(_by_identity(both, rows))
    live = None
    if view._live is not None:
        state = view.delta_state()
        live = view._live.copy()
        for vk, alive in state.items():
            if alive:
                live[vk] = None
            else:
                live.pop(vk, None)
    return TableView(
        n_keys=view.n_keys, base_segments=tuple(segments), base=base, deltas=[], delta_segments=(), _live=live
    )


def extend(view: TableView, segments: Sequence[str], tables: Sequence[pa.Table]) -> TableView:
    """A view with more delta segments (sharing the base and its lookup structures)."""
    maps = [delta_map(t) for t in tables]
    named = view._delta_named
    if named is None:
        named = {}
        for m in view.delta_maps:
            named.update(m)
    for m in maps:
        named.update(m)  # shared with ``view``, for which it is a filter still (see _delta_named)
    return TableView(
        n_keys=view.n_keys,
        base_segments=view.base_segments,
        base=view.base,
        deltas=view.deltas + list(tables),
        delta_segments=view.delta_segments + tuple(segments),
        delta_maps=view.delta_maps + maps,
        _live=view._live,
        _delta_named=named,
        _lookups=view._lookups,
        typed_base=view.typed_base,
    )
