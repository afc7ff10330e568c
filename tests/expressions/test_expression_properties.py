"""Property tests: random keys, partitions and expressions; the bulk evaluator, the planner and the text
round trip must agree with the row-at-a-time reference evaluator. Hypothesis prints the failing example
and the blob to reproduce it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pyarrow as pa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gluecat.expressions import (
    And,
    Between,
    Compare,
    In,
    Index,
    IsNull,
    Like,
    Literal,
    Not,
    Or,
    Predicate,
    bind,
    evaluate_arrow,
    evaluate_row,
    index_sort_indices,
    key_type,
    normalize,
    parse,
    partition_value,
    plan,
    plan_mask,
    predicate_text,
    range_mask,
    range_slice,
    row_in_range,
)
from gluecat.expressions.normalize import flatten

# Stored values per key type, valid and not (NULL, wrong format, out of range, impossible dates).
VALUES: dict[str, list[str | None]] = {
    "string": ["", "a", "ab", "b", "a_b", "a%", "10", "9", None],
    "int": ["-1", "0", "1", "2", "10", "007", "x", "", "99999999999999999999", None],
    "bigint": ["-9223372036854775808", "9223372036854775807", "0", "5", "+5", None],
    "decimal(4,1)": ["0.5", "1", "1.0", "-2.5", "12.3", "123.4", "1.25", "x", None],
    # A plain decimal is not decimal(10,0): every value compares exactly, whatever its scale.
    "decimal": ["1.2", "1", "1.20", "-0.000000001", "+3", "99999999999.5", "1e3", ".5", "", None],
    # 004 allows dates from 0000-01-01 (year 0000, 1 BC, a leap year) to 9999-12-31.
    "date": [
        "2024-01-01",
        "2024-02-29",
        "2023-02-29",
        "2024-1-01",
        "2023-12-31",
        "0000-01-01",
        "0000-02-29",
        "0000-12-31",
        "0001-01-01",
        "9999-12-31",
        "x",
        None,
    ],
    "timestamp": [
        "2024-01-01 00:00:00",
        "2024-01-01T00:00:00.5",
        "2024-01-01 00:00:00.25",
        "2024-01-01 00:00:00.250000001",
        "2023-12-31 23:59:59.999999999",
        "2023-12-31 23:59:59",
        "2024-02-30 00:00:00",
        "2023-12-31 23:59:60",
        "x",
        None,
    ],
}
# Literals each key type accepts, as written in an expression.
LITERALS: dict[str, list[Literal]] = {
    "string": [Literal(s) for s in ("a", "ab", "b", "a_b", "10", "9", "")] + [Literal("9", "number")],
    "int": [Literal(str(n), "number") for n in range(-1, 12)] + [Literal("2"), Literal("-1")],
    "bigint": [Literal("5", "number"), Literal("-9223372036854775808", "number"), Literal("0")],
    "decimal(4,1)": [Literal(s, "number") for s in ("0.5", "1", "-2.5", "12.3", "1.25", "0")],
    "decimal": [Literal(s, "number") for s in ("1.2", "1", "-0.000000001", "1.199999999999")]
    + [Literal("3")],
    "date": [
        Literal("2024-01-01"),
        Literal("2023-12-31", "date"),
        Literal("2024-2-1"),
        Literal("2024-02-29"),
        Literal("0000-12-31"),
        Literal("0-2-29", "date"),
    ],
    "timestamp": [
        Literal("2024-01-01 00:00:00"),
        Literal("2024-01-01 00:00:00.5", "timestamp"),
        Literal("2023-12-31 23:59:59"),
        Literal("2024-01-01 00:00:00.250000001"),
        Literal("2023-12-31 23:59:59.999999998"),
    ],
}
PATTERNS = ["%", "a%", "_", "%b", "a\\_b", "1%", "%0%", "2024-%", "%.5"]


def leaf(name: str, glue_type: str) -> st.SearchStrategy[Predicate]:
    lit = st.sampled_from(LITERALS[glue_type])
    ops = st.sampled_from(["=", "<>", "<", "<=", ">", ">="])
    leaves = [
        st.builds(Compare, ops, st.just(name), lit),
        st.builds(In, st.just(name), st.lists(lit, min_size=1, max_size=3).map(tuple), st.booleans()),
        st.builds(Between, st.just(name), lit, lit, st.booleans()),
        st.builds(IsNull, st.just(name), st.booleans()),
    ]
    if glue_type == "string":  # LIKE is for string keys only
        leaves.append(st.builds(Like, st.just(name), st.sampled_from(PATTERNS), st.booleans()))
    return st.one_of(*leaves)


def predicates(keys: list[tuple[str, str]]) -> st.SearchStrategy[Predicate]:
    leaves = st.sampled_from(keys).flatmap(lambda k: leaf(*k))

    def extend(children: st.SearchStrategy[Predicate]) -> st.SearchStrategy[Predicate]:
        groups = st.lists(children, min_size=2, max_size=3).map(tuple)
        return st.one_of(groups.map(And), groups.map(Or), children.map(Not))

    return st.recursive(leaves, extend, max_leaves=6)


@st.composite
def scenarios(draw: Callable[[st.SearchStrategy[Any]], Any]) -> tuple[Any, ...]:
    types = draw(st.lists(st.sampled_from(sorted(VALUES)), min_size=1, max_size=3))
    keys = [(f"k{i}", t) for i, t in enumerate(types)]
    rows = draw(st.lists(st.tuples(*(st.sampled_from(VALUES[t]) for t in types)), max_size=25))
    pred = draw(predicates(keys))
    names = [k for k, _ in keys]
    index = st.permutations(names).flatmap(lambda p: st.integers(1, len(p)).map(lambda n: p[:n]))
    indexes = [Index(f"i{n}", ks) for n, ks in enumerate(draw(st.lists(index, max_size=3)))]
    return keys, rows, pred, indexes


def _sort_key(v: object) -> tuple[Any, ...]:
    return (1,) if v is None else (0, v)


def check_sorted_lookup(
    p: Any, keys: list[tuple[str, str]], rows: list[dict[str, str | None]], expected: list[bool]
) -> None:
    """What the store does: keep rows sorted by the index keys (typed, NULL/invalid last), find each range's
    slice by binary search, then keep the slice's rows inside the range that pass the residual."""
    types = dict(keys)
    table = pa.table({k: pa.array([r[k] for r in rows], pa.string()) for k, _ in keys})
    order = [int(i) for i in index_sort_indices(table, keys, p.index_keys).to_pylist() if i is not None]
    typed = [[partition_value(rows[i][k], key_type(types[k])) for k in p.index_keys] for i in order]
    sort_keys = [[_sort_key(v) for v in t] for t in typed]
    assert sort_keys == sorted(sort_keys)
    sorted_table = table.take(pa.array(order, pa.int64()))
    in_ranges = range_mask(p.ranges, sorted_table, keys, p.index_keys).to_pylist()
    residual = evaluate_arrow(p.residual, sorted_table, keys).to_pylist()
    found = [False] * len(rows)
    for r in p.ranges:
        low_key = [(0, v) for v in r.lower]
        high_key = [(0, v) for v in r.upper]
        before = [
            lo < low_key or (lo == low_key and not r.lower_inclusive)
            for lo in (k[: len(r.lower)] for k in sort_keys)
        ]
        after = [
            hi > high_key or (hi == high_key and not r.upper_inclusive)
            for hi in (k[: len(r.upper)] for k in sort_keys)
        ]
        # Monotone flags are what make a binary search find the slice.
        assert before == sorted(before, reverse=True) and after == sorted(after)
        start, stop = before.count(True), max(before.count(True), len(after) - after.count(True))
        assert range_slice(r, sorted_table, keys, p.index_keys) == (start, stop)
        for pos in range(start, stop):
            if in_ranges[pos] and residual[pos]:
                found[order[pos]] = True
    for pos, i in enumerate(order):
        assert in_ranges[pos] == any(row_in_range(r, rows[i], keys, p.index_keys) for r in p.ranges)
    assert found == expected


