"""Hive's name patterns are wildcards, matched in time linear in the name whatever the pattern."""

from __future__ import annotations

import time

import pytest

from gluecat.hms.patterns import MAX_PATTERN_CHARS, PatternError, hive_pattern


@pytest.mark.parametrize(
    ("pattern", "name", "matches"),
    [
        ("*", "orders", True),
        ("ORD*", "orders", True),
        ("*ers", "orders", True),
        ("o*s", "orders", True),
        ("orders|cust*", "customers", True),
        # Hive 2.3 trims the whole pattern (Java's String.trim), not each alternative
        # (checked against the real metastore in test_differential_real_hms.py).
        (" orders|crm ", "crm", True),
        ("\torders\n", "orders", True),
        (" orders | crm ", "crm", False),
        ("orders| crm", "crm", False),
        ("orders |crm", "orders", False),
        ("orders| crm", " crm", True),
        ("", "orders", False),  # an empty pattern matches no name (it is not "*")
        ("   ", "orders", False),
        ("orders|", "orders", True),
        ("ord", "orders", False),  # the whole name must match
        (".*", "test_table", True),  # the regular-expression idiom clients send
        ("test.table", "test_table", True),  # '.' is any one character, as in Hive
        ("test.table", "test__table", False),
        ("t+", "tt", False),  # every other character stands for itself
        ("t+", "t+", True),
        ("[a]", "[a]", True),
        ("(.+)+!", "aaaa", False),
    ],
)
def test_hive_patterns_are_wildcards(pattern: str, name: str, matches: bool) -> None:
    assert hive_pattern(pattern)(name) is matches


def test_a_pattern_that_backtracks_in_a_regex_engine_answers_at_once() -> None:
    # Python's re takes 2^n steps on "(.+)+!" against n characters that do not end in "!".
    matches = hive_pattern("(.+)+!|(a*)*b|(a|aa)*c")
    started = time.perf_counter()
    for n in (25, 250, 100_000):
        assert not matches("a" * n)
    assert time.perf_counter() - started < 1.0


def test_a_pattern_is_bounded_in_length() -> None:
    hive_pattern("a" * MAX_PATTERN_CHARS)
    with pytest.raises(PatternError, match=f"at most {MAX_PATTERN_CHARS} characters"):
        hive_pattern("a" * (MAX_PATTERN_CHARS + 1))
