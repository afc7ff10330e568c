"""A plain row-at-a-time evaluator: the obviously-correct oracle the bulk evaluator is tested against.

It shares only the definition of valid partition values (:func:`partition_value`) with the Arrow
evaluator; everything else (three-valued logic, LIKE, lexicographic ranges) is written out directly.

>>> evaluate_row(Like("year", "%7"), {"year": "2017"}, [("year", "string")])
True
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from gluecat.expressions.bind import KeySpec
from gluecat.expressions.types import (
    And,
    Between,
    Compare,
    FalseP,
    In,
    IsNull,
    Like,
    Not,
    Or,
    Predicate,
    Range,
    Scalar,
    TrueP,
    key_type,
    like_pattern,
    partition_value,
)

_OPS: dict[str, Callable[[Any, Any], bool]] = {
    "=": operator.eq,
    "<>": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}


def like_regex(pattern: str) -> re.Pattern[str]:
    """``%`` any run, ``_`` any one character, a backslash makes the next character literal.

    A lone backslash at the very end is ignored (:func:`like_pattern`).
    """
    out = []
    chars = iter(like_pattern(pattern))
    for ch in chars:
        if ch == "\\":
            out.append(re.escape(next(chars, "")))
        elif ch == "%":
            out.append(".*")
        elif ch == "_":
            out.append(".")
        else:
            out.append(re.escape(ch))
    return re.compile("".join(out), re.DOTALL)


def _typed(values: Mapping[str, str | None], keys: KeySpec, column: str) -> Scalar | None:
    for name, glue_type in keys:
        if name.casefold() == column.casefold():
            raw = next((v for k, v in values.items() if k.casefold() == column.casefold()), None)
            return partition_value(raw, key_type(glue_type))
    raise KeyError(column)


def _raw(values: Mapping[str, str | None], column: str) -> str | None:
    return next((v for k, v in values.items() if k.casefold() == column.casefold()), None)


def _not(v: bool | None) -> bool | None:
    return None if v is None else not v


def evaluate3(p: Predicate, values: Mapping[str, str | None], keys: KeySpec) -> bool | None:
    """True, False, or None for unknown (SQL's three-valued logic)."""
    if isinstance(p, TrueP):
        return True
    if isinstance(p, FalseP):
        return False
    if isinstance(p, Not):
        return _not(evaluate3(p.child, values, keys))
    if isinstance(p, And):
        results = [evaluate3(c, values, keys) for c in p.children]
        if False in results:
            return False
        return None if None in results else True
    if isinstance(p, Or):
        results = [evaluate3(c, values, keys) for c in p.children]
        if True in results:
            return True
        return None if None in results else False
    if isinstance(p, IsNull):
        return (_raw(values, p.column) is None) != p.negated
    if isinstance(p, Like):
        raw = _raw(values, p.column)
        if raw is None:
            return None
        return bool(like_regex(p.pattern).fullmatch(raw)) != p.negated
    v = _typed(values, keys, p.column)
    if v is None:
        return None
    if isinstance(p, Compare):
        return _OPS[p.op](v, p.value)
    if isinstance(p, In):
        return (v in p.values) != p.negated
    assert isinstance(p, Between)
    return (bool(p.low <= v) and bool(v <= p.high)) != p.negated  # type: ignore[operator]


def evaluate_row(pred: Predicate, values: Mapping[str, str | None], keys: KeySpec) -> bool:
    """Whether one partition (its key values as stored, by key name) matches a bound predicate."""
    return evaluate3(pred, values, keys) is True


def row_in_range(
    r: Range, values: Mapping[str, str | None], keys: KeySpec, index_keys: Sequence[str]
) -> bool:
    """Whether a partition's index-key prefix lies in ``r`` (Python tuple comparison is lexicographic)."""
    typed = [_typed(values, keys, k) for k in index_keys]
    lower, upper = typed[: len(r.lower)], typed[: len(r.upper)]
    if None in lower or None in upper:
        return False
    lo, hi = tuple(lower), tuple(upper)
    above = lo > r.lower or (r.lower_inclusive and lo == r.lower)
    below = hi < r.upper or (r.upper_inclusive and hi == r.upper)
    return bool(above and below)
