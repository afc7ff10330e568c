"""Evaluate a bound predicate over many partitions at once with Arrow compute kernels.

The input is a table with one string column per partition key (the values as stored). Each referenced
key is cast once to its type; a value that is not valid for the type becomes NULL there, so it matches no
comparison (it never raises). Logic is SQL's three-valued logic (Arrow's Kleene kernels); a partition
matches when the predicate is true. The rules are those of :func:`gluecat.expressions.types.partition_value`.

>>> import pyarrow as pa
>>> t = pa.table({"year": ["2016", "2017", "x", None]})
>>> evaluate_arrow(Compare(">", "year", 2016), t, [("year", "int")]).to_pylist()
[False, True, False, False]
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal
from typing import cast

import pyarrow as pa
import pyarrow.compute as pc

from gluecat.errors import InvalidInputException
from gluecat.expressions.bind import KeySpec
from gluecat.expressions.types import (
    DATE_VALUE,
    DECIMAL_VALUE,
    INT64_MAX,
    INT64_MIN,
    INTEGER_VALUE,
    TIMESTAMP_VALUE,
    And,
    Between,
    Compare,
    Date,
    FalseP,
    In,
    IsNull,
    KeyType,
    Like,
    Not,
    Or,
    Plan,
    Predicate,
    Range,
    Scalar,
    Timestamp,
    TrueP,
    key_type,
    like_pattern,
)

_NULL_BOOL = pa.scalar(None, pa.bool_())


def _anchored(pattern: str) -> str:
    return f"^(?:{pattern})$"


def _valid_and(text: pa.Array, pattern: str) -> pa.Array:
    valid = pc.match_substring_regex(text, _anchored(pattern))
    # A timestamp's year 0000 is outside Python's datetime, which partition_value reads it with; a date's
    # is in range (the partition index document allows 0000-01-01 to 9999-12-31; see types.Date).
    return (
        pc.and_kleene(valid, pc.invert(pc.starts_with(text, "0000")))
        if pattern == TIMESTAMP_VALUE.pattern
        else valid
    )


def _digits(text: pa.Array, start: int, stop: int) -> pa.Array:
    return pc.cast(pc.utf8_slice_codeunits(text, start, stop), pa.int64())


def typed_column(raw: pa.Array | pa.ChunkedArray, kt: KeyType) -> pa.Array:
    """Cast stored partition values (strings) to a key's type; invalid values become NULL.

    The store can use this to sort partitions by an index's keys and to write typed row-group statistics.
    """
    text = raw.combine_chunks() if isinstance(raw, pa.ChunkedArray) else raw
    if not pa.types.is_string(text.type):
        text = pc.cast(text, pa.string())
    if kt.kind == "string":
        return text
    if kt.kind == "integer":
        valid = _valid_and(text, INTEGER_VALUE.pattern)
        wide = pc.cast(pc.if_else(valid, text, "0"), pa.decimal128(20, 0))
        lo, hi = (
            pa.scalar(Decimal(INT64_MIN), pa.decimal128(20, 0)),
            pa.scalar(Decimal(INT64_MAX), pa.decimal128(20, 0)),
        )
        valid = pc.and_kleene(valid, pc.and_kleene(pc.greater_equal(wide, lo), pc.less_equal(wide, hi)))
        clamped = pc.if_else(valid, wide, pa.scalar(Decimal(0), pa.decimal128(20, 0)))
        return pc.if_else(valid, pc.cast(clamped, pa.int64()), pa.scalar(None, pa.int64()))
    if kt.kind == "decimal":
        return _decimals(text)
    if kt.kind == "date":
        valid = _valid_and(text, DATE_VALUE.pattern)
        safe = pc.if_else(valid, text, "1970-01-01")
        ts = pc.strptime(safe, format="%Y-%m-%d", unit="s", error_is_null=True)
        # strptime rolls 2023-02-30 over to 2023-03-02 (other bad fields give NULL): the day must survive.
        valid = pc.and_kleene(valid, pc.equal(pc.day(ts), _digits(safe, 8, 10)))
        return pc.if_else(valid, pc.cast(ts, pa.date32()), pa.scalar(None, pa.date32()))
    valid = _valid_and(text, TIMESTAMP_VALUE.pattern)
    safe = pc.if_else(valid, text, "1970-01-01 00:00:00")
    head = pc.replace_substring(pc.utf8_slice_codeunits(safe, 0, 19), "T", " ")
    seconds = pc.strptime(head, format="%Y-%m-%d %H:%M:%S", unit="s", error_is_null=True)
    # As for dates, plus second 60, which strptime rolls over into the next minute.
    survived = pc.and_kleene(
        pc.equal(pc.day(seconds), _digits(head, 8, 10)), pc.equal(pc.second(seconds), _digits(head, 17, 19))
    )
    valid = pc.and_kleene(valid, survived)
    # Seconds since 1970 with nine decimal places: exact to the nanosecond in any year (an Arrow
    # timestamp in nanoseconds ends in 2262); compared as Timestamp.seconds() is.
    whole = pc.cast(
        pc.cast(pc.if_else(valid, seconds, pa.scalar(0, pa.timestamp("s"))), pa.int64()), _SECONDS
    )
    digits = pc.utf8_rpad(pc.utf8_slice_codeunits(safe, 20, 29), width=9, padding="0")
    fraction = pc.cast(pc.binary_join_element_wise("0", digits, "."), _FRACTION)
    exact = pc.add(whole, fraction)
    return pc.if_else(valid, exact, pa.scalar(None, exact.type))


_SECONDS = pa.decimal128(28, 9)  # any int64 of seconds, with nine places
_FRACTION = pa.decimal128(10, 9)


def _decimals(text: pa.Array) -> pa.Array:
    """Decimal values, exact whatever their scale: cast to a decimal type wide enough for every valid
    value of the column (decimal256 past 38 digits); invalid values NULL."""
    valid = _valid_and(text, DECIMAL_VALUE.pattern)
    unsigned = pc.replace_substring_regex(pc.if_else(valid, text, "0"), "^[+-]", "")
    length = pc.utf8_length(unsigned)
    point = pc.find_substring(unsigned, ".")
    none = pa.scalar(0, point.type)
    whole_digits = pc.if_else(pc.less(point, none), length, point)
    scale_digits = pc.if_else(pc.less(point, none), none, pc.subtract(pc.subtract(length, point), 1))
    scale = pc.max(scale_digits).as_py() or 0
    precision = max(pc.max(whole_digits).as_py() or 1, 1) + scale
    dtype = pa.decimal128(precision, scale) if precision <= 38 else pa.decimal256(precision, scale)
    cast = pc.cast(pc.if_else(valid, text, "0"), dtype)
    return pc.if_else(valid, cast, pa.scalar(None, dtype))


def _operands(column: pa.Array, value: Scalar) -> tuple[pa.Array, pa.Scalar]:
    """The column and the literal as Arrow can compare them."""
    if isinstance(value, Decimal):
        # A literal may have more digits than the key's decimal(p,s); compare in a type that holds both,
        # and beyond decimal128's 38 digits in decimal256 (bind keeps literals within 38 digits).
        t = column.type
        _, digits, exponent = value.as_tuple()
        scale = max(t.scale, -int(exponent), 0)
        precision = max(t.precision - t.scale, len(digits) + int(exponent), 1) + scale
        if precision <= 38:
            return column, pa.scalar(value, pa.decimal128(precision, scale))
        wide = pa.decimal256(precision, scale)
        return pc.cast(column, wide), pa.scalar(value, wide)
    if isinstance(value, Timestamp):
        return _operands(column, value.seconds())
    if isinstance(value, Date):
        return column, _date32(value)
    return column, pa.scalar(value, column.type)


def _date32(value: Date) -> pa.Scalar:
    """A Date as Arrow's date32 (days since 1970), which, unlike a datetime.date, holds year 0000."""
    return pa.scalar(value.days, pa.int32()).cast(pa.date32())


