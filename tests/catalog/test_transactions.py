"""How transactions keep their state (the journal), finish commits their committer left, and see each
other across processes."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from gluecat import Catalog, LakeFormation
from gluecat.catalog import transactions
from gluecat.store import layout
from gluecat.store.log import CommitTransaction
from gluecat.store.maintenance import expire
from tests.governed_table import make_table


def setup(warehouse: str) -> tuple[Catalog, LakeFormation]:
    glue = make_table(warehouse)
    return glue, LakeFormation(glue)


def add(lf: LakeFormation, tx: str, *uris: str, k: str = "1") -> None:
    lf.update_table_objects(
        DatabaseName="db",
        TableName="t",
        TransactionId=tx,
        WriteOperations=[
            {"AddObject": {"Uri": u, "ETag": "e", "Size": 1, "PartitionValues": [k]}} for u in uris
        ],
    )


def uris(lf: LakeFormation, **kwargs: Any) -> list[str]:
    page = lf.get_table_objects(DatabaseName="db", TableName="t", **kwargs)
    return [o["Uri"] for group in page["Objects"] for o in group["Objects"]]


def status(lf: LakeFormation, tx: str) -> str:
    return str(lf.describe_transaction(TransactionId=tx)["TransactionDescription"]["TransactionStatus"])


def commits_of(glue: Catalog, tx: str) -> int:
    return sum(
        1
        for entry in glue.store.log_entries(0, glue.warehouse_version())
        for action in entry.actions
        if isinstance(action, CommitTransaction) and action.transaction == tx
    )


def test_a_commit_whose_committer_stopped_after_its_marker_is_finished_once_stale(
    warehouse: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    glue, lf = setup(warehouse)
    tx = lf.start_transaction()["TransactionId"]
    add(lf, tx, "s3://lake/t/a")
    txs = lf._ctx.transactions()
    # The committer stops right after its marker.
    monkeypatch.setattr(txs, "_finish", lambda tx_id, tx=None: None)
    assert lf.commit_transaction(TransactionId=tx)["TransactionStatus"] == "COMMITTED"
    monkeypatch.undo()
    assert status(lf, tx) == "COMMIT_IN_PROGRESS" and uris(lf) == []
    with pytest.raises(lf.exceptions.TransactionCommitInProgressException):
        add(lf, tx, "s3://lake/t/late")  # staged after the marker: never part of the commit
    with pytest.raises(lf.exceptions.TransactionCommitInProgressException):
        lf.cancel_transaction(TransactionId=tx)
    assert lf.commit_transaction(TransactionId=tx)["TransactionStatus"] == "COMMIT_IN_PROGRESS"
    monkeypatch.setattr(transactions, "STALE_COMMIT_SECONDS", 0.0)
    assert status(lf, tx) == "COMMITTED"
    assert uris(lf) == ["s3://lake/t/a"] and commits_of(glue, tx) == 1


def test_a_commit_published_without_its_end_record_is_found_not_applied_again(
    warehouse: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    glue, lf = setup(warehouse)
    tx = lf.start_transaction()["TransactionId"]
    add(lf, tx, "s3://lake/t/a")
    txs = lf._ctx.transactions()
    append = txs._append

    def killed_before_the_end(record: dict[str, Any], *, sync: bool) -> None:
        if record["op"] == "end":
            raise KeyboardInterrupt  # as if the process died right after its commit's log entry
        append(record, sync=sync)

    monkeypatch.setattr(txs, "_append", killed_before_the_end)
    with pytest.raises(KeyboardInterrupt):
        lf.commit_transaction(TransactionId=tx)
    monkeypatch.undo()
    other = LakeFormation(warehouse, fsync=False)  # another process
    assert other._ctx is not lf._ctx
    assert status(other, tx) == "COMMIT_IN_PROGRESS"
    monkeypatch.setattr(transactions, "STALE_COMMIT_SECONDS", 0.0)
    assert status(other, tx) == "COMMITTED"
    assert uris(other) == ["s3://lake/t/a"] and commits_of(glue, tx) == 1
    assert status(lf, tx) == "COMMITTED"


def test_another_process_sees_the_transactions_and_their_staged_writes(warehouse: str) -> None:
    _, lf = setup(warehouse)
    tx = lf.start_transaction()["TransactionId"]
    add(lf, tx, "s3://lake/t/a")
    script = textwrap.dedent(
        f"""
        from gluecat import LakeFormation
        lf = LakeFormation({warehouse!r})
        page = lf.get_table_objects(DatabaseName="db", TableName="t", TransactionId={tx!r})
        assert [o["Uri"] for g in page["Objects"] for o in g["Objects"]] == ["s3://lake/t/a"], page
        lf.update_table_objects(DatabaseName="db", TableName="t", TransactionId={tx!r}, WriteOperations=[
            {{"AddObject": {{"Uri": "s3://lake/t/b", "ETag": "e", "Size": 1, "PartitionValues": ["2"]}}}}])
        """
    )
    subprocess.run([sys.executable, "-c", script], check=True, timeout=120)
    assert uris(lf, TransactionId=tx) == ["s3://lake/t/a", "s3://lake/t/b"]
    assert lf.commit_transaction(TransactionId=tx)["TransactionStatus"] == "COMMITTED"
    assert uris(LakeFormation(warehouse, fsync=False)) == ["s3://lake/t/a", "s3://lake/t/b"]


def test_the_journal_is_rewritten_as_it_grows_and_keeps_every_live_write(
    warehouse: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, lf = setup(warehouse)
    monkeypatch.setattr(transactions, "REWRITE_BYTES", 2000)
    monkeypatch.setattr(transactions, "ENDED_KEPT", 5)
    open_tx = lf.start_transaction()["TransactionId"]
    add(lf, open_tx, "s3://lake/t/open", k="9")
    done = []
    for i in range(30):
        tx = lf.start_transaction()["TransactionId"]
        add(lf, tx, f"s3://lake/t/{i}")
        lf.commit_transaction(TransactionId=tx)
        done.append(tx)
    folder = f"{warehouse}/{layout.JOURNAL_DIR}"
    generations = [n for n in os.listdir(folder) if n.startswith("journal-")]
    assert len(generations) == 1 and generations[0] != "journal-00000000000000000000.jsonl"
    assert os.path.getsize(f"{folder}/{generations[0]}") < 6000
    fresh = LakeFormation(warehouse, fsync=False)
    assert status(fresh, open_tx) == "ACTIVE" and status(fresh, done[-1]) == "COMMITTED"
    with pytest.raises(fresh.exceptions.EntityNotFoundException):
        fresh.describe_transaction(TransactionId=done[0])  # older than the ENDED_KEPT newest ended ones
    assert fresh.commit_transaction(TransactionId=open_tx)["TransactionStatus"] == "COMMITTED"
    assert len(uris(fresh)) == 31


def test_a_process_that_missed_two_journal_rewrites_stages_its_writes_where_all_read_them(
    warehouse: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A rewrite makes the journal's next generation and deletes the current one. A process that
    missed two rewrites (busy elsewhere while another process ran many transactions) found the next
    generation after its own deleted too, took its deleted file for the current one, and appended its
    staged writes there: acknowledged, and seen by no other process, nor by the commit."""
    _, lf = setup(warehouse)
    tx = lf.start_transaction()["TransactionId"]
    add(lf, tx, "s3://lake/t/a")
    monkeypatch.setattr(transactions, "REWRITE_BYTES", 1000)
    other = LakeFormation(warehouse, fsync=False)  # another process, busy with transactions
    for i in range(3):
        t = other.start_transaction()["TransactionId"]
        add(other, t, f"s3://lake/t/{i}", k="2")
        other.commit_transaction(TransactionId=t)
    (current,) = [n for n in os.listdir(f"{warehouse}/{layout.JOURNAL_DIR}") if n.startswith("journal-")]
    assert (layout.parse_journal_name(current) or 0) >= 2  # rewritten twice at least since lf last looked
    add(lf, tx, "s3://lake/t/b")
    assert uris(other, TransactionId=tx) == ["s3://lake/t/a", "s3://lake/t/b"]
    assert other.commit_transaction(TransactionId=tx)["TransactionStatus"] == "COMMITTED"
    for reader in (lf, LakeFormation(warehouse, fsync=False)):
        assert {"s3://lake/t/a", "s3://lake/t/b"} <= set(uris(reader))
        assert status(reader, tx) == "COMMITTED"


