"""Expiry deletes old history, never what a retained version still reads."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

from gluecat import Catalog
from gluecat.catalog import compact
from gluecat.store import layout, maintenance
from tests.int_partitions import add, live, make


def expire_everything_before_now(glue: Catalog) -> maintenance.ExpiryReport:
    glue.store.checkpoint()
    later = datetime.now(UTC) + timedelta(seconds=1)
    return maintenance.expire(glue.store, retain=timedelta(0), grace=timedelta(0), dry_run=False, now=later)


def test_small_writes_live_in_their_log_entries_which_expiry_keeps(warehouse: str) -> None:
    glue = make(Catalog(warehouse, background_merges=False))
    for k in range(3):
        add(glue, k)
    carried = glue.store.latest().table_segments(("db", "t"))
    assert all(layout.inline_segment_entry(p) for p in carried)
    assert not [n for n in glue.store.fs.list_names(layout.DATA_DIR) if n.endswith(".partitions.parquet")]
    glue.update_database(Name="db", DatabaseInput={"Name": "db", "Description": "later"})
    report = expire_everything_before_now(glue)
    assert report.log_entries  # old history went...
    assert not {layout.inline_segment_entry(p) for p in carried} & set(report.log_entries)  # ...not these
    assert live(Catalog(warehouse)) == [0, 1, 2]


def test_expiry_keeps_merged_segment_files_and_drops_what_they_replaced(warehouse: str) -> None:
    glue = make(Catalog(warehouse, background_merges=False))
    glue.commit_partitions(  # too big to travel inline: a file of its own
        DatabaseName="db",
        TableName="t",
        Add=[
            {"Values": [str(k)], "StorageDescriptor": {"Location": f"s3://b/{uuid.uuid4()}/"}}
            for k in range(5000)
        ],
    )
    big = glue.store.latest().table_segments(("db", "t"))[0]
    assert layout.inline_segment_entry(big) is None
    for k in range(5000, 5007):
        add(glue, k)
    assert compact.compact_table(glue._ctx, "db", "t")
    (merged,) = glue.store.latest().table_segments(("db", "t"))
    report = expire_everything_before_now(glue)
    assert big in report.data_files and merged not in report.data_files
    assert live(Catalog(warehouse)) == list(range(5007))