@settings(max_examples=150, deadline=None, print_blob=True, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios())
def test_bulk_planned_and_reference_evaluation_agree(scenario: tuple[Any, ...]) -> None:
    keys, tuples, pred, indexes = scenario
    rows = [dict(zip([k for k, _ in keys], t, strict=True)) for t in tuples]
    text = predicate_text(pred)
    parsed = parse(text)
    assert flatten(parsed) == flatten(pred), text

    bound = bind(parsed, keys)
    table = pa.table({k: pa.array([r[k] for r in rows], pa.string()) for k, _ in keys})
    expected = [evaluate_row(bound, r, keys) for r in rows]
    assert evaluate_arrow(bound, table, keys).to_pylist() == expected, text
    assert evaluate_arrow(normalize(bound), table, keys).to_pylist() == expected, text

    for candidate in (bound, normalize(bound)):
        p = plan(candidate, indexes)
        assert plan_mask(p, table, keys).to_pylist() == expected, (text, p)
        if p.index_name is not None:
            check_sorted_lookup(p, keys, rows, expected)


@settings(max_examples=200, deadline=None, print_blob=True)
@given(
    st.text(alphabet="ab%_\\.*[", max_size=6),
    st.lists(st.one_of(st.none(), st.text(alphabet="ab%_\\.*[\n", max_size=5)), max_size=10),
)
def test_like_matches_the_reference_for_any_pattern(pattern: str, values: list[str | None]) -> None:
    keys = [("k", "string")]
    table = pa.table({"k": pa.array(values, pa.string())})
    for negated in (False, True):
        pred = Like("k", pattern, negated)
        expected = [evaluate_row(pred, {"k": v}, keys) for v in values]
        assert evaluate_arrow(pred, table, keys).to_pylist() == expected, (pattern, negated)
