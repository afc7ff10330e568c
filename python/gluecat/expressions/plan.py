"""Choose a partition index for a bound predicate and split it into index key ranges plus a residual filter.

The rules are those of Glue's partition index document (004):

- only the top-level AND-joined parts of the expression can use an index; a top-level OR uses none;
- an index is usable only when a part bounds its FIRST key with =, >, >=, <, <= or BETWEEN;
- the lookup narrows on the following keys while each previous key is bound by equality; a range on a key
  ends the prefix (as in a composite B-tree);
- parts with LIKE, IN, OR, NOT (and <>, IS NULL, NOT BETWEEN) are never used by the index: they, and every
  part the chosen index does not enforce, are filtered after the lookup (the residual);
- of the usable indexes the one binding the most keys by equality wins, then one that adds a range; a tie
  goes to the first defined.

>>> from gluecat.expressions.types import And, Compare, Index
>>> p = plan(And((Compare("=", "country", "US"), Compare(">", "year", 2018))), [Index("i", ["country", "year"])])
>>> p.index_name, p.ranges[0], p.residual
('i', Range(lower=('US', 2018), lower_inclusive=False, upper=('US',), upper_inclusive=True), TrueP())
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from gluecat.expressions.normalize import conjunction, conjuncts, normalize
from gluecat.expressions.types import (
    Between,
    Compare,
    Index,
    Plan,
    Predicate,
    Range,
    Scalar,
)

_SARGABLE = ("=", "<", "<=", ">", ">=")


@dataclass(frozen=True)
class _Bound:
    op: str  # one of _SARGABLE
    value: Scalar
    part: int  # which top-level conjunct it came from


@dataclass
class _Candidate:
    index: Index
    eq_values: list[Scalar]
    lower: tuple[Scalar, bool] | None
    upper: tuple[Scalar, bool] | None
    range_key: str | None
    consumed: set[int]
    empty: bool

    @property
    def score(self) -> tuple[int, int]:
        return len(self.eq_values), 1 if self.range_key is not None else 0


def _lt(a: Scalar, b: Scalar) -> bool:
    return a < b  # type: ignore[operator]  # values bound to one key share one type


def _satisfies(v: Scalar, b: _Bound) -> bool:
    if b.op == "=":
        return v == b.value
    if b.op == "<":
        return _lt(v, b.value)
    if b.op == "<=":
        return not _lt(b.value, v)
    if b.op == ">":
        return _lt(b.value, v)
    return not _lt(v, b.value)


def _sargable_bounds(parts: Sequence[Predicate]) -> dict[str, list[_Bound]]:
    bounds: dict[str, list[_Bound]] = {}
    for i, part in enumerate(parts):
        if isinstance(part, Compare) and part.op in _SARGABLE:
            bounds.setdefault(part.column.casefold(), []).append(_Bound(part.op, part.value, i))  # type: ignore[arg-type]
        elif isinstance(part, Between) and not part.negated:
            key = part.column.casefold()
            bounds.setdefault(key, []).extend((_Bound(">=", part.low, i), _Bound("<=", part.high, i)))  # type: ignore[arg-type]
    return bounds


def _tightest(bounds: list[_Bound], lower: bool) -> tuple[Scalar, bool] | None:
    """The tightest lower (or upper) bound: (value, inclusive)."""
    best: tuple[Scalar, bool] | None = None
    ops = (">", ">=") if lower else ("<", "<=")
    for b in bounds:
        if b.op not in ops:
            continue
        inclusive = b.op.endswith("=")
        if best is None:
            best = (b.value, inclusive)
            continue
        value, best_inclusive = best
        tighter = _lt(value, b.value) if lower else _lt(b.value, value)
        if tighter or (b.value == value and best_inclusive and not inclusive):
            best = (b.value, inclusive)
    return best


def _candidate(index: Index, bounds: dict[str, list[_Bound]]) -> _Candidate | None:
    eq_values: list[Scalar] = []
    consumed: set[int] = set()
    lower = upper = None
    range_key: str | None = None
    empty = False
    for key in index.keys:
        key_bounds = bounds.get(key.casefold())
        if not key_bounds:
            break
        consumed.update(b.part for b in key_bounds)
        equal = next((b for b in key_bounds if b.op == "="), None)
        if equal is not None:
            # Every other part on this key is then decided by the one value: kept by it or contradicted.
            empty = empty or not all(_satisfies(equal.value, b) for b in key_bounds)
            eq_values.append(equal.value)
            continue
        lower, upper = _tightest(key_bounds, True), _tightest(key_bounds, False)
        if lower is not None and upper is not None:
            (lo, lo_inc), (hi, hi_inc) = lower, upper
            empty = empty or _lt(hi, lo) or (lo == hi and not (lo_inc and hi_inc))
        range_key = key
        break
    if not eq_values and range_key is None:
        return None
    return _Candidate(index, eq_values, lower, upper, range_key, consumed, empty)


def _range(c: _Candidate) -> Range:
    prefix = tuple(c.eq_values)
    lower, lower_inc = ((*prefix, c.lower[0]), c.lower[1]) if c.lower else (prefix, True)
    upper, upper_inc = ((*prefix, c.upper[0]), c.upper[1]) if c.upper else (prefix, True)
    return Range(lower, lower_inc, upper, upper_inc)


def plan(pred: Predicate, indexes: Sequence[Index]) -> Plan:
    """Pick the best usable index for a bound predicate, its key ranges, and the residual filter.

    Pass only ACTIVE indexes. The residual is normalized and holds every part the index lookup does not
    enforce; with no usable index it is the whole (normalized) predicate.
    """
    parts = conjuncts(pred)
    bounds = _sargable_bounds(parts)
    best: _Candidate | None = None
    for index in indexes:
        c = _candidate(index, bounds)
        if c is not None and (best is None or c.score > best.score):
            best = c
    if best is None:
        return Plan(None, (), (), normalize(pred))
    residual = normalize(conjunction([p for i, p in enumerate(parts) if i not in best.consumed]))
    return Plan(
        index_name=best.index.name,
        index_keys=best.index.keys,
        ranges=() if best.empty else (_range(best),),
        residual=residual,
        eq_keys=len(best.eq_values),
        range_key=best.range_key,
    )
