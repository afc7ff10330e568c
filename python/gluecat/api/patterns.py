"""Scalar request fields: Glue's string patterns, byte lengths, numbers, booleans and timestamps.

Every ``check_*`` takes what the caller passed (any type at all) and returns a plain normalized value,
or raises InvalidInputException whose message starts with the field path and says the rule broken.
Lengths are UTF-8 bytes, as the documents count them, never characters.
"""

from __future__ import annotations

import math
import re
import unicodedata
from datetime import UTC, datetime
from typing import Any, Literal, NoReturn

from gluecat.errors import InvalidInputException

Pattern = Literal["single_line", "multi_line", "custom11", "custom12"] | None

# Glue's service-model classes. A str decoded from valid UTF-8 never holds a surrogate, so the
# surrogate-pair alternative of the model becomes the astral range; lone surrogates are refused earlier.
_SINGLE_LINE = re.compile("[\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff\t]*")
_MULTI_LINE = re.compile("[\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff\r\n\t]*")
_UUID = re.compile("[a-f0-9]{8}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{12}")
_ASCII_CUSTOM11 = re.compile(
    "[" + "".join(re.escape(chr(c)) for c in range(128) if unicodedata.category(chr(c))[0] in "LNP") + "]*"
)
_PATTERN_NAMES = {
    "single_line": "the single-line string pattern (no control characters but tab)",
    "multi_line": "the URI address multi-line string pattern (no control characters but tab, CR and LF)",
    "custom11": "Custom string pattern #11 (letters, digits and punctuation only)",
    "custom12": "Custom string pattern #12 (a lowercase UUID)",
}

INT32_MAX = 2**31 - 1
INT32_MIN = -(2**31)
INT64_MAX = 2**63 - 1
INT64_MIN = -(2**63)


_LINES = (None, "single_line", "multi_line")


def invalid(field: str, why: str) -> NoReturn:
    raise InvalidInputException(f"{field}: {why}")


def matches(value: str, pattern: Pattern) -> bool:
    if pattern == "single_line":
        return _SINGLE_LINE.fullmatch(value) is not None
    if pattern == "multi_line":
        return _MULTI_LINE.fullmatch(value) is not None
    if pattern == "custom12":
        return _UUID.fullmatch(value) is not None
    if pattern == "custom11":
        # [\p{L}\p{N}\p{P}]: Python's re has no Unicode property classes; ASCII text (ETags, ids) is
        # checked against the ASCII members of the class in one pass.
        if value.isascii():
            return _ASCII_CUSTOM11.fullmatch(value) is not None
        return all(unicodedata.category(c)[0] in "LNP" for c in value)
    return True


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def check_text(
    value: Any,
    field: str,
    *,
    min_bytes: int = 0,
    max_bytes: int | None = None,
    pattern: Pattern = None,
    show_value: bool = True,
) -> str:
    """A present string. A pattern error quotes the value unless ``show_value`` is False (for a map key,
    whose field path already quotes it)."""
    # Most text is printable ASCII: one byte a character, and inside both line patterns.
    if type(value) is str and pattern in _LINES and value.isascii() and value.isprintable():
        n = len(value)
        if n >= min_bytes and (max_bytes is None or n <= max_bytes):
            return value
    if not isinstance(value, str):
        invalid(field, f"must be a string, not {type(value).__name__}")
    try:
        n = len(value.encode("utf-8"))
    except UnicodeEncodeError:
        invalid(field, "is not valid UTF-8 (it contains a lone surrogate)")
    if n < min_bytes:
        invalid(field, f"must be at least {_plural(min_bytes, 'byte')} long (it is {n})")
    if max_bytes is not None and n > max_bytes:
        invalid(field, f"must be at most {_plural(max_bytes, 'byte')} long (it is {n})")
    if not matches(value, pattern):
        shown = f"{value[:40]!r} " if show_value else ""
        invalid(field, f"{shown}does not match {_PATTERN_NAMES[str(pattern)]}")
    # Slicing turns a str subclass into a plain str (and is free for a plain one).
    return value[:]


def check_string(
    value: Any,
    field: str,
    *,
    min_bytes: int = 0,
    max_bytes: int | None = None,
    pattern: Pattern = None,
    required: bool = False,
) -> str | None:
    if value is None:
        if required:
            invalid(field, "is required")
        return None
    return check_text(value, field, min_bytes=min_bytes, max_bytes=max_bytes, pattern=pattern)


