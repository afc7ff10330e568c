"""Lake Formation's transactions and governed-table objects, through gluecat.LakeFormation and over the
wire (boto3's lakeformation client), with the Glue operations that take a TransactionId."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from botocore.exceptions import ClientError

from gluecat import LakeFormation
from gluecat.catalog import governed as governed_objects
from gluecat.catalog import transactions

from .conftest import Governed

KEYS = [("dt", "date"), ("n", "int")]


def make_table(
    g: Governed,
    name: str = "t",
    keys: list[tuple[str, str]] = KEYS,
    *,
    table_type: str = "GOVERNED",
    database: str = "db",
    location: str | None = None,
    **extra: Any,
) -> None:
    try:
        g.glue.create_database(DatabaseInput={"Name": database})
    except ClientError as e:
        assert e.response["Error"]["Code"] == "AlreadyExistsException"
    g.glue.create_table(
        DatabaseName=database, TableInput=table_input(name, keys, table_type, location), **extra
    )


def table_input(
    name: str, keys: list[tuple[str, str]] = KEYS, table_type: str = "GOVERNED", location: str | None = None
) -> dict[str, Any]:
    return {
        "Name": name,
        "TableType": table_type,
        "StorageDescriptor": {
            "Columns": [{"Name": "x", "Type": "int"}],
            "Location": location or f"s3://lake/{name}/",
        },
        "PartitionKeys": [{"Name": k, "Type": t} for k, t in keys],
    }


def add(uri: str, *values: str, etag: str = "etag-1", size: int = 10) -> dict[str, Any]:
    op: dict[str, Any] = {"Uri": uri, "ETag": etag, "Size": size}
    if values:
        op["PartitionValues"] = list(values)
    return {"AddObject": op}


def delete(uri: str, *values: str) -> dict[str, Any]:
    op: dict[str, Any] = {"Uri": uri}
    if values:
        op["PartitionValues"] = list(values)
    return {"DeleteObject": op}


def start(g: Governed, kind: str | None = None) -> str:
    return str(g.lf.start_transaction(**({"TransactionType": kind} if kind else {}))["TransactionId"])


def write(g: Governed, tx: str, *ops: dict[str, Any], table: str = "t") -> None:
    g.lf.update_table_objects(DatabaseName="db", TableName=table, TransactionId=tx, WriteOperations=list(ops))


def commit(g: Governed, *ops: dict[str, Any], table: str = "t") -> str:
    tx = start(g)
    write(g, tx, *ops, table=table)
    assert g.lf.commit_transaction(TransactionId=tx)["TransactionStatus"] == "COMMITTED"
    return tx


def pages(g: Governed, table: str = "t", **kwargs: Any) -> Iterator[dict[str, Any]]:
    while True:
        page = g.lf.get_table_objects(DatabaseName="db", TableName=table, **kwargs)
        yield page
        if not page.get("NextToken"):
            return
        kwargs["NextToken"] = page["NextToken"]


def objects(g: Governed, table: str = "t", **kwargs: Any) -> list[tuple[tuple[str, ...], str]]:
    """Every object (partition values, Uri) of every page, in the order returned."""
    return [
        (tuple(group.get("PartitionValues", [])), o["Uri"])
        for page in pages(g, table, **kwargs)
        for group in page["Objects"]
        for o in group["Objects"]
    ]


def status(g: Governed, tx: str) -> str:
    return str(g.lf.describe_transaction(TransactionId=tx)["TransactionDescription"]["TransactionStatus"])


def code(e: pytest.ExceptionInfo[ClientError]) -> str:
    return str(e.value.response["Error"]["Code"])


def raises(code_name: str) -> Any:
    """pytest.raises for an error code, whichever client (Glue's model lacks the transaction errors,
    so boto3's glue client raises a plain ClientError for them)."""
    return pytest.raises(ClientError, match=f"\\({code_name}\\)")


# -- life cycle ---------------------------------------------------------------------------------------


def test_a_transaction_is_active_until_committed_and_says_when(governed: Governed) -> None:
    before = datetime.now(UTC)
    tx = start(governed)
    described = governed.lf.describe_transaction(TransactionId=tx)["TransactionDescription"]
    assert described["TransactionId"] == tx and described["TransactionStatus"] == "ACTIVE"
    assert before <= described["TransactionStartTime"] <= datetime.now(UTC)
    assert "TransactionEndTime" not in described
    assert governed.lf.commit_transaction(TransactionId=tx)["TransactionStatus"] == "COMMITTED"
    ended = governed.lf.describe_transaction(TransactionId=tx)["TransactionDescription"]
    assert ended["TransactionStatus"] == "COMMITTED"
    assert ended["TransactionStartTime"] <= ended["TransactionEndTime"] <= datetime.now(UTC)


def test_a_canceled_transaction_is_aborted(governed: Governed) -> None:
    tx = start(governed)
    governed.lf.cancel_transaction(TransactionId=tx)
    assert status(governed, tx) == "ABORTED"


def test_unknown_transactions_are_not_found(governed: Governed) -> None:
    lf = governed.lf
    for call in (
        lf.describe_transaction,
        lf.commit_transaction,
        lf.cancel_transaction,
        lf.extend_transaction,
    ):
        with pytest.raises(lf.exceptions.EntityNotFoundException, match="Transaction nosuch not found"):
            call(TransactionId="nosuch")
    make_table(governed)
    with pytest.raises(lf.exceptions.EntityNotFoundException):
        write(governed, "nosuch", add("s3://lake/t/a", "2024-01-01", "1"))
    with pytest.raises(lf.exceptions.EntityNotFoundException):
        lf.get_table_objects(DatabaseName="db", TableName="t", TransactionId="nosuch")
    with raises("EntityNotFoundException"):
        governed.glue.get_table(DatabaseName="db", Name="t", TransactionId="nosuch")


def test_a_committed_transaction_refuses_further_use(governed: Governed) -> None:
    make_table(governed)
    lf = governed.lf
    tx = commit(governed, add("s3://lake/t/a", "2024-01-01", "1"))
    for call in (lf.commit_transaction, lf.cancel_transaction, lf.extend_transaction):
        with pytest.raises(lf.exceptions.TransactionCommittedException):
            call(TransactionId=tx)
    with pytest.raises(lf.exceptions.TransactionCommittedException):
        write(governed, tx, add("s3://lake/t/b", "2024-01-01", "1"))
    with pytest.raises(lf.exceptions.TransactionCommittedException):
        lf.delete_objects_on_cancel(
            DatabaseName="db", TableName="t", TransactionId=tx, Objects=[{"Uri": "s3://lake/t/b"}]
        )
    with raises("TransactionCommittedException"):
        governed.glue.create_table(DatabaseName="db", TableInput=table_input("u"), TransactionId=tx)
    assert objects(governed) == [(("2024-01-01", "1"), "s3://lake/t/a")]


def test_a_canceled_transaction_refuses_further_use_reads_included(governed: Governed) -> None:
    make_table(governed)
    lf = governed.lf
    tx = start(governed)
    write(governed, tx, add("s3://lake/t/a", "2024-01-01", "1"))
    lf.cancel_transaction(TransactionId=tx)
    for call in (lf.commit_transaction, lf.cancel_transaction, lf.extend_transaction):
        with pytest.raises(lf.exceptions.TransactionCanceledException, match="was aborted"):
            call(TransactionId=tx)
    with pytest.raises(lf.exceptions.TransactionCanceledException):
        write(governed, tx, add("s3://lake/t/b", "2024-01-01", "1"))
    with pytest.raises(lf.exceptions.TransactionCanceledException):
        lf.get_table_objects(DatabaseName="db", TableName="t", TransactionId=tx)
    with raises("TransactionCanceledException"):
        governed.glue.get_table(DatabaseName="db", Name="t", TransactionId=tx)
    assert objects(governed) == []


def test_a_read_only_transaction_reads_and_refuses_writes(governed: Governed) -> None:
    make_table(governed)
    commit(governed, add("s3://lake/t/a", "2024-01-01", "1"))
    tx = start(governed, "READ_ONLY")
    assert objects(governed, TransactionId=tx) == [(("2024-01-01", "1"), "s3://lake/t/a")]
    with pytest.raises(governed.lf.exceptions.InvalidInputException, match="READ_ONLY"):
        write(governed, tx, add("s3://lake/t/b", "2024-01-01", "1"))
    with raises("InvalidInputException"):
        governed.glue.create_table(DatabaseName="db", TableInput=table_input("u"), TransactionId=tx)
    assert governed.glue.get_table(DatabaseName="db", Name="t", TransactionId=tx)["Table"]["Name"] == "t"
    assert governed.lf.commit_transaction(TransactionId=tx)["TransactionStatus"] == "COMMITTED"


def test_start_transaction_takes_only_the_two_types(governed: Governed) -> None:
    with pytest.raises(governed.lf.exceptions.InvalidInputException, match="TransactionType"):
        governed.lf.start_transaction(TransactionType="WRITE_ONLY")


def test_list_transactions_filters_by_status_and_pages(governed: Governed) -> None:
    make_table(governed)
    committed = commit(governed, add("s3://lake/t/a", "2024-01-01", "1"))
    canceled = start(governed)
    governed.lf.cancel_transaction(TransactionId=canceled)
    active = start(governed)

    def listed(**kwargs: Any) -> list[tuple[str, str]]:
        out, token = [], {}
        while True:
            page = governed.lf.list_transactions(**kwargs, **token)
            out += [(t["TransactionId"], t["TransactionStatus"]) for t in page["Transactions"]]
            if not page.get("NextToken"):
                return out
            token = {"NextToken": page["NextToken"]}

    everything = [(active, "ACTIVE"), (canceled, "ABORTED"), (committed, "COMMITTED")]  # newest first
    assert listed() == everything
    assert listed(StatusFilter="ALL", MaxResults=1) == everything
    assert listed(StatusFilter="ACTIVE") == [(active, "ACTIVE")]
    assert listed(StatusFilter="COMMITTED") == [(committed, "COMMITTED")]
    assert listed(StatusFilter="ABORTED") == [(canceled, "ABORTED")]
    assert listed(StatusFilter="COMPLETED", MaxResults=1) == [(canceled, "ABORTED"), (committed, "COMMITTED")]
    with pytest.raises(governed.lf.exceptions.InvalidInputException, match="StatusFilter"):
        governed.lf.list_transactions(StatusFilter="OPEN")
    with pytest.raises(governed.lf.exceptions.InvalidInputException, match="MaxResults"):
        governed.lf.list_transactions(MaxResults=0)
    with pytest.raises(governed.lf.exceptions.InvalidInputException, match="NextToken"):
        governed.lf.list_transactions(NextToken="not-a-token")


# -- UpdateTableObjects -------------------------------------------------------------------------------


def test_update_table_objects_requires_a_transaction_as_the_document_says(governed: Governed) -> None:
    make_table(governed)
    with pytest.raises(governed.lf.exceptions.InvalidInputException, match="TransactionId: is required"):
        governed.lf.update_table_objects(
            DatabaseName="db", TableName="t", WriteOperations=[add("s3://lake/t/a", "2024-01-01", "1")]
        )


@pytest.mark.parametrize(
    ("ops", "message"),
    [
        ([], "WriteOperations: must have at least 1 item"),
        ([add(f"s3://lake/t/{i}", "2024-01-01", "1") for i in range(101)], "at most 100"),
        ([{}], "exactly one of AddObject and DeleteObject"),
        (
            [{**add("s3://lake/t/a", "2024-01-01", "1"), **delete("s3://lake/t/b", "2024-01-01", "1")}],
            "exactly one",
        ),
        ([add("s3://" + "x" * 1020, "2024-01-01", "1")], r"WriteOperations\[0\].AddObject.Uri"),
        ([add("s3://lake/t/a", "2024-01-01", "1", etag="has space")], "ETag"),
        ([add("s3://lake/t/a", "2024-01-01", "1", etag="e" * 256)], "ETag"),
        (
            [{"AddObject": {"Uri": "s3://lake/t/a", "ETag": "e", "PartitionValues": ["2024-01-01", "1"]}}],
            "Size",
        ),
        ([add("s3://lake/t/a", "2024-01-01", "1", size=-1)], "Size"),
        ([add("s3://lake/t/a", "2024-01-01")], "1 values given, but db.t has 2 partition keys"),
        ([add("s3://lake/t/a")], r"PartitionValues: 0 values given"),
        ([add("s3://lake/t/a", "2024-01-01", "x7")], r"PartitionValues\[1\]: 'x7' is not an integer"),
        ([add("s3://lake/t/a", "2024-02-30", "1")], r"PartitionValues\[0\]: '2024-02-30' is not a date"),
        ([add("s3://lake/t/a", "2024-1-5", "1")], "is not a date"),
        ([add("s3://lake/t/a", "2024-01-01", str(2**63))], "is not an integer of 64 bits"),
        (
            [delete("s3://lake/t/a", "2024-01-01", "one")],
            r"WriteOperations\[0\].DeleteObject.PartitionValues",
        ),
    ],
)
def test_write_operations_are_checked_against_the_document_and_the_keys(
    governed: Governed, ops: list[dict[str, Any]], message: str
) -> None:
    make_table(governed)
    tx = start(governed)
    with pytest.raises(governed.lf.exceptions.InvalidInputException, match=message):
        write(governed, tx, *ops)
    governed.lf.commit_transaction(TransactionId=tx)
    assert objects(governed) == []  # nothing was staged


def test_partition_values_are_parsed_as_their_keys_types_and_kept_canonical(governed: Governed) -> None:
    keys = [
        ("i", "int"),
        ("l", "bigint"),
        ("d", "date"),
        ("ts", "timestamp"),
        ("s", "string"),
        ("m", "decimal(10,2)"),
    ]
    make_table(governed, keys=keys)
    commit(
        governed,
        add("s3://lake/t/a", "007", "-0", "2024-02-29", "2024-01-01 10:30:00+02:00", "007", "1.50"),
        add("s3://lake/t/b", "+7", "12", "2024-03-01", "2024-01-01T08:30:00.250000Z", "x", "-0.00"),
    )
    assert objects(governed) == [
        (("7", "0", "2024-02-29", "2024-01-01 08:30:00", "007", "1.5"), "s3://lake/t/a"),
        (("7", "12", "2024-03-01", "2024-01-01 08:30:00.25", "x", "0"), "s3://lake/t/b"),
    ]
    tx = start(governed)
    with pytest.raises(governed.lf.exceptions.InvalidInputException, match="already holds"):
        # The same canonical values and Uri as a: the same object, held already.
        write(
            governed, tx, add("s3://lake/t/a", "7", "0", "2024-02-29", "2024-01-01 08:30:00Z", "007", "1.500")
        )


def test_a_key_of_a_type_objects_cannot_take_is_named(governed: Governed) -> None:
    make_table(governed, keys=[("f", "double")])
    tx = start(governed)
    with pytest.raises(governed.lf.exceptions.InvalidInputException, match="integer, long, date"):
        write(governed, tx, add("s3://lake/t/a", "1.5"))


def test_only_governed_tables_have_objects(governed: Governed) -> None:
    make_table(governed, "plain", table_type="EXTERNAL_TABLE")
    tx = start(governed)
    lf = governed.lf
    with pytest.raises(lf.exceptions.InvalidInputException, match="not a governed table"):
        write(governed, tx, add("s3://lake/plain/a", "2024-01-01", "1"), table="plain")
    with pytest.raises(lf.exceptions.InvalidInputException, match="not a governed table"):
        lf.get_table_objects(DatabaseName="db", TableName="plain")
    with pytest.raises(lf.exceptions.EntityNotFoundException, match="Table nosuch not found"):
        write(governed, tx, add("s3://lake/x/a", "2024-01-01", "1"), table="nosuch")
    with pytest.raises(lf.exceptions.EntityNotFoundException):
        lf.get_table_objects(DatabaseName="nosuch", TableName="t")
    with pytest.raises(lf.exceptions.EntityNotFoundException, match="Catalog 1 not found"):
        lf.get_table_objects(CatalogId="1", DatabaseName="db", TableName="plain")


def test_adding_a_held_uri_or_deleting_an_absent_one_fails_and_the_call_changes_nothing(
    governed: Governed,
) -> None:
    make_table(governed)
    commit(governed, add("s3://lake/t/held", "2024-01-01", "1"))
    tx = start(governed)
    lf = governed.lf
    fresh = add("s3://lake/t/fresh", "2024-01-01", "1")
    with pytest.raises(
        lf.exceptions.InvalidInputException, match=r"WriteOperations\[1\].AddObject: db.t already holds"
    ):
        write(governed, tx, fresh, add("s3://lake/t/held", "2024-01-01", "1"))
    with pytest.raises(lf.exceptions.InvalidInputException, match="already holds"):
        write(governed, tx, fresh, add("s3://lake/t/held", "2024-01-02", "2"))  # in another partition too
    with pytest.raises(
        lf.exceptions.InvalidInputException, match=r"WriteOperations\[1\].DeleteObject: db.t holds no"
    ):
        write(governed, tx, fresh, delete("s3://lake/t/absent", "2024-01-01", "1"))
    with pytest.raises(lf.exceptions.InvalidInputException, match="held in another partition"):
        write(governed, tx, delete("s3://lake/t/held", "2024-01-02", "1"))
    with pytest.raises(lf.exceptions.InvalidInputException, match=r"WriteOperations\[1\].AddObject"):
        write(governed, tx, fresh, fresh)
    # None of those calls staged anything: fresh is still new, and a later call may add it.
    assert objects(governed, TransactionId=tx) == [(("2024-01-01", "1"), "s3://lake/t/held")]
    write(governed, tx, fresh, delete("s3://lake/t/held", "2024-01-01", "1"))
    with pytest.raises(lf.exceptions.InvalidInputException, match="holds no"):
        write(governed, tx, delete("s3://lake/t/held", "2024-01-01", "1"))  # deleted by its own write
    write(governed, tx, add("s3://lake/t/held", "2024-01-03", "3"))  # moved: deleted, then added elsewhere
    lf.commit_transaction(TransactionId=tx)
    assert objects(governed) == [
        (("2024-01-01", "1"), "s3://lake/t/fresh"),
        (("2024-01-03", "3"), "s3://lake/t/held"),
    ]


def test_an_unpartitioned_governed_table_has_objects_without_partition_values(governed: Governed) -> None:
    make_table(governed, keys=[])
    commit(governed, add("s3://lake/t/b"), add("s3://lake/t/a", etag="x", size=3))
    page = governed.lf.get_table_objects(DatabaseName="db", TableName="t")
    assert page["Objects"] == [
        {
            "Objects": [
                {"Uri": "s3://lake/t/a", "ETag": "x", "Size": 3},
                {"Uri": "s3://lake/t/b", "ETag": "etag-1", "Size": 10},
            ]
        }
    ]
    tx = start(governed)
    with pytest.raises(governed.lf.exceptions.InvalidInputException, match="0 partition keys"):
        write(governed, tx, add("s3://lake/t/c", "2024-01-01"))


# -- GetTableObjects ----------------------------------------------------------------------------------


def fill_typed(g: Governed) -> None:
    keys = [
        ("i", "int"),
        ("l", "long"),
        ("d", "date"),
        ("ts", "timestamp"),
        ("s", "string"),
        ("m", "decimal"),
    ]
    make_table(g, keys=keys)
    rows = [
        ("9", "100", "2024-01-09", "2024-01-09 00:00:00", "b", "9.5"),
        ("10", "20", "2024-01-10", "2024-01-10 12:00:00", "a", "10.25"),
        ("11", "3", "2023-12-31", "2024-01-11 23:59:59.5", "c", "-1"),
    ]
    commit(g, *(add(f"s3://lake/t/{r[0]}", *r) for r in rows))


@pytest.mark.parametrize(
    ("predicate", "expected"),
    [
        ("i > 9", ["10", "11"]),  # numerically: as text '9' > '11'
        ("i >= 10 AND i <= 10", ["10"]),
        ("l < 50", ["10", "11"]),
        ("d = '2024-01-10'", ["10"]),
        ("d < '2024-01-01'", ["11"]),
        ("ts > '2024-01-10 11:59:59'", ["10", "11"]),
        ("ts >= '2024-01-10 14:00:00+02:00'", ["10", "11"]),  # an offset compares in UTC
        ("ts > '2024-01-11 23:59:59.25'", ["11"]),
        ("s <= 'b'", ["10", "9"]),
        ("m > 9.5", ["10"]),
        ("m < 0", ["11"]),
        ("I = 9 AND S = 'b'", ["9"]),  # key names ignore case
        ("", ["10", "11", "9"]),
        ("i = 12", []),
    ],
)
def test_every_predicate_type_compares_by_the_keys_type(
    governed: Governed, predicate: str, expected: list[str]
) -> None:
    fill_typed(governed)
    found = objects(governed, PartitionPredicate=predicate)
    assert sorted(uri.rsplit("/", 1)[1] for _, uri in found) == sorted(expected)


@pytest.mark.parametrize(
    ("predicate", "message"),
    [
        ("i = 9 OR i = 10", "OR is not supported"),
        ("NOT i = 9", "NOT is not supported"),
        ("i IN (9, 10)", "IN is not supported"),
        ("i BETWEEN 9 AND 10", "BETWEEN is not supported"),
        ("s LIKE 'a%'", "LIKE is not supported"),
        ("i <> 9", "<> is not supported"),
        ("i IS NULL", "IS NULL is not supported"),
        ("nosuch = 1", "'nosuch' is not a partition key"),
        ("i = 'x'", "cannot be compared with partition key 'i'"),
        ("i =", "PartitionPredicate: "),
    ],
)
def test_anything_else_in_a_predicate_is_invalid_input(
    governed: Governed, predicate: str, message: str
) -> None:
    fill_typed(governed)
    with pytest.raises(governed.lf.exceptions.InvalidInputException, match=message):
        governed.lf.get_table_objects(DatabaseName="db", TableName="t", PartitionPredicate=predicate)


def test_a_predicate_longer_than_the_document_allows_is_refused(governed: Governed) -> None:
    fill_typed(governed)
    with pytest.raises(governed.lf.exceptions.InvalidInputException, match="PartitionPredicate"):
        governed.lf.get_table_objects(
            DatabaseName="db", TableName="t", PartitionPredicate="i = 1" + " " * 2048
        )


def test_objects_come_grouped_by_partition_and_page_completely_without_duplicates(governed: Governed) -> None:
    make_table(governed, keys=[("n", "int")])
    uris = {(str(p), f"s3://lake/t/p{p}/o{o:02d}") for p in range(7) for o in range(13)}
    ops = [add(uri, p) for p, uri in sorted(uris)]
    for i in range(0, len(ops), 100):
        commit(governed, *ops[i : i + 100])
    first = governed.lf.get_table_objects(DatabaseName="db", TableName="t", MaxResults=1000)
    assert [g["PartitionValues"] for g in first["Objects"]] == [[str(p)] for p in range(7)]
    assert all(len(g["Objects"]) == 13 for g in first["Objects"])
    for size in (1, 5, 13, 14, 90, 91, 1000):
        found = objects(governed, MaxResults=size, PartitionPredicate="n >= 2")
        assert len(found) == len(set(found)) == 5 * 13
        assert {(p[0], uri) for p, uri in found} == {u for u in uris if int(u[0]) >= 2}
        page = governed.lf.get_table_objects(DatabaseName="db", TableName="t", MaxResults=size)
        assert sum(len(g["Objects"]) for g in page["Objects"]) == min(size, 91)
    with pytest.raises(governed.lf.exceptions.InvalidInputException, match="MaxResults"):
        governed.lf.get_table_objects(DatabaseName="db", TableName="t", MaxResults=1001)
    with pytest.raises(governed.lf.exceptions.InvalidInputException, match="MaxResults"):
        governed.lf.get_table_objects(DatabaseName="db", TableName="t", MaxResults=0)
    token = governed.lf.get_table_objects(DatabaseName="db", TableName="t", MaxResults=1)["NextToken"]
    with pytest.raises(
        governed.lf.exceptions.InvalidInputException,
        match="NextToken: the token was issued for a different request",
    ):
        governed.lf.get_table_objects(
            DatabaseName="db", TableName="t", NextToken=token, PartitionPredicate="n = 1"
        )


def test_an_objects_token_of_a_table_dropped_and_made_again_is_refused(governed: Governed) -> None:
    make_table(governed, keys=[])
    commit(governed, *(add(f"s3://lake/t/{i}.parquet") for i in range(4)))
    token = governed.lf.get_table_objects(DatabaseName="db", TableName="t", MaxResults=2)["NextToken"]
    governed.glue.delete_table(DatabaseName="db", Name="t")
    make_table(governed, keys=[])
    commit(governed, *(add(f"s3://lake/t/{i}.parquet") for i in range(4)))
    with pytest.raises(governed.lf.exceptions.InvalidInputException, match="NextToken: .*made again"):
        governed.lf.get_table_objects(DatabaseName="db", TableName="t", NextToken=token)


def test_a_partition_index_serves_a_predicate(governed: Governed) -> None:
    make_table(
        governed,
        keys=[("a", "string"), ("b", "int")],
        PartitionIndexes=[{"IndexName": "ab", "Keys": ["a", "b"]}],
    )
    commit(governed, *(add(f"s3://lake/t/{a}{b}", a, str(b)) for a in "xyz" for b in range(10)))
    assert [uri for _, uri in objects(governed, PartitionPredicate="a = 'y' AND b >= 8")] == [
        "s3://lake/t/y8",
        "s3://lake/t/y9",
    ]


def test_query_as_of_time_reads_the_objects_of_then(governed: Governed) -> None:
    make_table(governed)
    commit(governed, add("s3://lake/t/a", "2024-01-01", "1"))
    time.sleep(0.01)
    then = datetime.now(UTC)
    time.sleep(0.01)
    commit(governed, delete("s3://lake/t/a", "2024-01-01", "1"), add("s3://lake/t/b", "2024-01-01", "1"))
    assert objects(governed, QueryAsOfTime=then) == [(("2024-01-01", "1"), "s3://lake/t/a")]
    assert objects(governed) == [(("2024-01-01", "1"), "s3://lake/t/b")]
    tx = start(governed)
    with pytest.raises(
        governed.lf.exceptions.InvalidInputException,
        match="QueryAsOfTime: cannot be specified along with TransactionId",
    ):
        governed.lf.get_table_objects(DatabaseName="db", TableName="t", TransactionId=tx, QueryAsOfTime=then)


def test_query_as_of_time_before_a_table_was_made_again_is_refused_not_read_as_its_past(
    governed: Governed,
) -> None:
    # A table dropped and made again under its name has its own history (as Spark's TIMESTAMP AS OF):
    # the dropped table's objects were answered as the new table's.
    make_table(governed)
    commit(governed, add("s3://lake/t/a", "2024-01-01", "1"))
    time.sleep(0.01)
    then = datetime.now(UTC)
    time.sleep(0.01)
    governed.glue.delete_table(DatabaseName="db", Name="t")
    with_dropped = objects(governed, QueryAsOfTime=then)  # dropped, not made again: its own past
    assert with_dropped == [(("2024-01-01", "1"), "s3://lake/t/a")]
    make_table(governed)
    made = governed.glue.get_table(DatabaseName="db", Name="t")["Table"]["CreateTime"]
    commit(governed, add("s3://lake/t/b", "2024-01-01", "1"))
    with pytest.raises(
        governed.lf.exceptions.InvalidInputException,
        match="QueryAsOfTime: .*made again at",
    ):
        objects(governed, QueryAsOfTime=then)
    if isinstance(governed.lf, LakeFormation):  # gluecat's own Arrow call, in this process only
        with pytest.raises(governed.lf.exceptions.InvalidInputException, match=re.escape(made.isoformat())):
            governed.lf.get_table_objects_arrow(DatabaseName="db", TableName="t", QueryAsOfTime=then)
    assert objects(governed, QueryAsOfTime=datetime.now(UTC)) == [(("2024-01-01", "1"), "s3://lake/t/b")]


def test_query_as_of_time_before_the_table_existed_says_so(governed: Governed) -> None:
    """Not a plain "not found", which reads as if the table did not exist now either."""
    then = datetime.now(UTC)
    time.sleep(0.01)
    make_table(governed)
    made = governed.glue.get_table(DatabaseName="db", Name="t")["Table"]["CreateTime"]
    with pytest.raises(governed.lf.exceptions.EntityNotFoundException) as info:
        objects(governed, QueryAsOfTime=then)
    message = info.value.response["Error"]["Message"]
    assert message.startswith("Table t not found in database db: it did not exist at QueryAsOfTime ")
    assert message.endswith(f"(it was made at {made.isoformat()}).")
    with pytest.raises(
        governed.glue.exceptions.EntityNotFoundException, match="did not exist at QueryAsOfTime"
    ):
        governed.glue.get_table(DatabaseName="db", Name="t", QueryAsOfTime=then)


def test_a_committed_transaction_id_reads_the_objects_its_commit_left(governed: Governed) -> None:
    make_table(governed)
    first = commit(governed, add("s3://lake/t/a", "2024-01-01", "1"))
    second = commit(governed, add("s3://lake/t/b", "2024-01-02", "2"))
    commit(governed, delete("s3://lake/t/a", "2024-01-01", "1"))
    assert objects(governed, TransactionId=first) == [(("2024-01-01", "1"), "s3://lake/t/a")]
    assert [uri for _, uri in objects(governed, TransactionId=second)] == ["s3://lake/t/a", "s3://lake/t/b"]
    assert objects(governed) == [(("2024-01-02", "2"), "s3://lake/t/b")]


# -- isolation ----------------------------------------------------------------------------------------


def test_a_transaction_reads_its_start_and_its_own_writes_and_others_see_them_on_commit(
    governed: Governed,
) -> None:
    make_table(governed)
    commit(governed, add("s3://lake/t/a", "2024-01-01", "1"))
    reader = start(governed)
    writer = start(governed)
    write(
        governed, writer, add("s3://lake/t/b", "2024-01-01", "1"), delete("s3://lake/t/a", "2024-01-01", "1")
    )
    assert objects(governed, TransactionId=writer) == [(("2024-01-01", "1"), "s3://lake/t/b")]
    assert objects(governed) == [(("2024-01-01", "1"), "s3://lake/t/a")]  # not committed yet
    governed.lf.commit_transaction(TransactionId=writer)
    assert objects(governed) == [(("2024-01-01", "1"), "s3://lake/t/b")]
    # The reader started before the commit: it still reads what was committed when it started.
    assert objects(governed, TransactionId=reader) == [(("2024-01-01", "1"), "s3://lake/t/a")]
    late = start(governed)
    assert objects(governed, TransactionId=late) == [(("2024-01-01", "1"), "s3://lake/t/b")]


def test_a_table_made_in_a_transaction_exists_for_it_alone_until_it_commits(governed: Governed) -> None:
    make_table(governed)
    tx = start(governed)
    glue = governed.glue
    glue.create_table(DatabaseName="db", TableInput=table_input("new"), TransactionId=tx)
    write(governed, tx, add("s3://lake/new/a", "2024-01-01", "1"), table="new")
    assert glue.get_table(DatabaseName="db", Name="new", TransactionId=tx)["Table"]["Name"] == "new"
    assert [t["Name"] for t in glue.get_tables(DatabaseName="db", TransactionId=tx)["TableList"]] == [
        "new",
        "t",
    ]
    assert [t["Name"] for t in glue.get_tables(DatabaseName="db")["TableList"]] == ["t"]
    with raises("EntityNotFoundException"):
        glue.get_table(DatabaseName="db", Name="new")
    assert objects(governed, "new", TransactionId=tx) == [(("2024-01-01", "1"), "s3://lake/new/a")]
    governed.lf.commit_transaction(TransactionId=tx)
    assert glue.get_table(DatabaseName="db", Name="new")["Table"]["TableType"] == "GOVERNED"
    assert objects(governed, "new") == [(("2024-01-01", "1"), "s3://lake/new/a")]


def test_a_table_made_in_a_canceled_transaction_never_existed(governed: Governed) -> None:
    make_table(governed)
    tx = start(governed)
    governed.glue.create_table(DatabaseName="db", TableInput=table_input("new"), TransactionId=tx)
    write(governed, tx, add("s3://lake/new/a", "2024-01-01", "1"), table="new")
    governed.lf.cancel_transaction(TransactionId=tx)
    with raises("EntityNotFoundException"):
        governed.glue.get_table(DatabaseName="db", Name="new")
    versions = governed.catalog.warehouse_version()
    governed.glue.create_table(DatabaseName="db", TableInput=table_input("new"))
    assert governed.glue.get_table(DatabaseName="db", Name="new")["Table"]["VersionId"] == "1"
    assert objects(governed, "new") == []
    assert governed.catalog.warehouse_version() == versions + 1


def test_table_updates_and_deletions_in_a_transaction(governed: Governed) -> None:
    make_table(governed)
    make_table(governed, "u")
    make_table(governed, "v")
    commit(governed, add("s3://lake/t/a", "2024-01-01", "1"))
    glue = governed.glue
    tx = start(governed)
    changed = {**table_input("t"), "Description": "in a transaction"}
    glue.update_table(DatabaseName="db", TableInput=changed, TransactionId=tx, VersionId="1")
    with raises("ConcurrentModificationException"):
        glue.update_table(DatabaseName="db", TableInput=changed, TransactionId=tx, VersionId="1")
    glue.delete_table(DatabaseName="db", Name="u", TransactionId=tx)
    out = glue.batch_delete_table(DatabaseName="db", TablesToDelete=["v", "nosuch"], TransactionId=tx)
    assert [e["TableName"] for e in out["Errors"]] == ["nosuch"]
    assert (
        glue.get_table(DatabaseName="db", Name="t", TransactionId=tx)["Table"]["Description"]
        == "in a transaction"
    )
    assert [t["Name"] for t in glue.get_tables(DatabaseName="db", TransactionId=tx)["TableList"]] == ["t"]
    assert [t["Name"] for t in glue.get_tables(DatabaseName="db")["TableList"]] == ["t", "u", "v"]
    assert "Description" not in glue.get_table(DatabaseName="db", Name="t")["Table"]
    governed.lf.commit_transaction(TransactionId=tx)
    assert [t["Name"] for t in glue.get_tables(DatabaseName="db")["TableList"]] == ["t"]
    table = glue.get_table(DatabaseName="db", Name="t")["Table"]
    assert (table["Description"], table["VersionId"]) == ("in a transaction", "2")
    assert objects(governed) == [(("2024-01-01", "1"), "s3://lake/t/a")]


def test_a_table_dropped_in_a_transaction_takes_its_objects_with_it(governed: Governed) -> None:
    make_table(governed)
    commit(governed, add("s3://lake/t/a", "2024-01-01", "1"))
    tx = start(governed)
    governed.glue.delete_table(DatabaseName="db", Name="t", TransactionId=tx)
    governed.glue.create_table(DatabaseName="db", TableInput=table_input("t"), TransactionId=tx)
    assert objects(governed, TransactionId=tx) == []
    write(governed, tx, add("s3://lake/t/a", "2024-01-01", "1"))  # held by the dropped table only
    governed.lf.commit_transaction(TransactionId=tx)
    assert objects(governed) == [(("2024-01-01", "1"), "s3://lake/t/a")]


def test_get_partitions_reads_the_transactions_state(governed: Governed) -> None:
    make_table(governed, "p", table_type="EXTERNAL_TABLE")
    tx = start(governed)
    governed.glue.create_partition(
        DatabaseName="db",
        TableName="p",
        PartitionInput={"Values": ["2024-01-01", "1"], "StorageDescriptor": {"Location": "s3://lake/p/1"}},
    )
    assert (
        governed.glue.get_partitions(DatabaseName="db", TableName="p", TransactionId=tx)["Partitions"] == []
    )
    assert len(governed.glue.get_partitions(DatabaseName="db", TableName="p")["Partitions"]) == 1


# -- conflicts ----------------------------------------------------------------------------------------


def test_two_transactions_writing_one_partition_cannot_both_commit(governed: Governed) -> None:
    make_table(governed)
    first, second = start(governed), start(governed)
    write(governed, first, add("s3://lake/t/a", "2024-01-01", "1"))
    write(governed, second, add("s3://lake/t/b", "2024-01-01", "1"))
    governed.lf.commit_transaction(TransactionId=first)
    with pytest.raises(governed.lf.exceptions.ConcurrentModificationException, match="partition"):
        governed.lf.commit_transaction(TransactionId=second)
    assert (status(governed, first), status(governed, second)) == ("COMMITTED", "ABORTED")
    with pytest.raises(governed.lf.exceptions.TransactionCanceledException, match="conflict"):
        governed.lf.commit_transaction(TransactionId=second)
    assert objects(governed) == [(("2024-01-01", "1"), "s3://lake/t/a")]


def test_transactions_writing_other_partitions_or_tables_both_commit(governed: Governed) -> None:
    make_table(governed)
    make_table(governed, "u")
    txs = [start(governed) for _ in range(3)]
    write(governed, txs[0], add("s3://lake/t/a", "2024-01-01", "1"))
    write(governed, txs[1], add("s3://lake/t/b", "2024-01-01", "2"))  # another partition
    write(governed, txs[2], add("s3://lake/u/c", "2024-01-01", "1"), table="u")  # another table
    for tx in txs:
        assert governed.lf.commit_transaction(TransactionId=tx)["TransactionStatus"] == "COMMITTED"
    assert len(objects(governed)) == 2 and len(objects(governed, "u")) == 1


def test_two_transactions_changing_one_tables_definition_cannot_both_commit(governed: Governed) -> None:
    make_table(governed)
    first, second = start(governed), start(governed)
    for tx, text in ((first, "first"), (second, "second")):
        governed.glue.update_table(
            DatabaseName="db", TableInput={**table_input("t"), "Description": text}, TransactionId=tx
        )
    governed.lf.commit_transaction(TransactionId=first)
    with pytest.raises(governed.lf.exceptions.ConcurrentModificationException, match="changed"):
        governed.lf.commit_transaction(TransactionId=second)
    assert governed.glue.get_table(DatabaseName="db", Name="t")["Table"]["Description"] == "first"


def test_two_transactions_creating_one_table_cannot_both_commit(governed: Governed) -> None:
    make_table(governed)
    first, second = start(governed), start(governed)
    for tx in (first, second):
        governed.glue.create_table(DatabaseName="db", TableInput=table_input("new"), TransactionId=tx)
    governed.lf.commit_transaction(TransactionId=first)
    with pytest.raises(governed.lf.exceptions.ConcurrentModificationException):
        governed.lf.commit_transaction(TransactionId=second)


def test_a_table_made_and_dropped_since_a_transaction_started_conflicts_with_its_create_table(
    governed: Governed,
) -> None:
    """The table is absent at the start and at the commit, as if nothing happened between: the
    commits between changed its definition all the same."""
    make_table(governed)
    tx = start(governed)
    governed.glue.create_table(DatabaseName="db", TableInput=table_input("new"))
    governed.glue.delete_table(DatabaseName="db", Name="new")
    governed.glue.create_table(DatabaseName="db", TableInput=table_input("new"), TransactionId=tx)
    with pytest.raises(governed.lf.exceptions.ConcurrentModificationException, match="new"):
        governed.lf.commit_transaction(TransactionId=tx)
    assert status(governed, tx) == "ABORTED"
    with raises("EntityNotFoundException"):
        governed.glue.get_table(DatabaseName="db", Name="new")


def test_a_plain_write_to_a_definition_conflicts_with_a_transaction_that_changes_it(
    governed: Governed,
) -> None:
    make_table(governed)
    tx = start(governed)
    governed.glue.update_table(
        DatabaseName="db", TableInput={**table_input("t"), "Description": "tx"}, TransactionId=tx
    )
    governed.glue.update_table(DatabaseName="db", TableInput={**table_input("t"), "Description": "plain"})
    with pytest.raises(governed.lf.exceptions.ConcurrentModificationException):
        governed.lf.commit_transaction(TransactionId=tx)
    assert governed.glue.get_table(DatabaseName="db", Name="t")["Table"]["Description"] == "plain"


def test_plain_writes_that_leave_the_objects_alone_do_not_conflict_with_object_writes(
    governed: Governed,
) -> None:
    make_table(governed)
    tx = start(governed)
    write(governed, tx, add("s3://lake/t/a", "2024-01-01", "1"))
    governed.glue.update_table(DatabaseName="db", TableInput={**table_input("t"), "Description": "plain"})
    governed.glue.create_partition(
        DatabaseName="db",
        TableName="t",
        PartitionInput={"Values": ["2024-01-01", "1"], "StorageDescriptor": {"Location": "s3://lake/t/1"}},
    )
    assert governed.lf.commit_transaction(TransactionId=tx)["TransactionStatus"] == "COMMITTED"
    assert objects(governed) == [(("2024-01-01", "1"), "s3://lake/t/a")]


def test_a_table_dropped_or_made_again_under_a_transactions_objects_conflicts(governed: Governed) -> None:
    make_table(governed)
    tx = start(governed)
    write(governed, tx, add("s3://lake/t/a", "2024-01-01", "1"))
    governed.glue.delete_table(DatabaseName="db", Name="t")
    governed.glue.create_table(DatabaseName="db", TableInput=table_input("t"))
    with pytest.raises(governed.lf.exceptions.ConcurrentModificationException, match="deleted or made again"):
        governed.lf.commit_transaction(TransactionId=tx)
    assert objects(governed) == []


def test_a_table_dropped_and_made_again_before_a_transaction_writes_its_objects_conflicts(
    governed: Governed,
) -> None:
    # The transaction reads the old table; the new one under its name is another table, which its
    # writes (a job's files, an overwrite's deletes) were never made against.
    make_table(governed)
    commit(governed, add("s3://lake/t/old", "2024-01-01", "1"))
    tx = start(governed)
    governed.glue.delete_table(DatabaseName="db", Name="t")
    governed.glue.create_table(DatabaseName="db", TableInput=table_input("t"))
    with pytest.raises(
        governed.lf.exceptions.ConcurrentModificationException, match="deleted and made again"
    ):
        write(governed, tx, add("s3://lake/t/a", "2024-01-01", "1"))
    governed.lf.commit_transaction(TransactionId=tx)
    assert objects(governed) == []
    # A table the transaction made again itself is its own to write.
    mine = start(governed)
    governed.glue.delete_table(DatabaseName="db", Name="t", TransactionId=mine)
    governed.glue.create_table(DatabaseName="db", TableInput=table_input("t"), TransactionId=mine)
    write(governed, mine, add("s3://lake/t/b", "2024-01-01", "1"))
    governed.lf.commit_transaction(TransactionId=mine)
    assert objects(governed) == [(("2024-01-01", "1"), "s3://lake/t/b")]


def test_a_write_that_a_commit_since_the_start_made_wrong_is_a_concurrent_modification(
    governed: Governed,
) -> None:
    # Right as the transaction reads the table (its start and its own writes), wrong now: the cause is
    # the other commit, not the caller's input.
    make_table(governed)
    commit(governed, add("s3://lake/t/a", "2024-01-01", "1"))
    tx = start(governed)
    commit(governed, delete("s3://lake/t/a", "2024-01-01", "1"), add("s3://lake/t/b", "2024-01-02", "2"))
    lf = governed.lf
    with pytest.raises(
        lf.exceptions.ConcurrentModificationException, match="holds no object.*committed since"
    ):
        write(governed, tx, delete("s3://lake/t/a", "2024-01-01", "1"))
    with pytest.raises(lf.exceptions.ConcurrentModificationException, match="already holds"):
        write(governed, tx, add("s3://lake/t/b", "2024-01-03", "3"))
    # Wrong in the transaction's own view too: the caller's mistake, InvalidInputException as before.
    with pytest.raises(lf.exceptions.InvalidInputException, match="holds no object"):
        write(governed, tx, delete("s3://lake/t/absent", "2024-01-01", "1"))
    with pytest.raises(lf.exceptions.InvalidInputException, match=r"WriteOperations\[1\].*absent"):
        write(
            governed,
            tx,
            delete("s3://lake/t/a", "2024-01-01", "1"),
            delete("s3://lake/t/absent", "2024-01-01", "1"),
        )
    assert objects(governed, TransactionId=tx) == [(("2024-01-01", "1"), "s3://lake/t/a")]


def test_an_add_of_a_uri_the_transaction_sees_in_another_partition_is_a_concurrent_modification(
    governed: Governed,
) -> None:
    """A commit since the start deleted the Uri: the add is right now, but the transaction, which
    reads the table as it started, would see the Uri in two partitions."""
    make_table(governed)
    commit(governed, add("s3://lake/t/u", "2024-01-01", "1"))
    tx = start(governed)
    commit(governed, delete("s3://lake/t/u", "2024-01-01", "1"))
    with pytest.raises(governed.lf.exceptions.ConcurrentModificationException, match="reads it"):
        write(governed, tx, add("s3://lake/t/u", "2024-01-01", "2"))
    assert objects(governed, TransactionId=tx) == [(("2024-01-01", "1"), "s3://lake/t/u")]
    assert status(governed, tx) == "ACTIVE"


def test_a_governed_table_stays_governed(governed: Governed) -> None:
    # Read from its folder, a table of another type would show the files of the objects that overwrites
    # and deletions removed (kept for time travel): deleted data back. Even with no objects left.
    make_table(governed)
    tx = commit(governed, add("s3://lake/t/a", "2024-01-01", "1"))
    commit(governed, delete("s3://lake/t/a", "2024-01-01", "1"))
    glue = governed.glue
    for other in ("EXTERNAL_TABLE", "MANAGED_TABLE", None):
        changed = table_input("t")
        changed.pop("TableType")
        if other is not None:
            changed["TableType"] = other
        with raises("InvalidInputException") as e:
            glue.update_table(DatabaseName="db", TableInput=changed)
        assert "TableInput.TableType" in str(e.value) and "stays one" in str(e.value)
        with raises("InvalidInputException"):
            glue.update_table(DatabaseName="db", TableInput=changed, TransactionId=start(governed))
    assert glue.get_table(DatabaseName="db", Name="t")["Table"]["TableType"] == "GOVERNED"
    glue.update_table(DatabaseName="db", TableInput={**table_input("t"), "Description": "still governed"})
    assert objects(governed, TransactionId=tx) == [(("2024-01-01", "1"), "s3://lake/t/a")]


def test_a_table_holding_objects_keeps_the_number_and_types_of_its_partition_keys(
    governed: Governed,
) -> None:
    # Objects keep their values as the keys' types parse them: another number of keys, or a type that
    # parses otherwise, would leave them in partitions no write can name (undeletable, one partition
    # under two names), or unreadable.
    make_table(governed)
    make_table(governed, "u")
    commit(governed, add("s3://lake/t/a", "2024-01-01", "7"))
    glue = governed.glue
    with raises("InvalidInputException") as e:
        glue.update_table(DatabaseName="db", TableInput=table_input("t", [*KEYS, ("c", "string")]))
    assert "TableInput.PartitionKeys" in str(e.value) and "from 2 to 3" in str(e.value)
    with raises("InvalidInputException") as e:
        glue.update_table(DatabaseName="db", TableInput=table_input("t", [("dt", "date"), ("n", "string")]))
    assert "key n cannot change type from int to string" in str(e.value)
    assert glue.get_table(DatabaseName="db", Name="t")["Table"]["VersionId"] == "1"
    # A type that keeps values alike, and a table without objects, may change.
    glue.update_table(DatabaseName="db", TableInput=table_input("t", [("dt", "date"), ("n", "bigint")]))
    glue.update_table(DatabaseName="db", TableInput=table_input("u", [("n", "string")]))
    tx = start(governed)
    write(governed, tx, delete("s3://lake/t/a", "2024-01-01", "007"))
    governed.lf.commit_transaction(TransactionId=tx)
    assert objects(governed) == []
    # A transaction's own objects count too.
    tx = start(governed)
    write(governed, tx, add("s3://lake/u/a", "x"), table="u")
    with raises("InvalidInputException"):
        glue.update_table(DatabaseName="db", TableInput=table_input("u", KEYS), TransactionId=tx)
    governed.lf.commit_transaction(TransactionId=tx)
    assert objects(governed, "u") == [(("x",), "s3://lake/u/a")]


def test_a_table_whose_objects_were_all_deleted_takes_objects_of_another_number_of_keys(
    governed: Governed,
) -> None:
    # The deleted objects' rows, of the old number of values, go with the change of keys: left among
    # the new ones, they made the table's next write (and every read) fail.
    make_table(governed)
    commit(governed, add("s3://lake/t/a", "2024-01-01", "7"))
    commit(governed, delete("s3://lake/t/a", "2024-01-01", "7"))
    governed.glue.update_table(DatabaseName="db", TableInput=table_input("t", [("dt", "date")]))
    commit(governed, add("s3://lake/t/b", "2024-01-02"))
    assert objects(governed) == [(("2024-01-02",), "s3://lake/t/b")]
    commit(governed, delete("s3://lake/t/b", "2024-01-02"))
    # The same in the transaction that changes the keys.
    tx = start(governed)
    governed.glue.update_table(DatabaseName="db", TableInput=table_input("t", KEYS), TransactionId=tx)
    write(governed, tx, add("s3://lake/t/c", "2024-01-03", "3"))
    governed.lf.commit_transaction(TransactionId=tx)
    assert objects(governed) == [(("2024-01-03", "3"), "s3://lake/t/c")]


def test_a_change_of_partition_keys_and_objects_written_meanwhile_cannot_both_commit(
    governed: Governed,
) -> None:
    make_table(governed)
    lf = governed.lf
    tx = start(governed)
    write(governed, tx, add("s3://lake/t/a", "2024-01-01", "7"))
    # The table holds no objects yet, so its keys may change; the transaction's values no longer fit.
    governed.glue.update_table(DatabaseName="db", TableInput=table_input("t", [("dt", "date")]))
    with pytest.raises(lf.exceptions.ConcurrentModificationException, match="partition keys"):
        lf.commit_transaction(TransactionId=tx)
    assert status(governed, tx) == "ABORTED" and objects(governed) == []
    tx = start(governed)
    governed.glue.update_table(
        DatabaseName="db", TableInput=table_input("t", [("dt", "string")]), TransactionId=tx
    )
    commit(governed, add("s3://lake/t/b", "2024-01-01"))
    with pytest.raises(lf.exceptions.ConcurrentModificationException, match="keeps its keys"):
        lf.commit_transaction(TransactionId=tx)
    table = governed.glue.get_table(DatabaseName="db", Name="t")["Table"]
    assert table["PartitionKeys"] == [{"Name": "dt", "Type": "date"}]
    assert objects(governed, PartitionPredicate="dt = '2024-01-01'") == [(("2024-01-01",), "s3://lake/t/b")]


def test_one_uri_added_to_two_partitions_by_two_transactions_commits_once(governed: Governed) -> None:
    make_table(governed)
    first, second = start(governed), start(governed)
    write(governed, first, add("s3://lake/t/a", "2024-01-01", "1"))
    write(governed, second, add("s3://lake/t/a", "2024-01-02", "2"))
    governed.lf.commit_transaction(TransactionId=first)
    with pytest.raises(governed.lf.exceptions.ConcurrentModificationException, match="holds the object"):
        governed.lf.commit_transaction(TransactionId=second)
    assert objects(governed) == [(("2024-01-01", "1"), "s3://lake/t/a")]


def test_a_reading_transaction_never_conflicts(governed: Governed) -> None:
    make_table(governed)
    reader = start(governed)
    assert objects(governed, TransactionId=reader) == []
    commit(governed, add("s3://lake/t/a", "2024-01-01", "1"))
    assert governed.lf.commit_transaction(TransactionId=reader)["TransactionStatus"] == "COMMITTED"


# -- idleness -----------------------------------------------------------------------------------------


class Clock:
    """The transactions' clock, moved on by hand: a test of idleness waits for no real time, so a busy
    machine (a call that takes long) cannot make a transaction idle before the test means it to be."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.ahead_us = 0
        real = transactions.now_us

        def now_us() -> int:
            return real() + self.ahead_us

        monkeypatch.setattr(transactions, "now_us", now_us)
        monkeypatch.setattr(governed_objects, "now_us", now_us)

    def advance(self, minutes: float) -> None:
        self.ahead_us += int(minutes * 60 * 1_000_000)


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    return Clock(monkeypatch)


def test_an_idle_transaction_is_aborted_and_extending_it_keeps_it_alive(
    governed: Governed, clock: Clock
) -> None:
    make_table(governed)
    idle, kept = start(governed), start(governed)
    write(governed, kept, add("s3://lake/t/a", "2024-01-01", "1"))
    for _ in range(3):  # the default idle timeout is 15 minutes
        clock.advance(minutes=10)
        governed.lf.extend_transaction(TransactionId=kept)
    assert status(governed, idle) == "ABORTED"
    described = governed.lf.describe_transaction(TransactionId=idle)["TransactionDescription"]
    assert described["TransactionEndTime"] > described["TransactionStartTime"]
    with pytest.raises(governed.lf.exceptions.TransactionCanceledException, match="idle"):
        write(governed, idle, add("s3://lake/t/b", "2024-01-01", "2"))
    assert status(governed, kept) == "ACTIVE"
    assert governed.lf.commit_transaction(TransactionId=kept)["TransactionStatus"] == "COMMITTED"
    assert objects(governed) == [(("2024-01-01", "1"), "s3://lake/t/a")]


def test_an_idle_transaction_ended_when_its_idle_period_did_whenever_that_is_noticed(
    governed: Governed, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_table(governed)
    tx = start(governed)
    before = datetime.now(UTC)
    write(governed, tx, add("s3://lake/t/a", "2024-01-01", "1"))  # its last activity
    after = datetime.now(UTC)
    an_hour_later = transactions.now_us() + 3600 * 1_000_000  # the default idle timeout is 15 minutes
    monkeypatch.setattr(transactions, "now_us", lambda: an_hour_later)
    monkeypatch.setattr(governed_objects, "now_us", lambda: an_hour_later)
    listed = governed.lf.list_transactions()["Transactions"]  # before any call records the abort
    described = governed.lf.describe_transaction(TransactionId=tx)["TransactionDescription"]
    listed_after = governed.lf.list_transactions()["Transactions"]
    for seen in (listed[0], described, listed_after[0]):
        assert seen["TransactionStatus"] == "ABORTED"
        ended = seen["TransactionEndTime"]
        assert before + timedelta(minutes=15) <= ended <= after + timedelta(minutes=15), seen


@pytest.mark.transaction_timeout(60)
def test_an_idle_transaction_cannot_be_extended_or_committed(governed: Governed, clock: Clock) -> None:
    make_table(governed)
    tx = start(governed)
    write(governed, tx, add("s3://lake/t/a", "2024-01-01", "1"))
    clock.advance(minutes=1.5)  # past the client's idle timeout of a minute
    with pytest.raises(governed.lf.exceptions.TransactionCanceledException):
        governed.lf.extend_transaction(TransactionId=tx)
    with pytest.raises(governed.lf.exceptions.TransactionCanceledException):
        governed.lf.commit_transaction(TransactionId=tx)
    assert objects(governed) == []


def test_an_idle_transaction_is_aborted_whichever_call_notices_and_its_files_are_deleted(
    governed: Governed, tmp_path: Path, clock: Clock
) -> None:
    make_table(governed, location=data_folder(tmp_path))
    lf = governed.lf
    uris = files(tmp_path, "a.parquet", "b.parquet", "c.parquet")
    txs = [start(governed) for _ in uris]
    for tx, uri in zip(txs, uris, strict=True):
        lf.delete_objects_on_cancel(
            DatabaseName="db", TableName="t", TransactionId=tx, Objects=[{"Uri": uri}]
        )
    clock.advance(minutes=16)
    # Canceled before anyone looked at it, or after DescribeTransaction said ABORTED: the same answer.
    with pytest.raises(lf.exceptions.TransactionCanceledException, match="idle"):
        lf.cancel_transaction(TransactionId=txs[0])
    with pytest.raises(lf.exceptions.TransactionCanceledException, match="idle"):
        lf.commit_transaction(TransactionId=txs[1])
    assert status(governed, txs[2]) == "ABORTED"
    with pytest.raises(lf.exceptions.TransactionCanceledException, match="idle"):
        lf.cancel_transaction(TransactionId=txs[2])
    assert [status(governed, tx) for tx in txs] == ["ABORTED"] * 3
    wait_gone(uris)


def test_extend_transaction_names_its_transaction(governed: Governed) -> None:
    with pytest.raises(governed.lf.exceptions.InvalidInputException, match="TransactionId: is required"):
        governed.lf.extend_transaction()


# -- DeleteObjectsOnCancel ----------------------------------------------------------------------------


def data_folder(tmp_path: Path) -> str:
    """The folder of a governed table whose files are local: the one ``files`` writes in."""
    return (tmp_path / "data").as_uri()


def files(tmp_path: Path, *names: str) -> list[str]:
    """Local files (the data a job wrote), as file:// URIs."""
    out = []
    for name in names:
        path = tmp_path / "data" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"parquet")
        out.append(path.as_uri())
    return out


