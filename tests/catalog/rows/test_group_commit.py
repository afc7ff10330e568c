"""Concurrent partition additions to one table share commits, and each caller still gets exactly
the answer it would have got had the calls run one after another in arrival order."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from gluecat import Catalog
from gluecat.catalog.rows import RowEngine, group_commit
from gluecat.errors import AlreadyExistsException, EntityNotFoundException
from tests.int_partitions import KEY, add, live, make


def batch(*keys: int) -> dict[str, Any]:
    return {
        "DatabaseName": "db",
        "TableName": "t",
        "PartitionInputList": [
            {"Values": [str(k)], "StorageDescriptor": {"Location": f"s3://b/{k}"}} for k in keys
        ],
    }


class Held:
    """Holds the first commit in flight (in its after-write step) until released, so that calls made
    meanwhile queue up behind it."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.entered, self.release = threading.Event(), threading.Event()
        after_write = RowEngine.after_write

        def held(*args: Any) -> None:
            if not self.entered.is_set():
                self.entered.set()
                assert self.release.wait(10)
            after_write(*args)

        monkeypatch.setattr(RowEngine, "after_write", held)


def waiting(glue: Catalog) -> int:
    queue = glue._ctx.rows.groups._queues.get(KEY)
    return len(queue.waiting) if queue is not None else 0


def start(call: Callable[[], Any], outcomes: dict[str, Any], name: str) -> threading.Thread:
    def run() -> None:
        try:
            outcomes[name] = call()
        except Exception as e:  # the test inspects it
            outcomes[name] = e

    thread = threading.Thread(target=run)
    thread.start()
    return thread


def queue_up(
    glue: Catalog, calls: dict[str, Callable[[], Any]], outcomes: dict[str, Any]
) -> Iterator[threading.Thread]:
    """Start the calls one at a time, each after the previous one has queued (so arrival order is known)."""
    for name, call in calls.items():
        before = waiting(glue)
        yield start(call, outcomes, name)
        deadline = time.monotonic() + 10
        while waiting(glue) == before:
            assert time.monotonic() < deadline, f"{name} never queued"
            time.sleep(0.001)


def behind_a_commit(
    glue: Catalog,
    monkeypatch: pytest.MonkeyPatch,
    calls: dict[str, Callable[[], Any]],
    meanwhile: Callable[[], Any] = lambda: None,
) -> tuple[dict[str, Any], int]:
    """Make ``calls`` while a first call (adding partition 0) has its commit held in flight, each queued
    after the one before; then let it go. Returns each call's outcome (the first's as "first") and the
    warehouse version while the first was held."""
    held, outcomes = Held(monkeypatch), {}
    first = start(lambda: glue.batch_create_partition(**batch(0)), outcomes, "first")
    assert held.entered.wait(10)
    version = glue.table_version("db", "t")
    threads = list(queue_up(glue, calls, outcomes))
    meanwhile()
    held.release.set()
    for t in [first, *threads]:
        t.join(10)
    return outcomes, version


@pytest.fixture
def glue(warehouse: str) -> Iterator[Catalog]:
    with Catalog(warehouse, background_merges=False) as catalog:
        yield make(catalog)


