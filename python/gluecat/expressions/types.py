"""The predicate IR, partition key types, and the rules that turn a partition value string into a typed value.

The IR is a handful of frozen dataclasses. The same classes are used before and after binding: before
binding, a column is the name as written and a value is a :class:`Literal` (text plus how it was written);
after binding, a column is the partition key's own name and a value is a typed Python scalar (``str``,
``int``, ``Decimal``, :class:`Date` or :class:`Timestamp`).

>>> Compare("=", "year", 2017)
Compare(op='=', column='year', value=2017)
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from decimal import Decimal, InvalidOperation
from typing import Literal as TypingLiteral

from gluecat.errors import InvalidInputException

LiteralKind = TypingLiteral["string", "number", "date", "timestamp"]


@dataclass(frozen=True)
class Literal:
    """A constant as written in an expression: its text and whether it was quoted, a number, or typed."""

    text: str
    kind: LiteralKind = "string"


@dataclass(frozen=True, order=True)
class Timestamp:
    """A timestamp key's value to the nanosecond (a datetime stops at the microsecond): nanoseconds since
    1970-01-01 00:00:00, as a Python int (any year, no overflow).

    >>> str(Timestamp.of(datetime(2022, 1, 31, 23, 59, 59), 999_999_999))
    '2022-01-31 23:59:59.999999999'
    """

    nanos: int

    @staticmethod
    def of(whole_seconds: datetime, fraction_nanos: int = 0) -> Timestamp:
        seconds = (whole_seconds - _EPOCH) // timedelta(seconds=1)
        return Timestamp(seconds * 1_000_000_000 + fraction_nanos)

    def seconds(self) -> Decimal:
        """Seconds since 1970 with the nanoseconds as nine decimal places (what the Arrow evaluator uses)."""
        return Decimal(self.nanos).scaleb(-9)

    def __str__(self) -> str:
        seconds, nanos = divmod(self.nanos, 1_000_000_000)
        text = (_EPOCH + timedelta(seconds=seconds)).isoformat(sep=" ")
        return f"{text}.{nanos:09d}".rstrip("0") if nanos else text


_EPOCH = datetime(1970, 1, 1)

# Year 0000 (1 BC) is a leap year like 0400, exactly one 400-year cycle (146,097 days) before it.
_CYCLE_YEARS, _CYCLE_DAYS = 400, 146_097
_DAY_ONE = date(1970, 1, 1)


@dataclass(frozen=True, order=True)
class Date:
    """A date key's value: days since 1970-01-01 in the proleptic Gregorian calendar, for the years
    0000 to 9999 that the partition index document allows (a ``datetime.date`` starts at year 1).

    >>> Date.of(0, 12, 31) < Date.of(1, 1, 1), str(Date.of(0, 2, 29)), Date.of(1970, 1, 2).days
    (True, '0000-02-29', 1)
    """

    days: int

    @staticmethod
    def of(year: int, month: int, day: int) -> Date:
        """The date, or ValueError if there is no such day (or the year is not 0000..9999)."""
        if year == 0:
            return Date((date(_CYCLE_YEARS, month, day) - _DAY_ONE).days - _CYCLE_DAYS)
        return Date((date(year, month, day) - _DAY_ONE).days)

    def __str__(self) -> str:
        if self.days >= (date(1, 1, 1) - _DAY_ONE).days:
            return (_DAY_ONE + timedelta(days=self.days)).isoformat()
        shifted = _DAY_ONE + timedelta(days=self.days + _CYCLE_DAYS)
        return f"0000-{shifted.month:02d}-{shifted.day:02d}"


Scalar = str | int | Decimal | Date | Timestamp
Value = Literal | Scalar

CompareOp = TypingLiteral["=", "<>", "<", "<=", ">", ">="]
COMPARE_OPS: tuple[CompareOp, ...] = ("=", "<>", "<", "<=", ">", ">=")

# The operator that holds when the operands are swapped (2017 < year is year > 2017).
FLIPPED: dict[CompareOp, CompareOp] = {"=": "=", "<>": "<>", "<": ">", "<=": ">=", ">": "<", ">=": "<="}
# The operator that holds when the comparison does not (for non-null operands).
NEGATED: dict[CompareOp, CompareOp] = {"=": "<>", "<>": "=", "<": ">=", "<=": ">", ">": "<=", ">=": "<"}


@dataclass(frozen=True)
class Compare:
    """``column op value``; the column is always on the left."""

    op: CompareOp
    column: str
    value: Value


@dataclass(frozen=True)
class In:
    """``column [NOT] IN (values...)``."""

    column: str
    values: tuple[Value, ...]
    negated: bool = False


@dataclass(frozen=True)
class Between:
    """``column [NOT] BETWEEN low AND high`` (both ends inclusive)."""

    column: str
    low: Value
    high: Value
    negated: bool = False


@dataclass(frozen=True)
class Like:
    """``column [NOT] LIKE pattern``: ``%`` any run, ``_`` one character, backslash escapes the next one."""

    column: str
    pattern: str
    negated: bool = False


@dataclass(frozen=True)
class IsNull:
    """``column IS [NOT] NULL``."""

    column: str
    negated: bool = False


@dataclass(frozen=True)
class And:
    children: tuple[Predicate, ...]


@dataclass(frozen=True)
class Or:
    children: tuple[Predicate, ...]


@dataclass(frozen=True)
class Not:
    child: Predicate


@dataclass(frozen=True)
class TrueP:
    """Matches every partition (a blank expression)."""


@dataclass(frozen=True)
class FalseP:
    """Matches no partition."""


Predicate = Compare | In | Between | Like | IsNull | And | Or | Not | TrueP | FalseP
Leaf = Compare | In | Between | Like | IsNull


@dataclass(frozen=True)
class Index:
    """A partition index: its name and the partition keys it concatenates, in order."""

    name: str
    keys: tuple[str, ...]

    def __init__(self, name: str, keys: tuple[str, ...] | list[str]) -> None:
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "keys", tuple(keys))


@dataclass(frozen=True)
class Range:
    """Rows whose index-key prefix lies between two bounds, compared lexicographically.

    ``lower`` is compared with the row's first ``len(lower)`` index keys, ``upper`` with its first
    ``len(upper)``; an empty tuple is unbounded. ``("US", "Shoes", 2018)`` exclusive to ``("US", "Shoes")``
    inclusive is "country = 'US' and category = 'Shoes' and year > 2018". A row with a NULL (or
    uncastable) value in a bounded position is never inside.
    """

    lower: tuple[Scalar, ...]
    lower_inclusive: bool
    upper: tuple[Scalar, ...]
    upper_inclusive: bool


@dataclass(frozen=True)
class Plan:
    """How to find the partitions of an expression.

    ``index_name`` None: scan everything and evaluate ``residual``. Otherwise read the rows of ``index``
    that fall in any of ``ranges`` (an empty tuple means none can match) and evaluate ``residual`` on them.
    ``index_keys`` names the index's keys in order, ``eq_keys`` how many leading keys are bound by equality
    and ``range_key`` the key bound by a range after them (if any), for explain and for scoring.
    """

    index_name: str | None
    index_keys: tuple[str, ...]
    ranges: tuple[Range, ...]
    residual: Predicate
    eq_keys: int = 0
    range_key: str | None = None


# --- partition key types -------------------------------------------------------------------------------

KeyKind = TypingLiteral["string", "integer", "decimal", "date", "timestamp"]


@dataclass(frozen=True)
class KeyType:
    """A partition key's Glue type reduced to how its values compare."""

    glue_type: str
    kind: KeyKind