def exists(uri: str) -> bool:
    return Path(uri.removeprefix("file://")).exists()


def wait_gone(uris: list[str]) -> None:
    deadline = time.monotonic() + 10
    while any(exists(u) for u in uris):
        assert time.monotonic() < deadline, [u for u in uris if exists(u)]
        time.sleep(0.05)


def test_a_cancel_deletes_the_files_recorded_for_it_and_a_commit_keeps_them(
    governed: Governed, tmp_path: Path
) -> None:
    make_table(governed, location=data_folder(tmp_path))
    canceled = files(tmp_path, "c1.parquet", "c2.parquet")
    kept = files(tmp_path, "k1.parquet")
    tx = start(governed)
    write(governed, tx, add(canceled[0], "2024-01-01", "1"))
    governed.lf.delete_objects_on_cancel(
        DatabaseName="db",
        TableName="t",
        TransactionId=tx,
        Objects=[{"Uri": u, "ETag": "e"} for u in canceled],
    )
    governed.lf.cancel_transaction(TransactionId=tx)
    wait_gone(canceled)
    tx = start(governed)
    write(governed, tx, add(kept[0], "2024-01-01", "1"))
    governed.lf.delete_objects_on_cancel(
        DatabaseName="db", TableName="t", TransactionId=tx, Objects=[{"Uri": kept[0]}]
    )
    governed.lf.commit_transaction(TransactionId=tx)
    assert exists(kept[0]) and objects(governed) == [(("2024-01-01", "1"), kept[0])]


