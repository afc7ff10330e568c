"""Spark's pushed filters as a catalog service reads them: GetPartitions' Expression, GetTableObjects'
PartitionPredicate."""

from __future__ import annotations

from gluecat.expressions.parse import parse
from gluecat.spark.pushed import expression, partition_predicate

KEYS = [("dt", "date"), ("n", "int"), ("my key", "string"), ("d", "double")]


def test_spark_filters_become_a_glue_expression_that_selects_at_least_their_partitions() -> None:
    assert (
        expression([{"op": "EqualTo", "attribute": "dt", "value": "2024-01-01"}], KEYS) == "dt = '2024-01-01'"
    )
    both = [{"op": "GreaterThan", "attribute": "n", "value": 5}, {"op": "IsNotNull", "attribute": "my key"}]
    assert expression(both, KEYS) == "n > 5 AND `my key` IS NOT NULL"
    # A double key is not compared by Glue's expressions: the condition selects everything (Spark filters).
    assert expression([{"op": "EqualTo", "attribute": "d", "value": 1.5}], KEYS) is None
    assert expression([{"op": "AlwaysFalse"}], KEYS) == ""
    many = [
        {"op": "In", "attribute": "n", "values": list(range(600))},
        {"op": "EqualTo", "attribute": "n", "value": 7},
    ]
    assert expression(many, KEYS) == "n = 7"  # the IN list would pass Glue's 2,048 characters


def test_every_expression_made_is_one_gluecat_parses() -> None:
    filters = [
        {"op": "Not", "child": {"op": "In", "attribute": "n", "values": [1, None]}},
        {
            "op": "Or",
            "children": [
                {"op": "StringStartsWith", "attribute": "my key", "value": "a_%'"},
                {"op": "IsNull", "attribute": "dt"},
            ],
        },
        {"op": "LessThanOrEqual", "attribute": "dt", "value": "2024-02-29"},
    ]
    text = expression(filters, KEYS)
    assert text is not None
    parse(text)


def test_a_partition_predicate_keeps_only_the_comparisons_lake_formation_takes() -> None:
    filters = [
        {"op": "In", "attribute": "n", "values": [3]},
        {"op": "In", "attribute": "n", "values": [3, 4]},
        {"op": "GreaterThan", "attribute": "dt", "value": "2024-01-01"},
        {"op": "IsNull", "attribute": "my key"},
    ]
    assert partition_predicate(filters, KEYS) == "n = 3 AND dt > '2024-01-01'"
    assert partition_predicate([{"op": "IsNull", "attribute": "my key"}], KEYS) is None
    assert partition_predicate([{"op": "AlwaysFalse"}], KEYS) == ""