_STRING_TYPES = {"string", "char", "varchar"}
_INTEGER_TYPES = {"int", "integer", "bigint", "long", "tinyint", "smallint"}
_DECIMAL_TYPE = re.compile(r"decimal\s*(?:\(\s*\d+\s*(?:,\s*\d+\s*)?\))?")
_SIZED_STRING_TYPE = re.compile(r"(char|varchar)\s*\(\s*\d+\s*\)")
SUPPORTED_TYPES = (
    "string, char, varchar, int, integer, bigint, long, tinyint, smallint, decimal, date and timestamp"
)


class UnsupportedKeyType(InvalidInputException):
    """A partition key of a type that partition expressions cannot compare (double, boolean, array, ...)."""


def key_type(glue_type: str) -> KeyType:
    """Classify a Glue column type; raise UnsupportedKeyType (an InvalidInputException) for a type that
    partition expressions do not compare, as Glue refuses them (double, float and boolean included).

    >>> key_type("decimal(10,2)")
    KeyType(glue_type='decimal(10,2)', kind='decimal')
    >>> key_type("varchar(10)").kind
    'string'
    """
    t = glue_type.strip().lower()
    if t in _STRING_TYPES or _SIZED_STRING_TYPE.fullmatch(t):
        return KeyType(glue_type, "string")
    if t in _INTEGER_TYPES:
        return KeyType(glue_type, "integer")
    if t == "date":
        return KeyType(glue_type, "date")
    if t == "timestamp":
        return KeyType(glue_type, "timestamp")
    if _DECIMAL_TYPE.fullmatch(t):
        # Whatever the declared precision and scale, values compare as the exact numbers they are.
        return KeyType(glue_type, "decimal")
    raise UnsupportedKeyType(
        f"type {glue_type}, which partition expressions do not support (supported: {SUPPORTED_TYPES})"
    )