_RE2_SPECIAL = set("\\.+*?()|[]{}^$")


def _re2_literal(ch: str) -> str:
    return "\\" + ch if ch in _RE2_SPECIAL else ch


def like_regex(pattern: str) -> str:
    r"""A LIKE pattern as an anchored RE2 regular expression.

    Arrow's own ``match_like`` mishandles escapes in its shortcut for patterns like ``'%\\['``, so LIKE
    is translated here.

    >>> like_regex("a\\_b%.")
    '(?s)^a_b.*\\.$'
    """
    out = ["(?s)^"]
    chars = iter(like_pattern(pattern))
    for ch in chars:
        if ch == "\\":
            out.append(_re2_literal(next(chars, "")))
        elif ch == "%":
            out.append(".*")
        elif ch == "_":
            out.append(".")
        else:
            out.append(_re2_literal(ch))
    out.append("$")
    return "".join(out)


_COMPARE = {
    "=": pc.equal,
    "<>": pc.not_equal,
    "<": pc.less,
    "<=": pc.less_equal,
    ">": pc.greater,
    ">=": pc.greater_equal,
}


class _Columns:
    """The table's key columns, raw and typed, each computed once."""

    def __init__(
        self, table: pa.Table, keys: KeySpec, typed: dict[tuple[str, str], pa.Array] | None = None
    ) -> None:
        self.table = table
        self.types = {name.casefold(): glue_type for name, glue_type in keys}
        self.raw_cache: dict[str, pa.Array] = {}
        self.typed_cache: dict[tuple[str, str], pa.Array] = {} if typed is None else typed

    def raw(self, name: str) -> pa.Array:
        folded = name.casefold()
        if folded not in self.raw_cache:
            matches = [c for c in self.table.column_names if c.casefold() == folded]
            if not matches:
                raise InvalidInputException(f"Partition table has no column for partition key {name!r}")
            col = self.table.column(matches[0])
            arr = col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col
            self.raw_cache[folded] = arr if pa.types.is_string(arr.type) else pc.cast(arr, pa.string())
        return self.raw_cache[folded]

    def typed(self, name: str) -> pa.Array:
        folded = name.casefold()
        if folded not in self.types:
            raise InvalidInputException(f"{name!r} is not a partition key")
        key = (folded, self.types[folded])
        found = self.typed_cache.get(key)
        if found is None:
            found = self.typed_cache[key] = typed_column(self.raw(name), key_type(self.types[folded]))
        return found


