"""Queries over a folded view: a predicate on partition values, planned against partition indexes, and
a window (after a cursor, in a Segment, up to a limit) of the matching rows, in identity order.

An indexed plan binary-searches the base's sorted typed index keys; anything else is evaluated over the
base and the deltas in bulk with Arrow, never a Python object per row.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from gluecat import expressions as ex
from gluecat.catalog.rows.segments import position
from gluecat.catalog.rows.view import IndexLookup, TableView
from gluecat.expressions.lookup import first_true, lookup_column, lookup_value


@dataclass(frozen=True)
class Query:
    """A planned predicate on a row set's partition values: the keys, the normalized predicate, and
    the plan (which index to look up, which ranges, what to filter after)."""

    keys: list[tuple[str, str]]
    predicate: Any
    plan: Any


def planned(keys: list[tuple[str, str]], bound: Any, active: list[ex.Index]) -> Query:
    """The query of a predicate bound to ``keys``, using the ACTIVE partition indexes ``active``."""
    # Planned from the bound predicate as written, so that NOT parts never drive an index lookup.
    return Query(keys=keys, predicate=ex.normalize(bound), plan=ex.plan(bound, active))


def _named(rows: pa.Table, keys: list[tuple[str, str]]) -> pa.Table:
    """The value columns renamed to their keys, as the evaluator expects."""
    return pa.Table.from_arrays([rows.column(f"p{i}") for i in range(len(keys))], names=[k for k, _ in keys])


def _lookup_builder(keys: list[tuple[str, str]], index_keys: tuple[str, ...]) -> Any:
    positions = {name.lower(): i for i, (name, _) in enumerate(keys)}

    def build(base: pa.Table) -> IndexLookup:
        named = pa.Table.from_arrays(
            [base.column(f"p{positions[k.lower()]}") for k in index_keys], names=list(index_keys)
        )
        typed = ex.typed_index_columns(named, keys, index_keys)
        # Rows whose indexed values are not valid for their types cannot exist once an index is ACTIVE;
        # rows that predate a FAILED index are never looked up through it.
        valid = pc.is_valid(typed[0])
        for column in typed[1:]:
            valid = pc.and_(valid, pc.is_valid(column))
        rows = pc.indices_nonzero(valid)
        columns = [pc.take(c, rows) for c in typed]
        order = pc.sort_indices(
            pa.table(columns, names=[f"k{i}" for i in range(len(columns))]),
            sort_keys=[(f"k{i}", "ascending") for i in range(len(columns))],
        )
        return IndexLookup(
            columns=[lookup_column(_whole(pc.take(c, order))) for c in columns],
            rows=_whole(pc.take(rows, order)),
        )

    return build


def _whole(values: Any) -> pa.Array:
    """One contiguous array (element access on a chunked array searches its chunks)."""
    return values.combine_chunks() if isinstance(values, pa.ChunkedArray) else values


@dataclass(frozen=True)
class Window:
    """Which part of a query's answer a page wants: after a cursor, in a segment, at most some rows."""

    after: str | None = None
    segment: dict[str, int] | None = None
    limit: int | None = None

    def segment_mask(self, rows: pa.Table) -> pa.Array | None:
        """Which of ``rows`` are in the segment (None: all are)."""
        key = self.segment_key()
        if key is None:
            return None
        number, total = key
        return _in_segment(_whole(rows.column("_bucket")), number, total)

    def segment_key(self) -> tuple[int, int] | None:
        """The segment, as a hashable key (None: the whole answer)."""
        if self.segment is None or self.segment["TotalSegments"] <= 1:
            return None
        return (self.segment["SegmentNumber"], self.segment["TotalSegments"])

    def hits(self, rows: pa.Table, mask: pa.Array | None) -> pa.Array:
        """Positions of the ``rows`` that ``mask`` (None for all) and the segment keep."""
        both = _both(mask, self.segment_mask(rows))
        if both is None:
            return pa.array(range(rows.num_rows), pa.int64())
        return _whole(pc.indices_nonzero(both))

    def passed(self, rows: pa.Table) -> pa.Array | None:
        """Which of ``rows`` are after the cursor (None: all are)."""
        if self.after is None:
            return None
        return pc.greater(_whole(rows.column("_vk")), pa.scalar(self.after, pa.string()))

    def after_cursor(self, rows: pa.Table, start: int, mask: pa.Array | None, wanted: int | None) -> pa.Table:
        """The rows from ``start`` on (where the cursor leaves sorted rows) that ``mask`` (over all of
        ``rows``, None for all) and the segment keep, at most ``wanted`` of them; only those are copied."""
        rest = rows.slice(start)
        mask = _both(None if mask is None else mask.slice(start), self.segment_mask(rest))
        if mask is None:
            return rest if wanted is None else rest.slice(0, wanted)
        found = _whole(pc.indices_nonzero(mask))
        return rest.take(found if wanted is None else found.slice(0, wanted))


def _both(a: pa.Array | None, b: pa.Array | None) -> pa.Array | None:
    return b if a is None else a if b is None else pc.and_(a, b)


