"""normalize() cases from normalize.txt, explain's two forms, and the modules' doctests."""

from __future__ import annotations

import doctest
import importlib
import json
from pathlib import Path

import pytest

from gluecat.expressions import (
    And,
    Compare,
    FalseP,
    Index,
    Not,
    Or,
    TrueP,
    bind,
    explain,
    explain_text,
    normalize,
    parse,
    plan,
    predicate_text,
)

FIXTURE = Path(__file__).with_name("normalize.txt")
CASES = [
    (n, *line.split("=>", 1))
    for n, line in enumerate(FIXTURE.read_text().splitlines(), start=1)
    if line.strip() and not line.startswith("#")
]


@pytest.mark.parametrize(("line", "expression", "expected"), CASES, ids=[f"L{n}" for n, _, _ in CASES])
def test_normalize(line: int, expression: str, expected: str) -> None:
    assert predicate_text(normalize(parse(expression))) == expected.strip()


def test_normalize_folds_constants() -> None:
    a = Compare("=", "a", "1")
    assert normalize(And((a, TrueP()))) == a
    assert normalize(And((a, FalseP()))) == FalseP()
    assert normalize(Or((a, TrueP()))) == TrueP()
    assert normalize(Not(Or((a, FalseP())))) == Compare("<>", "a", "1")


KEYS = [("country", "string"), ("year", "int"), ("dt", "date"), ("amount", "decimal(10,2)")]
INDEXES = [Index("by_country_year", ["country", "year"]), Index("by_dt", ["dt"])]


def test_explain_describes_an_index_lookup() -> None:
    p = plan(bind(parse("country = 'US' AND year >= 2019 AND amount IN (1.5, 2)"), KEYS), INDEXES)
    described = explain(p)
    assert described == {
        "Index": "by_country_year",
        "IndexKeys": ["country", "year"],
        "Scan": "index",
        "KeysUsed": ["country", "year"],
        "Ranges": [
            {
                "Lower": ["US", 2019],
                "LowerInclusive": True,
                "Upper": ["US"],
                "UpperInclusive": True,
                "Text": "country = 'US' AND year >= 2019",
            }
        ],
        "Residual": "amount IN (1.5, 2)",
    }
    json.dumps(described)  # fit for a CLI or an HTTP response
    assert explain_text(p) == (
        "index by_country_year (country, year)\n"
        "  scan: country = 'US' AND year >= 2019\n"
        "  then filter: amount IN (1.5, 2)"
    )


def test_explain_renders_dates_and_full_scans() -> None:
    by_date = plan(bind(parse("dt BETWEEN '2024-1-1' AND DATE '2024-01-31'"), KEYS), INDEXES)
    assert explain(by_date)["Ranges"][0]["Lower"] == ["2024-01-01"]
    assert (
        explain_text(by_date)
        == "index by_dt (dt)\n  scan: dt >= DATE '2024-01-01' AND dt <= DATE '2024-01-31'"
    )
    full = plan(bind(parse("year = 2019 OR country = 'US'"), KEYS), INDEXES)
    assert explain(full)["Scan"] == "full"
    assert (
        explain_text(full)
        == "full scan (no usable partition index)\n  then filter: year = 2019 OR country = 'US'"
    )
    empty = plan(bind(parse("dt = '2024-01-01' AND dt > '2024-02-01'"), KEYS), INDEXES)
    assert (
        explain_text(empty).splitlines()[1]
        == "  scan: nothing (the conditions on the index keys contradict each other)"
    )


MODULES = [
    "types",
    "parse",
    "bind",
    "normalize",
    "plan",
    "evaluate",
    "lookup",
    "reference",
    "explain",
    "spark",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(f"gluecat.expressions.{name}")
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0
