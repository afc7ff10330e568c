"""The Python side of a governed write job's commit (gluecat.spark.governed.GovernedWrites), without a
Spark session: what a job is told when its transaction's commit fails for the store's sake."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from gluecat import LakeFormation
from gluecat.errors import InternalServiceException, StorageError
from gluecat.spark.governed import GovernedWrites
from gluecat.store.journal import Journal
from tests.governed_table import make_table


def test_a_commit_that_fails_after_publishing_says_its_data_may_still_appear(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    glue = make_table(
        str(tmp_path / "warehouse"), location=(tmp_path / "t").as_uri(), keys=(("p", "string"),)
    )
    table = dict(glue.get_table(DatabaseName="db", Name="t")["Table"])
    writes = GovernedWrites(glue)
    folder = writes.begin(table, timeout=None)
    tx = folder.rsplit(".gluecat-tx-", 1)[1]
    staged = Path(folder.removeprefix("file://")) / "p=a"
    staged.mkdir(parents=True)
    (staged / "part-0.parquet").write_bytes(b"not really parquet, but a file")

    # The commit's log entry is published; the journal record saying so is not (a full disk, say).
    append = Journal.append

    def full_disk(self: Journal, records: list[dict[str, Any]], *, sync: bool) -> None:
        if any(r["op"] == "end" and r.get("status") == "COMMITTED" for r in records):
            raise StorageError("journal: a record could not be written ([Errno 28] No space left on device)")
        append(self, records, sync=sync)

    monkeypatch.setattr(Journal, "append", full_disk)
    with pytest.raises(InternalServiceException) as failed:
        writes.commit(table, folder, "APPEND", [{"fragment": "p=a", "values": ["a"]}], [])
    assert f"the commit of transaction {tx} did not finish" in failed.value.message
    assert "its data may still appear" in failed.value.message
    monkeypatch.setattr(Journal, "append", append)

    # It did: the log entry is the commit, and the next look at the transaction finds it.
    lf = LakeFormation(glue)
    status = lf.describe_transaction(TransactionId=tx)["TransactionDescription"]["TransactionStatus"]
    assert status in ("COMMIT_IN_PROGRESS", "COMMITTED")
    got = lf.get_table_objects(DatabaseName="db", TableName="t")["Objects"]
    assert [o["Uri"].rsplit("/", 1)[1] for part in got for o in part["Objects"]] == ["part-0.parquet"]
