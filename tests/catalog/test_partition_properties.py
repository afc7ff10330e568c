"""Property: GetPartitions answers exactly what a plain reference evaluator says, whatever the table,
partitions, expression, indexes, segmentation, page size, and mix of small writes and merges."""

from __future__ import annotations

import tempfile
from datetime import date, timedelta
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gluecat import Catalog
from gluecat.catalog.compact import compact_table
from gluecat.expressions import bind, evaluate_row, parse

KEY_TYPES = {"s": "string", "i": "int", "d": "date"}
STRINGS = ["a", "b", "ab", "US", "us", "x_y", "%", ""]
INTS = ["-3", "0", "7", "10", "0042", "2017", "nope"]
DATES = [(date(2024, 1, 1) + timedelta(days=d)).isoformat() for d in (0, 1, 30, 400)] + ["2024-02-30"]
LIKE_PATTERNS = ["a%", "%7", "_", "2024-01-%", "%", "x\\_y"]
VALUES = {"string": STRINGS, "int": INTS, "date": DATES}
LITERALS = {
    "string": ["'a'", "'US'", "'ab'", "'x_y'", "''", "7"],
    "int": ["0", "7", "10", "2017", "'10'"],
    "date": ["'2024-01-01'", "'2024-01-31'", "DATE '2025-02-04'"],
}


@st.composite
def tables(draw: Any) -> tuple[list[tuple[str, str]], list[list[str]]]:
    n = draw(st.integers(1, 3))
    types = draw(st.lists(st.sampled_from(sorted(KEY_TYPES.values())), min_size=n, max_size=n))
    keys = [(f"k{i}", t) for i, t in enumerate(types)]
    rows = draw(
        st.lists(
            st.tuples(*[st.sampled_from(VALUES[t]) for t in types]).map(list),
            min_size=0,
            max_size=40,
            unique_by=tuple,
        )
    )
    return keys, rows


@st.composite
def expressions(draw: Any, keys: list[tuple[str, str]], depth: int = 2) -> str:
    name, glue_type = draw(st.sampled_from(keys))
    lit = st.sampled_from(LITERALS[glue_type])
    leaf = draw(
        st.sampled_from(
            ["cmp", "between", "in", "like", "null"]
            if depth == 0
            else ["cmp", "between", "in", "like", "and", "or", "not"]
        )
    )
    if leaf == "cmp":
        return f"{name} {draw(st.sampled_from(['=', '<>', '<', '<=', '>', '>=']))} {draw(lit)}"
    if leaf == "between":
        return f"{name} BETWEEN {draw(lit)} AND {draw(lit)}"
    if leaf == "in":
        return f"{name} IN ({', '.join(draw(st.lists(lit, min_size=1, max_size=3)))})"
    if leaf == "like" and glue_type == "string":  # LIKE is for string keys only
        return f"{name} LIKE '{draw(st.sampled_from(LIKE_PATTERNS))}'"
    if leaf == "like":
        return f"{name} IS NOT NULL"
    if leaf == "null":
        return f"{name} IS {draw(st.sampled_from(['', 'NOT ']))}NULL"
    if leaf == "not":
        return f"NOT ({draw(expressions(keys, depth - 1))})"
    joiner = " AND " if leaf == "and" else " OR "
    return joiner.join(f"({draw(expressions(keys, depth - 1))})" for _ in range(2))


def reference(keys: list[tuple[str, str]], rows: list[list[str]], expression: str) -> list[list[str]]:
    pred = bind(parse(expression), keys)
    return sorted(
        r for r in rows if evaluate_row(pred, dict(zip([k for k, _ in keys], r, strict=True)), keys)
    )


def everything(catalog: Catalog, expression: str, total: int, page: int) -> list[list[str]]:
    out: list[list[str]] = []
    for number in range(total):
        kwargs: dict[str, Any] = {
            "DatabaseName": "db",
            "TableName": "t",
            "Expression": expression,
            "MaxResults": page,
        }
        if total > 1:
            kwargs["Segment"] = {"SegmentNumber": number, "TotalSegments": total}
        while True:
            resp = catalog.get_partitions(**kwargs)
            assert len(resp["Partitions"]) <= page
            out += [p["Values"] for p in resp["Partitions"]]
            if "NextToken" not in resp:
                break
            kwargs["NextToken"] = resp["NextToken"]
    return out


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)
@given(data=st.data())
def test_get_partitions_equals_the_reference_evaluator(data: Any) -> None:
    keys, rows = data.draw(tables())
    indexed = [k for k, t in keys if t in ("string", "int", "date")]
    index_keys = data.draw(st.permutations(indexed).map(lambda p: p[: max(1, len(p) - 1)]))
    with_index = data.draw(st.booleans())
    removed = data.draw(st.lists(st.sampled_from(rows), unique_by=tuple, max_size=5)) if rows else []
    # Closed before its folder goes: a background merge may still be writing into it.
    with tempfile.TemporaryDirectory() as tmp, Catalog(tmp, fsync=False) as catalog:
        catalog.create_database(DatabaseInput={"Name": "db"})
        catalog.create_table(
            DatabaseName="db",
            TableInput={"Name": "t", "PartitionKeys": [{"Name": k, "Type": t} for k, t in keys]},
        )
        # Several small writes and deletions; a read part way folds the view, so the answer merges the
        # later ones (newer segments, deletions among them) with that base.
        fold_at = data.draw(st.integers(0, len(rows)))
        for start in range(0, len(rows), 7):
            if start >= fold_at > start - 7:
                catalog.get_partitions(DatabaseName="db", TableName="t")
            batch = rows[start : start + 7]
            out = catalog.batch_create_partition(
                DatabaseName="db", TableName="t", PartitionInputList=[{"Values": r} for r in batch]
            )
            assert out["Errors"] == []
        for r in removed:
            catalog.delete_partition(DatabaseName="db", TableName="t", PartitionValues=r)
        live = [r for r in rows if r not in removed]
        if with_index:
            catalog.create_partition_index(
                DatabaseName="db", TableName="t", PartitionIndex={"IndexName": "i", "Keys": index_keys}
            )
        if data.draw(st.booleans()):
            compact_table(catalog._ctx, "db", "t")
        expression = data.draw(st.one_of(st.just(""), expressions(keys)))
        expected = reference(keys, live, expression) if expression else sorted(live)
        total = data.draw(st.sampled_from([1, 2, 3, 10]))
        page = data.draw(st.sampled_from([1, 3, 1000]))
        got = everything(catalog, expression, total, page)
        assert sorted(got) == expected, (
            expression,
            catalog.explain_partitions(DatabaseName="db", TableName="t", Expression=expression),
        )
        assert len(got) == len({tuple(g) for g in got}), "a partition was returned twice"
