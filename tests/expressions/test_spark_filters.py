"""Spark's pushed filters become the same IR as Glue expressions (cases in spark_filters.txt)."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pytest

from gluecat.errors import InvalidInputException
from gluecat.expressions import bind, evaluate_arrow, parse, parse_spark_filters, predicate_text

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
