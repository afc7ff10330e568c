"""A model-based test of Lake Formation's governed tables: random interleavings of transactions
(StartTransaction, UpdateTableObjects, CommitTransaction, CancelTransaction, ExtendTransaction,
DeleteObjectsOnCancel, Glue's CreateTable, UpdateTable and DeleteTable in them and outside them) through
``gluecat.LakeFormation`` and ``gluecat.Catalog``, checked against a plain model written from the Object
APIs document (/work/shared/seeds/002_*.txt), the transactions the seeds' README lists, and the rules
docs/governed.md states (conflicts, the status life cycle, errors by name).

Time is the test's: the transactions' clock (``gluecat.catalog.transactions.now_us``) is the real one
plus an offset that a rule moves on by ADVANCE, so that idle timeouts and stale commits come without
sleeping. Commit times (QueryAsOfTime) are the store's real ones, recorded after every step.

What is compared: every read (the latest objects, a transaction's view, a committed transaction's, as of
a recorded time, through PartitionPredicates and in pages), every status (DescribeTransaction,
ListTransactions by status and in pages), every error's name, and the files DeleteObjectsOnCancel
recorded (deleted once their transaction aborts, unless a table holds them).
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from botocore.exceptions import ClientError
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from gluecat import Catalog, LakeFormation
from gluecat.catalog import governed, transactions
from tests.catalog.test_catalog_model import run_settings

DB = "db"
TABLES = {"p": (("k", "int"), ("s", "string")), "u": ()}
"""p is partitioned by an int and a string key, u not at all."""
K_VALUES = ["1", "01", "2"] * 4 + ["x"]  # "01" is 1 as an int; "x" is no int at all
S_VALUES = ["a", "b"]
FILES = ["a", "b", "c", "d"]
"""Each table's folder holds these files; every table's objects may name any of them."""
TIMEOUT_S = 900.0
ADVANCE_S = 500.0
"""Two advances without a write or an extension pass the idle timeout, one does not (whatever real
time the run takes); one passes STALE_COMMIT_SECONDS."""
IDLE_ADVANCES = 2
PREDICATES: dict[str, Callable[[tuple[str, ...]], bool]] = {
    "k = 1": lambda v: v[0] == "1",
    "k >= 2": lambda v: int(v[0]) >= 2,
    "s = 'a'": lambda v: v[1] == "a",
    "k <= 1 AND s = 'b'": lambda v: int(v[0]) <= 1 and v[1] == "b",
}

Values = tuple[str, ...]


# -- the model ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class MObject:
    values: Values
    etag: str
    size: int


@dataclass(frozen=True)
class MTable:
    gen: int
    """Which making of the name (a table dropped and made again is another table)."""
    objects: dict[tuple[Values, str], MObject] = field(default_factory=dict)
    """By identity (values, Uri): a transaction's view may hold a Uri in two partitions (its start's
    and its own add, made after a commit since deleted the first)."""
    version: int = 1


State = dict[str, MTable]


@dataclass
class MCommit:
    state: State
    """The whole warehouse after it."""
    defs: frozenset[str] = frozenset()
    """The tables whose definitions it made, changed or dropped."""
    parts: frozenset[tuple[str, Values]] = frozenset()
    """The partitions (table, values) whose objects it wrote."""


@dataclass(frozen=True)
class Op:
    """One WriteOperation, its values canonical."""

    deleted: bool
    values: Values
    uri: str
    etag: str = ""
    size: int = 0


@dataclass
class MTx:
    id: str
    kind: str
    start: int
    """The commit (index in Model.commits) whose state it reads."""
    staged: list[tuple[Any, ...]] = field(default_factory=list)
    """("def", table, "create" | "update" | "drop", gen of the table written) and ("objects", table, gen
    of the table written, [Op, ...]), in order."""
    status: str = "ACTIVE"
    idle: int = 0
    active_us: int = 0
    """The transactions' clock just before its last activity (start, write or extension)."""
    idled_out: bool = False
    """Clock advances since its last write or extension."""
    marked_at: int | None = None
    """The clock (in advances) when its commit's marker was written."""
    on_cancel: list[str] = field(default_factory=list)
    commit: int | None = None
    """The commit it made (None: it wrote nothing)."""

    @property
    def has_writes(self) -> bool:
        return bool(self.staged)


class Refused(Exception):
    """What the model expects a call to raise: any of ``codes``."""

    def __init__(self, *codes: str) -> None:
        super().__init__(codes)
        self.codes = frozenset(codes)


Objects = dict[tuple[Values, str], MObject]