def test_an_abort_never_deletes_a_file_a_committed_transaction_registered(
    governed: Governed, tmp_path: Path
) -> None:
    make_table(governed, location=data_folder(tmp_path))
    shared, own = files(tmp_path, "shared.parquet", "own.parquet")
    commit(governed, add(shared, "2024-01-01", "1"))
    tx = start(governed)
    write(governed, tx, add(own, "2024-01-02", "2"))
    governed.lf.delete_objects_on_cancel(
        DatabaseName="db", TableName="t", TransactionId=tx, Objects=[{"Uri": shared}, {"Uri": own}]
    )
    other = commit(governed, add(files(tmp_path, "x.parquet")[0], "2024-01-02", "2"))  # same partition
    with pytest.raises(governed.lf.exceptions.ConcurrentModificationException):
        governed.lf.commit_transaction(TransactionId=tx)  # aborted by the conflict
    wait_gone([own])
    assert exists(shared)
    assert status(governed, other) == "COMMITTED"


def test_a_cancel_deletes_nothing_outside_its_tables_own_folder(governed: Governed, tmp_path: Path) -> None:
    """A caller cannot have any file deleted but those in the governed table's folder: not others, not
    another table's inside it, not the catalog's own, however the Uri is spelled."""
    folder = tmp_path / "data"
    make_table(governed, location=data_folder(tmp_path))
    make_table(governed, "inner", location=(folder / "inner").as_uri(), table_type="EXTERNAL_TABLE")
    make_table(governed, "everything", location=Path(governed.warehouse).as_uri())
    victims = [
        tmp_path / "victim.parquet",
        folder / "inner" / "part-0.parquet",
        tmp_path / "out" / "x.parquet",
    ]
    for victim in victims:
        victim.parent.mkdir(parents=True, exist_ok=True)
        victim.write_bytes(b"precious")
    (folder / "link").symlink_to(tmp_path / "out")
    own = sorted(p for p in (Path(governed.warehouse) / "_gluecat").rglob("*") if p.is_file())[0]
    refused = [
        ("t", str(tmp_path / "victim.parquet")),
        ("t", (tmp_path / "victim.parquet").as_uri()),
        ("t", f"{data_folder(tmp_path)}/../victim.parquet"),
        ("t", f"{data_folder(tmp_path)}/%2E%2E/victim.parquet"),
        ("t", f"{folder}//..//victim.parquet"),
        ("t", f" {folder}/x.parquet"),  # a relative path (" " is its first folder), not the table's
        ("t", f"{data_folder(tmp_path)}/link/x.parquet"),
        ("t", data_folder(tmp_path)),
        ("t", f"{data_folder(tmp_path)}/inner/part-0.parquet"),
        ("everything", own.as_uri()),
    ]
    tx = start(governed)
    for table, uri in refused:
        with pytest.raises(governed.lf.exceptions.InvalidInputException, match="Objects"):
            governed.lf.delete_objects_on_cancel(
                DatabaseName="db", TableName=table, TransactionId=tx, Objects=[{"Uri": uri}]
            )
    governed.lf.cancel_transaction(TransactionId=tx)
    assert all(v.exists() for v in victims) and own.exists()


