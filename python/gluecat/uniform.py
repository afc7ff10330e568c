"""Whether a batch's dicts are one template but for one member.

The partitions of one request usually share every member object but their values and location (Spark's
partition DDL, crawlers and bulk loaders send them so), which lets a batch be validated and encoded in
passes over the whole batch instead of partition by partition. The checks are C-level loops: no Python
frame a member of a dict.

Over the wire nothing is shared (a JSON decoder makes each object anew): ``all_but_alike`` finds the same
template among equal objects instead.
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Collection
from typing import Any

import orjson


def same(objects: list[Any], name: str, value: Any) -> bool:
    """Whether each of ``objects`` holds ``value`` itself under ``name``."""
    return all(map(operator.is_, map(operator.itemgetter(name), objects), itertools.repeat(value)))


def members_are(objects: list[dict[str, Any]], names: Collection[str]) -> bool:
    """Whether each of the dicts ``objects`` holds exactly the members ``names``."""
    if set(map(len, objects)) - {len(names)}:
        return False
    return all(all(map(operator.contains, objects, itertools.repeat(name))) for name in names)


def all_but(objects: list[Any], name: str) -> list[Any] | None:
    """The ``name`` member of each of ``objects`` (at least one), if each is a dict holding the very
    objects the first holds under every other name; else None."""
    first = objects[0]
    try:
        if set(map(type, objects)) != {dict} or set(map(len, objects)) != {len(first)}:
            return None
        picked = list(map(operator.itemgetter(name), objects))
        for key, member in first.items():
            if key != name and not same(objects, key, member):
                return None
    except KeyError:  # a member missing (equal sizes, so the member names differ)
        return None
    return picked


# Anything but plain JSON types (str, int, float, bool, None, dict with str keys, list, tuple) fails to
# encode, except enums and UUIDs, which ``==`` then tells apart from the text they encode as.
_PLAIN_JSON = (
    orjson.OPT_PASSTHROUGH_SUBCLASS | orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS
)


def all_but_alike(objects: list[Any], name: str) -> list[Any] | None:
    """Like ``all_but``, but each of ``objects`` need only hold, under every other name, what the first
    holds there or an equal value of the same types all through: JSON of plain types that encodes to the
    same text, which ``==`` alone would not tell (``1 == 1.0 == True``)."""
    first = objects[0]
    try:
        if set(map(type, objects)) != {dict} or set(map(len, objects)) != {len(first)}:
            return None
        picked = list(map(operator.itemgetter(name), objects))
        for key, member in first.items():
            if key == name or same(objects, key, member):
                continue
            others = list(map(operator.itemgetter(key), objects))
            if not all(map(operator.eq, others, itertools.repeat(member))):
                return None
            text = orjson.dumps(member, option=_PLAIN_JSON)
            for other in others:
                if other is not member and orjson.dumps(other, option=_PLAIN_JSON) != text:
                    return None
    except (KeyError, TypeError):  # a member missing (equal sizes, so the names differ); not plain JSON
        return None
    return picked