def apply_ops(objects: Objects, ops: list[Op]) -> Objects:
    """Deletes remove the object of that identity if there is one (a commit since may have removed
    it: a transaction's writes apply to the latest objects at its commit)."""
    out = dict(objects)
    for op in ops:
        if op.deleted:
            out.pop((op.values, op.uri), None)
        else:
            out[(op.values, op.uri)] = MObject(op.values, op.etag, op.size)
    return out


def check_ops(objects: Objects, ops: list[Op]) -> bool:
    """Whether ``ops`` are right against ``objects``: adds of Uris not held, deletes of held objects in
    the partition named."""
    held = {uri: o.values for (_, uri), o in objects.items()}
    for op in ops:
        if op.deleted:
            if held.get(op.uri) != op.values:
                return False
            del held[op.uri]
        else:
            if op.uri in held:
                return False
            held[op.uri] = op.values
    return True


@dataclass
class Model:
    commits: list[MCommit] = field(default_factory=list)
    txs: dict[str, MTx] = field(default_factory=dict)
    """In start order."""
    clock: int = 0
    gens: Iterator[int] = field(default_factory=lambda: itertools.count(1))
    deleted_files: set[str] = field(default_factory=set)

    @property
    def latest(self) -> State:
        return self.commits[-1].state

    def publish(
        self, state: State, defs: frozenset[str] = frozenset(), parts: frozenset[Any] = frozenset()
    ) -> None:
        self.commits.append(MCommit(state, frozenset(defs), frozenset(parts)))

    # -- a transaction's views ---------------------------------------------------------------------

    def own_defs(self, tx: MTx, name: str) -> list[tuple[Any, ...]]:
        return [w for w in tx.staged if w[0] == "def" and w[1] == name]

    def own_ops(self, tx: MTx, name: str) -> list[Op]:
        """Its object writes to the table, none from before its last drop of it."""
        out: list[Op] = []
        for w in tx.staged:
            if w[1] != name:
                continue
            if w[0] == "def" and w[2] == "drop":
                out = []
            elif w[0] == "objects":
                out.extend(w[3])
        return out

    def with_defs(self, base: State, tx: MTx, name: str) -> MTable | None:
        """The table in ``base`` with the transaction's definition writes applied (its objects those of
        ``base``'s table, none after a drop)."""
        table = base.get(name)
        for w in self.own_defs(tx, name):
            if w[2] == "drop":
                table = None
            elif w[2] == "create":
                table = MTable(w[3], {})
            else:  # an update: the table the transaction read, over the objects of ``base``'s
                table = MTable(w[3], table.objects if table else {})
        return table

    def overlay(self, tx: MTx, name: str) -> MTable | None:
        """The table as the transaction reads it: its start plus its own writes."""
        table = self.with_defs(self.commits[tx.start].state, tx, name)
        if table is None:
            return None
        return replace(table, objects=apply_ops(table.objects, self.own_ops(tx, name)))

    def dropped_in(self, tx: MTx, name: str) -> bool:
        return any(w[2] == "drop" for w in self.own_defs(tx, name))

    def objects_now(self, tx: MTx, name: str) -> Objects:
        """The table's objects committed now as the transaction's writes apply to them."""
        table = self.latest.get(name)
        if table is None or self.dropped_in(tx, name):
            return {}
        return table.objects

    # -- life cycle --------------------------------------------------------------------------------

    def status(self, tx: MTx) -> str:
        return tx.status

    def stale(self, tx: MTx) -> bool:
        return tx.status == "COMMIT_IN_PROGRESS" and tx.marked_at is not None and self.clock > tx.marked_at

    def usable(self, tx: MTx, *, write: bool) -> None:
        if tx.status == "COMMITTED":
            raise Refused("TransactionCommittedException")
        if tx.status == "COMMIT_IN_PROGRESS":
            raise Refused("TransactionCommitInProgressException")
        if tx.status == "ABORTED":
            raise Refused("TransactionCanceledException")
        if write and tx.kind == "READ_ONLY":
            raise Refused("InvalidInputException")

    def abort(self, tx: MTx) -> None:
        tx.status = "ABORTED"
        held = {uri for t in self.latest.values() for _, uri in t.objects}
        self.deleted_files |= {uri for uri in tx.on_cancel if uri not in held}

    def finish(self, tx: MTx) -> None:
        """Publish a transaction's commit, or abort it on a conflict (Refused)."""
        latest = self.latest
        since = self.commits[tx.start + 1 :]
        defs = {w[1] for w in tx.staged if w[0] == "def"}
        written = {w[1] for w in tx.staged if w[0] == "objects"}
        conflict = False
        for name in defs:
            if any(name in c.defs for c in since):
                conflict = True
        state = dict(latest)
        parts: set[tuple[str, Values]] = set()
        for name in defs:
            table = self.with_defs(latest, tx, name)
            if table is None:
                state.pop(name, None)
            else:
                state[name] = table
        for name in written:
            ops = self.own_ops(tx, name)
            if not ops and self.dropped_in(tx, name):
                continue
            first = next(w for w in tx.staged if w[0] == "objects" and w[1] == name)
            if name not in defs and (latest.get(name) is None or latest[name].gen != first[2]):
                conflict = True
                continue
            table = state.get(name)
            if table is None:
                conflict = True
                continue
            touched = {(name, op.values) for op in ops}
            if any(touched & c.parts for c in since):
                conflict = True
            removed = {(op.uri, op.values) for op in ops if op.deleted}
            added: dict[str, Values] = {}  # the Uris it leaves added
            for op in ops:
                if op.deleted:
                    added.pop(op.uri, None)
                else:
                    added[op.uri] = op.values
            now = self.objects_now(tx, name)
            holders = {uri: values for values, uri in now}
            for uri in added:
                if uri in holders and (uri, holders[uri]) not in removed:
                    conflict = True
            if not conflict:
                state[name] = replace(table, objects=apply_ops(now, ops))
            parts |= touched
        if conflict:
            self.abort(tx)
            raise Refused("ConcurrentModificationException")
        self.publish(state, frozenset(defs), frozenset(parts))
        tx.status, tx.commit = "COMMITTED", len(self.commits) - 1

    def settle(self, tx: MTx) -> None:
        """What looking at a transaction does: finish a stale commit (a conflict aborts it)."""
        if self.stale(tx):
            with contextlib.suppress(Refused):
                self.finish(tx)  # a conflict aborts it: its outcome, not the caller's error

    def read_state(self, tx: MTx, name: str) -> MTable | None:
        """GetTableObjects with TransactionId (Refused for an aborted one)."""
        if tx.status == "ABORTED":
            raise Refused("TransactionCanceledException")
        if tx.status == "COMMITTED":
            index = tx.commit if tx.commit is not None else tx.start
            return self.commits[index].state.get(name)
        return self.overlay(tx, name)


