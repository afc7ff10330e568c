"""BatchCreatePartition answers as a plain model of Glue does, whether a batch is all new partitions
(added in one pass) or holds duplicates, existing partitions, wrong value counts or values a partition
index refuses (checked one by one)."""

from __future__ import annotations

import tempfile
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gluecat import Catalog

INDEXED_YEAR = "ix"
VALUE = st.sampled_from(["a", "b", "c", "2024", "x\x00"])  # a NUL is refused by the index on year
# The table has two keys: most partitions have two values (so that whole batches are well formed), some
# one or three.
VALUES = st.integers(0, 5).flatmap(
    lambda i: st.lists(VALUE, min_size=2, max_size=2) if i else st.lists(VALUE, min_size=1, max_size=3)
)


def partition_input(values: list[str], n: int, extra: bool) -> dict[str, Any]:
    out: dict[str, Any] = {"Values": values, "StorageDescriptor": {"Location": f"s3://b/{n}"}}
    if extra:
        out["Parameters"] = {"n": str(n)}
    return out


def expected_errors(
    live: dict[tuple[str, ...], dict[str, Any]], batch: list[dict[str, Any]], indexed: bool
) -> list[Any]:
    """The model: each partition in order, against what exists and what the batch added before it."""
    errors = []
    for p in batch:
        values = tuple(p["Values"])
        if len(values) != 2:
            code = "InvalidInputException"
        elif values in live:
            code = "AlreadyExistsException"
        elif indexed and "\x00" in values[1]:
            code = "InvalidInputException"
        else:
            live[values] = p
            continue
        errors.append((list(values), code))
    return errors


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    batches=st.lists(
        st.lists(st.tuples(VALUES, st.booleans()), min_size=1, max_size=8), min_size=1, max_size=5
    ),
    indexed=st.booleans(),
)
def test_batch_create_partition_answers_as_the_model(batches: list[list[Any]], indexed: bool) -> None:
    with tempfile.TemporaryDirectory() as root, Catalog(root, fsync=False) as glue:
        glue.create_database(DatabaseInput={"Name": "db"})
        glue.create_table(
            DatabaseName="db",
            TableInput={
                "Name": "t",
                "PartitionKeys": [{"Name": "kind", "Type": "string"}, {"Name": "year", "Type": "string"}],
            },
            PartitionIndexes=[{"IndexName": INDEXED_YEAR, "Keys": ["year"]}] if indexed else [],
        )
        live: dict[tuple[str, ...], dict[str, Any]] = {}
        n = 0
        for batch in batches:
            inputs = []
            for values, extra in batch:
                inputs.append(partition_input(values, n, extra))
                n += 1
            want = expected_errors(live, inputs, indexed)
            got = glue.batch_create_partition(DatabaseName="db", TableName="t", PartitionInputList=inputs)
            assert [(e["PartitionValues"], e["ErrorDetail"]["ErrorCode"]) for e in got["Errors"]] == want
        found = glue.get_partitions(DatabaseName="db", TableName="t")["Partitions"]
        assert {tuple(p["Values"]): (p["StorageDescriptor"], p.get("Parameters")) for p in found} == {
            values: (p["StorageDescriptor"], p.get("Parameters")) for values, p in live.items()
        }