def check_name(value: Any, field: str) -> str:
    """A Glue entity name (database, table, index, column): 1..255 bytes, single line, required."""
    if value is None:
        invalid(field, "is required")
    return check_text(value, field, min_bytes=1, max_bytes=255, pattern="single_line")


def check_db_or_table_name(value: Any, field: str) -> str:
    """A database or table name, folded to lowercase as Glue stores it for Hive compatibility. The name
    stored is held to the limit too: some letters grow when lower-cased ('İ', 2 bytes, becomes 'i' and a
    combining dot, 3), and a name longer than 255 bytes could not be given back to any call."""
    name = check_name(value, field)
    folded = name.lower()
    if not name.isascii():
        n = len(folded.encode("utf-8"))
        if n > 255:
            invalid(
                field, f"must be at most 255 bytes long once lower-cased as it is stored (it is then {n})"
            )
    return folded


def check_int(
    value: Any, field: str, *, min: int | None = None, max: int | None = None, required: bool = False
) -> int | None:
    if value is None:
        if required:
            invalid(field, "is required")
        return None
    # bool is an int subclass in Python, but True is not a number to Glue (nor to botocore).
    if isinstance(value, bool) or not isinstance(value, int):
        invalid(field, f"must be an integer, not {type(value).__name__}")
    if min is not None and value < min:
        invalid(field, f"must be at least {min} (it is {value})")
    if max is not None and value > max:
        invalid(field, f"must be at most {max} (it is {value})")
    return int(value)


def check_number(value: Any, field: str, *, min: float | None = None, required: bool = False) -> float | None:
    """A Glue Double: any finite int or float (not bool), returned as float."""
    if value is None:
        if required:
            invalid(field, "is required")
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        invalid(field, f"must be a number, not {type(value).__name__}")
    try:
        number = float(value)
    except OverflowError:
        invalid(field, "must be a finite number")
    if not math.isfinite(number):
        invalid(field, "must be a finite number")
    if min is not None and number < min:
        invalid(field, f"must be at least {min} (it is {value})")
    return number


def check_bool(value: Any, field: str) -> bool | None:
    if value is None:
        return None
    if not isinstance(value, bool):
        invalid(field, f"must be a boolean, not {type(value).__name__}")
    return bool(value)


def check_timestamp(value: Any, field: str, *, required: bool = False) -> datetime | None:
    """A datetime (naive means UTC, as botocore sends it), epoch seconds, or an ISO-8601 string
    (botocore accepts those too); returned as a plain aware UTC datetime."""
    if value is None:
        if required:
            invalid(field, "is required")
        return None
    if isinstance(value, datetime):
        ts = value
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        try:
            ts = datetime.fromtimestamp(value, UTC)
        except (OverflowError, OSError, ValueError):
            invalid(field, f"{value!r} is not a representable time")
    elif isinstance(value, str):
        try:
            ts = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            invalid(field, f"{value[:40]!r} is not an ISO-8601 time")
    else:
        invalid(field, f"must be a timestamp (datetime or epoch seconds), not {type(value).__name__}")
    try:
        ts = ts.replace(tzinfo=UTC) if ts.tzinfo is None else ts.astimezone(UTC)
    except OverflowError:
        invalid(field, f"{value!r} is not a representable time in UTC")
    # Rebuilt so that subclasses (e.g. pandas.Timestamp) come back as a plain datetime.
    return datetime(ts.year, ts.month, ts.day, ts.hour, ts.minute, ts.second, ts.microsecond, tzinfo=UTC)


def check_transaction_id(value: Any) -> str | None:
    return check_string(value, "TransactionId", min_bytes=1, max_bytes=255, pattern="custom11")


def check_enum(value: Any, field: str, allowed: tuple[str, ...]) -> str:
    """A present string that is one of ``allowed`` (Glue's enums are case-sensitive)."""
    text = check_text(value, field)
    if text not in allowed:
        choices = f"{', '.join(allowed[:-1])} or {allowed[-1]}" if len(allowed) > 1 else allowed[0]
        invalid(field, f"{text[:40]!r} is not one of {choices}")
    return text
