"""Partition values as Spark is to type them: one meaning for the catalog's pruning and Spark's rows.

The shim types each stored value with Spark's CAST, which is lenient (``1e0`` and `` 7`` are numbers,
``2024-1-5`` a date, ``2024-01-05`` a timestamp) and rounds to the declared type (``1.505`` is 1.51 in a
decimal(5,2), nanoseconds are cut to microseconds). The catalog, which selects the partitions a filter
matches before Spark sees them, holds a value that is not one of its key's type as matching no comparison
(expressions.types.partition_value) and compares decimals and timestamps exactly. Where the two differ, a
filtered read missed partitions that the full read showed with a matching value. Such values therefore
reach Spark as NULL (Hive's null marker), which is what the catalog's filters take them for, so a filtered
read returns exactly the rows of the full read that pass the filter.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from gluecat.api.partition_names import DEFAULT_PARTITION_NAME
from gluecat.catalog.context import type_spelling
from gluecat.errors import InvalidInputException
from gluecat.expressions.evaluate import typed_column
from gluecat.expressions.types import key_type
from gluecat.spark.formats import decimal_type


def _spark_decimal(glue_type: str) -> tuple[int, int]:
    """Precision and scale of a decimal key's type as Spark reads its DDL (a bare ``decimal`` is (10, 0))."""
    found = decimal_type(type_spelling(glue_type))
    assert found is not None  # key_type classified it as a decimal
    return found


def _unfit_decimals(text: Any, typed: Any, precision: int, scale: int) -> Any:
    """Where an exact decimal is not a value of decimal(precision, scale): more places than its scale
    (Spark would round it), or more whole digits than it has room for (Spark would fail or give NULL)."""
    inexact = pc.not_equal(pc.round(typed, ndigits=scale), typed)
    unsigned = pc.replace_substring_regex(text, r"^[+-]", "")
    whole = pc.utf8_ltrim(pc.replace_substring_regex(unsigned, r"\..*$", ""), "0")
    too_big = pc.greater(pc.utf8_length(whole), pa.scalar(precision - scale, pa.int32()))
    return pc.or_(inexact, too_big)


# More than the microseconds Spark keeps, not all zeros.
_PAST_MICROS = r"\.[0-9]{6}[0-9]*[1-9]$"


def as_spark_reads(values: pa.Array | pa.ChunkedArray, glue_type: str) -> list[Any]:
    """A key's stored values for the shim: unchanged where Spark's CAST reads the value the catalog's
    filters compare, Hive's null marker where it would read another value (see the module's doc)."""
    try:
        kt = key_type(glue_type)
    except InvalidInputException:
        kt = None  # a type filters do not compare (double, boolean, ...): the catalog selects them all
    if kt is None or kt.kind == "string":
        return values.to_pylist()
    text: Any = values.combine_chunks() if isinstance(values, pa.ChunkedArray) else values
    typed = typed_column(text, kt)
    unreadable: Any = pc.and_(pc.is_valid(text), pc.is_null(typed))
    if kt.kind == "decimal":
        unreadable = pc.or_kleene(unreadable, _unfit_decimals(text, typed, *_spark_decimal(glue_type)))
    elif kt.kind == "timestamp":
        unreadable = pc.or_kleene(unreadable, pc.match_substring_regex(text, _PAST_MICROS))
    marker = pa.scalar(DEFAULT_PARTITION_NAME, pa.string())
    unreadable = pc.and_(pc.fill_null(unreadable, False), pc.not_equal(text, marker))
    out: list[Any] = pc.if_else(pc.fill_null(unreadable, False), marker, text).to_pylist()
    return out
