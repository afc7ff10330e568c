"""Nesting is bounded (MAX_DEPTH levels of parentheses and NOTs) and refused as InvalidInputException, never
RecursionError, through every way an expression arrives; chains of AND or OR are not nesting. Parse
errors speak the caller's language: what is wrong, where in the caller's own text."""

from __future__ import annotations

import random
from typing import Any

import pytest

from gluecat import Catalog
from gluecat.errors import InvalidInputException
from gluecat.expressions import MAX_DEPTH, bind, parse, parse_spark_filters
from gluecat.expressions.spark import TooDeep, relaxed
from gluecat.expressions.types import And, Compare, In, Literal, Not, Or, TrueP

KEYS = [("k", "int"), ("s", "string")]


def parens(depth: int) -> str:
    return "(" * depth + "k = 1" + ")" * depth


def nots(depth: int) -> str:
    return "NOT " * depth + "k = 1"


def alternating(depth: int) -> str:
    """k = 1 AND (k = 2 OR (k = 3 AND (...))): one parenthesis a level."""
    text = "k = 0"
    for i in range(depth):
        text = f"k = {i} {'AND' if i % 2 else 'OR'} ({text})"
    return text


@pytest.mark.parametrize("build", [parens, nots, alternating])
def test_nesting_up_to_the_bound_parses_and_one_more_level_is_refused(build: Any) -> None:
    bind(parse(build(MAX_DEPTH)), KEYS)
    with pytest.raises(InvalidInputException, match=f"nested more than {MAX_DEPTH} levels deep"):
        parse(build(MAX_DEPTH + 1))


@pytest.mark.parametrize("depth", [49, 300, 1000])
def test_deep_nesting_is_invalid_input_not_a_recursion_error(depth: int) -> None:
    for text in (parens(depth), nots(depth), "NOT (" * depth + "k = 1" + ")" * depth):
        with pytest.raises(InvalidInputException, match=r"nested more than \d+ levels deep .*at position"):
            parse(text)


def test_long_chains_of_and_or_are_not_nesting() -> None:
    ors = " OR ".join(f"k = {i}" for i in range(190))  # about as many as 2,048 bytes hold
    assert len(ors) < 2048
    pred = bind(parse(ors), KEYS)
    assert len(pred.children) == 190  # type: ignore[union-attr]
    assert bind(parse(" AND ".join(["(k > 1 OR s = 'a')"] * 100)), KEYS) is not None


def test_the_depth_error_names_its_place_in_the_callers_text() -> None:
    text = "s = 'a' AND\n" + parens(MAX_DEPTH + 1)
    with pytest.raises(InvalidInputException) as caught:
        parse(text)
    assert f"at position {12 + MAX_DEPTH + 1} (line 2, column {MAX_DEPTH + 1})" in caught.value.message


def left_deep(op: str, leaves: list[dict[str, Any]]) -> dict[str, Any]:
    tree = leaves[0]
    for leaf in leaves[1:]:
        tree = {"op": op, "left": tree, "right": leaf}
    return tree


def test_spark_chains_of_any_length_are_read_without_recursion() -> None:
    leaves = [{"op": "EqualTo", "attribute": "k", "value": i} for i in range(5000)]
    pred = bind(parse_spark_filters([left_deep("Or", leaves)]), KEYS)
    assert len(pred.children) == 5000  # type: ignore[union-attr]
    flat = parse_spark_filters([{"op": "Or", "children": leaves[:3]}])
    assert flat == parse_spark_filters([left_deep("Or", leaves[:3])])


def test_spark_filters_nested_past_the_bound_are_refused() -> None:
    tree: dict[str, Any] = {"op": "EqualTo", "attribute": "k", "value": 1}
    for _ in range(MAX_DEPTH + 1):
        tree = {"op": "Not", "child": tree}
    with pytest.raises(TooDeep, match=f"nested more than {MAX_DEPTH} levels"):
        parse_spark_filters([tree])
    alternating_tree: dict[str, Any] = {"op": "EqualTo", "attribute": "k", "value": 1}
    for i in range(5000):
        alternating_tree = {"op": "And" if i % 2 else "Or", "left": alternating_tree, "right": tree["child"]}
    with pytest.raises(InvalidInputException):
        parse_spark_filters([alternating_tree])


