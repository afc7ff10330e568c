"""Request validation from botocore's service model: one walker over an operation's input shape.

Each shape becomes a checker once (a closure, cached by shape name) that takes what the caller passed
and returns a normalized copy (plain dicts, lists, str, int, float, bool, bytes; timestamps as aware UTC
datetimes; members given as None left out), or raises InvalidInputException naming the full field path
and the rule broken: required members, unknown members, types, lengths in UTF-8 bytes (as Glue counts
them), patterns, enums, ranges and item counts. A 32-bit ``integer`` or 64-bit ``long`` is bounded by its
width besides the model's range.

The model is the reference except where the documents (the seeds) differ; those rules, and the rules that
span fields, are gluecat.api.shapes' (registered here through ``RULES``, ``SHAPE_RULES``, ``REQUIRED``,
``CHECKERS`` and ``MEMBERS``).

A ``memo`` (one per request) lets a batch check each object it shares between items once: a batch of
partitions sharing the table's Columns list checks it once, and their checked copies share it, read-only.
"""

from __future__ import annotations

import functools
import re
import threading
from collections.abc import Callable
from typing import Any

from botocore.model import Shape

from gluecat.api import model
from gluecat.api.patterns import (
    INT32_MAX,
    INT32_MIN,
    INT64_MAX,
    INT64_MIN,
    Pattern,
    check_bool,
    check_enum,
    check_int,
    check_number,
    check_text,
    check_timestamp,
    invalid,
)

Memo = dict[tuple[Any, ...], tuple[Any, Any]]
Check = Callable[[Any, str, Memo], Any]
"""A compiled shape: (value, field path, memo) -> the normalized value."""

RULES: dict[str, Callable[[dict[str, Any], str], None]] = {}
"""Hand-written rules of a structure shape, run on its checked copy (which they may adjust, e.g. fold a
name to lowercase): the rules that span fields, and the documents' rules that the model lacks."""

SHAPE_RULES: dict[str, Callable[[dict[str, Any], str], None]] = {}
"""Rules on which members a structure holds, run before its members are checked."""

REQUIRED: dict[str, tuple[str, ...]] = {}
"""Members the documents require where the model does not."""

CHECKERS: dict[str, Check] = {}
"""Shapes whose checking the documents define otherwise than the model (e.g. partition values)."""

MEMBERS: dict[tuple[str, str], Check] = {}
"""Members of a structure (by structure and member name) that the documents define otherwise than the
model's shape for them, where that shape is shared with members the model has right."""

_KNOWN_PATTERNS: dict[str, Pattern] = {
    "[\\u0020-\\uD7FF\\uE000-\\uFFFD\\uD800\\uDC00-\\uDBFF\\uDFFF\\t]*": "single_line",
    "[\\u0020-\\uD7FF\\uE000-\\uFFFD\\uD800\\uDC00-\\uDBFF\\uDFFF\\r\\n\\t]*": "multi_line",
    "[\\p{L}\\p{N}\\p{P}]*": "custom11",
    "[a-f0-9]{8}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{12}": "custom12",
}


def check(service: str, shape_name: str, value: Any, field: str, memo: Memo | None = None) -> Any:
    """Check ``value`` against a named shape of the service's model."""
    return _compiled(service, shape_name)(value, field, {} if memo is None else memo)


def request(service: str, operation: str, params: dict[str, Any]) -> dict[str, Any]:
    """An operation's parameters, checked and normalized against its input shape. An unknown parameter
    is refused naming the operation's parameters, as boto3 refuses it."""
    known, checker = _request(service, operation)
    for key in params:
        if key not in known:
            unknown = sorted(str(k) for k in params if k not in known)
            invalid(
                operation,
                f"unknown parameter {unknown[0]!r}"
                + (f" (and {', '.join(repr(u) for u in unknown[1:])})" if unknown[1:] else "")
                + f"; valid parameters are {', '.join(sorted(known))}",
            )
    if checker is None:
        return {}
    out: dict[str, Any] = checker(params, "", {})
    return out


@functools.cache
def _request(service: str, operation: str) -> tuple[frozenset[str], Check | None]:
    shape = model.operation_model(service, operation).input_shape
    if shape is None:
        return frozenset(), None
    return _members(service, shape.name), _compiled(service, shape.name)


@functools.cache
def _members(service: str, shape_name: str) -> frozenset[str]:
    return frozenset(model.service_model(service).shape_for(shape_name).members)  # type: ignore[attr-defined]


_CACHE: dict[tuple[str, str], Check] = {}
_COMPILING: set[tuple[str, str]] = set()
_LOCK = threading.RLock()  # one compiler at a time: threads of a server may make their first calls at once


