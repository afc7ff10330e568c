"""gluecat.expressions: GetPartitions Expressions and Spark partition filters, from text to matching partitions.

The pipeline is a chain of small pure functions::

    pred  = parse("country = 'US' AND year > 2018")       # or parse_spark_filters([...])
    bound = bind(pred, [("country", "string"), ("year", "int")])
    p     = plan(bound, [Index("by_country_year", ["country", "year"])])   # ACTIVE indexes only
    mask  = plan_mask(p, table, keys)     # or range_mask(...) & evaluate_arrow(p.residual, ...)
    # partitions kept sorted by index_sort_indices(): range_slice() finds each range's rows
    explain(p)                            # dict; explain_text(p) for people

``normalize`` pushes NOT down and expands BETWEEN; ``plan`` calls it for the residual itself, and should be
given the bound predicate before normalization so that NOT parts are never used by an index (as Glue does).
"""

from gluecat.expressions.bind import bind, literal_value
from gluecat.expressions.evaluate import evaluate_arrow, plan_mask, range_mask, typed_column
from gluecat.expressions.explain import explain, explain_text, predicate_text
from gluecat.expressions.lookup import index_sort_indices, range_slice, typed_index_columns
from gluecat.expressions.normalize import conjuncts, normalize
from gluecat.expressions.parse import MAX_DEPTH, parse
from gluecat.expressions.plan import plan
from gluecat.expressions.reference import evaluate_row, row_in_range
from gluecat.expressions.spark import parse_spark_filters
from gluecat.expressions.types import (
    And,
    Between,
    Compare,
    Date,
    FalseP,
    In,
    Index,
    IsNull,
    KeyType,
    Like,
    Literal,
    Not,
    Or,
    Plan,
    Predicate,
    Range,
    Timestamp,
    TrueP,
    key_type,
    partition_value,
)

__all__ = [
    "MAX_DEPTH",
    "And",
    "Between",
    "Compare",
    "Date",
    "FalseP",
    "In",
    "Index",
    "IsNull",
    "KeyType",
    "Like",
    "Literal",
    "Not",
    "Or",
    "Plan",
    "Predicate",
    "Range",
    "Timestamp",
    "TrueP",
    "bind",
    "conjuncts",
    "evaluate_arrow",
    "evaluate_row",
    "explain",
    "explain_text",
    "index_sort_indices",
    "key_type",
    "literal_value",
    "normalize",
    "parse",
    "parse_spark_filters",
    "partition_value",
    "plan",
    "plan_mask",
    "predicate_text",
    "range_mask",
    "range_slice",
    "row_in_range",
    "typed_column",
    "typed_index_columns",
]