def test_the_python_api_refuses_deep_expressions_and_filters_as_invalid_input(warehouse: str) -> None:
    catalog = Catalog(warehouse)
    catalog.create_database(DatabaseInput={"Name": "db"})
    catalog.create_table(
        DatabaseName="db", TableInput={"Name": "t", "PartitionKeys": [{"Name": "k", "Type": "int"}]}
    )
    deep = "(" * 500 + "k = 1" + ")" * 500
    with pytest.raises(catalog.exceptions.InvalidInputException, match="nested more than"):
        catalog.get_partitions(DatabaseName="db", TableName="t", Expression=deep[:2048])
    with pytest.raises(catalog.exceptions.InvalidInputException, match="nested more than"):
        catalog.get_partitions_arrow(DatabaseName="db", TableName="t", Expression=deep)
    tree: dict[str, Any] = {"op": "EqualTo", "attribute": "k", "value": 1}
    for _ in range(3000):
        tree = {"op": "Not", "child": tree}
    with pytest.raises(catalog.exceptions.InvalidInputException, match="nested more than"):
        catalog.get_partitions_arrow(DatabaseName="db", TableName="t", SparkFilters=[tree])


def test_spark_conditions_on_keys_expressions_cannot_compare_select_every_partition_they_might() -> None:
    keys = [("f", "double"), ("s", "string")]
    on_f = Compare(">", "f", Literal("2", "number"))
    on_s = Compare("=", "s", Literal("a"))
    assert relaxed(on_f, keys) == TrueP()
    # Under a NOT the condition becomes FALSE, so that NOT selects every partition (TRUE would select none).
    assert relaxed(Not(on_f), keys) == TrueP()
    assert relaxed(And((on_s, Not(on_f))), keys) == on_s
    assert relaxed(Or((on_s, on_f)), keys) == TrueP()
    assert relaxed(on_s, keys) == on_s


def test_spark_values_beyond_what_expressions_take_select_every_partition_they_might() -> None:
    """Spark's optimizer turns CAST(ts AS DATE) = DATE'9999-12-31' into a range ending at the year +10000,
    which no timestamp key can hold: the catalog refused the whole query with InvalidInputException."""
    keys = [("ts", "timestamp"), ("d", "date"), ("s", "string")]
    beyond = Compare("<", "ts", Literal("+10000-01-01 00:00:00"))
    on_s = Compare("=", "s", Literal("a"))
    assert relaxed(And((on_s, beyond)), keys) == on_s
    assert relaxed(Not(beyond), keys) == TrueP()
    assert relaxed(In("d", (Literal("2024-01-01"), Literal("-0001-01-01"))), keys) == TrueP()
    assert relaxed(Compare("=", "d", Literal("2024-01-01")), keys) == Compare("=", "d", Literal("2024-01-01"))


# -- parse errors in the caller's words ---------------------------------------------------------------

SQLGLOT_WORDS = (
    "<class",
    "Token(",
    "token_type",
    "sqlglot",
    "Required keyword",
    "Expected table",
    "Expecting",
)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("select = '1'", "'select' is a reserved word: quote a partition key of that name, as \"select\""),
        (
            "k = ?",
            "expected a value (a quoted string, a number, DATE '...' or TIMESTAMP '...'), not a parameter",
        ),
        ("*", "'*' is not a condition that a partition expression can hold at position 1"),
        (";", "no condition (only comments or ';')"),
        ("k = 1 /* open", "unterminated comment at position 7: '/* open'"),
        (
            "s = 'a' AND\nk = ",
            "an operator is missing its right-hand operand at position 15 (line 2, column 3)",
        ),
        ("k = 1 + 1", "arithmetic is not supported at position 5: '1 + 1'"),
        ("SELECT k FROM t", "a statement is not a condition that a partition expression can hold"),
    ],
)
def test_parse_errors_say_what_is_wrong_and_where(text: str, message: str) -> None:
    with pytest.raises(InvalidInputException) as caught:
        parse(text)
    assert message in caught.value.message
    assert not any(word in caught.value.message for word in SQLGLOT_WORDS), caught.value.message


def test_no_parse_error_leaks_sqlglots_own_text() -> None:
    seed = random.randrange(2**32)
    rng = random.Random(seed)
    vocabulary = ["k", "=", "'1'", "AND", "OR", "NOT", "(", ")", "IN", "BETWEEN", "LIKE", "IS", "NULL", "1"]
    vocabulary += [",", "<", ">", "<>", "*", "+", "SELECT", "FROM", "DATE", "CAST", "CASE", "[", "]", "{"]
    vocabulary += ["?", ":", "@", ";", "--", "/*", "ESCAPE", "TRUE", "INTERVAL", "ANY", "||", "~", "#"]
    for _ in range(3000):
        text = " ".join(rng.choice(vocabulary) for _ in range(rng.randint(1, 7)))
        try:
            parse(text)
        except InvalidInputException as e:
            leaked = [w for w in SQLGLOT_WORDS if w in e.message]
            assert not leaked, f"seed {seed}: {text!r} -> {e.message}"