def _up_to_live(rows: pa.Table, n: int) -> pa.Table:
    """Sorted rows cut after their n-th live one (deletions before it kept): what can reach the first n
    rows of a merged answer."""
    live = pc.indices_nonzero(pc.invert(_whole(rows.column("_tomb"))))
    return rows if len(live) <= n else rows.slice(0, live[n - 1].as_py() + 1)


def select(v: TableView, query: Query, window: Window = Window()) -> pa.Table:
    """The live rows of the view that match the query and fall in the window, sorted by identity.

    With a limit, at least ``limit + 1`` rows are returned when that many exist (so a caller knows there
    is more), but not necessarily all: base and deltas are cut before they are merged.
    """
    keys, plan = query.keys, query.plan

    def predicate_mask(
        rows: pa.Table, pred: Any, typed: dict[tuple[str, str], Any] | None = None
    ) -> pa.Array | None:
        if isinstance(pred, ex.TrueP) or rows.num_rows == 0:
            return None
        if isinstance(pred, ex.FalseP):
            return pa.repeat(pa.scalar(False), rows.num_rows)
        return ex.evaluate_arrow(pred, _named(rows, keys), keys, typed)

    # Base and deltas are each sorted by identity. A filter is evaluated over each whole, against their
    # cached typed key columns (casting the strings is most of an evaluation), on a query's first page;
    # the view keeps the positions it passes, so each page bisects them for the cursor and copies only
    # the rows it can use.
    filtered = not isinstance(query.predicate, ex.TrueP) or window.segment_key() is not None
    filter_key = (tuple(keys), query.predicate, window.segment_key())

    def hits_of(typed: dict[tuple[str, str], Any]) -> Callable[[pa.Table], pa.Array]:
        return lambda rows: window.hits(rows, predicate_mask(rows, query.predicate, typed))

    delta_hits = None
    if v.deltas:
        latest = v.delta_latest()
        start = 0 if window.after is None else v.delta_position(window.after)
        if filtered:
            hits, deletions = v.delta_hits(filter_key, hits_of(v.typed_columns(False, keys)))
            # Enough rows to hold limit + 1 live ones, whatever the deletions among them.
            more = None if window.limit is None else window.limit + 1 + deletions
            delta_hits = latest.take(hits.slice(_first_at_least(hits, start), more))
        else:
            delta_hits = window.after_cursor(latest, start, None, None)
        if window.limit is not None:
            delta_hits = _up_to_live(delta_hits, window.limit + 1)
    # The deltas can remove at most as many base rows as they have, so this many base rows always hold
    # the first limit + 1 rows of the merged answer.
    spare = delta_hits.num_rows if delta_hits is not None else 0
    wanted = None if window.limit is None else window.limit + 1 + spare
    if plan.index_name is not None:
        # Keyed by the keys' types too: an index may be dropped, its key retyped and an index of the
        # same name made again while the view (the same segments) lives on.
        lookup = v.lookup(
            ("index", plan.index_name, tuple(plan.index_keys), tuple(keys)),
            _lookup_builder(keys, tuple(plan.index_keys)),
        )
        bounds = [
            (_bound(r.lower), r.lower_inclusive, _bound(r.upper), r.upper_inclusive) for r in plan.ranges
        ]
        found = v.base.take(lookup.ranges(bounds))
        mask = _both(window.passed(found), predicate_mask(found, plan.residual))
        base_hits = window.after_cursor(found, 0, mask, wanted)
    else:
        start = 0 if window.after is None else v.base_position(window.after)
        if filtered:
            hits = v.base_hits(filter_key, hits_of(v.typed_columns(True, keys)))
            base_hits = v.base.take(hits.slice(_first_at_least(hits, start), wanted))
        else:
            base_hits = window.after_cursor(v.base, start, None, wanted)
    if delta_hits is None:
        return base_hits
    if wanted is not None and base_hits.num_rows >= wanted and delta_hits.num_rows:
        # The base rows were cut: they hold more live rows up to their last identity than the page
        # can use, whatever the newer rows override, so newer rows after it cannot reach the page.
        delta_hits = delta_hits.slice(0, position(delta_hits, base_hits.column("_vk")[-1].as_py()))
    return v.select(base_hits, lambda _: delta_hits)


def _bound(values: tuple[Any, ...]) -> tuple[Any, ...] | None:
    """A range's bound as an IndexLookup compares it (None: unbounded)."""
    return tuple(map(lookup_value, values)) or None


def _first_at_least(positions: pa.Array, start: int) -> int:
    """Where the first of ascending ``positions`` not below ``start`` is."""
    return first_true(len(positions), lambda i: positions[i].as_py() >= start)


def _in_segment(buckets: Any, number: int, total: int) -> Any:
    """Rows of segment ``number`` of ``total``: stable, disjoint, and together complete."""
    whole = pc.multiply(pc.divide(buckets, pa.scalar(total, pa.int32())), pa.scalar(total, pa.int32()))
    return pc.equal(pc.subtract(buckets, whole), pa.scalar(number, pa.int32()))