def plain_table(warehouse: str) -> tuple[Catalog, LakeFormation]:
    glue = Catalog(warehouse)
    glue.create_database(DatabaseInput={"Name": "db"})
    glue.create_table(DatabaseName="db", TableInput=plain_input(("c", "bigint"), keys=(("k", "string"),)))
    return glue, LakeFormation(glue)


def plain_input(*columns: tuple[str, str], keys: tuple[tuple[str, str], ...]) -> dict[str, Any]:
    return {
        "Name": "p",
        "StorageDescriptor": {"Columns": [{"Name": n, "Type": t} for n, t in columns]},
        "PartitionKeys": [{"Name": n, "Type": t} for n, t in keys],
    }


def long_statistics(column: str) -> dict[str, Any]:
    return {
        "ColumnName": column,
        "ColumnType": "bigint",
        "AnalyzedTime": datetime(2024, 1, 1, tzinfo=UTC),
        "StatisticsData": {
            "Type": "LONG",
            "LongColumnStatisticsData": {"NumberOfNulls": 0, "NumberOfDistinctValues": 3},
        },
    }


def test_an_update_staged_in_a_transaction_drops_the_statistics_analyzed_since_of_a_column_it_retypes(
    warehouse: str,
) -> None:
    """Column statistics do not change a table's VersionId, so a transaction's UpdateTable still commits
    after another process analyzed a column: the statistics of the columns it retypes or drops must go
    at its commit, as they would with an UpdateTable made then, not only those its staging saw."""
    glue, lf = plain_table(warehouse)
    tx = lf.start_transaction()["TransactionId"]
    other = Catalog(warehouse)  # another process analyzes the column after the transaction started
    other.update_column_statistics_for_table(
        DatabaseName="db", TableName="p", ColumnStatisticsList=[long_statistics("c")]
    )
    retyped = plain_input(("c", "string"), keys=(("k", "string"),))
    glue.update_table(DatabaseName="db", TableInput=retyped, TransactionId=tx)
    assert lf.commit_transaction(TransactionId=tx)["TransactionStatus"] == "COMMITTED"
    for reader in (glue, other, Catalog(warehouse)):
        got = reader.get_column_statistics_for_table(DatabaseName="db", TableName="p", ColumnNames=["c"])
        assert got["ColumnStatisticsList"] == []
        assert [e["Error"]["ErrorCode"] for e in got["Errors"]] == ["EntityNotFoundException"]