# -- the machine ----------------------------------------------------------------------------------------


class Clock:
    """The transactions' clock: real time plus what the test advanced it by."""

    def __init__(self) -> None:
        self.offset_us = 0

    def now_us(self) -> int:
        return time.time_ns() // 1000 + self.offset_us


def partition(values: list[str]) -> dict[str, Any]:
    """PartitionValues, left out for a table without partition keys (the document's minimum is one)."""
    return {"PartitionValues": values} if values else {}


def code_of(call: Callable[[], Any]) -> tuple[str | None, Any]:
    try:
        return None, call()
    except ClientError as e:
        return e.response["Error"]["Code"], None


class LakeFormationMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.dir = tempfile.mkdtemp(prefix="gluecat-lf-model-")
        self.warehouse = os.path.join(self.dir, "warehouse")
        self.lake = Path(self.dir) / "lake"
        self.clock = Clock()
        self.patch = pytest.MonkeyPatch()
        self.patch.setattr(transactions, "now_us", self.clock.now_us)
        self.patch.setattr(governed, "now_us", self.clock.now_us)
        # The journal is rewritten every few records (ended transactions' writes dropped), so that
        # reads, commits and the other process's journal reads go through rewrites.
        self.patch.setattr(transactions, "REWRITE_BYTES", 3000)
        self.clients = [self.open(), self.open()]
        """Two processes' clients (each its own store and transactions, as another process has):
        calls go to the first, and a rule swaps them, so that each acts on what the other did while
        its own caches (pinned start states, overlays, summaries of commits, views) were idle."""
        self.glue, self.lf = self.clients[0]
        self.model = Model()
        self.history: list[tuple[datetime, int]] = []
        """Recorded times and the commit (index) whose state was the latest then."""

    def open(self) -> tuple[Catalog, LakeFormation]:
        glue = Catalog(self.warehouse)
        return glue, LakeFormation(glue, transaction_timeout=TIMEOUT_S)

    def teardown(self) -> None:
        self.patch.undo()
        for glue, _ in self.clients:
            glue.close()
        shutil.rmtree(self.dir, ignore_errors=True)

    def uri(self, table: str, name: str) -> str:
        return (self.lake / table / name).as_uri()

    def table_input(self, name: str, description: str = "") -> dict[str, Any]:
        return {
            "Name": name,
            "TableType": "GOVERNED",
            "Description": description,
            "StorageDescriptor": {
                "Columns": [{"Name": "x", "Type": "int"}],
                "Location": (self.lake / name).as_uri() + "/",
            },
            "PartitionKeys": [{"Name": k, "Type": t} for k, t in TABLES[name]],
        }

    @initialize()
    def tables(self) -> None:
        for name in TABLES:
            (self.lake / name).mkdir(parents=True)
            for f in FILES:
                (self.lake / name / f).write_bytes(b"")
        self.glue.create_database(DatabaseInput={"Name": DB})
        state: State = {}
        for name in TABLES:
            self.glue.create_table(DatabaseName=DB, TableInput=self.table_input(name))
            state[name] = MTable(next(self.model.gens))
        self.model.publish(state)
        for _ in range(2):  # open from the start, so that most runs interleave them
            self.start("READ_AND_WRITE")

    def expect(self, call: Callable[[], Any], model: Callable[[], Any]) -> Any:
        """Run the call and the model's version of it: the same error, or both succeed (the call's
        answer returned)."""
        try:
            wanted, expected = None, model()
        except Refused as r:
            wanted, expected = r.codes, None
        got, answer = code_of(call)
        if wanted is None:
            assert got is None, f"refused with {got}; the model accepts it"
        else:
            assert got in wanted, (
                f"{'accepted' if got is None else got}; the model refuses it with {set(wanted)}"
            )
        return answer if wanted is None else expected

    def tx(self, tx_id: str) -> MTx:
        return self.model.txs[tx_id]

    # -- transactions --------------------------------------------------------------------------------

    @rule(kind=st.sampled_from(["READ_AND_WRITE", "READ_AND_WRITE", "READ_ONLY"]))
    def start(self, kind: str) -> None:
        before = self.clock.now_us()
        tx_id = self.lf.start_transaction(TransactionType=kind)["TransactionId"]
        self.model.txs[tx_id] = MTx(tx_id, kind, len(self.model.commits) - 1, active_us=before)

    def pick(self, data: st.DataObject) -> str:
        """A transaction, mostly an active one (ended ones are there to be refused)."""
        every = list(self.model.txs)
        active = [t for t, m in self.model.txs.items() if m.status == "ACTIVE"]
        pool = active if active and data.draw(st.integers(0, 4), label="active") else every
        return data.draw(st.sampled_from(pool), label="transaction")

    @precondition(lambda self: self.model.txs)
    @rule(data=st.data())
    def commit(self, data: st.DataObject) -> None:
        tx = self.pick(data)
        m = self.tx(tx)

        def model() -> str:
            if m.status == "COMMIT_IN_PROGRESS" and not self.model.stale(m):
                return "COMMIT_IN_PROGRESS"
            if m.status == "COMMIT_IN_PROGRESS":
                self.model.finish(m)
                return "COMMITTED"
            self.model.usable(m, write=False)
            if m.has_writes:
                self.model.finish(m)
            else:
                m.status = "COMMITTED"
            return "COMMITTED"

        answer = self.expect(lambda: self.lf.commit_transaction(TransactionId=tx), model)
        if isinstance(answer, dict):
            assert answer["TransactionStatus"] == m.status, answer

    @precondition(lambda self: self.model.txs)
    @rule(data=st.data())
    def commit_dies_after_its_marker(self, data: st.DataObject) -> None:
        tx = self.pick(data)
        """A committer that stops after writing its marker: the commit is in progress until it is
        stale, then finished by whoever looks at it."""
        m = self.tx(tx)
        if m.status != "ACTIVE" or not m.has_writes or m.kind == "READ_ONLY":
            return
        txs = self.lf._ctx.transactions()
        txs._finish = lambda tx_id, tx=None: None  # type: ignore[method-assign]
        try:
            self.lf.commit_transaction(TransactionId=tx)
        finally:
            del txs._finish
        m.status, m.marked_at = "COMMIT_IN_PROGRESS", self.model.clock

    @precondition(lambda self: self.model.txs)
    @rule(data=st.data())
    def cancel(self, data: st.DataObject) -> None:
        if data.draw(st.integers(0, 2), label="skip"):
            return  # (only one draw in three cancels: transactions must live to commit)
        tx = self.pick(data)
        m = self.tx(tx)

        def model() -> None:
            if m.status == "ACTIVE":
                self.model.abort(m)
                return
            if m.status == "ABORTED":
                raise Refused("TransactionCanceledException")
            self.model.usable(m, write=False)

        self.expect(lambda: self.lf.cancel_transaction(TransactionId=tx), model)

    @precondition(lambda self: self.model.txs)
    @rule(data=st.data())
    def extend(self, data: st.DataObject) -> None:
        tx = self.pick(data)
        m = self.tx(tx)

        def model() -> None:
            self.model.usable(m, write=False)
            m.idle, m.active_us = 0, self.clock.now_us()

        self.expect(lambda: self.lf.extend_transaction(TransactionId=tx), model)

    @precondition(lambda self: self.model.txs)
    @rule(data=st.data())
    def describe(self, data: st.DataObject) -> None:
        tx = self.pick(data)
        self.describe_unknown()
        m = self.tx(tx)
        self.model.settle(m)
        got = self.lf.describe_transaction(TransactionId=tx)["TransactionDescription"]
        assert got["TransactionId"] == tx
        assert got["TransactionStatus"] == m.status, (got, m)
        assert ("TransactionEndTime" in got) == (m.status in ("COMMITTED", "ABORTED")), got
        if m.idled_out:  # it ended when its idle period did, whenever that was noticed
            ended = got["TransactionEndTime"].timestamp() * 1e6 - TIMEOUT_S * 1e6
            assert m.active_us <= ended <= m.active_us + 10e6, (got, m.active_us)

    def describe_unknown(self) -> None:
        for call in (self.lf.describe_transaction, self.lf.commit_transaction, self.lf.cancel_transaction):
            assert code_of(functools.partial(call, TransactionId="f" * 40))[0] == "EntityNotFoundException"

    @rule(
        status=st.sampled_from([None, "ALL", "COMPLETED", "ACTIVE", "COMMITTED", "ABORTED"]),
        page=st.sampled_from([None, 1, 2, 3]),
    )
    def list_transactions(self, status: str | None, page: int | None) -> None:
        for m in self.model.txs.values():
            self.model.settle(m)
        wanted = [
            (m.id, m.status)
            for m in reversed(self.model.txs.values())
            if status in (None, "ALL")
            or m.status == status
            or (status == "COMPLETED" and m.status in ("COMMITTED", "ABORTED"))
        ]
        kwargs: dict[str, Any] = {} if status is None else {"StatusFilter": status}
        if page is not None:
            kwargs["MaxResults"] = page
        got: list[tuple[str, str]] = []
        for _ in range(100):
            answer = self.lf.list_transactions(**kwargs)
            assert page is None or len(answer["Transactions"]) <= page
            got += [(t["TransactionId"], t["TransactionStatus"]) for t in answer["Transactions"]]
            if "NextToken" not in answer:
                break
            kwargs["NextToken"] = answer["NextToken"]
        assert got == wanted

    # -- the clock -----------------------------------------------------------------------------------

    @rule(now=st.integers(0, 2))
    def advance_clock(self, now: int) -> None:
        """Time passes: transactions idle for two advances are aborted (the janitor's pass, run here
        so that it is done when the rule ends, deletes the files they recorded); a commit in progress
        is stale after one. (Only one draw in three advances: transactions must live to interleave.)"""
        if now:
            return
        self.clock.offset_us += int(ADVANCE_S * 1_000_000)
        self.model.clock += 1
        for m in self.model.txs.values():
            if m.status == "ACTIVE":
                m.idle += 1
                if m.idle >= IDLE_ADVANCES:
                    self.model.abort(m)
                    m.idled_out = True
        txs = self.lf._ctx.transactions()
        for _ in range(50):
            if txs.sweep():
                break

    # -- writes --------------------------------------------------------------------------------------

    def values(self, data: st.DataObject, table: str) -> list[str]:
        if not TABLES[table]:
            return []
        return [data.draw(st.sampled_from(K_VALUES)), data.draw(st.sampled_from(S_VALUES))]

    @staticmethod
    def canonical(table: str, values: list[str]) -> Values | None:
        if not TABLES[table]:
            return ()
        if values[0] == "x":
            return None
        return (str(int(values[0])), values[1])

    @precondition(lambda self: self.model.txs)
    @rule(table=st.sampled_from(sorted(TABLES)), data=st.data())
    def update_table_objects(self, table: str, data: st.DataObject) -> None:
        self.write_objects(table, data)

    @precondition(lambda self: self.model.txs)
    @rule(data=st.data())
    def update_table_objects_of_p(self, data: st.DataObject) -> None:
        """(Object writes are what the rest acts on: twice as many, of the partitioned table more.)"""
        self.write_objects("p", data)

    def write_objects(self, table: str, data: st.DataObject) -> None:
        tx = self.pick(data)
        m = self.tx(tx)
        view = self.model.overlay(m, table) if m.status == "ACTIVE" else None
        operations: list[dict[str, Any]] = []
        ops: list[Op | None] = []  # None: values the table's keys refuse
        for _ in range(data.draw(st.integers(1, 3))):
            held = sorted(view.objects.items()) if view is not None else []
            if held and data.draw(st.booleans()):  # often a delete of an object the transaction sees
                (_, uri), o = data.draw(st.sampled_from(held))
                values = list(o.values)
                if table == "p" and values[0] == "1" and data.draw(st.booleans()):
                    values[0] = "01"  # the same partition, spelled otherwise
                operations.append({"DeleteObject": {"Uri": uri, **partition(values)}})
                ops.append(Op(True, o.values, uri))
                continue
            uri = self.uri(data.draw(st.sampled_from(sorted(TABLES))), data.draw(st.sampled_from(FILES)))
            values = self.values(data, table)
            canonical = self.canonical(table, values)
            if data.draw(st.integers(0, 4)):  # mostly adds: a delete of an object not held is refused
                etag, size = data.draw(st.sampled_from(["e1", "e2"])), data.draw(st.sampled_from([0, 7]))
                operations.append(
                    {"AddObject": {"Uri": uri, "ETag": etag, "Size": size, **partition(values)}}
                )
                ops.append(None if canonical is None else Op(False, canonical, uri, etag, size))
            else:
                operations.append({"DeleteObject": {"Uri": uri, **partition(values)}})
                ops.append(None if canonical is None else Op(True, canonical, uri))

        def model() -> None:
            model = self.model
            model.usable(m, write=True)
            table_now = model.with_defs(model.latest, m, table)
            if table_now is None:
                raise Refused("EntityNotFoundException")
            started = model.with_defs(model.commits[m.start].state, m, table)
            if started is not None and started.gen != table_now.gen:
                raise Refused("ConcurrentModificationException")
            valid = [op for op in ops if op is not None]
            if len(valid) < len(ops):
                raise Refused("InvalidInputException")
            own = model.own_ops(m, table)
            if not check_ops(apply_ops(model.objects_now(m, table), own), valid):
                seen = started.objects if started is not None else {}
                if not check_ops(apply_ops(seen, own), valid):
                    raise Refused("InvalidInputException")
                raise Refused("ConcurrentModificationException")
            seen = started.objects if started is not None else {}
            if not check_ops(apply_ops(seen, own), valid):  # right now, wrong as it reads the table
                raise Refused("ConcurrentModificationException")
            m.staged.append(("objects", table, table_now.gen, valid))
            m.idle, m.active_us = 0, self.clock.now_us()

        self.expect(
            lambda: self.lf.update_table_objects(
                DatabaseName=DB, TableName=table, TransactionId=tx, WriteOperations=operations
            ),
            model,
        )

    @precondition(lambda self: self.model.txs)
    @rule(
        table=st.sampled_from(sorted(TABLES)),
        files=st.lists(st.sampled_from(FILES), min_size=1, max_size=2),
        elsewhere=st.booleans(),
        data=st.data(),
    )
    def delete_objects_on_cancel(
        self, table: str, files: list[str], elsewhere: bool, data: st.DataObject
    ) -> None:
        tx = self.pick(data)
        m = self.tx(tx)
        folder = next(t for t in sorted(TABLES) if t != table) if elsewhere else table
        uris = [self.uri(folder, f) for f in files]

        def model() -> None:
            self.model.usable(m, write=True)
            if self.model.with_defs(self.model.latest, m, table) is None:
                raise Refused("EntityNotFoundException")
            if elsewhere:
                raise Refused("InvalidInputException")
            m.on_cancel += uris
            m.idle, m.active_us = 0, self.clock.now_us()

        self.expect(
            lambda: self.lf.delete_objects_on_cancel(
                DatabaseName=DB,
                TableName=table,
                TransactionId=tx,
                Objects=[{"Uri": u, "ETag": "e1"} for u in uris],
            ),
            model,
        )

    # -- table definitions ---------------------------------------------------------------------------

    @rule(
        table=st.sampled_from(sorted(TABLES)),
        what=st.sampled_from(["create", "update", "drop"]),
        description=st.sampled_from(["d1", "d2"]),
    )
    def plain_table_write(self, table: str, what: str, description: str) -> None:
        """CreateTable, UpdateTable or DeleteTable outside any transaction."""
        if what == "create":
            self.create_table(table)
        elif what == "drop":
            self.delete_table(table)
        else:
            self.update_table(table, description)

    def create_table(self, table: str) -> None:
        def model() -> None:
            if table in self.model.latest:
                raise Refused("AlreadyExistsException")
            state = dict(self.model.latest)
            state[table] = MTable(next(self.model.gens))
            self.model.publish(state, frozenset({table}))

        self.expect(
            lambda: self.glue.create_table(DatabaseName=DB, TableInput=self.table_input(table)), model
        )

    def delete_table(self, table: str) -> None:
        def model() -> None:
            if table not in self.model.latest:
                raise Refused("EntityNotFoundException")
            state = dict(self.model.latest)
            del state[table]
            self.model.publish(state, frozenset({table}))

        self.expect(lambda: self.glue.delete_table(DatabaseName=DB, Name=table), model)

    def update_table(self, table: str, description: str) -> None:
        def model() -> None:
            old = self.model.latest.get(table)
            if old is None:
                raise Refused("EntityNotFoundException")
            state = dict(self.model.latest)
            state[table] = replace(old, version=old.version + 1)
            self.model.publish(state, frozenset({table}))

        self.expect(
            lambda: self.glue.update_table(DatabaseName=DB, TableInput=self.table_input(table, description)),
            model,
        )

    @precondition(lambda self: self.model.txs)
    @rule(
        table=st.sampled_from(sorted(TABLES)),
        what=st.sampled_from(["create", "update", "drop"]),
        data=st.data(),
    )
    def table_in_transaction(self, table: str, what: str, data: st.DataObject) -> None:
        tx = self.pick(data)
        m = self.tx(tx)

        def model() -> None:
            self.model.usable(m, write=True)
            seen = self.model.overlay(m, table)
            if what == "create" and seen is not None:
                raise Refused("AlreadyExistsException")
            if what != "create" and seen is None:
                raise Refused("EntityNotFoundException")
            gen = next(self.model.gens) if what == "create" else (seen.gen if seen else 0)
            m.staged.append(("def", table, what, gen))
            m.idle, m.active_us = 0, self.clock.now_us()

        def call() -> Any:
            if what == "create":
                return self.glue.create_table(
                    DatabaseName=DB, TableInput=self.table_input(table), TransactionId=tx
                )
            if what == "update":
                return self.glue.update_table(
                    DatabaseName=DB, TableInput=self.table_input(table, "in " + tx[-4:]), TransactionId=tx
                )
            return self.glue.delete_table(DatabaseName=DB, Name=table, TransactionId=tx)

        self.expect(call, model)

    # -- reads ---------------------------------------------------------------------------------------

    def read(self, table: str, predicate: str | None, page: int | None, **at: Any) -> list[tuple[Any, ...]]:
        kwargs: dict[str, Any] = {"DatabaseName": DB, "TableName": table, **at}
        if predicate is not None:
            kwargs["PartitionPredicate"] = predicate
        if page is not None:
            kwargs["MaxResults"] = page
        out: list[tuple[Any, ...]] = []
        for _ in range(100):
            answer = self.lf.get_table_objects(**kwargs)
            assert page is None or sum(len(g["Objects"]) for g in answer["Objects"]) <= page
            for group in answer["Objects"]:
                values = tuple(group.get("PartitionValues", ()))
                assert group["Objects"], answer
                out += [(values, o["Uri"], o["ETag"], o["Size"]) for o in group["Objects"]]
            if "NextToken" not in answer:
                return out
            kwargs["NextToken"] = answer["NextToken"]
        raise AssertionError("GetTableObjects paged forever")

    def read_arrow(self, table: str, predicate: str | None, **at: Any) -> list[tuple[Any, ...]]:
        """The same through get_table_objects_arrow (what a Spark scan plans from)."""
        rows = self.lf.get_table_objects_arrow(
            DatabaseName=DB, TableName=table, Expression=predicate, **at
        ).to_pylist()
        keys = [k for k, _ in TABLES[table]]
        return [(tuple(r[k] for k in keys), r["Uri"], r["ETag"], r["Size"]) for r in rows]

    @staticmethod
    def listed(table: str, objects: Objects, predicate: str | None) -> list[tuple[Any, ...]]:
        if predicate is not None and not TABLES[table]:
            raise Refused("InvalidInputException")  # it names keys the table does not have
        keep = PREDICATES[predicate] if predicate is not None else (lambda v: True)
        return sorted((o.values, uri, o.etag, o.size) for (_, uri), o in objects.items() if keep(o.values))

    @precondition(lambda self: self.model.txs)
    @rule(
        table=st.sampled_from(sorted(TABLES)),
        predicate=st.sampled_from([None, *PREDICATES]),
        page=st.sampled_from([None, 1, 2]),
        data=st.data(),
    )
    def read_in_transaction(
        self, table: str, predicate: str | None, page: int | None, data: st.DataObject
    ) -> None:
        if data.draw(st.integers(0, 3), label="latest") == 0:
            self.read_latest(table, predicate, page)
            return
        tx = self.pick(data)
        m = self.tx(tx)

        def model() -> list[tuple[Any, ...]]:
            found = self.model.read_state(m, table)
            if found is None:
                raise Refused("EntityNotFoundException")
            return self.listed(table, found.objects, predicate)

        self.compare(lambda: self.read(table, predicate, page, TransactionId=tx), model)
        self.compare(lambda: self.read_arrow(table, predicate, TransactionId=tx), model)

        def table_model() -> str:
            if self.model.read_state(m, table) is None:
                raise Refused("EntityNotFoundException")
            return table

        self.compare(
            lambda: self.glue.get_table(DatabaseName=DB, Name=table, TransactionId=tx)["Table"]["Name"],
            table_model,
        )

    def read_latest(self, table: str, predicate: str | None, page: int | None) -> None:
        def model() -> list[tuple[Any, ...]]:
            found = self.model.latest.get(table)
            if found is None:
                raise Refused("EntityNotFoundException")
            return self.listed(table, found.objects, predicate)

        self.compare(lambda: self.read(table, predicate, page), model)
        self.compare(lambda: self.read_arrow(table, predicate), model)

    @rule(table=st.sampled_from(sorted(TABLES)), data=st.data())
    def read_as_of(self, table: str, data: st.DataObject) -> None:
        if not self.history:
            return
        when, index = data.draw(st.sampled_from(self.history))

        def model() -> list[tuple[Any, ...]]:
            then = self.model.commits[index].state.get(table)
            if then is None:
                raise Refused("EntityNotFoundException")
            now = self.model.latest.get(table)
            if now is not None and now.gen != then.gen:
                raise Refused("InvalidInputException")
            return self.listed(table, then.objects, None)

        self.compare(lambda: self.read(table, None, None, QueryAsOfTime=when), model)
        self.compare(lambda: self.read_arrow(table, None, QueryAsOfTime=when), model)

    def compare(self, call: Callable[[], Any], model: Callable[[], Any]) -> None:
        try:
            wanted, expected = None, model()
        except Refused as r:
            wanted, expected = r.codes, None
        got, answer = code_of(call)
        if wanted is None:
            assert got is None, f"refused with {got}; the model reads {expected}"
            assert answer == expected, f"got {answer}, the model reads {expected}"
        else:
            assert got in wanted, f"read {answer}; the model refuses it with {set(wanted)}"

    # -- a second process ----------------------------------------------------------------------------

    @rule(fresh=st.booleans())
    def switch_process(self, fresh: bool) -> None:
        """Go on in the other process, or in one just started (which knows the transactions from their
        journal only)."""
        other = self.clients[1]
        if fresh:
            other[0].close()
            other = self.open()
        self.clients = [other, self.clients[0]]
        self.glue, self.lf = other

    # -- after every step ----------------------------------------------------------------------------

    @invariant()
    def latest_objects_are_the_models(self) -> None:
        if not self.model.commits:
            return
        for table in TABLES:
            found = self.model.latest.get(table)
            got, answer = code_of(functools.partial(self.read, table, None, None))
            if found is None:
                assert got == "EntityNotFoundException", (table, answer)
            else:
                assert got is None and answer == self.listed(table, found.objects, None), (table, answer)

    @invariant()
    def the_files_are_deleted_as_the_model_says(self) -> None:
        for table in TABLES:
            for f in FILES:
                uri = self.uri(table, f)
                assert (self.lake / table / f).exists() == (uri not in self.model.deleted_files), uri

    @invariant()
    def record_the_time(self) -> None:
        if not self.model.commits:
            return
        now = datetime.now(UTC)
        self.history.append((now, len(self.model.commits) - 1))
        while datetime.now(UTC) <= now:  # so that the next commit is later than the recorded time
            pass


def test_lake_formation_answers_as_the_model_does() -> None:
    """A bounded, derandomized run (the same sequences each time). To explore, set
    GLUECAT_LF_MODEL_RANDOM=1 with larger GLUECAT_LF_MODEL_EXAMPLES and GLUECAT_LF_MODEL_STEPS."""
    run_state_machine_as_test(LakeFormationMachine, settings=run_settings(25, 40, "GLUECAT_LF_MODEL"))