def test_a_cancel_deletes_the_file_a_local_path_names_without_decoding_it(
    governed: Governed, tmp_path: Path
) -> None:
    # A local path is not a URI: its "%2E%2E" is a folder of that name, in the table's folder, as the
    # check found. The deletion read it as a file: URI (decoded: "..", the folder's parent) and
    # deleted a file outside the table's folder.
    folder = tmp_path / "data"
    make_table(governed, location=str(folder))
    victim = tmp_path / "victim.parquet"
    victim.write_bytes(b"precious")
    literal = folder / "%2E%2E" / "victim.parquet"
    literal.parent.mkdir(parents=True)
    literal.write_bytes(b"the job's")
    tx = start(governed)
    governed.lf.delete_objects_on_cancel(
        DatabaseName="db", TableName="t", TransactionId=tx, Objects=[{"Uri": str(literal)}]
    )
    governed.lf.cancel_transaction(TransactionId=tx)
    wait_gone([str(literal)])
    assert victim.read_bytes() == b"precious"


def test_delete_objects_on_cancel_checks_its_table_and_objects(governed: Governed) -> None:
    make_table(governed)
    tx = start(governed)
    lf = governed.lf
    with pytest.raises(lf.exceptions.InvalidInputException, match="Objects"):
        lf.delete_objects_on_cancel(DatabaseName="db", TableName="t", TransactionId=tx, Objects=[])
    with pytest.raises(lf.exceptions.EntityNotFoundException):
        lf.delete_objects_on_cancel(
            DatabaseName="db", TableName="nosuch", TransactionId=tx, Objects=[{"Uri": "s3://x/y"}]
        )