def _compiled(service: str, shape_name: str) -> Check:
    """A shape's checker, compiled once. A shape met again while it is being compiled (a cycle in the
    model) gets a thunk that finds the finished checker when it first runs."""
    key = (service, shape_name)
    found = _CACHE.get(key)
    if found is not None:
        return found
    with _LOCK:
        found = _CACHE.get(key)
        if found is not None:
            return found
        if key in _COMPILING:
            return lambda value, field, memo: _CACHE[key](value, field, memo)
        _COMPILING.add(key)
        try:
            shape = model.service_model(service).shape_for(shape_name)
            checker = CHECKERS.get(shape_name) or _compile(service, shape)
        finally:
            _COMPILING.discard(key)
        _CACHE[key] = checker
        return checker


def _compile(service: str, shape: Shape) -> Check:
    kind = shape.type_name
    meta = shape.metadata
    if kind == "structure":
        return _structure(service, shape)
    if kind == "list":
        return _list(shape.name, _compiled(service, shape.member.name), meta.get("min"), meta.get("max"))  # type: ignore[attr-defined]
    if kind == "map":
        key = shape.key  # type: ignore[attr-defined]
        value = _compiled(service, shape.value.name)  # type: ignore[attr-defined]
        # A key's field path quotes it already; its pattern error need not quote it again.
        key_check = (
            _string(key.metadata, show_value=False) if key.type_name == "string" else _compile(service, key)
        )
        return _map(shape.name, key_check, _plain_key(key), value, meta.get("max"))
    if kind == "string":
        return _string(meta)
    if kind in ("integer", "long"):
        low, high = (INT32_MIN, INT32_MAX) if kind == "integer" else (INT64_MIN, INT64_MAX)
        low, high = max(meta.get("min", low), low), min(meta.get("max", high), high)
        return lambda value, field, memo: check_int(value, field, min=low, max=high)
    if kind in ("double", "float"):
        least = meta.get("min")
        return lambda value, field, memo: check_number(value, field, min=least)
    if kind == "boolean":
        return lambda value, field, memo: check_bool(value, field)
    if kind == "timestamp":
        return lambda value, field, memo: check_timestamp(value, field)
    if kind == "blob":
        return _blob
    raise AssertionError(f"shape {shape.name} has type {kind}, which the walker does not know")


def _string(meta: dict[str, Any], *, show_value: bool = True) -> Check:
    enum = tuple(meta.get("enum") or ())
    if enum:
        return lambda value, field, memo: check_enum(value, field, enum)
    least, most = meta.get("min", 0), meta.get("max")
    raw = meta.get("pattern")
    named = _KNOWN_PATTERNS.get(raw) if raw is not None else None
    if raw is None or named in ("single_line", "multi_line"):
        longest = most if most is not None else float("inf")

        def text(value: Any, field: str, memo: Memo) -> str:
            # Most text is printable ASCII: one byte a character, and inside both line patterns.
            if (
                type(value) is str
                and least <= len(value) <= longest
                and value.isascii()
                and value.isprintable()
            ):
                return value
            return check_text(
                value, field, min_bytes=least, max_bytes=most, pattern=named, show_value=show_value
            )

        return text
    if named is not None:
        return lambda value, field, memo: check_text(
            value, field, min_bytes=least, max_bytes=most, pattern=named
        )
    regex = _regex(raw)

    def string(value: Any, field: str, memo: Memo) -> str:
        text = check_text(value, field, min_bytes=least, max_bytes=most)
        if regex is not None and regex.fullmatch(text) is None:
            invalid(field, f"{text[:40]!r} does not match the pattern {raw}")
        return text

    return string


def _regex(java: str) -> re.Pattern[str] | None:
    """A model pattern (Java's regular expressions) in Python's; None if Python cannot read it, and then
    the pattern is not checked (none of the Data Catalog's own operations has such a pattern)."""
    python = java.replace("\\uD800\\uDC00-\\uDBFF\\uDFFF", "\\U00010000-\\U0010FFFF")
    try:
        return re.compile(python)
    except re.error:
        return None


def _blob(value: Any, field: str, memo: Memo) -> bytes:
    if not isinstance(value, bytes | bytearray | memoryview):
        invalid(field, f"must be bytes, not {type(value).__name__}")
    return bytes(value)


