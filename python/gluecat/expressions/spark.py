"""Spark's pushed partition filters (``org.apache.spark.sql.sources.Filter``) as the predicate IR.

The JVM shim sends each filter as a JSON tree: ``{"op": "EqualTo", "attribute": "dt", "value": "2024-01-01"}``,
``{"op": "And", "left": {...}, "right": {...}}`` (or ``{"op": "Or", "children": [...]}`` for a chain of one
operator, which the shim sends flat), ``{"op": "Not", "child": {...}}``, ``{"op": "In", "attribute": "k",
"values": [...]}``; the list of filters is ANDed. Values are JSON strings, numbers or booleans (dates as
ISO text, timestamps as the session's local time written as partition values are, decimals best as text).

Chains of AND or of OR are read without recursion, however long (a DataFrame's ``reduce(or_, ...)``
makes one); NOT and alternations of AND and OR may nest at most MAX_DEPTH levels, as in expressions.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from gluecat.errors import InvalidInputException
from gluecat.expressions.bind import KeySpec, literal_value
from gluecat.expressions.normalize import conjunction, disjunction, flatten
from gluecat.expressions.parse import MAX_DEPTH
from gluecat.expressions.types import (
    And,
    Compare,
    CompareOp,
    FalseP,
    In,
    IsNull,
    Like,
    Literal,
    Not,
    Or,
    Predicate,
    TrueP,
    UnsupportedKeyType,
    key_type,
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


class TooDeep(InvalidInputException):
    """A filter nests more than MAX_DEPTH levels."""


def _operands(f: Mapping[str, Any]) -> list[Any]:
    """The operands of an And or Or, with nested filters of the same operator spliced in, in order,
    without recursion (a left-deep chain of thousands is as cheap as a flat list)."""
    op = f["op"]
    out: list[Any] = []
    pending = [f]
    while pending:
        node = pending.pop()
        if isinstance(node, Mapping) and node.get("op") == op:
            children = node["children"] if "children" in node else [node["left"], node["right"]]
            if not isinstance(children, list):
                raise InvalidInputException(f"Invalid Spark filter: {op} children must be a list")
            pending.extend(reversed(children))
        else:
            out.append(node)
    return out


def _spark_filter(f: Mapping[str, Any], positive: bool = True, depth: int = 0) -> Predicate:
    """One filter; ``positive`` is False under an odd number of NOTs.

    A comparison with a NULL value is unknown, and IN with a NULL among its values is unknown when it is not
    true. The IR has no unknown constant, so such a part becomes the constant that gives the same matches
    where it stands: FALSE (or the IN without its NULLs) under even NOTs, TRUE under odd ones, since a
    predicate that is true with an unknown part stays true whichever way the unknown is decided.
    """
    if not isinstance(f, Mapping) or "op" not in f:
        raise InvalidInputException(
            f"Invalid Spark filter: expected an object with an 'op', got {str(f)[:80]}"
        )
    op = f["op"]
    if depth > MAX_DEPTH:
        raise TooDeep(
            f"Invalid Spark filter: nested more than {MAX_DEPTH} levels deep (NOT, and AND within OR or OR "
            "within AND)"
        )
    try:
        if op in ("And", "Or"):
            children = [_spark_filter(c, positive, depth + 1) for c in _operands(f)]
            return conjunction(children) if op == "And" else disjunction(children)
        if op == "Not":
            return Not(_spark_filter(f["child"], not positive, depth + 1))
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
            if not positive:
                # NOT (k <=> v) is true where k is NULL, but k = v is unknown there, so NOT (k = v)
                # would drop the NULL partitions (Hive's marker, which the IR cannot test for).
                return FalseP()
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


def relaxed(pred: Predicate, keys: KeySpec) -> Predicate:
    """Spark's predicate, with each condition that gluecat cannot evaluate on these keys (a key of a type
    that expressions do not compare, such as double or boolean; LIKE on a key that is not a string; a
    value outside what expressions take for the key's type, such as the year +10000 that Spark's optimizer
    puts in CAST(ts AS DATE) = DATE'9999-12-31') made to select every partition it might: TRUE where it
    stands under an even number of NOTs, FALSE under an odd one. Spark evaluates all its partition filters
    again on the partitions the catalog returns, so selecting more only narrows less, where refusing would
    fail the query.
    """
    types = {name.casefold(): glue_type for name, glue_type in keys}

    def usable(p: Predicate) -> bool:
        glue_type = types.get(getattr(p, "column", "").casefold())
        if glue_type is None:
            return True  # not a partition key: bind() says so
        try:
            kt = key_type(glue_type)
        except UnsupportedKeyType:
            return False
        if isinstance(p, Like):
            return kt.kind == "string"
        values = p.values if isinstance(p, In) else (p.value,) if isinstance(p, Compare) else ()
        try:
            for v in values:
                if isinstance(v, Literal):
                    literal_value(v, kt, glue_type)
        except InvalidInputException:
            return False
        return True

    def go(p: Predicate, positive: bool) -> Predicate:
        if isinstance(p, And | Or):
            return type(p)(tuple(go(c, positive) for c in p.children))
        if isinstance(p, Not):
            return Not(go(p.child, not positive))
        if isinstance(p, TrueP | FalseP) or usable(p):
            return p
        return TrueP() if positive else FalseP()

    return flatten(go(pred, True))