def test_delete_objects_on_cancel_of_an_ended_transaction_says_so_before_looking_at_the_table(
    governed: Governed,
) -> None:
    """As UpdateTableObjects does: the tables an ended transaction made exist for it no more (its staged
    writes go with journal rewrites), so its state is the answer, whatever the table."""
    make_table(governed)
    tx = start(governed)
    governed.lf.cancel_transaction(TransactionId=tx)
    for table in ("t", "nosuch"):
        with pytest.raises(governed.lf.exceptions.TransactionCanceledException):
            governed.lf.delete_objects_on_cancel(
                DatabaseName="db", TableName=table, TransactionId=tx, Objects=[{"Uri": "s3://lake/t/a"}]
            )


# -- gluecat's own Arrow call, for Spark --------------------------------------------------------------


@pytest.mark.in_process
def test_objects_as_arrow_for_a_scan_at_a_transaction_or_a_time(governed: Governed) -> None:
    make_table(governed)
    lf = governed.lf
    first = commit(governed, add("s3://lake/t/a", "2024-01-01", "1"), add("s3://lake/t/b", "2024-01-02", "2"))
    then = datetime.now(UTC)
    commit(governed, add("s3://lake/t/c", "2024-01-03", "3", etag="x", size=7))
    tx = start(governed)
    write(governed, tx, delete("s3://lake/t/a", "2024-01-01", "1"), add("s3://lake/t/d", "2024-01-01", "4"))

    def uris(**kwargs: Any) -> list[str]:
        return (
            lf.get_table_objects_arrow(DatabaseName="db", TableName="t", **kwargs).column("Uri").to_pylist()
        )

    table = lf.get_table_objects_arrow(DatabaseName="db", TableName="t", Expression="n IN (3)")
    assert table.column_names == ["dt", "n", "Uri", "ETag", "Size"]
    assert table.to_pylist() == [
        {"dt": "2024-01-03", "n": "3", "Uri": "s3://lake/t/c", "ETag": "x", "Size": 7}
    ]
    assert uris(Expression="n = 1 OR n = 3") == ["s3://lake/t/a", "s3://lake/t/c"]  # the whole language
    spark = [{"op": "GreaterThanOrEqual", "attribute": "dt", "value": "2024-01-02"}]
    assert uris(SparkFilters=spark) == ["s3://lake/t/b", "s3://lake/t/c"]
    assert uris(TransactionId=tx) == ["s3://lake/t/d", "s3://lake/t/b", "s3://lake/t/c"]  # its own writes
    assert uris(TransactionId=first) == ["s3://lake/t/a", "s3://lake/t/b"]  # as its commit left them
    assert uris(QueryAsOfTime=then) == ["s3://lake/t/a", "s3://lake/t/b"]
    with pytest.raises(lf.exceptions.InvalidInputException, match="SparkFilters"):
        uris(SparkFilters=spark, Expression="n = 1")
    with pytest.raises(lf.exceptions.InvalidInputException, match="QueryAsOfTime: cannot be specified"):
        uris(TransactionId=tx, QueryAsOfTime=then)