def test_an_update_staged_in_a_transaction_conflicts_with_an_index_or_partitions_made_since_that_refuse_it(
    warehouse: str,
) -> None:
    """Neither a partition index nor partitions change a table's VersionId: a transaction's UpdateTable
    that retypes an indexed key, or changes the number of keys of a table that has partitions now, is
    checked against them at its commit (where its staging saw neither) and conflicts."""
    glue, lf = plain_table(warehouse)
    other = Catalog(warehouse)
    tx = lf.start_transaction()["TransactionId"]
    other.create_partition_index(
        DatabaseName="db", TableName="p", PartitionIndex={"IndexName": "ix", "Keys": ["k"]}
    )
    retyped = plain_input(("c", "bigint"), keys=(("k", "int"),))
    glue.update_table(DatabaseName="db", TableInput=retyped, TransactionId=tx)
    with pytest.raises(lf.exceptions.ConcurrentModificationException, match="indexed by ix"):
        lf.commit_transaction(TransactionId=tx)
    other.delete_partition_index(DatabaseName="db", TableName="p", IndexName="ix")
    tx = lf.start_transaction()["TransactionId"]
    other.create_partition(DatabaseName="db", TableName="p", PartitionInput={"Values": ["a"]})
    more_keys = plain_input(("c", "bigint"), keys=(("k", "string"), ("j", "string")))
    glue.update_table(DatabaseName="db", TableInput=more_keys, TransactionId=tx)
    with pytest.raises(lf.exceptions.ConcurrentModificationException, match="number of partition keys"):
        lf.commit_transaction(TransactionId=tx)
    for reader in (glue, Catalog(warehouse)):
        assert reader.get_table(DatabaseName="db", Name="p")["Table"]["PartitionKeys"] == [
            {"Name": "k", "Type": "string"}
        ]


def test_a_commit_that_cannot_see_the_history_since_its_start_conflicts(warehouse: str) -> None:
    glue, lf = setup(warehouse)
    tx = lf.start_transaction()["TransactionId"]
    add(lf, tx, "s3://lake/t/a")
    glue.create_database(DatabaseInput={"Name": "other"})
    glue.store.checkpoint()
    glue.create_database(DatabaseInput={"Name": "another"})
    expire(glue.store, retain=timedelta(0), dry_run=False)
    with pytest.raises(lf.exceptions.ConcurrentModificationException, match="history has expired"):
        lf.commit_transaction(TransactionId=tx)
    assert status(lf, tx) == "ABORTED" and uris(lf) == []