def _document(value: Any, field: str, memo: Memo) -> Any:
    """A free-form JSON document (e.g. an Iceberg type): JSON values only, copied."""
    if value is None or isinstance(value, str | bool | int | float):
        return value
    if isinstance(value, list | tuple):
        return [_document(v, f"{field}[{i}]", memo) for i, v in enumerate(value)]
    if isinstance(value, dict):
        return {
            check_text(k, f"{field} key", show_value=False): _document(v, f"{field}[{k!r}]", memo)
            for k, v in value.items()
        }
    invalid(field, f"must be a JSON value, not {type(value).__name__}")


def _structure(service: str, shape: Shape) -> Check:
    if shape.metadata.get("document"):
        return _document
    members = {
        name: MEMBERS.get((shape.name, name)) or _compiled(service, member.name)
        for name, member in shape.members.items()  # type: ignore[attr-defined]
    }
    required = (*shape.required_members, *REQUIRED.get(shape.name, ()))
    allowed = ", ".join(sorted(members))
    names = frozenset(members)
    rule = RULES.get(shape.name)
    shape_rule = SHAPE_RULES.get(shape.name)
    name = shape.name

    def structure(value: Any, field: str, memo: Memo) -> dict[str, Any]:
        if not isinstance(value, dict):
            invalid(field or name, f"must be a structure (dict), not {type(value).__name__}")
        seen = memo.get((name, id(value)))
        if seen is not None:
            return seen[1]
        prefix = f"{field}." if field else ""
        if not value.keys() <= names:
            unknown = next(key for key in value if key not in members)
            invalid(field or name, f"unknown field {unknown!r} (allowed: {allowed})")
        for key in required:
            if value.get(key) is None:
                invalid(prefix + key, "is required")
        if shape_rule is not None:
            shape_rule(value, field)
        out: dict[str, Any] = {}
        for key, item in value.items():
            if item is not None:  # absent and null members are the same to Glue
                out[key] = members[key](item, prefix + key, memo)
        if rule is not None:
            rule(out, field)
        # The entry keeps the object alive, so its id cannot be reused by another during the request.
        memo[(name, id(value))] = (value, out)
        return out

    return structure


def _list(name: str, item: Check, least: int | None, most: int | None) -> Check:
    def items(value: Any, field: str, memo: Memo) -> list[Any]:
        if not isinstance(value, list | tuple):
            invalid(field, f"must be a list, not {type(value).__name__}")
        seen = memo.get((name, id(value)))
        if seen is not None:
            return seen[1]
        n = len(value)
        if least is not None and n < least:
            invalid(field, f"must have at least {least} item{'s' if least != 1 else ''}")
        if most is not None and n > most:
            invalid(field, f"has {n} items; at most {most} are allowed")
        out = [item(v, f"{field}[{i}]", memo) for i, v in enumerate(value)]
        memo[(name, id(value))] = (value, out)
        return out

    return items


def _plain_key(shape: Shape) -> Callable[[Any], bool]:
    """Whether a map key is printable ASCII within the key shape's length, which both line patterns take:
    most keys are, and then need no field path built for them."""
    meta = shape.metadata
    pattern = meta.get("pattern")
    if (
        shape.type_name != "string"
        or meta.get("enum")
        or _KNOWN_PATTERNS.get(pattern or "", "single_line")
        not in (
            "single_line",
            "multi_line",
        )
    ):
        return lambda key: False
    if pattern is not None and pattern not in _KNOWN_PATTERNS:
        return lambda key: False
    least, most = meta.get("min", 0), meta.get("max", float("inf"))
    return lambda key: type(key) is str and least <= len(key) <= most and key.isascii() and key.isprintable()


def _shown(key: Any) -> str:
    """A map key in a field path: its repr, cut short ("Parameters key 'k'")."""
    return repr(key[:40]) if isinstance(key, str) else repr(key)[:40]


def _map(
    name: str, key_check: Check, fast_key: Callable[[Any], bool], value_check: Check, most: int | None
) -> Check:
    def mapping(value: Any, field: str, memo: Memo) -> dict[str, Any]:
        if not isinstance(value, dict):
            invalid(field, f"must be a map of strings (dict), not {type(value).__name__}")
        seen = memo.get((name, id(value)))
        if seen is not None:
            return seen[1]
        if most is not None and len(value) > most:
            invalid(field, f"has {len(value)} entries; at most {most} are allowed")
        out = {}
        for k, v in value.items():
            key = k if fast_key(k) else key_check(k, f"{field} key {_shown(k)}", memo)
            out[key] = value_check(v, f"{field}[{key!r}]", memo)
        memo[(name, id(value))] = (value, out)
        return out

    return mapping


# The documents' rules, registered into RULES, REQUIRED and CHECKERS (imported last: it uses this module).
from gluecat.api import shapes as _shapes  # noqa: E402, F401