# --- partition values: the one definition of which strings are valid values of a key type ---------------

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1
INTEGER_VALUE = re.compile(r"[+-]?[0-9]{1,19}")
# Hive's decimals hold at most 38 digits on either side of the point.
DECIMAL_VALUE = re.compile(r"[+-]?[0-9]{1,38}(\.[0-9]{1,38})?")
DATE_VALUE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
TIMESTAMP_VALUE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}[ T][0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,9})?")


def partition_value(text: str | None, kt: KeyType) -> Scalar | None:
    """The typed value of a stored partition value, or None when it is NULL or not a value of the type.

    A value that is not valid for its key type behaves like NULL: no comparison matches it. The bulk
    evaluator implements exactly these rules with Arrow kernels.

    >>> partition_value("0042", key_type("int")), partition_value("foo", key_type("int"))
    (42, None)
    >>> partition_value("2020-02-30", key_type("date")) is None
    True
    >>> partition_value("1.25", key_type("decimal"))
    Decimal('1.25')
    """
    if text is None:
        return None
    if kt.kind == "string":
        return text
    if kt.kind == "integer":
        if not INTEGER_VALUE.fullmatch(text):
            return None
        n = int(text)
        return n if INT64_MIN <= n <= INT64_MAX else None
    if kt.kind == "decimal":
        return Decimal(text) if DECIMAL_VALUE.fullmatch(text) else None
    if kt.kind == "date":
        if not DATE_VALUE.fullmatch(text):
            return None
        try:
            return Date.of(int(text[:4]), int(text[5:7]), int(text[8:10]))
        except ValueError:
            return None
    if not TIMESTAMP_VALUE.fullmatch(text) or text.startswith("0000"):
        return None
    try:
        whole = datetime.strptime(text[:19].replace("T", " "), "%Y-%m-%d %H:%M:%S")
    except ValueError:
        return None
    return Timestamp.of(whole, int(text[20:].ljust(9, "0")) if len(text) > 20 else 0)


def like_pattern(pattern: str) -> str:
    """A LIKE pattern without a dangling escape at its end (which escapes nothing and is ignored).

    parse() rejects such a pattern; a pattern built in code gets this one meaning in both evaluators.
    """
    trailing = len(pattern) - len(pattern.rstrip("\\"))
    return pattern[:-1] if trailing % 2 else pattern


def is_finite_decimal(text: str) -> bool:
    try:
        return Decimal(text).is_finite()
    except InvalidOperation:
        return False
