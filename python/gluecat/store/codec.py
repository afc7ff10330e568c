"""Encoding of catalog documents (nested dicts of Glue shapes) to JSON text and back.

Timestamps and binary values survive the round trip: a datetime becomes {"$t": epoch microseconds} and
bytes become {"$b": base64}. Keys of documents never start with "$", so the markers are unambiguous.
"""

from __future__ import annotations

import base64
import functools
import json
from datetime import UTC, datetime, timedelta
from typing import Any

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def to_micros(ts: datetime) -> int:
    """Microseconds since the epoch of an aware (or UTC-naive) datetime."""
    if ts.tzinfo is None:
        ts = ts.replace(tzinfo=UTC)
    delta = ts - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


# The partitions of one write share a creation time, and datetimes are immutable: share them.
@functools.lru_cache(maxsize=4096)
def from_micros(us: int) -> datetime:
    return _EPOCH + timedelta(microseconds=us)


def _default(obj: Any) -> Any:
    if isinstance(obj, datetime):
        return {"$t": to_micros(obj)}
    if isinstance(obj, (bytes, bytearray, memoryview)):
        return {"$b": base64.b64encode(bytes(obj)).decode("ascii")}
    raise TypeError(f"cannot store a value of type {type(obj).__name__}")


def _hook(d: dict[str, Any]) -> Any:
    if len(d) == 1:
        if "$t" in d:
            return from_micros(d["$t"])
        if "$b" in d:
            return base64.b64decode(d["$b"])
    return d


_ENCODER = json.JSONEncoder(default=_default, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
_DECODER = json.JSONDecoder(object_hook=_hook)


def dumps(doc: Any) -> str:
    """Canonical JSON text of a document (sorted keys, no spaces)."""
    return _ENCODER.encode(doc)


def loads(text: str | bytes) -> Any:
    return _DECODER.decode(text if isinstance(text, str) else text.decode())
