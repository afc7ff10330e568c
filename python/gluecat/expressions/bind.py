"""Bind a parsed predicate to a table's partition keys: resolve names, convert literals to the keys' types.

>>> from gluecat.expressions.parse import parse
>>> bind(parse("YEAR > '2016' and region = 7"), [("year", "int"), ("region", "string")])
And(children=(Compare(op='>', column='year', value=2016), Compare(op='=', column='region', value='7')))
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from datetime import datetime
from decimal import Decimal

from gluecat.errors import InvalidInputException
from gluecat.expressions.types import (
    INT64_MAX,
    INT64_MIN,
    And,
    Between,
    Compare,
    Date,
    FalseP,
    In,
    IsNull,
    KeyType,
    Like,
    Literal,
    Not,
    Or,
    Predicate,
    Scalar,
    Timestamp,
    TrueP,
    UnsupportedKeyType,
    Value,
    is_finite_decimal,
    key_type,
)

KeySpec = Sequence[tuple[str, str]]

_LITERAL_INTEGER = re.compile(r"[+-]?[0-9]+")
# Glue's own examples write dates without zero padding ('2023-9-01'); literals accept that.
_LITERAL_DATE = re.compile(r"([0-9]{1,4})-([0-9]{1,2})-([0-9]{1,2})")


class _Keys:
    def __init__(self, keys: KeySpec) -> None:
        self.names = [name for name, _ in keys]
        self.by_folded = {name.casefold(): (name, glue_type) for name, glue_type in keys}
        self.types: dict[str, KeyType] = {}

    def resolve(self, column: str) -> tuple[str, KeyType]:
        found = self.by_folded.get(column.casefold())
        if found is None:
            listed = ", ".join(self.names) if self.names else "(none)"
            raise InvalidInputException(
                f"Invalid Expression: {column!r} is not a partition key of the table; its partition keys are: {listed}"
            )
        name, glue_type = found
        if name not in self.types:
            try:
                self.types[name] = key_type(glue_type)
            except UnsupportedKeyType as e:
                raise UnsupportedKeyType(f"Invalid Expression: partition key {name!r} has {e.message}") from e
        return name, self.types[name]


def literal_value(lit: Literal, kt: KeyType, column: str) -> Scalar:
    """Convert a literal to a key's type, as Glue does: '2017' on an int key is 2017, 2017 on a string key is '2017'.

    >>> str(literal_value(Literal("2023-9-01"), key_type("date"), "dt"))
    '2023-09-01'
    """
    text = lit.text

    def bad(why: str) -> InvalidInputException:
        return InvalidInputException(
            f"Invalid Expression: {text!r} cannot be compared with partition key {column!r} of type "
            f"{kt.glue_type}: {why}"
        )

    if kt.kind == "string":
        return text
    if kt.kind == "integer":
        if lit.kind in ("date", "timestamp") or not _LITERAL_INTEGER.fullmatch(text.strip()):
            raise bad("not an integer")
        n = int(text.strip())
        if not INT64_MIN <= n <= INT64_MAX:
            raise bad("out of the 64-bit integer range")
        return n
    if kt.kind == "decimal":
        if lit.kind in ("date", "timestamp") or not is_finite_decimal(text.strip()):
            raise bad("not a decimal number")
        number = Decimal(text.strip())
        if int(number.as_tuple().exponent) > 0:
            number = Decimal(int(number))  # 1E+2 is 100: no negative scales downstream
        _, digits, exponent = number.as_tuple()
        if len(digits) + int(exponent) > 38 or -int(exponent) > 38:
            raise bad("more than 38 digits before or after the point")
        return number
    if kt.kind == "date":
        if lit.kind in ("number", "timestamp"):
            raise bad("not a date (yyyy-MM-dd)")
        return _date(text.strip(), bad)
    if lit.kind in ("number", "date"):
        raise bad(_NOT_A_TIMESTAMP)
    return _timestamp(text.strip(), bad)


def _date(text: str, bad: Callable[[str], InvalidInputException]) -> Date:
    m = _LITERAL_DATE.fullmatch(text)
    try:
        if m is None:
            raise ValueError(text)
        return Date.of(int(m.group(1)), int(m.group(2)), int(m.group(3)))
    except ValueError as e:
        raise bad("not a date (yyyy-MM-dd)") from e


_NOT_A_TIMESTAMP = "not a timestamp (yyyy-MM-dd HH:mm:ss, with up to nine digits of a second after a '.')"
_LITERAL_TIMESTAMP = re.compile(
    r"([0-9]{1,4}-[0-9]{1,2}-[0-9]{1,2})[ T]([0-9]{1,2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]{1,9}))?"
)
_ZONED = re.compile(r".*:[0-9]{2}(\.[0-9]*)?\s*(Z|[+-][0-9]{2}(:?[0-9]{2})?)")


def _timestamp(text: str, bad: Callable[[str], InvalidInputException]) -> Timestamp:
    """A timestamp literal to the nanosecond. A date alone is not a timestamp, as Glue says."""
    m = _LITERAL_TIMESTAMP.fullmatch(text)
    if m is None:
        if _ZONED.fullmatch(text):
            raise bad("a timestamp key has no time zone")
        raise bad(_NOT_A_TIMESTAMP)
    year, month, day = (int(part) for part in m.group(1).split("-"))
    try:
        whole = datetime(year, month, day, int(m.group(2)), int(m.group(3)), int(m.group(4)))
    except ValueError as e:
        raise bad(_NOT_A_TIMESTAMP) from e
    return Timestamp.of(whole, int((m.group(5) or "").ljust(9, "0")))


def _value(v: Value, kt: KeyType, column: str) -> Scalar:
    if isinstance(v, Literal):
        return literal_value(v, kt, column)
    return v  # already bound


def bind(pred: Predicate, keys: KeySpec) -> Predicate:
    """Resolve column names case-insensitively to ``keys`` ``[(name, glue_type), ...]`` and type the literals.

    LIKE applies to string keys only, and a key of a type that expressions cannot compare (double,
    boolean, ...) is refused wherever it is named, as Glue refuses both.
    """
    k = _Keys(keys)

    def go(p: Predicate) -> Predicate:
        if isinstance(p, Compare):
            name, kt = k.resolve(p.column)
            return Compare(p.op, name, _value(p.value, kt, name))
        if isinstance(p, In):
            name, kt = k.resolve(p.column)
            return In(name, tuple(_value(v, kt, name) for v in p.values), p.negated)
        if isinstance(p, Between):
            name, kt = k.resolve(p.column)
            return Between(name, _value(p.low, kt, name), _value(p.high, kt, name), p.negated)
        if isinstance(p, Like):
            name, kt = k.resolve(p.column)
            if kt.kind != "string":
                raise InvalidInputException(
                    f"Invalid Expression: LIKE cannot be used on partition key {name!r} of type "
                    f"{kt.glue_type}; it applies to string, char and varchar keys"
                )
            return Like(name, p.pattern, p.negated)
        if isinstance(p, IsNull):
            name, _ = k.resolve(p.column)
            return IsNull(name, p.negated)
        if isinstance(p, And):
            return And(tuple(go(c) for c in p.children))
        if isinstance(p, Or):
            return Or(tuple(go(c) for c in p.children))
        if isinstance(p, Not):
            return Not(go(p.child))
        assert isinstance(p, TrueP | FalseP)
        return p

    return go(pred)


def key_types(keys: KeySpec) -> dict[str, KeyType]:
    """Each key's KeyType by its name (the evaluators' view of ``keys``)."""
    return {name: key_type(glue_type) for name, glue_type in keys}
