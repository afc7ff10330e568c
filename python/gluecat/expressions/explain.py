"""Render predicates and plans for people: the text of a predicate, and what a plan scans and filters.

>>> from gluecat.expressions.types import Index
>>> from gluecat.expressions.plan import plan
>>> p = plan(And((Compare("=", "country", "US"), Like("category", "Sh%"))), [Index("by_country", ["country"])])
>>> print(explain_text(p))
index by_country (country)
  scan: country = 'US'
  then filter: category LIKE 'Sh%'
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from gluecat.expressions.types import (
    And,
    Between,
    Compare,
    Date,
    FalseP,
    In,
    IsNull,
    Like,
    Literal,
    Not,
    Plan,
    Predicate,
    Range,
    Scalar,
    Timestamp,
    TrueP,
    Value,
)


def _quote(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"


def value_text(v: Value) -> str:
    """A value as an expression literal: 'text', 42, 1.50, DATE '2024-01-01', TIMESTAMP '...'."""
    if isinstance(v, Literal):
        if v.kind == "number":
            return v.text
        if v.kind == "date":
            return f"DATE {_quote(v.text)}"
        if v.kind == "timestamp":
            return f"TIMESTAMP {_quote(v.text)}"
        return _quote(v.text)
    if isinstance(v, str):
        return _quote(v)
    if isinstance(v, Timestamp):
        return f"TIMESTAMP {_quote(str(v))}"
    if isinstance(v, Date):
        return f"DATE {_quote(str(v))}"
    return str(v)


def _not(negated: bool) -> str:
    return "NOT " if negated else ""


def predicate_text(p: Predicate, nested: bool = False) -> str:
    """The predicate as an expression Glue would accept (and :func:`parse` reads back).

    >>> from gluecat.expressions.types import Or
    >>> predicate_text(Or((Compare("=", "k", "a"), In("n", (1, 2), negated=True))))
    "k = 'a' OR n NOT IN (1, 2)"
    """
    if isinstance(p, TrueP):
        return "TRUE"
    if isinstance(p, FalseP):
        return "FALSE"
    if isinstance(p, Compare):
        return f"{p.column} {p.op} {value_text(p.value)}"
    if isinstance(p, In):
        return f"{p.column} {_not(p.negated)}IN ({', '.join(value_text(v) for v in p.values)})"
    if isinstance(p, Between):
        return f"{p.column} {_not(p.negated)}BETWEEN {value_text(p.low)} AND {value_text(p.high)}"
    if isinstance(p, Like):
        return f"{p.column} {_not(p.negated)}LIKE {_quote(p.pattern)}"
    if isinstance(p, IsNull):
        return f"{p.column} IS {_not(p.negated)}NULL"
    if isinstance(p, Not):
        return f"NOT ({predicate_text(p.child)})"
    joiner = " AND " if isinstance(p, And) else " OR "
    text = joiner.join(predicate_text(c, nested=True) for c in p.children)
    return f"({text})" if nested else text


def range_text(r: Range, index_keys: tuple[str, ...], eq_keys: int) -> str:
    """A range as conditions: the equality prefix, then the bounds on the next key."""
    parts = [f"{k} = {value_text(v)}" for k, v in zip(index_keys, r.lower[:eq_keys], strict=False)]
    if len(r.lower) > eq_keys:
        parts.append(
            f"{index_keys[eq_keys]} {'>=' if r.lower_inclusive else '>'} {value_text(r.lower[eq_keys])}"
        )
    if len(r.upper) > eq_keys:
        parts.append(
            f"{index_keys[eq_keys]} {'<=' if r.upper_inclusive else '<'} {value_text(r.upper[eq_keys])}"
        )
    return " AND ".join(parts) if parts else "TRUE"


def _json_value(v: Scalar) -> Any:
    if isinstance(v, Date):
        return str(v)
    if isinstance(v, Decimal | Timestamp):
        return str(v)
    return v


def explain(plan: Plan) -> dict[str, Any]:
    """A JSON-friendly description of a plan.

    Keys: ``Index`` (name or None), ``IndexKeys``, ``Scan`` ("index" or "full"), ``Ranges`` (each with
    ``Lower``/``Upper`` value lists, inclusive flags, and ``Text``), ``KeysUsed`` (index keys bound) and
    ``Residual`` (the filter applied after the lookup, as expression text).
    """
    return {
        "Index": plan.index_name,
        "IndexKeys": list(plan.index_keys),
        "Scan": "full" if plan.index_name is None else "index",
        "KeysUsed": list(plan.index_keys[: plan.eq_keys + (1 if plan.range_key else 0)]),
        "Ranges": [
            {
                "Lower": [_json_value(v) for v in r.lower],
                "LowerInclusive": r.lower_inclusive,
                "Upper": [_json_value(v) for v in r.upper],
                "UpperInclusive": r.upper_inclusive,
                "Text": range_text(r, plan.index_keys, plan.eq_keys),
            }
            for r in plan.ranges
        ],
        "Residual": predicate_text(plan.residual),
    }


def explain_text(plan: Plan) -> str:
    """The plan in a few lines: full scan or index lookup, the ranges scanned, what is filtered after."""
    if plan.index_name is None:
        lines = ["full scan (no usable partition index)"]
    else:
        lines = [f"index {plan.index_name} ({', '.join(plan.index_keys)})"]
        if not plan.ranges:
            lines.append("  scan: nothing (the conditions on the index keys contradict each other)")
        lines.extend(f"  scan: {range_text(r, plan.index_keys, plan.eq_keys)}" for r in plan.ranges)
    if not isinstance(plan.residual, TrueP):
        lines.append(f"  then filter: {predicate_text(plan.residual)}")
    return "\n".join(lines)
