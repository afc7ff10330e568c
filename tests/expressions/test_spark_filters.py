"""Spark's pushed filters become the same IR as Glue expressions (cases in spark_filters.txt)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gluecat.errors import InvalidInputException
from gluecat.expressions import (
    bind,
    evaluate_arrow,
    evaluate_row,
    parse,
    parse_spark_filters,
    predicate_text,
)

FIXTURE = Path(__file__).with_name("spark_filters.txt")
CASES = [
    (n, *line.split(" => ", 1))
    for n, line in enumerate(FIXTURE.read_text().splitlines(), start=1)
    if line.strip() and not line.startswith("#")
]


@pytest.mark.parametrize(("line", "filters", "expected"), CASES, ids=[f"L{n}" for n, _, _ in CASES])
def test_spark_filter(line: int, filters: str, expected: str) -> None:
    tree = json.loads(filters)
    if expected.startswith("error "):
        with pytest.raises(InvalidInputException) as info:
            parse_spark_filters(tree)
        assert expected.removeprefix("error ") in info.value.message
        return
    pred = parse_spark_filters(tree)
    assert predicate_text(pred) == expected
    # The text is itself a Glue expression that reads back to the same predicate.
    if expected not in ("TRUE", "FALSE"):
        assert parse(expected) == pred


def test_string_filters_match_wildcards_literally() -> None:
    keys = [("k", "string")]
    table = pa.table({"k": ["a_b%x", "axb%x", "a_bxx", "za_b%", None]})

    def matches(op: str, value: str) -> list[str | None]:
        pred = bind(parse_spark_filters([{"op": op, "attribute": "k", "value": value}]), keys)
        return table.filter(evaluate_arrow(pred, table, keys)).column("k").to_pylist()

    assert matches("StringStartsWith", "a_b%") == ["a_b%x"]
    assert matches("StringEndsWith", "b%") == ["za_b%"]
    assert matches("StringContains", "_b%") == ["a_b%x", "za_b%"]


def spark_semantics(f: dict[str, Any], row: dict[str, str | None]) -> bool | None:
    """Spark's own three-valued meaning of a filter, NULL literals included (the oracle)."""
    op = f["op"]
    if op == "Not":
        inner = spark_semantics(f["child"], row)
        return None if inner is None else not inner
    if op in ("And", "Or"):
        left, right = spark_semantics(f["left"], row), spark_semantics(f["right"], row)
        decisive = op == "Or"  # True decides an OR, False decides an AND
        if decisive in (left, right):
            return decisive
        return None if None in (left, right) else not decisive
    x = row[f["attribute"]]
    if op == "IsNull":
        return x is None
    if op == "EqualTo":
        return None if x is None or f["value"] is None else x == f["value"]
    assert op == "In"
    if not f["values"]:
        return False  # Spark 4: nothing is IN an empty list, not even NULL
    if x is None:
        return None
    if x in [v for v in f["values"] if v is not None]:
        return True
    return None if None in f["values"] else False


def spark_trees() -> st.SearchStrategy[dict[str, Any]]:
    value = st.sampled_from(["a", "b", None])
    leaves = st.one_of(
        st.builds(lambda v: {"op": "EqualTo", "attribute": "k", "value": v}, value),
        st.builds(lambda vs: {"op": "In", "attribute": "k", "values": vs}, st.lists(value, max_size=3)),
        st.just({"op": "IsNull", "attribute": "k"}),
    )

    def extend(children: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[dict[str, Any]]:
        pairs = st.tuples(st.sampled_from(["And", "Or"]), children, children)
        return st.one_of(
            children.map(lambda c: {"op": "Not", "child": c}),
            pairs.map(lambda t: {"op": t[0], "left": t[1], "right": t[2]}),
        )

    return st.recursive(leaves, extend, max_leaves=5)


@settings(max_examples=150, deadline=None, print_blob=True)
@given(spark_trees())
def test_null_literals_keep_spark_meaning(tree: dict[str, Any]) -> None:
    keys = [("k", "string")]
    pred = bind(parse_spark_filters([tree]), keys)
    for x in ("a", "b", "c", None):
        assert evaluate_row(pred, {"k": x}, keys) == (spark_semantics(tree, {"k": x}) is True), (tree, x)