def test_calls_made_during_a_commit_share_the_next_one(
    glue: Catalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = {
        f"c{i}": (lambda i=i: glue.batch_create_partition(**batch(10 * i + 1, 10 * i + 2)))
        for i in range(1, 4)
    }
    outcomes, version = behind_a_commit(glue, monkeypatch, calls)
    assert all(outcomes[name]["Errors"] == [] for name in ["first", *calls])
    assert glue.table_version("db", "t") == version + 1  # three calls, one commit
    assert live(glue) == [0, 11, 12, 21, 22, 31, 32]


def test_a_group_answers_as_if_its_calls_ran_in_arrival_order(
    glue: Catalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    add(glue, 5)
    calls = {
        "earlier": lambda: glue.batch_create_partition(**batch(1, 2)),
        "later": lambda: glue.batch_create_partition(**batch(2, 3, 5)),
        "single": lambda: glue.create_partition(
            DatabaseName="db",
            TableName="t",
            PartitionInput={"Values": ["3"], "StorageDescriptor": {"Location": "s3://b/3"}},
        ),
        "last": lambda: glue.batch_create_partition(**batch(4)),
    }
    outcomes, _ = behind_a_commit(glue, monkeypatch, calls)
    assert outcomes["earlier"]["Errors"] == []
    assert [e["PartitionValues"] for e in outcomes["later"]["Errors"]] == [["2"], ["5"]]
    assert {e["ErrorDetail"]["ErrorCode"] for e in outcomes["later"]["Errors"]} == {"AlreadyExistsException"}
    # The single create came after "later" added 3: it fails alone, naming its own operation.
    assert isinstance(outcomes["single"], AlreadyExistsException)
    assert "CreatePartition operation" in str(outcomes["single"])
    assert outcomes["last"]["Errors"] == []
    assert live(glue) == [0, 1, 2, 3, 4, 5]


def test_a_failure_of_the_whole_group_reaches_every_caller_under_its_own_operation(
    glue: Catalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = {
        "batch": lambda: glue.batch_create_partition(**batch(1)),
        "single": lambda: glue.create_partition(
            DatabaseName="db",
            TableName="t",
            PartitionInput={"Values": ["2"], "StorageDescriptor": {"Location": "s3://b/2"}},
        ),
    }
    # The table goes before the group commits.
    outcomes, _ = behind_a_commit(
        glue, monkeypatch, calls, lambda: glue.delete_table(DatabaseName="db", Name="t")
    )
    assert isinstance(outcomes["batch"], EntityNotFoundException)
    assert isinstance(outcomes["single"], EntityNotFoundException)
    assert "BatchCreatePartition operation" in str(outcomes["batch"])
    assert "CreatePartition operation" in str(outcomes["single"])


def test_a_group_stops_growing_at_its_partition_limit(glue: Catalog, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(group_commit, "MAX_GROUP_PARTITIONS", 3)
    calls = {
        f"c{i}": (lambda i=i: glue.batch_create_partition(**batch(10 * i, 10 * i + 1))) for i in range(1, 4)
    }
    _, version = behind_a_commit(glue, monkeypatch, calls)
    assert glue.table_version("db", "t") == version + 3  # 2 + 2 > 3: each call commits alone
    assert live(glue) == [0, 10, 11, 20, 21, 30, 31]


def test_many_writers_at_once_all_land(glue: Catalog) -> None:
    """Writers woken after their group committed must not disturb the group committing next."""
    outcomes: dict[str, Any] = {}
    threads = [
        start(
            lambda w=w: [
                glue.batch_create_partition(**batch(*range(1000 * w + 5 * i, 1000 * w + 5 * i + 5)))
                for i in range(20)
            ],
            outcomes,
            f"w{w}",
        )
        for w in range(8)
    ]
    for t in threads:
        t.join(60)
    assert all(isinstance(o, list) and all(r["Errors"] == [] for r in o) for o in outcomes.values()), outcomes
    assert live(glue) == sorted(1000 * w + k for w in range(8) for k in range(100))
    assert glue._ctx.rows.groups._queues == {}  # the last writer out removed the table's queue


def test_a_table_keeps_its_queue_only_while_writes_to_it_are_under_way() -> None:
    """A server writes to thousands of tables over its life: a table's queue goes with its last writer,
    whether its write committed or failed."""
    groups = group_commit.GroupCommit()

    def commit(group: list[group_commit.Request[Any]]) -> None:
        for r in group:
            r.result = len(r.parts)

    def fail(group: list[group_commit.Request[Any]]) -> None:
        raise EntityNotFoundException("no such table")

    for i in range(200):
        request: group_commit.Request[int] = group_commit.Request([{}], collect_errors=False)
        assert groups.submit(("db", f"t{i}"), request, commit) == 1
        with pytest.raises(EntityNotFoundException):
            groups.submit(("db", f"gone{i}"), group_commit.Request([{}], collect_errors=False), fail)
    assert groups._queues == {}
