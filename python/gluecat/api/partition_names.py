"""Partition names as Hive writes them (k1=v1/k2=v2), shared by the Hive endpoint and the Spark shim.

Hive's names double as the folder of a partition under its table's location, which is where the Spark
shim puts the files of a partition that has no location of its own.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Sequence

DEFAULT_PARTITION_NAME = "__HIVE_DEFAULT_PARTITION__"

# Hive's FileUtils.charToEscape (on a POSIX server): every control character from U+0000 on (its static
# block sets 0..0x1F, then lists 0x01..0x1F again), "#%'*/:=?\{[]^ and DEL. A raw NUL in a name would
# also be a path no file system takes.
_ESCAPED = {chr(c) for c in range(0x00, 0x20)} | set("\"#%'*/:=?\\\x7f{[]^")
_NEEDS_ESCAPE = re.compile("[" + re.escape("".join(sorted(_ESCAPED))) + "]")


def escape_path_name(value: str | None) -> str:
    """Hive's FileUtils.escapePathName: %XX for the characters Hive escapes in partition paths."""
    if value is None or value == "":
        return DEFAULT_PARTITION_NAME
    if not _NEEDS_ESCAPE.search(value):  # the usual case, and a tenth of the cost
        return value
    return "".join(f"%{ord(c):02X}" if c in _ESCAPED else c for c in value)


def _prefixes(keys: list[str]) -> list[str]:
    """Each key's "k=" as it starts its part of a partition name."""
    return [f"{escape_path_name(k.lower())}=" for k in keys]


def partition_namer(keys: list[str]) -> Callable[[list[str]], str]:
    """``partition_name`` for many partitions of one table: the key names are escaped once."""
    prefixes = _prefixes(keys)

    def name(values: list[str]) -> str:
        return "/".join([p + escape_path_name(v) for p, v in zip(prefixes, values, strict=True)])

    return name


def partition_name(keys: list[str], values: list[str]) -> str:
    """Hive's Warehouse.makePartName: k1=v1/k2=v2, key names lowercased, both escaped."""
    return partition_namer(keys)(values)


def partition_names(keys: list[str], values: Sequence[list[str]]) -> list[str]:
    """``partition_name`` of each of many partitions of one table. When no value needs escaping and
    none is empty (the usual batch, checked in one pass over its text), the names are formatted
    without looking at each value on its own."""
    try:
        text = ",".join(itertools.chain.from_iterable(values))  # ',' is never escaped: no false match
        plain = (
            not _NEEDS_ESCAPE.search(text)
            and all(len(v) == len(keys) for v in values)
            and min(map(len, itertools.chain.from_iterable(values)), default=1) > 0
        )
    except TypeError:  # a None among the values (Hive's default partition)
        plain = False
    if not plain:
        return list(map(partition_namer(keys), values))
    pattern = "/".join(p.replace("%", "%%") + "%s" for p in _prefixes(keys))
    return [pattern % tuple(v) for v in values]
