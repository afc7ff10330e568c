"""Spark's pushed partition filters (``org.apache.spark.sql.sources.Filter``) as the predicate IR.

The JVM shim sends each filter as a JSON tree: ``{"op": "EqualTo", "attribute": "dt", "value": "2024-01-01"}``,
``{"op": "And", "left": {...}, "right": {...}}``, ``{"op": "Not", "child": {...}}``, ``{"op": "In",
"attribute": "k", "values": [...]}``; the list of filters is ANDed. Values are JSON strings, numbers or
booleans (dates and timestamps as ISO text, decimals best as text).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from gluecat.errors import InvalidInputException
from gluecat.expressions.normalize import conjunction, disjunction, flatten
from gluecat.expressions.types import (
    Compare,
    CompareOp,
    FalseP,
    In,
    IsNull,
    Like,
    Literal,
    Not,
    Predicate,
    TrueP,
)

_SPARK_COMPARISONS: dict[str, CompareOp] = {
    "EqualTo": "=",
    "GreaterThan": ">",
    "GreaterThanOrEqual": ">=",
    "LessThan": "<",
    "LessThanOrEqual": "<=",
}


_SPARK_LEAVES = {
    *_SPARK_COMPARISONS,
    "EqualNullSafe",
    "In",
    "IsNull",
    "IsNotNull",
    "StringStartsWith",
    "StringEndsWith",
    "StringContains",
}


def _spark_value(v: object, op: str) -> Literal:
    if isinstance(v, bool):
        return Literal("true" if v else "false")
    if isinstance(v, int | float):
        return Literal(repr(v) if isinstance(v, float) else str(v), "number")
    if isinstance(v, str):
        return Literal(v)
    raise InvalidInputException(f"Invalid Spark filter: {op} has an unsupported value {v!r}")


def _like_escape(s: str) -> str:
    return s.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _spark_filter(f: Mapping[str, Any], positive: bool = True) -> Predicate:
    """One filter; ``positive`` is False under an odd number of NOTs.

    A comparison with a NULL value is unknown, and IN with a NULL among its values is unknown when it is not
    true. The IR has no unknown constant, so such a part becomes the constant that gives the same matches
    where it stands: FALSE (or the IN without its NULLs) under even NOTs, TRUE under odd ones, since a
    predicate that is true with an unknown part stays true whichever way the unknown is decided.
    """
    if not isinstance(f, Mapping) or "op" not in f:
        raise InvalidInputException(f"Invalid Spark filter: expected an object with an 'op', got {f!r}")
    op = f["op"]
    try:
        if op in ("And", "Or"):
            children = (_spark_filter(f["left"], positive), _spark_filter(f["right"], positive))
            return conjunction(children) if op == "And" else disjunction(children)
        if op == "Not":
            return Not(_spark_filter(f["child"], not positive))
        if op in ("AlwaysTrue", "AlwaysFalse"):
            return TrueP() if op == "AlwaysTrue" else FalseP()
        if op not in _SPARK_LEAVES:
            raise InvalidInputException(f"Invalid Spark filter: unsupported filter {op!r}")
        column = f["attribute"]
        if not isinstance(column, str):
            raise InvalidInputException(f"Invalid Spark filter: {op} attribute must be a string")
        if op in _SPARK_COMPARISONS:
            if f["value"] is None:
                return FalseP() if positive else TrueP()
            return Compare(_SPARK_COMPARISONS[op], column, _spark_value(f["value"], op))
        if op == "EqualNullSafe":
            if f["value"] is None:
                return IsNull(column)
            return Compare("=", column, _spark_value(f["value"], op))
        if op == "In":
            values = [v for v in f["values"] if v is not None]
            if len(values) < len(f["values"]) and not positive:
                return TrueP()
            if not values:
                return FalseP()
            return In(column, tuple(_spark_value(v, op) for v in values))
        if op == "IsNull":
            return IsNull(column)
        if op == "IsNotNull":
            return IsNull(column, negated=True)
        if op in ("StringStartsWith", "StringEndsWith", "StringContains"):
            value = f["value"]
            if not isinstance(value, str):
                raise InvalidInputException(f"Invalid Spark filter: {op} needs a string value")
            body = _like_escape(value)
            pattern = {
                "StringStartsWith": f"{body}%",
                "StringEndsWith": f"%{body}",
                "StringContains": f"%{body}%",
            }[op]
            return Like(column, pattern)
    except KeyError as e:
        raise InvalidInputException(f"Invalid Spark filter: {op} is missing {e.args[0]!r}") from e
    raise InvalidInputException(f"Invalid Spark filter: unsupported filter {op!r}")


def parse_spark_filters(filters: Sequence[Mapping[str, Any]]) -> Predicate:
    """Translate Spark's pushed partition filters (a JSON tree per ``sources.Filter``, ANDed) into the IR.

    >>> parse_spark_filters([{"op": "StringStartsWith", "attribute": "k", "value": "a_b"}])
    Like(column='k', pattern='a\\\\_b%', negated=False)
    """
    return flatten(conjunction([_spark_filter(f) for f in filters]))
