"""Expiry never loses a write: a process that was open across it finds the latest state, and compaction
keeps working however often and however concurrently it runs."""

from __future__ import annotations

from typing import Any

from gluecat import Catalog
from gluecat.cli import main as cli
from gluecat.store import layout


def table_input(name: str) -> dict[str, Any]:
    return {"Name": name, "StorageDescriptor": {"Columns": [{"Name": "id", "Type": "bigint"}]}}


def table_names(glue: Catalog) -> set[str]:
    names: set[str] = set()
    token = None
    while True:
        page = glue.get_tables(DatabaseName="db", **({"NextToken": token} if token else {}))
        names.update(t["Name"] for t in page["TableList"])
        token = page.get("NextToken")
        if not token:
            return names


def compact_everything(warehouse: str) -> None:
    assert cli(["compact", "-w", warehouse, "--apply", "--retain-hours", "0"]) == 0


def test_a_catalog_open_across_an_expiry_reads_and_writes_the_latest_state(warehouse: str) -> None:
    stale = Catalog(warehouse)
    stale.create_database(DatabaseInput={"Name": "db"})
    other = Catalog(warehouse)
    for i in range(120):
        other.create_table(DatabaseName="db", TableInput=table_input(f"t{i}"))
    compact_everything(warehouse)
    assert table_names(stale) == {f"t{i}" for i in range(120)}
    stale.create_table(DatabaseName="db", TableInput=table_input("late"))
    assert table_names(Catalog(warehouse)) == {f"t{i}" for i in range(120)} | {"late"}


def test_a_stale_writer_never_publishes_a_version_a_checkpoint_covers(warehouse: str) -> None:
    stale = Catalog(warehouse)
    stale.create_database(DatabaseInput={"Name": "db"})
    before = stale.store.cached().version
    other = Catalog(warehouse)
    for i in range(5):
        other.create_table(DatabaseName="db", TableInput=table_input(f"t{i}"))
    compact_everything(warehouse)
    stale.store.commit("Noop", lambda snap: (_put_marker(), None))
    published = stale.store.cached().version
    assert published > other.store.latest().version - 1 and published > before + 5
    newest_checkpoint = max(stale.store.root.checkpoint_versions())
    assert published > newest_checkpoint


def _put_marker() -> Any:
    from gluecat.store.snapshot import Changes

    changes = Changes()
    changes.put("marker", ("m",), {"at": "stale"})
    return changes


def test_expiry_never_frees_a_log_entry_name(warehouse: str) -> None:
    glue = Catalog(warehouse)
    glue.create_database(DatabaseInput={"Name": "db"})
    for i in range(3):
        glue.create_table(DatabaseName="db", TableInput=table_input(f"t{i}"))
    compact_everything(warehouse)
    latest = glue.store.latest().version
    names = set(glue.store.fs.list_names(layout.LOG_DIR))
    assert {layout.log_path(v).rsplit("/", 1)[-1] for v in range(latest + 1)} <= names


def test_compaction_keeps_working_after_its_first_expiry(warehouse: str) -> None:
    glue = Catalog(warehouse)
    glue.create_database(DatabaseInput={"Name": "db"})
    for round_ in range(2):
        # 120 commits cross a checkpoint the writer makes itself (every 100th version), so the next
        # compaction finds checkpoints its own open did not read.
        for i in range(120):
            glue.create_table(DatabaseName="db", TableInput=table_input(f"r{round_}t{i}"))
        compact_everything(warehouse)
        compact_everything(warehouse)
    assert len(table_names(Catalog(warehouse))) == 240


def test_time_travel_after_an_expiry_finds_retained_versions_and_refuses_expired_ones(warehouse: str) -> None:
    from datetime import UTC, datetime, timedelta

    import pytest

    from gluecat.errors import StorageError
    from gluecat.store import maintenance
    from gluecat.store.snapshot import Changes
    from gluecat.store.store import Store

    def put(n: int) -> Any:
        def build(snap: Any) -> Any:
            changes = Changes()
            changes.put("thing", ("n",), n)
            return changes, None

        return build

    s = Store(warehouse)
    times = []
    for n in range(6):
        s.commit("Put", put(n))
        times.append(s.latest().timestamp)
        if n == 2:
            s.checkpoint()
    cutoff = times[2] + timedelta(microseconds=1)
    maintenance.expire(s, retain=timedelta(0), grace=timedelta(0), dry_run=False, now=cutoff)
    fresh = Store(warehouse)
    assert fresh.as_of(times[4]).get("thing", ("n",)) == 4
    assert fresh.as_of(times[2]).get("thing", ("n",)) == 2  # the checkpoint kept
    with pytest.raises(StorageError, match="older than the retained history"):
        fresh.as_of(times[1])
    assert fresh.as_of(datetime(2000, 1, 1, tzinfo=UTC)).version == 0  # before the warehouse: empty