@pytest.mark.in_process
def test_a_transaction_started_at_an_earlier_version_reads_it_and_conflicts_with_commits_since(
    governed: Governed,
) -> None:
    """gluecat's own StartTransactionAtVersion: what a Spark write job starts at (the warehouse's version
    when it loaded the table, before its query read it)."""
    make_table(governed)
    lf = governed.lf
    loaded = governed.catalog.warehouse_version()
    commit(governed, add("s3://lake/t/a", "2024-01-01", "1"))
    tx = lf.start_transaction_at_version(WarehouseVersion=loaded)["TransactionId"]
    assert objects(governed, TransactionId=tx) == []  # the state of then
    write(governed, tx, add("s3://lake/t/b", "2024-01-01", "1"))
    with pytest.raises(
        lf.exceptions.ConcurrentModificationException, match=r'partition \["2024-01-01","1"\]'
    ):
        lf.commit_transaction(TransactionId=tx)
    assert objects(governed) == [(("2024-01-01", "1"), "s3://lake/t/a")]
    # GetTableObjectsArrow reads at a version too, and says which version any read of it read.
    then = lf.get_table_objects_arrow(DatabaseName="db", TableName="t", WarehouseVersion=loaded)
    assert then.num_rows == 0 and then.schema.metadata == {b"gluecat.warehouse_version": str(loaded).encode()}
    now = lf.get_table_objects_arrow(DatabaseName="db", TableName="t")
    assert now.schema.metadata == {
        b"gluecat.warehouse_version": str(governed.catalog.warehouse_version()).encode()
    }
    with pytest.raises(lf.exceptions.InvalidInputException, match="WarehouseVersion: cannot be specified"):
        lf.get_table_objects_arrow(
            DatabaseName="db", TableName="t", WarehouseVersion=loaded, TransactionId=tx
        )
    later = lf.start_transaction_at_version(WarehouseVersion=loaded + 10**6)["TransactionId"]  # the latest
    assert objects(governed, TransactionId=later) == [(("2024-01-01", "1"), "s3://lake/t/a")]
    for bad in (-1, "3", True):
        with pytest.raises(lf.exceptions.InvalidInputException, match="WarehouseVersion"):
            lf.start_transaction_at_version(WarehouseVersion=bad)


def test_a_date_key_takes_the_years_0000_to_9999_as_partitions_do(governed: Governed) -> None:
    """The range the partition index document gives dates, which partitions and their expressions take."""
    make_table(governed, keys=[("d", "date")])
    commit(
        governed,
        add("s3://lake/t/bc", "0000-02-29"),  # 1 BC was a leap year
        add("s3://lake/t/ad", "0001-01-01"),
        add("s3://lake/t/now", "9999-12-31"),
    )
    assert objects(governed, PartitionPredicate="d < '0001-01-01'") == [(("0000-02-29",), "s3://lake/t/bc")]
    assert [uri for _, uri in objects(governed, PartitionPredicate="d >= '0000-03-01'")] == [
        "s3://lake/t/ad",
        "s3://lake/t/now",
    ]
    tx = start(governed)
    with pytest.raises(governed.lf.exceptions.InvalidInputException, match="a date"):
        write(governed, tx, add("s3://lake/t/x", "0001-02-29"))  # no such day