def _all(n: int, value: bool) -> pa.Array:
    return pa.repeat(pa.scalar(value, pa.bool_()), n)


def _eval(p: Predicate, cols: _Columns, n: int) -> pa.Array:
    if isinstance(p, Compare):
        col = cols.typed(p.column)
        return _COMPARE[p.op](*_operands(col, p.value))  # type: ignore[arg-type]
    if isinstance(p, In):
        col = cols.typed(p.column)
        if pa.types.is_decimal(col.type):
            hits = [pc.equal(*_operands(col, v)) for v in p.values]  # type: ignore[arg-type]
            result = hits[0]
            for h in hits[1:]:
                result = pc.or_kleene(result, h)
        else:
            values = list(p.values)
            value_set = (
                pa.array([cast(Date, v).days for v in values], pa.int32()).cast(pa.date32())
                if pa.types.is_date32(col.type)
                else pa.array(values, col.type)
            )
            found = pc.is_in(col, value_set=value_set)
            # is_in says False for NULL; SQL says unknown, which NOT IN must keep unknown.
            result = pc.if_else(pc.is_valid(col), found, _NULL_BOOL)
        return pc.invert(result) if p.negated else result
    if isinstance(p, Between):
        col = cols.typed(p.column)
        result = pc.and_kleene(
            pc.greater_equal(*_operands(col, p.low)),  # type: ignore[arg-type]
            pc.less_equal(*_operands(col, p.high)),  # type: ignore[arg-type]
        )
        return pc.invert(result) if p.negated else result
    if isinstance(p, Like):
        result = pc.match_substring_regex(cols.raw(p.column), like_regex(p.pattern))
        return pc.invert(result) if p.negated else result
    if isinstance(p, IsNull):
        result = pc.is_null(cols.raw(p.column))
        return pc.invert(result) if p.negated else result
    if isinstance(p, And | Or):
        combine = pc.and_kleene if isinstance(p, And) else pc.or_kleene
        acc = _all(n, isinstance(p, And))
        for child in p.children:
            acc = combine(acc, _eval(child, cols, n))
        return acc
    if isinstance(p, Not):
        return pc.invert(_eval(p.child, cols, n))
    assert isinstance(p, TrueP | FalseP)
    return _all(n, isinstance(p, TrueP))


def _true(result: pa.Array) -> pa.Array:
    """Unknown (NULL) is not a match: a NULL-free mask."""
    return pc.and_kleene(pc.is_valid(result), result)


def evaluate_arrow(
    pred: Predicate, table: pa.Table, keys: KeySpec, typed: dict[tuple[str, str], pa.Array] | None = None
) -> pa.Array:
    """A mask (no NULLs) of the rows of ``table`` (key columns of strings) that ``pred`` matches.

    ``typed``, if given, keeps the key columns cast to their types (by key name and type) for later
    calls on the same rows: casting is most of the cost of evaluating a predicate over a few rows.
    """
    result = _eval(pred, _Columns(table, keys, typed), table.num_rows)
    return _true(result)


def _lexicographic(
    cols: list[pa.Array], bound: tuple[Scalar, ...], greater: bool, inclusive: bool
) -> pa.Array:
    """Row prefix > bound (or <), or equal when inclusive, built from the last key backwards."""
    n = len(cols[0]) if cols else 0
    result = _all(n, inclusive)
    compare = pc.greater if greater else pc.less
    for col, value in reversed(list(zip(cols, bound, strict=False))):
        c, s = _operands(col, value)
        result = pc.or_kleene(compare(c, s), pc.and_kleene(pc.equal(c, s), result))
    return result


def range_mask(
    ranges: Sequence[Range], table: pa.Table, keys: KeySpec, index_keys: Sequence[str]
) -> pa.Array:
    """A mask of the rows whose index-key values fall in any of ``ranges`` (exactly: NULL keys excluded)."""
    cols = _Columns(table, keys)
    n = table.num_rows
    result = _all(n, False)
    for r in ranges:
        lower = [cols.typed(k) for k in index_keys[: len(r.lower)]]
        upper = [cols.typed(k) for k in index_keys[: len(r.upper)]]
        inside = pc.and_kleene(
            _lexicographic(lower, r.lower, True, r.lower_inclusive) if r.lower else _all(n, True),
            _lexicographic(upper, r.upper, False, r.upper_inclusive) if r.upper else _all(n, True),
        )
        result = pc.or_kleene(result, inside)
    return _true(result)


def plan_mask(plan: Plan, table: pa.Table, keys: KeySpec) -> pa.Array:
    """The rows a plan selects: inside its ranges (when it uses an index) and matching its residual."""
    residual = evaluate_arrow(plan.residual, table, keys)
    if plan.index_name is None:
        return residual
    return pc.and_(range_mask(plan.ranges, table, keys, plan.index_keys), residual)
