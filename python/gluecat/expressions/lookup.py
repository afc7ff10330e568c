"""Index lookups on partitions kept sorted by an index's keys: the sort order and a range's slice.

Sort partitions by the index keys' TYPED values (:func:`index_sort_indices`: NULL and invalid values last
within each key). The rows of a :class:`Range` are then inside one contiguous slice, found by binary search
(:func:`range_slice`, O(log n) value reads). The slice may also hold rows with a NULL in a bounded key, so
the caller keeps ``range_mask(...) & evaluate_arrow(plan.residual, ...)`` of the slice's rows.

>>> import pyarrow as pa
>>> from gluecat.expressions.types import Range
>>> keys = [("year", "int")]
>>> t = pa.table({"year": ["2019", "9", None, "2020", "x"]})
>>> t = t.take(index_sort_indices(t, keys, ["year"]))
>>> t.column("year").to_pylist()
['9', '2019', '2020', None, 'x']
>>> range_slice(Range((2000,), False, (), True), t, keys, ["year"])
(1, 5)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from gluecat.expressions.bind import KeySpec
from gluecat.expressions.evaluate import typed_column
from gluecat.expressions.types import Date, Range, Timestamp, key_type


def typed_index_columns(table: pa.Table, keys: KeySpec, index_keys: Sequence[str]) -> list[pa.Array]:
    """The index keys' columns cast to their types (invalid values NULL), in index order."""
    types = {name.casefold(): glue_type for name, glue_type in keys}
    by_folded = {c.casefold(): c for c in table.column_names}
    return [
        typed_column(table.column(by_folded[k.casefold()]), key_type(types[k.casefold()])) for k in index_keys
    ]


def index_sort_indices(table: pa.Table, keys: KeySpec, index_keys: Sequence[str]) -> pa.Array:
    """The permutation that sorts ``table`` by the index keys' typed values, NULL/invalid last."""
    cols = typed_index_columns(table, keys, index_keys)
    typed = pa.table(cols, names=[f"k{i}" for i in range(len(cols))])
    # Arrow sorts NULLs last by default.
    return pc.sort_indices(typed, sort_keys=[(f"k{i}", "ascending") for i in range(len(cols))])


def lookup_column(typed: pa.Array) -> pa.Array:
    """A typed key column whose elements a binary search reads one by one in Python: a date column as
    its days since 1970 (``as_py`` of a date32 is a datetime.date, which has no year 0000)."""
    return pc.cast(typed, pa.int32()) if pa.types.is_date32(typed.type) else typed


def lookup_value(v: Any) -> Any:
    """A bound's value as the elements of its lookup_column read: a typed timestamp column holds
    Timestamp.seconds() (see typed_column), a date column Date.days."""
    if isinstance(v, Timestamp):
        return v.seconds()
    if isinstance(v, Date):
        return v.days
    return v


def _order_key(v: Any) -> tuple[Any, ...]:
    return (1,) if v is None else (0, lookup_value(v))


def first_true(n: int, holds: Callable[[int], bool]) -> int:
    """The first position in [0, n) where a monotone (False..., True...) condition holds, else n."""
    lo, hi = 0, n
    while lo < hi:
        mid = (lo + hi) // 2
        if holds(mid):
            hi = mid
        else:
            lo = mid + 1
    return lo


def range_slice(
    r: Range, sorted_table: pa.Table, keys: KeySpec, index_keys: Sequence[str]
) -> tuple[int, int]:
    """``(start, stop)`` of the rows of ``sorted_table`` (sorted by :func:`index_sort_indices`) that can be in ``r``."""
    cols = [lookup_column(c) for c in typed_index_columns(sorted_table, keys, index_keys)]
    n = sorted_table.num_rows

    def prefix(i: int, length: int) -> list[tuple[Any, ...]]:
        return [_order_key(cols[j][i].as_py()) for j in range(length)]

    low = [_order_key(v) for v in r.lower]
    high = [_order_key(v) for v in r.upper]

    def reached_lower(i: int) -> bool:
        p = prefix(i, len(low))
        return p > low or (p == low and r.lower_inclusive)

    def past_upper(i: int) -> bool:
        p = prefix(i, len(high))
        return p > high or (p == high and not r.upper_inclusive)

    start = first_true(n, reached_lower)
    return start, max(start, first_true(n, past_upper))
