"""The per-process view of a table's partitions: extended write by write, refolded as deltas grow."""

from __future__ import annotations

import threading

import pytest

from gluecat import Catalog
from gluecat.catalog.rows import latest
from gluecat.catalog.rows.view import TableView, fold
from tests.int_partitions import KEY, add, live, make


@pytest.fixture
def small_limits(monkeypatch: pytest.MonkeyPatch) -> None:
    """Refold past 20 delta rows."""
    monkeypatch.setattr(latest, "MAX_DELTA_ROWS", 20)


def current(glue: Catalog) -> TableView:
    return glue._ctx.rows.view(glue.store.latest(), KEY, 1)


def settled(glue: Catalog) -> TableView:
    """The current view once no refold is under way (taking one that ended may start the next)."""
    while (pending := glue._ctx.rows.views.refolds.get(KEY)) is not None:
        pending.thread.join()
        current(glue)
    return current(glue)


def with_a_held_refold(
    warehouse: str, monkeypatch: pytest.MonkeyPatch
) -> tuple[Catalog, int, threading.Event]:
    """A table of 100 partitions whose view has a refold running on its thread, held until the event is
    set; and the base's size when the refold started."""
    glue = make(Catalog(warehouse, background_merges=False))
    monkeypatch.setattr(latest, "PENDING_DELTA_FACTOR", 1000)  # never wait for it
    add(glue, *range(40))
    for k in range(40, 70):  # past 20 delta rows: a refold starts
        add(glue, k)
    assert settled(glue).base.num_rows > 40  # the first view asked for after it ended took its base
    release = threading.Event()
    refold = latest.refold
    monkeypatch.setattr(latest, "refold", lambda *a: release.wait(10) and refold(*a))
    base = current(glue).base.num_rows
    for k in range(70, 100):
        add(glue, k)
    return glue, base, release


def test_a_large_view_is_refolded_in_the_background_while_writes_go_on(
    warehouse: str, small_limits: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    glue, base, release = with_a_held_refold(warehouse, monkeypatch)
    started = current(glue)
    assert started.base.num_rows == base and len(started.deltas) > 20  # the writes did not wait
    assert live(glue) == list(range(100))  # and reads answer from base plus deltas meanwhile

    release.set()
    glue._ctx.rows.views.refolds[KEY].thread.join()
    add(glue, 100)
    adopted = current(glue)
    assert adopted.base.num_rows > base and len(adopted.deltas) < len(started.deltas)
    assert live(glue) == list(range(101))


def test_a_reader_takes_a_refold_that_ended_without_a_write(
    warehouse: str, small_limits: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    glue, base, release = with_a_held_refold(warehouse, monkeypatch)
    pending = glue._ctx.rows.views.refolds[KEY]
    release.set()
    pending.thread.join()
    assert current(glue).base.num_rows > base
    assert live(glue) == list(range(100))


def test_a_refold_is_not_taken_by_a_view_that_no_longer_extends_it(
    warehouse: str, small_limits: None
) -> None:
    glue = make(Catalog(warehouse, background_merges=False))
    add(glue, *range(40))
    add(glue, 40)
    source = settled(glue)
    assert source.base.num_rows == 40 and len(source.deltas) == 1
    pending = latest.Refold(source)
    add(glue, 41)
    folded_again = fold(1, source.segments, [source.base, *source.deltas])
    assert pending.adopt(folded_again) is None  # the same rows, but not the base it started from
    adopted = pending.adopt(current(glue))
    assert adopted is not None and adopted.base.num_rows == 41 and len(adopted.deltas) == 1


def test_writes_made_while_a_refold_runs_are_squashed_and_its_base_is_still_taken(
    warehouse: str, small_limits: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A refold of a large table runs for a while; the writes made meanwhile keep few deltas (each one
    would cost every later write a little) without touching the deltas the refold folds."""
    monkeypatch.setattr(latest, "MAX_DELTA_SEGMENTS", 4)
    glue, base, release = with_a_held_refold(warehouse, monkeypatch)
    pending = glue._ctx.rows.views.refolds[KEY]
    folding = pending.source.deltas
    for k in range(100, 130):
        add(glue, k)
    during = current(glue)
    assert all(a is b for a, b in zip(during.deltas, folding, strict=False))
    assert len(folding) < len(during.deltas) <= len(folding) + 4

    release.set()
    adopted = pending.adopt(during)
    assert adopted is not None and adopted.base.num_rows == base + sum(d.num_rows for d in folding)
    assert adopted.deltas == during.deltas[len(folding) :]
    assert live(glue) == list(range(130))


def test_the_latest_views_of_many_tables_hold_a_bounded_number_of_rows(
    warehouse: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A server reads thousands of tables over its life, and a table's latest view holds all its
    partitions: the views of the tables read least lately are let go past a bound on their rows, and a
    table read again is folded again from its segments, with the same partitions."""
    monkeypatch.setattr(latest, "LATEST_VIEW_ROWS", 50, raising=False)
    glue = Catalog(warehouse, background_merges=False)
    glue.create_database(DatabaseInput={"Name": "db"})
    tables = [f"t{i}" for i in range(30)]
    for i, name in enumerate(tables):
        glue.create_table(
            DatabaseName="db", TableInput={"Name": name, "PartitionKeys": [{"Name": "k", "Type": "int"}]}
        )
        glue.batch_create_partition(
            DatabaseName="db",
            TableName=name,
            PartitionInputList=[{"Values": [str(10 * i + k)]} for k in range(10)],
        )
        assert len(glue.get_partitions(DatabaseName="db", TableName=name)["Partitions"]) == 10
    views = glue._ctx.rows.views
    assert 0 < len(views._latest) <= 5
    assert sum(v.base.num_rows + v.delta_rows() for v in views._latest.values()) <= 50
    assert set(views._recent) <= set(views._latest)
    for i, name in enumerate(tables):
        got = glue.get_partitions(DatabaseName="db", TableName=name)["Partitions"]
        assert sorted(int(p["Values"][0]) for p in got) == [10 * i + k for k in range(10)]


def test_a_refold_of_a_view_let_go_is_let_go_once_it_ends(
    warehouse: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A refold still running when its table's view is let go (other tables read since) holds a copy of
    the table's rows when it ends: it goes too, at the next view kept, not at the table's next read."""
    monkeypatch.setattr(latest, "MAX_DELTA_ROWS", 20)
    glue, _, release = with_a_held_refold(warehouse, monkeypatch)
    views = glue._ctx.rows.views
    assert KEY in views.refolds
    monkeypatch.setattr(latest, "LATEST_VIEW_ROWS", 10, raising=False)
    for i in range(3):
        glue.create_table(
            DatabaseName="db",
            TableInput={"Name": f"other{i}", "PartitionKeys": [{"Name": "k", "Type": "int"}]},
        )
        glue.create_partition(DatabaseName="db", TableName=f"other{i}", PartitionInput={"Values": ["1"]})
        glue.get_partitions(DatabaseName="db", TableName=f"other{i}")
    assert KEY not in views._latest
    release.set()
    views.refolds[KEY].thread.join()
    glue.create_partition(DatabaseName="db", TableName="other0", PartitionInput={"Values": ["2"]})
    glue.get_partitions(DatabaseName="db", TableName="other0")
    assert KEY not in views.refolds
    assert live(glue) == list(range(100))
