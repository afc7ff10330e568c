"""Hive's partition filter strings (get_partitions_by_filter) as GetPartitions Expressions.

Hive 2.3's filter grammar (metastore/parser/Filter.g) is close to Glue's: identifiers, AND, OR,
comparisons (=, <>, !=, <, <=, >, >=), LIKE, [NOT] BETWEEN, ``(key) [NOT] IN (...)``, numbers, and
strings in double or single quotes without escapes. What differs is rewritten here, token by token:
strings become Glue's single-quoted literals, ``!=`` becomes ``<>``, and a LIKE's pattern, which Hive
matches as a Java regular expression over the whole value (Spark's StartsWith sends ``k like "a.*"``),
becomes the SQL pattern that matches the same values; a regular expression that no SQL pattern says is
refused. The catalog then parses, binds and index-plans the Expression as for the Glue API.

>>> expression('dt = "2024-01-01" and country = "US"')
"dt = '2024-01-01' and country = 'US'"
>>> expression('(ds) in ("a", "b") and ds != "a"')
"(ds) in ('a', 'b') and ds <> 'a'"
>>> expression('ds like "a_b.*"')
"ds like 'a\\\\_b%'"
"""

from __future__ import annotations

import re

_TOKEN = re.compile(
    r"""\s*(?:
      (?P<string>"[^"]*"|'[^']*')
    | (?P<op>!=|<>|<=|>=|=|<|>|\(|\)|,)
    | (?P<word>[A-Za-z_][A-Za-z0-9_]*)
    | (?P<number>[+-]?[0-9]+(?:\.[0-9]*)?)
    )""",
    re.VERBOSE,
)


class FilterError(ValueError):
    """A filter Hive's grammar does not have, or one Glue's expressions cannot say."""


def _sql_literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def like_pattern(regex: str) -> str:
    """Hive's LIKE pattern (a Java regular expression matched whole) as a SQL LIKE pattern.

    ``.*`` is ``%`` and ``.`` is ``_``; other characters stand for themselves (a regular expression's
    other operators are refused: no SQL pattern says them).
    """
    out = []
    i = 0
    while i < len(regex):
        c = regex[i]
        if regex.startswith(".*", i):
            out.append("%")
            i += 2
            continue
        if c == ".":
            out.append("_")
        elif c == "\\" and i + 1 < len(regex) and not regex[i + 1].isalnum():
            i += 1
            out.append(_like_escaped(regex[i]))
        elif c in "[](){}*+?^$|\\":
            raise FilterError(f"the LIKE pattern {regex!r} uses {c!r}, which gluecat cannot match")
        else:
            out.append(_like_escaped(c))
        i += 1
    return "".join(out)


def _like_escaped(c: str) -> str:
    return "\\" + c if c in "%_\\" else c


def expression(hive_filter: str) -> str:
    """The Glue Expression for a Hive filter string; FilterError where there is none."""
    out: list[str] = []
    pos = 0
    text = hive_filter.rstrip()
    after_like = False
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            raise FilterError(f"cannot parse the filter {hive_filter!r} at character {pos + 1}")
        pos = m.end()
        if m.group("string") is not None:
            value = m.group("string")[1:-1]
            out.append(_sql_literal(like_pattern(value) if after_like else value))
        elif m.group("op") is not None:
            out.append("<>" if m.group("op") == "!=" else m.group("op"))
        elif m.group("word") is not None:
            out.append(m.group("word"))
        else:
            out.append(m.group("number"))
        after_like = m.group("word") is not None and m.group("word").lower() == "like"
    joined = ""
    for token in out:
        if joined and not (token in (")", ",") or joined.endswith("(")):
            joined += " "
        joined += token
    return joined