def test_a_transaction_commits_in_one_log_entry_with_its_records_inline(warehouse: str) -> None:
    glue, lf = setup(warehouse)
    before = glue.warehouse_version()
    data_files = len(os.listdir(f"{warehouse}/{layout.DATA_DIR}"))
    tx = lf.start_transaction()["TransactionId"]
    glue.create_table(
        DatabaseName="db",
        TableInput={
            "Name": "u",
            "TableType": "GOVERNED",
            "StorageDescriptor": {"Columns": [], "Location": "s3://x/"},
        },
        TransactionId=tx,
    )
    add(lf, tx, "s3://lake/t/a", "s3://lake/t/b")
    lf.commit_transaction(TransactionId=tx)
    assert glue.warehouse_version() == before + 1
    assert len(os.listdir(f"{warehouse}/{layout.DATA_DIR}")) == data_files  # no file but its entry
    (entry,) = glue.store.log_entries(before, before + 1)
    # Its records and objects, the transaction, and the marker it left in the new table's own log.
    assert [type(a).__name__ for a in entry.actions] == [
        "InlineRecords",
        "AddSegment",
        "CommitTransaction",
        "Marks",
    ]
    reopened = Catalog(warehouse)  # read back from the log alone
    assert reopened.get_table(DatabaseName="db", Name="u")["Table"]["TableType"] == "GOVERNED"
    assert uris(LakeFormation(warehouse, fsync=False)) == ["s3://lake/t/a", "s3://lake/t/b"]


def test_a_start_the_machine_lost_comes_back_from_its_id(warehouse: str) -> None:
    """A start is appended to the journal without a sync of its own (its first write's sync covers it):
    its id carries what the record says, signed with the warehouse's secret."""
    _, lf = setup(warehouse)
    tx = lf.start_transaction(TransactionType="READ_ONLY")["TransactionId"]
    writer = lf.start_transaction()["TransactionId"]
    folder = f"{warehouse}/{layout.JOURNAL_DIR}"
    for name in os.listdir(folder):
        if name.startswith("journal-"):
            with open(f"{folder}/{name}", "r+b") as f:
                f.truncate(0)  # as if the machine lost power before anything synced the records
    fresh = LakeFormation(warehouse, fsync=False)
    assert status(fresh, tx) == "ACTIVE"
    with pytest.raises(fresh.exceptions.InvalidInputException, match="READ_ONLY"):
        add(fresh, tx, "s3://lake/t/x")
    add(fresh, writer, "s3://lake/t/a")
    assert fresh.commit_transaction(TransactionId=writer)["TransactionStatus"] == "COMMITTED"
    assert uris(lf) == ["s3://lake/t/a"]
    body, _, mac = writer.rpartition("-")
    forged = f"{body.replace('-w-', '-r-')}-{mac}"
    for unknown in (forged, writer.upper(), "0-0-0-w-0-0"):
        with pytest.raises(fresh.exceptions.EntityNotFoundException):
            fresh.describe_transaction(TransactionId=unknown)


def test_the_janitor_ends_between_passes_when_stopped_and_the_next_one_deletes_what_it_left(
    warehouse: str, tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """At the interpreter's exit (catalog/background.py) a janitor retrying a deletion ends instead of
    sleeping through its backoff; the next transaction's janitor, in any process, deletes the file."""
    table = tmp_path / "t"
    table.mkdir()
    doomed = table / "part-0.parquet"
    doomed.write_bytes(b"x")
    glue = make_table(warehouse, location=table.as_uri() + "/")
    lf = LakeFormation(glue)
    refused: list[str] = []

    def refuse(uri: str) -> None:
        refused.append(uri)
        raise OSError("the store refused the deletion")

    monkeypatch.setattr(transactions, "_delete_file", refuse)
    tx = lf.start_transaction(TransactionType="READ_AND_WRITE")["TransactionId"]
    lf.delete_objects_on_cancel(
        DatabaseName="db", TableName="t", TransactionId=tx, Objects=[{"Uri": doomed.as_uri(), "ETag": "e"}]
    )
    lf.cancel_transaction(TransactionId=tx)
    txs = lf._ctx.transactions()
    assert txs._janitor is not None and refused  # retrying, with a backoff of up to a minute

    txs.stop()
    assert not txs._janitor.is_alive()
    tries = len(refused)
    lf.start_transaction(TransactionType="READ_ONLY")  # would start a janitor, if it were not stopped
    assert len(refused) == tries and doomed.exists()

    monkeypatch.undo()
    other = LakeFormation(Catalog(warehouse))
    other.start_transaction(TransactionType="READ_ONLY")
    other._ctx.transactions().stop()  # waits for the pass under way
    assert not doomed.exists()
