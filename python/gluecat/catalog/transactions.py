"""Lake Formation transactions: snapshot isolation over the warehouse, one atomic commit each.

A transaction reads the state committed when it started (its *start version*) plus its own writes, and
its writes become visible together when it commits. Until then they are *staged*: a transaction's
start, its staged writes, its extensions and its end are records of the transaction journal
(gluecat.store.journal), durable and visible to every process, each an append of a shared file rather
than a commit. Its commit is one store commit: the table definitions it wrote as records carried in the
entry, the objects it wrote as one segment per table, and a ``commit_transaction`` action naming it and
what it changed.

Conflicts are checked inside the store's commit retry loop, against the latest state and against the
commits made since the transaction started (their ``commit_transaction`` actions):

- a table whose definition the transaction wrote (CreateTable, UpdateTable, DeleteTable) must be, in
  the latest state, the very table it was when the transaction started (absent, or the same CreateTime
  and VersionId): any commit that changed its definition meanwhile, in a transaction or not, conflicts;
  an UpdateTable is checked again against the partition indexes and partitions the table has now, and
  takes the statistics of the columns it drops or retypes with it, as one made at the commit would;
- a table whose objects the transaction wrote must still be the table it wrote them to (not dropped or
  made again since), and no transaction committed since may have changed the objects of any partition
  whose objects this one changed;
- an object it adds must not be held by the table when it commits, nor be a file an aborted
  transaction is deleting.

A conflict is ConcurrentModificationException, and the transaction is then ABORTED.

Life cycle: ACTIVE -> COMMIT_IN_PROGRESS (a marker in the journal, so that no write is staged after the
commit read them) -> COMMITTED (the commit's log entry, then an end record), or ACTIVE -> ABORTED
(CancelTransaction, a conflict, or idleness past the transaction's timeout). A commit found in progress
for longer than ``STALE_COMMIT_SECONDS`` is finished by whoever looks at it: its writes are in the
journal, and the commit, which finds its own entry if it was already published, never applies twice.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import logging
import random
import secrets
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, TypeVar

from gluecat import locations
from gluecat.catalog import access, indexes, paging
from gluecat.catalog import objects as obj
from gluecat.catalog.background import stop_at_exit
from gluecat.catalog.context import DATABASE, TABLE, Context, partition_key_count
from gluecat.catalog.objects import ObjectWrite
from gluecat.catalog.partitions import statistics_outdated_by_table_update
from gluecat.catalog.rows.view import TableView, fold
from gluecat.catalog.staged_writes import table_changes, table_identity, with_table_write
from gluecat.errors import (
    ConcurrentModificationException,
    EntityNotFoundException,
    GlueError,
    InternalServiceException,
    InvalidInputException,
    OperationTimeoutException,
    StorageError,
    TransactionCanceledException,
    TransactionCommitInProgressException,
    TransactionCommittedException,
)
from gluecat.newest import Newest
from gluecat.store import codec
from gluecat.store.codec import from_micros
from gluecat.store.journal import JournalConflict, Record, open_journal
from gluecat.store.log import CommitTransaction, Entry
from gluecat.store.snapshot import Changes, Key, Snapshot

READ_AND_WRITE = "READ_AND_WRITE"
READ_ONLY = "READ_ONLY"
ACTIVE = "ACTIVE"
COMMITTED = "COMMITTED"
ABORTED = "ABORTED"
COMMIT_IN_PROGRESS = "COMMIT_IN_PROGRESS"

DEFAULT_TIMEOUT_SECONDS = 900.0
"""How long a transaction may stay idle (no write, no ExtendTransaction) before it is aborted."""
STALE_COMMIT_SECONDS = 30.0
"""A commit in progress for this long has lost its committer: whoever looks at it finishes it."""
ENDED_KEPT = 100_000
"""How many ended transactions the journal keeps when it is rewritten (for ListTransactions, and for
reading the objects of a table as of a committed transaction)."""
REWRITE_BYTES = 8 * 1024 * 1024
"""The journal is rewritten (ended transactions' staged writes dropped) when it grows past this."""
PENDING_DELETION = "pending_deletion"
"""Records (keyed by Uri) of files an aborted transaction is deleting (DeleteObjectsOnCancel)."""
SUMMARIES_KEPT = 8192
"""What the commits after a transaction's start did, kept for the checks of transactions' commits."""
PINNED_KEPT = 64
"""Transactions whose start state is kept at hand for their reads (others read it again)."""
OVERLAYS_KEPT = 16
"""Transactions' start states with their own table writes applied, kept for their reads."""
OPERATION = "CommitTransaction"

log = logging.getLogger(__name__)
R = TypeVar("R")


def now_us() -> int:
    return time.time_ns() // 1000


@dataclass
class Transaction:
    """A transaction as the journal's records describe it."""

    id: str
    kind: str
    start_version: int
    start_us: int
    timeout_us: int
    last_us: int
    writes: list[dict[str, Any]] = field(default_factory=list)
    on_cancel: list[dict[str, Any]] = field(default_factory=list)
    committing_us: int | None = None
    status: str | None = None
    """COMMITTED or ABORTED once ended."""
    end_us: int | None = None
    commit_version: int | None = None
    reason: str | None = None
    reason_table: list[str] | None = None
    """The table (database, name) ``reason`` is about, named only to callers who may see it."""
    cleaned: bool = False

    def state(self, now_us: int) -> str:
        if self.status is not None:
            return self.status
        if self.committing_us is not None:
            return COMMIT_IN_PROGRESS
        if now_us > self.last_us + self.timeout_us:
            return ABORTED  # idle past its timeout (recorded by whoever acts on it)
        return ACTIVE

    def timed_out(self, now_us: int) -> bool:
        return self.status is None and self.committing_us is None and now_us > self.last_us + self.timeout_us

    def records(self) -> list[Record]:
        """The records that rebuild this transaction (what a journal rewrite keeps of it)."""
        out: list[Record] = [
            {
                "op": "start",
                "tx": self.id,
                "type": self.kind,
                "version": self.start_version,
                "time": self.start_us,
                "timeout": self.timeout_us,
                "last": self.last_us,
            }
        ]
        if self.status is None or not self.cleaned:
            if self.writes:
                out.append({"op": "write", "tx": self.id, "ws": self.writes, "time": self.last_us})
            out += [{"op": "on_cancel", "tx": self.id, **c, "time": self.last_us} for c in self.on_cancel]
        if self.committing_us is not None:
            out.append({"op": "committing", "tx": self.id, "time": self.committing_us})
        if self.status is not None:
            out.append(
                {
                    "op": "end",
                    "tx": self.id,
                    "status": self.status,
                    "time": self.end_us,
                    "version": self.commit_version,
                    "reason": self.reason,
                    **({"reason_table": self.reason_table} if self.reason_table else {}),
                }
            )
        if self.cleaned:
            out.append({"op": "cleaned", "tx": self.id})
        return out


@dataclass(frozen=True)
class _Summary:
    """What a commit since a transaction's start did, for its conflict check."""

    transaction: str | None
    objects: dict[Key, frozenset[str]]
    tables: frozenset[Key]
    """The tables whose definitions it made, changed or deleted (their records)."""


class Transactions:
    """The transactions of one store, as this process knows them (one per catalog Context)."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.store = ctx.store
        self.journal = open_journal(ctx.store.fs)
        self._txs: dict[str, Transaction] = {}
        self._unclean: set[str] = set()
        """Aborted transactions whose DeleteObjectsOnCancel files are not all deleted yet."""
        self._horizon_us = 0
        """Transactions started up to this time that the journal does not hold were dropped by its
        rewrites (their ids are unknown now)."""
        self._lock = threading.RLock()
        self._pinned: Newest[str, Snapshot] = Newest(PINNED_KEPT)
        self._summaries: Newest[int, _Summary | None] = Newest(SUMMARIES_KEPT)
        self._overlays: Newest[tuple[str, int], Snapshot] = Newest(OVERLAYS_KEPT)
        self._janitor: threading.Thread | None = None
        self._stopping = threading.Event()
        stop_at_exit(self)

    # -- the journal ---------------------------------------------------------------------------

    def refresh(self) -> None:
        """Read what the journal gained since the last look (other processes' records included)."""
        with self._lock:
            reset, records = self.journal.poll()
            if reset:
                self._txs.clear()
                self._unclean.clear()
                self._horizon_us = 0
            for r in records:
                self._apply(r)

    def _apply(self, r: Record) -> None:
        op, tx = r["op"], self._txs.get(r["tx"])
        if op == "start":
            self._txs[r["tx"]] = Transaction(
                id=r["tx"],
                kind=r["type"],
                start_version=r["version"],
                start_us=r["time"],
                timeout_us=r["timeout"],
                last_us=int(r.get("last") or r["time"]),
            )
            return
        if op == "horizon":
            self._horizon_us = max(self._horizon_us, r["time"])
            return
        if tx is None:
            tx = self._known(r["tx"])
            if tx is None:
                return  # of a transaction a rewrite dropped
        if op == "write":
            tx.writes.extend(r["ws"])
            tx.last_us = max(tx.last_us, r["time"])
        elif op == "on_cancel":
            tx.on_cancel.append({"table": r["table"], "objects": r["objects"]})
            tx.last_us = max(tx.last_us, r["time"])
        elif op == "touch":
            tx.last_us = max(tx.last_us, r["time"])
        elif op == "committing":
            tx.committing_us = r["time"]
        elif op == "end":
            if tx.status is None:
                tx.status, tx.end_us = r["status"], r["time"]
                tx.commit_version, tx.reason = r.get("version"), r.get("reason")
                tx.reason_table = r.get("reason_table")
        elif op == "cleaned":
            tx.cleaned = True
        if tx.status == ABORTED and tx.on_cancel and not tx.cleaned:
            self._unclean.add(tx.id)
        else:
            self._unclean.discard(tx.id)

    def _attempts(self) -> Iterator[contextlib.AbstractContextManager[None]]:
        """Decide and append holding the journal's lock, after reading it to its end: ``for attempt in
        self._attempts(): with attempt: ...``. On an object store there is no lock, and an append fails
        when another process appended since the read (JournalConflict): the block then runs again, on
        the journal as it now is."""
        for _ in range(200):
            conflicted = False

            @contextlib.contextmanager
            def attempt() -> Iterator[None]:
                nonlocal conflicted
                with self._lock, self.journal.locked():
                    self.refresh()
                    try:
                        yield
                    except JournalConflict:
                        conflicted = True

            yield attempt()
            if not conflicted:
                return
            time.sleep(random.uniform(0, 0.02))
        raise OperationTimeoutException("the transaction journal: gave up against concurrent writers")

    def _append(self, record: Record, *, sync: bool) -> None:
        """Append a record (holding the journal's lock, after a refresh) and apply it here."""
        self.journal.append([record], sync=sync)
        self._apply(record)

    def _maybe_rewrite(self) -> None:
        """Rewrite the journal (holding its lock) when it has grown: ended transactions keep their start
        and end, the newest ENDED_KEPT of them; live ones keep everything."""
        if self.journal.size() < REWRITE_BYTES:
            return
        ended = sorted((t for t in self._txs.values() if t.status is not None), key=lambda t: t.end_us or 0)
        dropped = {t.id for t in ended[: max(0, len(ended) - ENDED_KEPT)] if t.cleaned or not t.on_cancel}
        keep = [t for t in self._txs.values() if t.id not in dropped]
        for t in keep:
            if t.status is not None and (t.cleaned or not t.on_cancel):
                t.writes, t.on_cancel = [], []
        horizon = max([self._horizon_us] + [self._txs[t].start_us for t in dropped])
        try:
            self.journal.rewrite(
                [{"op": "horizon", "tx": "", "time": horizon}, *(r for t in keep for r in t.records())]
            )
        except JournalConflict:
            return  # another process appended first: the next append rewrites
        self._horizon_us = horizon
        for tx_id in dropped:
            del self._txs[tx_id]
            self._unclean.discard(tx_id)

    def _get(self, tx_id: str) -> Transaction:
        tx = self._txs.get(tx_id) or self._known(tx_id)
        if tx is None:
            raise EntityNotFoundException(f"Transaction {tx_id} not found.")
        return tx

    def _known(self, tx_id: str) -> Transaction | None:
        """A transaction the journal does not hold but its id proves this warehouse started (its start
        record lost with a machine's power, not yet synced by a later record), unless it is older than
        what journal rewrites dropped."""
        tx = _from_id(self.store.secret, tx_id)
        if tx is None or tx.start_us <= self._horizon_us:
            return None
        self._txs[tx_id] = tx
        return tx

    def get(self, tx_id: str) -> Transaction:
        """The transaction (EntityNotFoundException if no process started it)."""
        with self._lock:
            self.refresh()
            return self._get(tx_id)

    # -- life cycle ----------------------------------------------------------------------------

    def start(self, kind: str, timeout_seconds: float, at_version: int | None = None) -> str:
        """A new transaction; ``at_version``: its start state is that earlier commit of the warehouse
        (conflicts are checked against every commit since), not the latest."""
        version = self.store.latest().version
        if at_version is not None and at_version < version:
            version = at_version
        tx = Transaction(
            id="",
            kind=kind,
            start_version=version,
            start_us=now_us(),
            timeout_us=int(timeout_seconds * 1_000_000),
            last_us=0,
        )
        # Its start state, as every process reads it: the root at that version, each table as it was
        # at the transaction's start (or before the root's next commit, when that came earlier).
        snap = self.store.at_version(version, until=from_micros(tx.start_us))
        tx.last_us = tx.start_us
        tx_id = _make_id(self.store.secret, tx)
        record = tx.records()[0] | {"tx": tx_id}
        for attempt in self._attempts():
            with attempt:
                # Not synced: the id itself says what the record says, so a start the machine loses
                # comes back from its id (_known), and the transaction's first synced record covers it.
                self._append(record, sync=False)
                self._maybe_rewrite()
                self._pinned[tx_id] = snap  # its start state, at hand for its reads
        self._kick_janitor()
        return tx_id

    def describe(self, tx_id: str) -> dict[str, Any]:
        self._settle(self.get(tx_id))
        return self._description(self.get(tx_id), now_us())

    def _settle(self, tx: Transaction) -> None:
        """Record an idle transaction's abort, and finish a commit whose committer is gone."""
        now = now_us()
        if tx.timed_out(now):
            self._expire(tx.id)
        elif (
            tx.status is None
            and tx.committing_us is not None
            and now - tx.committing_us > STALE_COMMIT_SECONDS * 1_000_000
        ):
            try:
                self._finish(tx.id)
            except ConcurrentModificationException:
                pass  # it conflicts, and is ABORTED now: its outcome, not a failure
            except GlueError as e:
                log.warning("finishing the stale commit of transaction %s failed: %s", tx.id, e)

    def _description(self, tx: Transaction, now: int) -> dict[str, Any]:
        out: dict[str, Any] = {
            "TransactionId": tx.id,
            "TransactionStatus": tx.state(now),
            "TransactionStartTime": from_micros(tx.start_us),
        }
        if tx.status is not None and tx.end_us is not None:
            out["TransactionEndTime"] = from_micros(tx.end_us)
        elif tx.timed_out(now):
            out["TransactionEndTime"] = from_micros(tx.last_us + tx.timeout_us)
        return out

    def listing(
        self, status_filter: str | None, max_results: int | None, next_token: str | None
    ) -> dict[str, Any]:
        """ListTransactions: the newest first; ALL (the default), COMPLETED (committed or aborted),
        ACTIVE, COMMITTED or ABORTED."""
        wanted = status_filter or "ALL"
        query = paging.query_digest("ListTransactions", wanted)
        after = paging.read_token(self.store.secret, query, next_token)
        with self._lock:
            self.refresh()
            txs = list(self._txs.values())
        now = now_us()
        for tx in txs:
            if tx.committing_us is not None and tx.status is None:
                self._settle(tx)
        order = sorted(txs, key=lambda t: (-t.start_us, t.id))
        limit = max_results or 1000
        page: list[dict[str, Any]] = []
        more = False
        for tx in order:
            if after is not None and [-tx.start_us, tx.id] <= after:
                continue
            state = tx.state(now)
            if not _matches(wanted, state):
                continue
            if len(page) == limit:
                more = True
                break
            page.append(self._description(tx, now))
        out: dict[str, Any] = {"Transactions": page}
        if more:
            last = self._txs[page[-1]["TransactionId"]]
            out["NextToken"] = paging.make_token(self.store.secret, query, [-last.start_us, last.id])
        return out

    def extend(self, tx_id: str) -> None:
        for attempt in self._attempts():
            with attempt:
                tx = self._usable(tx_id)
                self._append({"op": "touch", "tx": tx.id, "time": now_us()}, sync=True)

    def _usable(self, tx_id: str, *, write: bool = False) -> Transaction:
        """The transaction, ACTIVE (holding the journal's lock, after a refresh); else the error its
        state calls for (recording the abort of one idle past its timeout)."""
        tx = self._get(tx_id)
        state = tx.state(now_us())
        if state == COMMITTED:
            raise TransactionCommittedException(f"Transaction {tx_id} has been committed and cannot be used.")
        if state == COMMIT_IN_PROGRESS:
            raise TransactionCommitInProgressException(f"Transaction {tx_id} is being committed.")
        if state == ABORTED:
            if tx.status is None:
                self._record_idle_abort(tx)
                self._kick_janitor()  # its DeleteObjectsOnCancel files
            raise _canceled(tx)
        if write and tx.kind == READ_ONLY:
            raise InvalidInputException(f"TransactionId: {tx_id} is a READ_ONLY transaction: it cannot write")
        return tx

    def cancel(self, tx_id: str) -> None:
        for attempt in self._attempts():
            with attempt:
                tx = self._get(tx_id)
                state = tx.state(now_us())
                if state == COMMITTED:
                    raise TransactionCommittedException(f"Transaction {tx_id} has been committed.")
                if state == COMMIT_IN_PROGRESS:
                    raise TransactionCommitInProgressException(f"Transaction {tx_id} is being committed.")
                if tx.status == ABORTED:
                    raise _canceled(tx)
                idle = state == ABORTED
                if idle:
                    self._record_idle_abort(tx)
                else:
                    self._record_abort(tx, "canceled")
        self._clean(tx)
        if idle:
            # Aborted already, as DescribeTransaction said: the same answer as once its abort is recorded.
            raise _canceled(tx)

    def _expire(self, tx_id: str) -> None:
        for attempt in self._attempts():
            with attempt:
                tx = self._get(tx_id)
                if not tx.timed_out(now_us()):
                    return
                self._record_idle_abort(tx)
        self._clean(tx)

    def _record_abort(
        self, tx: Transaction, reason: str, when_us: int | None = None, table: Key | None = None
    ) -> None:
        """(Holding the journal's lock.) Synced: the files it deletes must never come back into use.
        ``table``: the table the reason is about (named only to callers who may see it)."""
        when = now_us() if when_us is None else when_us
        record = {"op": "end", "tx": tx.id, "status": ABORTED, "time": when, "reason": reason}
        if table is not None:
            record["reason_table"] = [str(table[0]), str(table[1])]
        self._append(record, sync=True)
        self._pinned.pop(tx.id, None)

    def _record_idle_abort(self, tx: Transaction) -> None:
        """(Holding the journal's lock.) The abort of a transaction idle past its timeout, which ended
        when its idle period did, not when some call noticed it (as DescribeTransaction said before)."""
        self._record_abort(tx, f"idle for more than {tx.timeout_us / 1e6:g} s", tx.last_us + tx.timeout_us)

    # -- staging ---------------------------------------------------------------------------------

    def stage(self, tx_id: str, build: Callable[[Transaction], tuple[list[dict[str, Any]], R]]) -> R:
        """Stage writes in an ACTIVE READ_AND_WRITE transaction: ``build`` checks them against the
        transaction as it stands (holding the journal's lock, so no other write of it comes in between)
        and returns them with the call's result; nothing is staged if it raises."""
        for attempt in self._attempts():
            with attempt:
                tx = self._usable(tx_id, write=True)
                writes, result = build(tx)
                if writes:
                    # One record: a call's writes are staged whole or not at all.
                    self._append({"op": "write", "tx": tx.id, "ws": writes, "time": now_us()}, sync=True)
                    self._maybe_rewrite()
        return result

    def on_cancel(
        self,
        tx_id: str,
        table: Key,
        objects: list[tuple[str, str | None]],
        check: Callable[[Transaction], None],
    ) -> None:
        """Record files to delete if the transaction aborts; ``check`` refuses them (after the
        transaction is found usable: an ended one's staged writes may be gone from the journal)."""
        for attempt in self._attempts():
            with attempt:
                tx = self._usable(tx_id, write=True)
                check(tx)
                record = {
                    "op": "on_cancel",
                    "tx": tx.id,
                    "table": list(table),
                    "objects": [list(o) for o in objects],
                }
                self._append({**record, "time": now_us()}, sync=True)

    # -- reading ---------------------------------------------------------------------------------

    def start_snapshot(self, tx: Transaction) -> Snapshot:
        with self._lock:
            pinned = self._pinned.touch(tx.id)
        return (
            pinned
            if pinned is not None
            else self.store.at_version(tx.start_version, until=from_micros(tx.start_us))
        )

    def read_snapshot(self, tx_id: str) -> tuple[Transaction, Snapshot]:
        """What a read in the transaction sees: its start state and its own table writes (ACTIVE, or
        being committed); the state its commit made (COMMITTED); TransactionCanceledException (ABORTED)."""
        tx = self.get(tx_id)
        state = tx.state(now_us())
        if state == ABORTED:
            raise _canceled(tx)
        if state == COMMITTED:
            if tx.commit_version is None:
                return tx, self.start_snapshot(tx)  # it wrote nothing: the state it read
            return tx, self.store.at_version(tx.commit_version)
        return tx, self.overlay(tx)

    def overlay(self, tx: Transaction) -> Snapshot:
        """The transaction's start state with its table writes applied."""
        staged = tx.writes
        key = (tx.id, len(staged))
        with self._lock:
            found = self._overlays.touch(key)
        if found is not None:
            return found
        snap = self.start_snapshot(tx)
        for w in staged:
            if w["w"] == "table":
                snap = with_table_write(snap, w, f"transaction {tx.id}")
        with self._lock:
            self._overlays[key] = snap
        return snap

    def writing_state(self, tx: Transaction) -> tuple[Snapshot, Snapshot]:
        """(the latest state, the latest state with the transaction's table writes): what a write of
        its objects is checked against."""
        latest = self.store.latest()
        state = latest
        for w in tx.writes:
            if w["w"] == "table":
                state = with_table_write(state, w, f"transaction {tx.id}")
        return latest, state

    def objects_now(
        self, latest: Snapshot, state: Snapshot, table: dict[str, Any], *, own_definition: bool
    ) -> TableView:
        """A table's objects in the latest committed state, as ``state`` (the latest with a transaction's
        table writes) has them: none if the transaction made the table (again)."""
        key = obj.rows_key(table["DatabaseName"], table["Name"])
        if own_definition and not state.table_segments(key):
            return fold(partition_key_count(table), (), [])
        return self.ctx.rows.view(latest, key, partition_key_count(table))

    def own_objects(self, tx: Transaction, table: Key) -> list[ObjectWrite]:
        """The objects the transaction wrote to a table, in order (none from before its last drop)."""
        out: list[ObjectWrite] = []
        for w in tx.writes:
            if list(table) != w["table"]:
                continue
            if w["w"] == "table" and w.get("drop"):
                out = []
            elif w["w"] == "objects":
                out.extend(ObjectWrite.from_json(o) for o in w["ops"])
        return out

    # -- committing ------------------------------------------------------------------------------

    def commit(self, tx_id: str) -> str:
        for attempt in self._attempts():
            with attempt:
                tx = self._get(tx_id)
                now = now_us()
                state = tx.state(now)
                if state == COMMITTED:
                    raise TransactionCommittedException(f"Transaction {tx_id} has already been committed.")
                if state == ABORTED:
                    if tx.status is None:
                        self._record_idle_abort(tx)
                        self._kick_janitor()  # its DeleteObjectsOnCancel files
                    raise _canceled(tx)
                if state == COMMIT_IN_PROGRESS:
                    if now - (tx.committing_us or 0) <= STALE_COMMIT_SECONDS * 1_000_000:
                        return COMMIT_IN_PROGRESS
                elif not tx.writes:
                    self._append({"op": "end", "tx": tx.id, "status": COMMITTED, "time": now}, sync=True)
                    self._pinned.pop(tx.id, None)
                    return COMMITTED
                else:
                    # From here no write can be staged: the commit takes exactly those before the marker.
                    self._append({"op": "committing", "tx": tx.id, "time": now}, sync=False)
        self._finish(tx_id, tx)
        return COMMITTED

    def _finish(self, tx_id: str, tx: Transaction | None = None) -> None:
        """Publish a transaction that is being committed (its writes are those before its marker; ``tx``
        if the caller read it after the marker); ConcurrentModificationException (it is then ABORTED)
        on a conflict."""
        marked = tx if tx is not None else self.get(tx_id)
        writes = list(marked.writes)
        try:
            version = self.store.commit(OPERATION, lambda latest: self._build(marked, writes, latest))
        except GlueError as e:
            if isinstance(e, (InternalServiceException, OperationTimeoutException)):
                raise  # not the transaction's fault: it stays in progress, and is finished later
            why = "conflict" if isinstance(e, ConcurrentModificationException) else "could not commit"
            for attempt in self._attempts():
                with attempt:
                    tx = self._get(tx_id)
                    if tx.status is None:
                        self._record_abort(tx, f"{why}: {e.message}", table=getattr(e, "table", None))
                        tx = self._get(tx_id)
            self._clean(self._get(tx_id))
            table = getattr(e, "table", None)
            view = access.current()
            if table is not None and view is not None and not view.table_visible(table[0], table[1]):
                # Any caller may commit any transaction: what stops it is told of a table only to one
                # who may see that table.
                raise type(e)(
                    f"Transaction {tx_id} cannot commit its writes to a table the caller may not see "
                    f"({type(e).__name__}): it is canceled"
                ) from None
            raise
        for attempt in self._attempts():
            with attempt:
                tx = self._get(tx_id)
                if tx.status is None:
                    # The log entry is the commit (durable already); this record saves finding it again.
                    end = {
                        "op": "end",
                        "tx": tx.id,
                        "status": COMMITTED,
                        "time": now_us(),
                        "version": version,
                    }
                    self._append(end, sync=False)
                self._pinned.pop(tx.id, None)
                self._maybe_rewrite()
        for key in {tuple(w["table"]) for w in writes if w["w"] == "objects"}:
            self.ctx.rows.after_write(obj.rows_key(key[0], key[1]))

    def _build(self, tx: Transaction, writes: list[dict[str, Any]], latest: Snapshot) -> tuple[Changes, int]:
        """The transaction's commit against the latest state (run again on each lost race)."""
        since = self._commits_since(tx.start_version, latest.version)
        for version, summary in since:
            if summary is not None and summary.transaction == tx.id:
                return Changes(), version  # published already (by its committer, or by a finisher)
        if any(summary is None for _, summary in since):
            raise ConcurrentModificationException(
                f"Transaction {tx.id} cannot be checked against the commits made since it started: "
                "that history has expired"
            )
        changes = Changes(inline_records=True)
        bases: dict[Key, Any] = {}
        for w in writes:
            if w["w"] == "table":
                bases.setdefault(tuple(w["table"]), w["base"])
        for key, base in bases.items():
            # The identity alone misses a table absent at the start and again now, made and dropped
            # between: any commit since that wrote the table's record changed its definition.
            if table_identity(latest.get(TABLE, key)) != base or any(
                summary is not None and key in summary.tables for _, summary in since
            ):
                raise _conflict(
                    key,
                    f"Table {key[1]} in database {key[0]} was changed, created or deleted since transaction "
                    f"{tx.id} started, which changes it too",
                )
        snap = latest
        records: dict[tuple[str, Key], Any] = {}
        objects: dict[Key, list[ObjectWrite]] = {}
        object_bases: dict[Key, Any] = {}
        for w in writes:
            key = tuple(w["table"])
            if w["w"] == "table":
                made = Changes()
                try:
                    table_changes(snap, w, made)
                    prior, snap = snap, with_table_write(snap, w, f"transaction {tx.id}")
                    self._recheck_update(tx, key, prior, snap, made)
                except GlueError as e:
                    if getattr(e, "table", None) is None:
                        e.table = key  # type: ignore[attr-defined]
                    raise
                # Later writes win: a put after a deletion of the same record (DeleteTable, then
                # CreateTable) must not come out of the commit as the deletion after the put.
                records.update({(kind, k): None for kind, k in made.deletes})
                records.update({(kind, k): doc for kind, k, doc in made.puts})
                changes.segment_removes.extend(made.segment_removes)
                if w.get("drop"):
                    objects.pop(key, None)
                elif snap.get(DATABASE, (key[0],)) is None:
                    raise _conflict(key, f"Database {key[0]} was deleted since transaction {tx.id} started")
            else:
                objects.setdefault(key, []).extend(ObjectWrite.from_json(o) for o in w["ops"])
                object_bases.setdefault(key, w["base"])
        for key in bases:
            # Its staging refused a change of the keys of a table holding objects then; objects a
            # commit since gave the table must still fit them (check_key_change, at commit).
            before, after = latest.get(TABLE, key), snap.get(TABLE, key)
            if (
                before is not None
                and after is not None
                and snap.table_segments(obj.rows_key(*key))
                and obj.key_forms(before) != obj.key_forms(after)
                and obj.view_of(self.ctx, latest, before).count() > 0
            ):
                raise _conflict(
                    key,
                    f"Table {key[1]} in database {key[0]} was given objects since transaction {tx.id} "
                    "started, which changes its partition keys: a table holding objects keeps its keys",
                )
        for (kind, k), doc in records.items():
            if doc is None:
                changes.delete(kind, k)
            else:
                changes.put(kind, k, doc)
        touched: list[tuple[Key, tuple[str, ...]]] = []
        for key, ows in objects.items():
            table = snap.get(TABLE, key)
            if key not in bases and (
                latest.get(TABLE, key) is None or _created(latest.get(TABLE, key)) != object_bases[key]
            ):
                raise _conflict(
                    key,
                    f"Table {key[1]} in database {key[0]} was deleted or made again since transaction {tx.id} "
                    "wrote objects to it",
                )
            if table is None or not obj.is_governed(table):
                raise _conflict(key, f"Table {key[1]} in database {key[0]} is no longer a governed table")
            if not all(obj.conforms(table, values) for values in {ow.values for ow in ows}):
                raise _conflict(
                    key,
                    f"The partition keys of {key[0]}.{key[1]} were changed since transaction {tx.id} wrote "
                    "objects to it: the objects' partition values do not fit them",
                )
            partitions = {ow.partition for ow in ows}
            for version, summary in since:
                assert summary is not None
                hit = partitions & summary.objects.get(key, frozenset())
                if hit:
                    raise _conflict(
                        key,
                        f"The objects of partition {sorted(hit)[0]} of {key[0]}.{key[1]} were changed by the "
                        f"transaction committed at version {version}, after transaction {tx.id} started",
                    )
            n_keys = partition_key_count(table)
            added: dict[str, str] = {}  # the Uris the transaction leaves added, and where
            for ow in ows:
                if ow.deleted:
                    added.pop(ow.uri, None)
                else:
                    added[ow.uri] = ow.identity
            removed = {ow.identity for ow in ows if ow.deleted}
            # Staging checked the writes against the objects then; only transactions change objects
            # (a drop or a new table of the name conflicts above), so unless one changed this table's
            # since, they are as staging saw them.
            held: dict[str, str] = {}
            if key in bases or any(summary and key in summary.objects for _, summary in since):
                view = self.objects_now(latest, snap, table, own_definition=key in bases)
                held = view.held_locations(added)
            for uri, holder in held.items():
                if holder not in removed:
                    raise _conflict(
                        key,
                        f"{key[0]}.{key[1]} holds the object {uri!r} (committed since transaction {tx.id} "
                        "added it)",
                    )
            for uri in added:
                if snap.get(PENDING_DELETION, (uri,)) is not None:
                    raise _conflict(
                        key,
                        f"The file {uri!r} is being deleted by an aborted transaction that recorded it with "
                        "DeleteObjectsOnCancel",
                    )
            changes.segment_adds.append((obj.rows_key(*key), obj.write_rows(n_keys, ows)))
            touched.append((key, tuple(sorted(partitions))))
        changes.actions.append(CommitTransaction(tx.id, tx.start_version, tuple(bases), tuple(touched)))
        return changes, latest.version + 1

    def _recheck_update(
        self, tx: Transaction, key: Key, before: Snapshot, after: Snapshot, made: Changes
    ) -> None:
        """An UpdateTable staged in ``tx``, checked and completed against the state it now applies to
        (``before``, the latest with the transaction's earlier writes), as an UpdateTable made then would
        be: commits that leave the table's VersionId alone may have come since its staging (column
        statistics, partition indexes, partitions), and its staging saw none of them. So the statistics
        of the columns it drops, renames or retypes go (``made``) whenever they were written, and the
        update conflicts if a partition index or the partitions made since refuse it."""
        old, new = before.get(TABLE, key), after.get(TABLE, key)
        if old is None or new is None or old is new:
            return
        try:
            indexes.check_table_update(self.ctx, before, old, new)
        except InvalidInputException as e:
            raise _conflict(
                key,
                f"Table {key[1]} in database {key[0]} was given partition indexes or partitions since "
                f"transaction {tx.id} started, which refuse its UpdateTable: {e.message}",
            ) from e
        statistics_outdated_by_table_update(self.ctx, before, old, new, made)

    def _commits_since(self, after: int, upto: int) -> list[tuple[int, _Summary | None]]:
        """What each commit after version ``after`` up to ``upto`` did (None: expired, not known)."""
        versions = range(after + 1, upto + 1)
        with self._lock:
            found = {v: self._summaries[v] for v in versions if v in self._summaries}
        missing = [v for v in versions if v not in found]
        if missing:
            for entry in self.store.log_entries(missing[0] - 1, upto):
                found[entry.version] = self._summary(entry)
        with self._lock:
            for v in versions:  # all made the newest, those read again included
                self._summaries[v] = found[v]
        return [(v, found[v]) for v in versions]

    def _summary(self, entry: Entry) -> _Summary | None:
        """What a commit did (None: not known, its record file deleted by an expiry since it was read)."""
        if entry.expired is not None:
            return None
        try:
            changed = self.store.entry_records(entry)
        except StorageError:
            return None
        tables = frozenset(key for kind, key in changed if kind == TABLE)
        for action in entry.actions:
            if isinstance(action, CommitTransaction):
                return _Summary(action.transaction, {t: frozenset(p) for t, p in action.objects}, tables)
        return _Summary(None, {}, tables)

    # -- deleting on cancel ----------------------------------------------------------------------

    def _clean(self, tx: Transaction) -> None:
        """Delete the files an aborted transaction recorded with DeleteObjectsOnCancel: first recorded
        as pending in a commit that leaves out any file a table holds (so no commit can register them
        after), then deleted, then the records removed. What fails is retried by the janitor."""
        if tx.status != ABORTED or tx.cleaned or not tx.on_cancel:
            return
        uris = {uri: (record["table"], etag) for record in tx.on_cancel for uri, etag in record["objects"]}

        def register(latest: Snapshot) -> tuple[Changes, list[str]]:
            changes = Changes(inline_records=True)
            held = _held_anywhere(self.ctx, latest, set(uris))
            doomed = []
            for uri, (table, etag) in uris.items():
                pending = latest.get(PENDING_DELETION, (uri,))
                if uri in held or (pending is not None and pending["transaction"] != tx.id):
                    continue
                if pending is None:
                    changes.put(
                        PENDING_DELETION, (uri,), {"transaction": tx.id, "table": table, "etag": etag}
                    )
                doomed.append(uri)
            return changes, doomed

        try:
            doomed = self.store.commit("DeleteObjectsOnCancel", register)
            failed = self._delete_files(doomed)
        except Exception as e:  # retried by the janitor
            log.warning("deleting the files of aborted transaction %s failed: %s", tx.id, e)
            self._kick_janitor()
            return
        if failed:
            self._kick_janitor()
            return
        for attempt in self._attempts():
            with attempt:
                if not tx.cleaned:
                    self._append({"op": "cleaned", "tx": tx.id}, sync=False)

    def _delete_files(self, uris: list[str]) -> list[str]:
        """Delete files, then drop their pending records; returns those that could not be deleted."""
        done, failed = [], []
        for uri in uris:
            try:
                _delete_file(uri)
                done.append(uri)
            except Exception as e:
                log.warning("could not delete %s (an aborted transaction's file): %s; will retry", uri, e)
                failed.append(uri)

        def forget(latest: Snapshot) -> tuple[Changes, None]:
            changes = Changes(inline_records=True)
            for uri in done:
                if latest.get(PENDING_DELETION, (uri,)) is not None:
                    changes.delete(PENDING_DELETION, (uri,))
            return changes, None

        if done:
            self.store.commit("DeletedObjectsOnCancel", forget)
        return failed

    def sweep(self) -> bool:
        """One pass of the janitor: clean aborted transactions and retry pending deletions; True if
        everything is done."""
        self.refresh()
        now = now_us()
        for tx in [t for t in self._txs.values() if t.on_cancel and t.status is None]:
            if tx.timed_out(now):
                self._expire(tx.id)
        for tx_id in list(self._unclean):
            self._clean(self._txs[tx_id])
        pending = list(self.store.latest().records(PENDING_DELETION))
        if pending:
            self._delete_files([key[0] for key in pending])
        self.refresh()
        return not self._unclean and not self.store.latest().records(PENDING_DELETION)

    def _kick_janitor(self) -> None:
        """Start the janitor thread if there is cleaning to do and none runs."""
        with self._lock:
            if self._janitor is not None and self._janitor.is_alive():
                return
            if self._stopping.is_set():
                return
            if not self._unclean and not self.store.cached().records(PENDING_DELETION):
                return
            self._janitor = threading.Thread(target=self._janitor_loop, name="gluecat-janitor", daemon=True)
            self._janitor.start()

    def _janitor_loop(self) -> None:
        delay = 0.5
        for _ in range(1000):
            try:
                if self.sweep():
                    return
            except Exception as e:
                log.warning("cleaning up after aborted transactions failed: %s; will retry", e)
            if self._stopping.wait(delay):
                return
            delay = min(delay * 2, 60.0)

    def stop(self) -> None:
        """End the janitor: a pass under way is let finish, none starts after (the files still pending
        are deleted by the janitor of the next transaction started, in any process)."""
        self._stopping.set()
        with self._lock:
            janitor = self._janitor
        if janitor is not None:
            janitor.join(timeout=60)


def _matches(wanted: str, state: str) -> bool:
    if wanted == "ALL":
        return True
    if wanted == "COMPLETED":
        return state in (COMMITTED, ABORTED)
    return state == wanted


def _canceled(tx: Transaction) -> TransactionCanceledException:
    why = f" ({tx.reason})" if tx.reason else ""
    view = access.current()
    if tx.reason and tx.reason_table and view is not None and not view.table_visible(*tx.reason_table[:2]):
        # Any caller may use any transaction: the reason names its table only to one who may see it.
        why = f" ({tx.reason.split(':')[0]}, on a table the caller may not see)"
    return TransactionCanceledException(f"Transaction {tx.id} was aborted{why} and cannot be used.")


def _created(table: dict[str, Any] | None) -> int | None:
    return None if table is None else codec.to_micros(table["CreateTime"])


def _held_anywhere(ctx: Context, snap: Snapshot, uris: set[str]) -> set[str]:
    """Those of ``uris`` that some governed table's objects hold at ``snap``."""
    held: set[str] = set()
    for key in snap.segments:
        if len(key) == 3 and key[2] == obj.OBJECTS:
            table = snap.get(TABLE, key[:2])
            if table is not None:
                held.update(obj.view_of(ctx, snap, table).held_locations(uris))
    return held


def _delete_file(uri: str) -> None:
    """Delete a file named by a URI (or a local path); one that is gone already counts as deleted. The
    file is the one gluecat.locations reads the Uri as, which the check of DeleteObjectsOnCancel placed
    in its table's folder: a local path made a file: URI would have its %2E%2E decoded into '..'."""
    fs, path = locations.filesystem(uri)
    with contextlib.suppress(FileNotFoundError):
        fs.delete_file(path)


def _make_id(secret: bytes, tx: Transaction) -> str:
    """A transaction id that carries what its start record says, signed with the warehouse's secret."""
    body = (
        f"{tx.start_version:x}-{tx.start_us:x}-{tx.timeout_us:x}-{'r' if tx.kind == READ_ONLY else 'w'}-"
        f"{secrets.token_hex(6)}"
    )
    return f"{body}-{_mac(secret, body)}"


def _mac(secret: bytes, body: str) -> str:
    return hmac.new(secret, body.encode(), hashlib.sha256).hexdigest()[:16]


def _from_id(secret: bytes, tx_id: str) -> Transaction | None:
    """The transaction an id describes, if this warehouse made it (else None)."""
    body, _, mac = tx_id.rpartition("-")
    if not body or not hmac.compare_digest(mac, _mac(secret, body)):
        return None
    try:
        version, start, timeout, kind, _ = body.split("-")
        return Transaction(
            id=tx_id,
            kind=READ_ONLY if kind == "r" else READ_AND_WRITE,
            start_version=int(version, 16),
            start_us=int(start, 16),
            timeout_us=int(timeout, 16),
            last_us=int(start, 16),
        )
    except ValueError:
        return None


def _conflict(table: Key, message: str) -> ConcurrentModificationException:
    """A transaction's conflict over ``table`` (its database and name), which the commit names only to a
    caller who may see that table (Transactions._finish)."""
    error = ConcurrentModificationException(message)
    error.table = table  # type: ignore[attr-defined]
    return error
