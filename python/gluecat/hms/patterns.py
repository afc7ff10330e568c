"""Hive's name patterns (get_databases, get_tables, get_tables_by_type), matched in linear time.

A pattern is wildcards, not a regular expression: ``*`` is any run of characters, ``|`` separates
alternatives, case is ignored. As in Hive 2.3, the whole pattern is trimmed of leading and trailing
spaces and control characters (Java's ``String.trim``) but its alternatives are not: ``a| b`` matches
``a`` and `` b``, never ``b``; an empty pattern (or an empty alternative) matches no name. Two regular-expression idioms that clients send are kept with the
meaning they have in Hive: ``.*`` is any run, ``.`` any one character. Every other character stands
for itself, so no pattern can backtrack: the pattern is compiled to an RE2 automaton, whose matching
time is linear in the name whatever the pattern.
"""

from __future__ import annotations

from collections.abc import Callable

import re2

MAX_PATTERN_CHARS = 2048

# What Java's String.trim removes from both ends: every character up to and including the space.
_JAVA_TRIMMED = "".join(map(chr, range(0x21)))

_OPTIONS = re2.Options()
_OPTIONS.case_sensitive = False
_OPTIONS.log_errors = False


class PatternError(ValueError):
    """A pattern that is too long."""


def _alternative(text: str) -> str:
    out = []
    i = 0
    while i < len(text):
        if text.startswith(".*", i):
            out.append(".*")
            i += 2
        elif text[i] == "*":
            out.append(".*")
            i += 1
        elif text[i] == ".":
            out.append(".")
            i += 1
        else:
            out.append(re2.escape(text[i]))
            i += 1
    return "".join(out)


def hive_pattern(pattern: str) -> Callable[[str], bool]:
    """A predicate on names: does the whole name match ``pattern``?"""
    if len(pattern) > MAX_PATTERN_CHARS:
        raise PatternError(f"pattern: at most {MAX_PATTERN_CHARS} characters, got {len(pattern)}")
    alternatives = pattern.strip(_JAVA_TRIMMED).split("|")
    regex = "|".join(f"(?:{_alternative(part)})" for part in alternatives)
    compiled = re2.compile(f"(?s:{regex})", _OPTIONS)
    return lambda name: compiled.fullmatch(name) is not None
