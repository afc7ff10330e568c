"""One commit log: its entries, checkpoints and state, read and published.

A warehouse has a root log (``_gluecat/log``) and, from format 6, a log per table
(``_gluecat/tables/<name>/log``); each is a ``Log``. Version N of a log is published by creating its
``log/N.json`` exclusively; the entry names the files the commit added. Every few commits a checkpoint
folds the log's state into one file, so that opening stays fast however long the log grows.

A table's log may hold markers: entries of commits that the root log decides (``decided_by``). A marker
counts exactly if the root's entry of that version is that commit (gluecat/store/store.py publishes
them); it takes effect at the root entry's time. Catching up stops before a marker still undecided.

Everything read is verified (gluecat.store.log): entries against their own checksum and the chain,
data files and checkpoints against the checksum their names carry. An expiry never frees a log entry's
name: it leaves a stub there, so a process that was behind finds the stub at its next look for a new
version and rebuilds from the newest checkpoint, and a writer that was behind loses its exclusive create.
"""

from __future__ import annotations

import contextlib
import secrets
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from gluecat.errors import StorageError
from gluecat.newest import Newest
from gluecat.store import codec, files, layout, log, placement
from gluecat.store.codec import from_micros, to_micros
from gluecat.store.fs import WarehouseFS
from gluecat.store.snapshot import Key, Link, LogState, Raw, apply, empty
from gluecat.store.turns import Turns

GENESIS_TIME = datetime(1970, 1, 1, tzinfo=UTC)
Resolve = Callable[[log.Decision], tuple[bool | None, datetime | None]]
"""Whether the root log decided a marker (True: it counts, at the returned time; False: it never will;
None: not decided yet)."""


PARSED_KEPT = 64
"""Entries a log keeps as read. They are wanted right after they are read (the few a lost race lost to),
and each may carry inline segments of up to 128 KiB: a process that opens thousands of tables' logs (a
server) must not keep a thousand entries of each."""


TIMES_KEPT = 100_000
"""Versions of the root log whose times a process keeps (for time travel): a server lives through
millions of commits."""
TABLE_TIMES_KEPT = 10_000
"""Versions of a table's log whose times a process keeps: a server keeps thousands of tables' logs
open (store.TABLE_LOGS_KEPT), so the root's 100,000 each would be gigabytes. Time travel to an older
version reads its entry again (a binary search over the log: a few reads)."""
COMMIT_IDS_KEPT = 100_000
"""Versions of a log whose commit ids a process keeps (the root's decide table logs' markers)."""
OLD_STATES_KEPT = 8
"""Older states of a log a process keeps built (time travel asks for a few versions again and again)."""
MARKERS_KEPT = 1024
"""Markers a log keeps the deciding root versions of, of those it read (the newest): every change of a
table the root decides leaves one, and a server reading other processes' commits for months must not
keep each. A cut at a root version older than a marker let go reads the log again (``at_root_cut``)."""


PARSED_BYTES = 1024 * 1024
"""The inline segments and records a log's kept entries may carry together, past the newest entry: a
server keeps up to 2,048 tables' logs open (store.TABLE_LOGS_KEPT), and 64 entries of 128 KiB each
would be 16 GiB between them. An entry let go is read again when wanted."""


def _carried(entry: log.Entry) -> int:
    """About how many bytes of segments and records ``entry`` carries inline."""
    size = 0
    for action in entry.actions:
        if isinstance(action, log.AddSegment) and action.inline is not None:
            size += len(action.inline.data)
        elif isinstance(action, log.InlineRecords):
            size += sum(len(doc or "") for _, _, doc in action.records)
    return size


class Expired(StorageError):
    """History asked for has expired."""


class HistoryExpired(StorageError):
    """A version or time asked for is older than the history the warehouse keeps (expiry removed it):
    the caller's request, not damage, though a StorageError to callers that only tell those apart."""


class OutcomeUnknown(StorageError):
    """A commit's publication failed, and what its name holds could not be learnt. On an object store a
    request given up on may still land, so nothing the entry names may be deleted: a read of the log
    tells whether it is there."""


class Stale(Exception):
    """Catching up met history an expiry removed (a stub, or a file an old entry names): this process
    was behind, and must rebuild from a newer checkpoint. ``reached`` is the state caught up to."""

    def __init__(self, reached: LogState, error: StorageError) -> None:
        super().__init__(str(error))
        self.reached = reached
        self.error = error


@dataclass(frozen=True)
class Applied:
    """What catching up read from one entry: its records and segment changes, for the state."""

    records: list[tuple[str, Key, Any | None]]
    seg_adds: list[tuple[Key, str]]
    seg_removes: list[tuple[Key, str]]
    seg_merges: list[tuple[Key, tuple[str, ...], str]]


def marks_record(root_version: int, action: log.Marks) -> tuple[str, Key, Any]:
    """The root's record of the newest marker it committed in a table's log."""
    return (placement.MARKS, action.table, {"root": root_version, "version": action.version})


class Log:
    """One log of a warehouse, as one process reads and writes it; safe to share between threads.

    ``resolve`` decides markers (table logs); the root log has none. ``read_data`` reads a data file
    the log's entries name (verified; FileNotFoundError if it is missing)."""

    def __init__(
        self,
        fs: WarehouseFS,
        where: layout.LogLayout,
        read_data: Callable[[str], bytes],
        *,
        checkpoint_interval: int = 100,
        resolve: Resolve | None = None,
        root: bool = False,
    ) -> None:
        self.fs = fs
        self.where = where
        self.read_data = read_data
        self.checkpoint_interval = checkpoint_interval
        self.resolve = resolve
        self.root = root
        self.secret = b""
        """The warehouse's own random key (root log only; signs continuation tokens)."""
        self._refresh_lock = threading.Lock()
        self._entry_times: Newest[int, datetime] = Newest(TIMES_KEPT if root else TABLE_TIMES_KEPT)
        """Times of recent versions (TIMES_KEPT of the root's, TABLE_TIMES_KEPT of a table's)."""
        self._commit_ids: Newest[int, str] = Newest(COMMIT_IDS_KEPT)
        """Commit ids of recent versions (the root's: what decides table logs' markers)."""
        self._markers: dict[int, int] = {}
        """Deciding root version by version of the committed markers this process applied (the newest
        MARKERS_KEPT of them): every one after the checkpoint the newest state was built from, and
        some older ones time travel applied."""
        self._markers_let_go = -1
        """The newest deciding root version of the markers not in ``_markers``: those let go, and those
        inside the checkpoint the newest state was built from."""
        self._pending: tuple[int, log.Decision] | None = None
        self._old_states: Newest[int, LogState] = Newest(OLD_STATES_KEPT)
        self._parsed: OrderedDict[int, tuple[log.Entry, int]] = OrderedDict()
        """Entries read lately, as read (PARSED_KEPT of them), with what each carries inline: a writer
        that lost its version checks the entries it lost to, and its views read their inline segments,
        right after catching up read them."""
        self._parsed_bytes = 0
        """What the kept entries carry inline (``_carried``), at most PARSED_BYTES past the newest."""
        self._parsed_lock = threading.Lock()
        self._old_states_lock = threading.Lock()
        self._looked = 0.0
        """When this process last looked for others' entries, or published one (time.monotonic)."""
        self.turns = Turns()
        """This process's knowledge of the log's other writers, for taking turns on an object store."""
        self._state = self._open()

    def __repr__(self) -> str:
        return f"Log({self.fs.uri(self.where.base)!r})"

    # -- reading -------------------------------------------------------------------------------

    @property
    def pending(self) -> log.Decision | None:
        """The marker right after the newest state that was still undecided when last read (table
        logs); None once that state has moved on (this process's own commit after the marker's
        decision, say)."""
        found = self._pending
        return found[1] if found is not None and found[0] == self._state.version + 1 else None

    @property
    def state(self) -> LogState:
        """The newest state this process knows of, without looking for other processes' commits."""
        return self._state

    def latest(self) -> LogState:
        """The newest committed state, including other processes' commits made up to now (one look:
        a stat of the next entry's name, or one listing after it on an object store)."""
        state = self._state
        self._looked = time.monotonic()
        if self.fs.listing_is_cheap:
            names = self.fs.list_after(self.where.log_dir, f"{state.version:020d}.json")
            names = [n for n in names if layout.parse_log_name(n) is not None]
            if not names:
                return state
        else:
            names = None
            if not self.fs.exists(self.where.log_path(state.version + 1)):
                return state
        with self._refresh_lock:
            state = self._refresh(self._state, names)  # the listing is read, not made again
            self._state = state
            return state

    def seen(self, within: float) -> LogState | None:
        """The newest state this process knows of if it looked at the log within ``within`` seconds
        (or committed to it), else None."""
        return self._state if time.monotonic() - self._looked < within else None

    def recent(self, within: float) -> LogState:
        """``seen``, else ``latest``: what a commit may be built on, since its publication fails if the
        log has moved on (and then it reads what did)."""
        seen = self.seen(within)
        return self.latest() if seen is None else seen

    def _refresh(self, state: LogState, listed: list[str] | None = None) -> LogState:
        """``state`` caught up with the log (starting from ``listed``, names of its entries listed after
        an older state, where given); past an expiry this process missed, from the newest checkpoint."""
        for _ in range(20):
            try:
                return self._catch_up(state, listed=listed)
            except Stale as stale:
                listed = None
                cps = self.checkpoints()
                if not cps or cps[-1][0] <= stale.reached.version:
                    raise stale.error from None
                try:
                    state = self._newest_from(self.load_checkpoint(*cps[-1]))
                except FileNotFoundError:
                    continue  # expired by a newer expiry meanwhile: look again
        raise StorageError(f"{self.fs.uri(self.where.log_dir)}: could not catch up with concurrent expiries")

    def adopt(self, state: LogState) -> None:
        """Take ``state`` (this process's own commit, applied to the state it was built on) as the
        newest, unless a newer one is known already."""
        with self._refresh_lock:
            self._looked = time.monotonic()
            if self._state.version < state.version:
                self._state = state

    def _newest_from(self, checkpoint: LogState) -> LogState:
        """``checkpoint``, as what the newest state is built from: the markers inside it are not in
        ``_markers``, so a cut at a root version older than one of them reads the log."""
        self._markers_let_go = max(self._markers_let_go, checkpoint.decided)
        return checkpoint

    def at_version(self, version: int) -> LogState:
        """The state right after commit ``version`` (for time travel); the empty state before a table
        log's first entry."""
        latest = self.latest()
        if version >= latest.version:
            return latest
        if version < 0:
            return empty(GENESIS_TIME, -1)
        with self._old_states_lock:
            found = self._old_states.touch(version)
            if found is not None:
                return found
        base = self._base_for(version)
        try:
            state = self._catch_up(base, upto=version)
        except Stale as stale:
            raise HistoryExpired(
                f"version {version} is older than the retained history ({stale.error})"
            ) from stale.error
        if state.version != version:
            raise StorageError(
                f"{self.fs.uri(self.where.log_path(state.version + 1))}: missing (version {version} was asked for)"
            )
        with self._old_states_lock:
            self._old_states[version] = state
        return state

    def at_root_cut(self, root_version: int) -> LogState:
        """A table log's latest state without the markers the root decided after ``root_version`` (and
        what came after the first of them): the table as it was when the root was at that version."""
        latest = self.latest()
        if latest.decided <= root_version:
            return latest
        later = [v for v, decided in list(self._markers.items()) if decided > root_version]
        if not later or root_version < self._markers_let_go:
            # Decided before this process's checkpoint, or among the markers it let go: read the log again.
            later = [v for v, decided in self._scan_markers(latest.version) if decided > root_version]
        return self.at_version(min(later) - 1) if later else latest

    def _scan_markers(self, upto: int) -> list[tuple[int, int]]:
        out = []
        for entry in self.entries(-1, upto):
            if entry.decided_by is not None:
                committed, _ = self._decide(entry.decided_by)
                if committed:
                    out.append((entry.version, entry.decided_by.version))
        return out

    def as_of(self, when: datetime) -> LogState:
        """The state after the last commit that took effect at or before ``when`` (a marker takes
        effect when the root decided it). The caller waits for commits still settling."""
        latest = self.latest()
        if when >= latest.timestamp:
            return latest
        lo, hi = self.oldest_version(), latest.version
        if lo > hi:
            return empty(GENESIS_TIME, -1)
        if self.entry_time(lo) > when:
            if lo > 0:  # the log's beginning expired (before format 4 expiry deleted entries)
                raise HistoryExpired(
                    f"{when.isoformat()} is older than the retained history of {self.fs.uri(self.where.base)}"
                )
            return empty(GENESIS_TIME) if self.root else empty(GENESIS_TIME, -1)
        # Commit times never decrease along a log, so the version is found by bisection.
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self.entry_time(mid) <= when:
                lo = mid
            else:
                hi = mid - 1
        return self.at_version(lo)

    def entries(self, after: int, upto: int) -> Iterator[log.Entry]:
        """The published entries after version ``after`` up to ``upto``, oldest first and read as they
        are reached. An expired entry is its stub (``expired`` set, no actions)."""
        return (self.read_entry(version) for version in range(after + 1, upto + 1))

    def read_entry(self, version: int, *, fresh: bool = False) -> log.Entry:
        """Entry ``version`` (as read lately, unless ``fresh``: an expiry may have put a stub in its
        place since)."""
        if not fresh:
            found = self._kept(version)
            if found is not None:
                return found
        entry = log.read(self.fs.read_bytes, self.fs.uri, version, self.where)
        self.keep(entry)
        return entry

    def _kept(self, version: int) -> log.Entry | None:
        with self._parsed_lock:
            found = self._parsed.get(version)
        return found[0] if found is not None else None

    def keep(self, entry: log.Entry) -> None:
        """Remember ``entry`` as read (or, for an expiry, as just written in its version's place)."""
        carried = _carried(entry)
        with self._parsed_lock:
            old = self._parsed.pop(entry.version, None)
            if old is not None:
                self._parsed_bytes -= old[1]
            self._parsed[entry.version] = (entry, carried)
            self._parsed_bytes += carried
            while len(self._parsed) > PARSED_KEPT or (
                self._parsed_bytes > PARSED_BYTES and len(self._parsed) > 1
            ):
                _, (_, gone) = self._parsed.popitem(last=False)
                self._parsed_bytes -= gone

    def commit_id(self, version: int) -> str:
        """The commit id of entry ``version`` (a stub keeps it)."""
        found = self._commit_ids.get(version)
        if found is None:
            found = self.read_entry(version).commit_id
            self._remember(version, found)
        return found

    def _remember(self, version: int, commit_id: str) -> None:
        self._commit_ids[version] = commit_id

    def _remember_time(self, version: int, ts: datetime) -> None:
        self._entry_times[version] = ts

    def entry_time(self, version: int) -> datetime:
        """When a commit took effect: its entry's time, or for a marker its root decision's."""
        ts = self._entry_times.get(version)
        if ts is None:
            try:
                entry = self.read_entry(version)
                ts = from_micros(entry.timestamp_us)
                if entry.decided_by is not None:
                    committed, when = self._decide(entry.decided_by)
                    if committed and when is not None:
                        ts = when
            except StorageError:
                # Deleted by an expiry before format 4: a checkpoint of that version knows its time.
                found = [path for v, path in self.checkpoints() if v == version]
                if not found:
                    raise
                ts = from_micros(self.checkpoint_meta(found[0])[0])
            self._remember_time(version, ts)
        return ts

    def _decide(self, decision: log.Decision) -> tuple[bool | None, datetime | None]:
        if self.resolve is None:
            raise StorageError(f"{self.fs.uri(self.where.log_dir)}: a marker in a log that has no root")
        return self.resolve(decision)

    def _catch_up(
        self, state: LogState, upto: int | None = None, *, listed: list[str] | None = None
    ) -> LogState:
        """Apply every published entry after ``state`` (up to ``upto``; without, up to the end as first
        listed); Stale past an expiry. Stops before a marker the root has not decided (``pending``,
        when catching up to the end)."""
        while upto is None or state.version < upto:
            batch, top = self._next_entries(state.version, upto, listed)
            listed = None
            if not batch:
                break
            if upto is None:
                # Entries listed later were published after this look began: chasing them, a process
                # that fell behind a busy log would read on for as long as others kept writing it.
                upto = top
            for version, data in batch:
                name = self.fs.uri(self.where.log_path(version))
                entry = log.parse(data, name, version, state.link, self.where)
                self.keep(entry)
                if entry.expired is not None:
                    raise Stale(
                        state,
                        StorageError(
                            f"{name}: version {version} has expired (its history was folded into checkpoint "
                            f"{self.fs.uri(self.where.checkpoint_path(entry.expired))} or a later one)"
                        ),
                    )
                applied = self._apply_entry(state, entry)
                if applied is None:
                    return state  # an undecided marker: the state ends before it
                state = applied
        return state

    def peek(self) -> bool:
        """Whether another process has published the version after the newest this process knows of,
        read directly (one request) and applied if so (Turns.wait)."""
        self._looked = time.monotonic()
        return self._take_next(self._state, missing_ok=True) is not None

    def taken(self, state: LogState) -> LogState:
        """``state`` with the entry that took its next version applied, read directly (one GET: a lost
        publication says it is there, so no listing is needed to find it); the rest of the log is left
        to the next lost publication or look. ``state`` itself if that entry is a marker the root has
        not decided (``pending``)."""
        found = self._take_next(state, missing_ok=False)
        assert found is not None
        return found

    def _take_next(self, state: LogState, *, missing_ok: bool) -> LogState | None:
        version = state.version + 1
        with self._refresh_lock:
            if self._state.version > state.version and self._state.version == version:
                return self._state  # this process read it already
            name = self.where.log_path(version)
            kept = self._kept(version)
            if kept is not None and (not state.link.chain or kept.prev == state.link.chain):
                entry = kept  # read just now, to see whose it is (Log.publish)
            else:
                try:
                    data = self.fs.read_bytes(name)
                except FileNotFoundError:
                    if missing_ok:
                        return None
                    return self._refresh(state)  # an expiry's stub is being written in its place
                entry = log.parse(data, self.fs.uri(name), version, state.link, self.where)
                self.keep(entry)
            if entry.expired is not None:
                return self._refresh(state)
            applied = self._apply_entry(state, entry)
            if applied is None:
                return state
            if self._state.version < applied.version:
                self._state = applied
            return applied

    def _next_entries(
        self, version: int, upto: int | None, listed: list[str] | None = None
    ) -> tuple[list[tuple[int, bytes]], int | None]:
        """The next published entries after ``version`` (up to ``upto``) as bytes, and the newest version
        listed (None where nothing was listed): on an object store up to 256 of them, listed once (or
        taken from ``listed``, a listing made after an older version) and read at once; on a disk, one."""
        if not self.fs.listing_is_cheap:
            try:
                return [(version + 1, self.fs.read_bytes(self.where.log_path(version + 1)))], None
            except FileNotFoundError:
                return [], None
        names = self.fs.list_after(self.where.log_dir, f"{version:020d}.json") if listed is None else listed
        versions: list[int] = []
        for n in names:
            v = layout.parse_log_name(n)
            if v is None or v <= version:
                continue
            if v != version + 1 + len(versions) or (upto is not None and v > upto):
                break  # a gap (found by the reader of the next look) or past what was asked
            versions.append(v)
        found = self.fs.read_many([self.where.log_path(v) for v in versions[:256]])
        out = []
        for v, data in zip(versions, found, strict=False):
            if data is None:
                break
            out.append((v, data))
        return out, versions[-1] if versions else None

    def _apply_entry(self, state: LogState, entry: log.Entry) -> LogState | None:
        timestamp = from_micros(entry.timestamp_us)
        decided = None
        if entry.decided_by is not None:
            committed, when = self._decide(entry.decided_by)
            if committed is None:
                self._pending = (entry.version, entry.decided_by)
                return None
            if not committed:
                # An aborted marker: a place in the log and the chain, and nothing else.
                self._remember_time(entry.version, timestamp)
                return apply(
                    state, entry.version, max(timestamp, state.timestamp), [], [], [], (), entry.link
                )
            timestamp, decided = when or timestamp, entry.decided_by.version
            self._markers[entry.version] = decided
            if len(self._markers) > 2 * MARKERS_KEPT:
                for version in sorted(self._markers)[:-MARKERS_KEPT]:
                    self._markers_let_go = max(self._markers_let_go, self._markers.pop(version))
        got = self.read_actions(state, entry)
        self._remember_time(entry.version, timestamp)
        if self.root:
            self._remember(entry.version, entry.commit_id)
        return apply(
            state,
            entry.version,
            timestamp,
            got.records,
            got.seg_adds,
            got.seg_removes,
            got.seg_merges,
            entry.link,
            decided,
        )

    def read_actions(self, state: LogState, entry: log.Entry) -> Applied:
        """What an entry changes, read (a record file it names, too)."""
        records: list[tuple[str, Key, Any | None]] = []
        out = Applied(records, [], [], [])
        name = self.fs.uri(self.where.log_path(entry.version))
        for action in entry.actions:
            if isinstance(action, log.AddRecords):
                try:
                    data = self.read_data(action.path)
                except FileNotFoundError as e:
                    # An expiry that ran since this entry was read may have deleted it: then a newer
                    # checkpoint holds the state, and the caller rebuilds from it.
                    missing = StorageError(f"{name} names {self.fs.uri(action.path)}, which is missing")
                    raise Stale(state, missing) from e
                records.extend(files.read_records(data, self.fs.uri(action.path)))
            elif isinstance(action, log.AddSegment):
                out.seg_adds.append((action.table, action.path))
            elif isinstance(action, log.RemoveSegment):
                out.seg_removes.append((action.table, action.path))
            elif isinstance(action, log.MergeSegments):
                out.seg_merges.append((action.table, action.run, action.into))
            elif isinstance(action, log.InlineRecords):
                records.extend(
                    (kind, key, None if doc is None else Raw(doc, name)) for kind, key, doc in action.records
                )
            elif isinstance(action, log.Marks):
                records.append(marks_record(entry.version, action))
            elif isinstance(action, log.CommitTransaction):
                pass  # it names the transaction the other actions of the entry are; it changes nothing
            else:
                raise StorageError(f"{name}: this store does not apply {type(action).__name__} actions")
        return out

    # -- checkpoints ---------------------------------------------------------------------------

    def checkpoints(self) -> list[tuple[int, str]]:
        """The checkpoints' versions and paths, oldest first."""
        found = []
        for name in self.fs.list_names(self.where.checkpoint_dir):
            if layout.is_temporary(name):
                continue
            parsed = layout.parse_checkpoint_name(name)
            if parsed is None:
                raise StorageError(
                    f"{self.fs.uri(self.where.checkpoint_dir + '/' + name)}: a foreign file among the checkpoints"
                )
            found.append((parsed[0], f"{self.where.checkpoint_dir}/{name}"))
        return sorted(found)

    def checkpoint_versions(self) -> list[int]:
        return sorted({v for v, _ in self.checkpoints()})

    def oldest_version(self) -> int:
        """The oldest version whose state can be rebuilt (the log's first, or its oldest checkpoint's)."""
        first = 0
        if self.fs.exists(self.where.log_path(first)):
            return first
        cps = self.checkpoint_versions()
        return cps[0] if cps else 0

    def _base_for(self, version: int) -> LogState:
        """The best starting point for rebuilding ``version``: a checkpoint at or before it, or the
        log's beginning."""
        cps = [(v, path) for v, path in self.checkpoints() if v <= version]
        if cps:
            try:
                return self.load_checkpoint(*cps[-1])
            except FileNotFoundError as e:
                raise StorageError(f"{self.fs.uri(cps[-1][1])}: expired while it was read") from e
        if not self.fs.exists(self.where.log_path(0)):
            raise HistoryExpired(
                f"{self.fs.uri(self.where.log_dir)}: version {version} is older than the retained history"
            )
        if not self.root:
            return empty(GENESIS_TIME, -1)
        try:
            return self._genesis()
        except Expired as e:
            raise HistoryExpired(f"{e}: version {version} is older than the retained history") from None

    def _genesis(self) -> LogState:
        genesis = self.read_entry(0)
        if genesis.expired is not None:
            raise Expired(
                f"{self.fs.uri(self.where.log_path(0))}: the log's beginning has expired, and no checkpoint holds its state"
            )
        self.secret = bytes.fromhex(genesis.secret or "")
        state = self._apply_entry(empty(GENESIS_TIME), genesis)
        assert state is not None
        return state

    def _open(self) -> LogState:
        seen: list[tuple[int, str]] | None = None
        failure = StorageError(f"{self.fs.uri(self.where.log_dir)}: could not be read")
        for attempt in range(20):
            cps = self.checkpoints()
            # Listed first, so that an entry beyond where catching up stops is a gap, not a newer commit.
            if self.fs.listing_is_cheap:
                after = f"{cps[-1][0]:020d}.json" if cps else ""
                top = layout.newest_log_version(self.fs.list_after(self.where.log_dir, after))
            else:
                top = layout.newest_log_version(self.fs.list_names(self.where.log_dir))
            if attempt and cps == seen:
                raise failure
            seen = cps
            try:
                if cps:
                    state = self._catch_up(self._newest_from(self.load_checkpoint(*cps[-1])))
                elif self.root:
                    if not self.fs.exists(self.where.log_path(0)):
                        self._initialize()
                    state = self._catch_up(self._genesis())
                else:
                    state = self._catch_up(empty(GENESIS_TIME, -1))
            except (Stale, FileNotFoundError) as e:
                # An expiry may have written a newer checkpoint (and stubs) since we listed: list again,
                # and if the checkpoints are as they were, the log is damaged.
                failure = e.error if isinstance(e, Stale) else StorageError(f"{self.fs.uri(cps[-1][1])}: {e}")
                continue
            waiting = self._pending is not None and self._pending[0] == state.version + 1
            if top > state.version and not waiting:
                raise StorageError(
                    f"{self.fs.uri(self.where.log_path(state.version + 1))}: missing, while the log goes on "
                    f"to version {top}: a gap in the log (damage); the warehouse is not opened at an older version"
                )
            return state
        raise failure

    def _initialize(self) -> None:
        """Start a warehouse's root log: version 0, with its secret and how it keeps its tables."""
        names = [n for n in self.fs.list_names(self.where.log_dir) if not layout.is_temporary(n)]
        if self.where.log_path(0).rsplit("/", 1)[-1] in names:
            return  # a concurrent opener started the log (and may have committed more) since we looked
        if names:
            raise StorageError(
                f"{self.fs.uri(self.where.log_dir + '/' + names[0])}: the log has entries but no version 0 "
                "and no checkpoint; refusing to start a new history over it"
            )
        for d in (self.where.log_dir, layout.DATA_DIR, self.where.checkpoint_dir):
            self.fs.mkdirs(d)
        genesis = log.Entry(
            version=0,
            commit_id=uuid.uuid4().hex,
            timestamp_us=to_micros(datetime.now(UTC)),
            operation="CreateWarehouse",
            secret=secrets.token_hex(32),
            actions=(
                log.InlineRecords(
                    ((placement.LAYOUT, placement.LAYOUT_KEY, codec.dumps(placement.SHARDED)),)
                ),
            ),
        )
        self.fs.publish(self.where.log_path(0), log.encode(genesis)[0])  # a concurrent creator may win

    def checkpoint_meta(self, path: str, data: bytes | None = None) -> tuple[int, dict[str, str]]:
        """A checkpoint's time and metadata, checked against its name (the footer only, unless given
        the file's bytes, which are then verified against the checksum its name carries)."""
        uri = self.fs.uri(path)
        parsed = layout.parse_checkpoint_name(path.rsplit("/", 1)[-1])
        if data is None:
            md = files.file_metadata(self.fs.read_bytes(path), uri)
        else:
            log.verify_named(data, path, uri)
            md = files.file_metadata(data, uri)
        version = parsed[0] if parsed else -1
        when = md.get("gluecat.timestamp_us", "")
        if md.get("gluecat.checkpoint_version") != str(version) or not (when.isascii() and when.isdigit()):
            raise StorageError(f"{uri}: not a gluecat checkpoint of version {version}")
        if parsed is not None and parsed[1] is not None and "gluecat.chain" not in md:
            raise StorageError(f"{uri}: damaged: a checkpoint of format 4 without its place in the log")
        return int(when), md

    def load_checkpoint(self, version: int, path: str) -> LogState:
        """The state a checkpoint holds, verified (FileNotFoundError if an expiry removed it meanwhile)."""
        uri = self.fs.uri(path)
        data = self.fs.read_bytes(path)
        when, md = self.checkpoint_meta(path, data)
        meta: dict[str, dict[Key, Any]] = {}
        segments: dict[Key, list[str]] = {}
        for kind, key, doc in files.read_records(data, uri):
            if kind == files.SEGMENT_KIND:
                segments.setdefault(key[:-1], []).append(key[-1])
            else:
                meta.setdefault(kind, {})[key] = doc
        timestamp = from_micros(when)
        self._remember_time(version, timestamp)
        if self.root:
            try:
                self.secret = bytes.fromhex(md.get("gluecat.secret", ""))
            except ValueError as e:
                raise StorageError(f"{uri}: not a gluecat checkpoint (its secret is not hex)") from e
        if "gluecat.chain" in md:
            link = Link(md["gluecat.chain"], md.get("gluecat.strict") == "1")
        else:
            link = self._legacy_link(version)
        decided = md.get("gluecat.decided", "-1")
        return LogState(
            version=version,
            timestamp=timestamp,
            meta=meta,
            segments={k: tuple(v) for k, v in segments.items()},
            link=link,
            decided=int(decided) if decided.lstrip("-").isdigit() else -1,
        )

    def _legacy_link(self, version: int) -> Link:
        """The link of a version whose checkpoint predates format 4: from its entry, if still there."""
        try:
            data = self.fs.read_bytes(self.where.log_path(version))
        except FileNotFoundError:
            return Link()
        return log.parse(data, self.fs.uri(self.where.log_path(version)), version, where=self.where).link

    def write_checkpoint(self, state: LogState) -> None:
        rows: list[tuple[str, Key, Any | None]] = [
            (kind, key, doc) for kind, recs in state.meta.items() for key, doc in recs.items()
        ]
        rows.extend(
            (files.SEGMENT_KIND, (*table, path), None)
            for table, paths in state.segments.items()
            for path in paths
        )
        metadata = {
            "gluecat.checkpoint_version": str(state.version),
            "gluecat.timestamp_us": str(to_micros(state.timestamp)),
            "gluecat.chain": state.link.chain,
            "gluecat.strict": "1" if state.link.strict else "0",
        }
        if self.root:
            metadata["gluecat.secret"] = self.secret.hex()
        else:
            metadata["gluecat.decided"] = str(state.decided)
        data = files.to_parquet_bytes(files.record_table(rows), metadata)
        # Its name carries its checksum, so no flip inside it can make it pass for an older format's.
        self.fs.mkdirs(self.where.checkpoint_dir)
        self.fs.publish(self.where.checkpoint_path(state.version, log.checksum(data)), data)

    def checkpoint(self) -> int:
        """Write a checkpoint of the latest state now (unless there is one of it); its version."""
        state = self.latest()
        if state.version >= 0 and not any(v == state.version for v, _ in self.checkpoints()):
            self.write_checkpoint(state)
        return state.version

    # -- publishing ----------------------------------------------------------------------------

    def gap_after(self, version: int) -> bool:
        """Whether entry ``version + 1`` exists: a lost race if ``version`` does too, else a gap (an
        entry deleted from the middle of the log), which is damage."""
        if not self.fs.exists(self.where.log_path(version + 1)):
            return False
        if not self.fs.exists(self.where.log_path(version)):
            raise StorageError(
                f"{self.fs.uri(self.where.log_path(version))}: missing, while version {version + 1} exists: "
                "a gap in the log (damage); nothing is committed over it"
            )
        return True

    def queue(self) -> contextlib.AbstractContextManager[bool]:
        """This machine's writers of this log, one at a time (WarehouseFS.queued): a writer that holds
        its turn while it catches up and publishes again after a lost race is not overtaken again."""
        return self.fs.queued(self.where.base)

    def publish(self, version: int, data: bytes, commit_id: str, *, queued: bool = False) -> bool:
        """Whether the entry is now version ``version``: False if another commit's is (a lost race);
        StorageError if there is none (the file system refused the write: retrying would not help);
        OutcomeUnknown if which it is could not be learnt.

        A name found taken is read back: a retried conditional write whose first attempt landed finds
        its own entry there, which is this commit, not a lost race."""
        name = self.where.log_path(version)
        try:
            if version == 0 or not self.fs.local:
                self.fs.mkdirs(self.where.log_dir)
            with contextlib.nullcontext(True) if queued else self.queue() as turn:
                # This machine's writers take turns: one that would lose finds the name taken before it
                # writes and syncs its entry (two writers of one table lost a third of their syncs).
                if turn and self.fs.exists(name):
                    return False
                if self.fs.publish(name, data):
                    return True
        except OSError as e:
            return self._outcome(name, version, commit_id, e, data)
        return self._outcome(name, version, commit_id, None, data)

    def _read_ahead(self, version: int) -> bytes:
        """Entry ``version``'s bytes, that took this process's publication, read at once with the next
        ``turns.ahead`` versions (kept, for ``caught_up``): on an object store a process committing
        back to back publishes one a round trip, so a loser that read only the one it lost to would
        publish behind it again and again (gluecat/store/turns.py). A table's log only: a root commit
        that lost lists the log again."""
        last = version + self.turns.ahead
        found = self.fs.read_many([self.where.log_path(v) for v in range(version, last + 1)])
        if found[0] is None:
            raise FileNotFoundError(self.where.log_path(version))
        kept = 0
        for v, data in enumerate(found[1:], version + 1):
            if data is None:
                break
            try:
                self.keep(log.parse(data, self.fs.uri(self.where.log_path(v)), v, where=self.where))
            except StorageError:
                break  # read again, and reported, where it is needed
            kept += 1
        self.turns.read_ahead(kept)
        return found[0]

    def caught_up(self, state: LogState) -> LogState:
        """``state`` with the entries after it that this process has read already applied (no request):
        after a lost race, those read ahead (``_read_ahead``)."""
        while (kept := self._kept(state.version + 1)) is not None and (
            not state.link.chain or kept.prev == state.link.chain
        ):
            newer = self.taken(state)
            if newer.version == state.version:
                break  # a marker the root has not decided
            state = newer
        return state

    def _outcome(self, name: str, version: int, commit_id: str, error: OSError | None, entry: bytes) -> bool:
        # The create may or may not have happened: look, never guess. On an object store the client
        # has retried each request already, so a few failed requests mean the store is unreachable.
        failed: OSError | None = error
        failures = 0
        for attempt in range(10):
            try:
                if attempt == 0 and error is None and self.fs.takes_turns and not self.root:
                    data = self._read_ahead(version)
                else:
                    data = self.fs.read_bytes(name)
            except FileNotFoundError as e:
                if error is None:
                    continue  # taken, then gone: an expiry's stub is being written; look again
                if not self.fs.requests_may_land_late:  # a call that failed did nothing
                    raise StorageError(
                        f"{self.fs.uri(name)}: the commit's log entry could not be written ({error})"
                    ) from e
                # A request given up on may land yet: create the name again, so that it is settled
                # now (a late request then finds it taken), and read whose it is if it was taken.
                try:
                    if self.fs.publish(name, entry):
                        return True
                    error = None
                except OSError as again:
                    error = failed = again
                    failures += 1
                    if failures == 3:
                        break
                continue
            except OSError as e:
                failed = e
                failures += 1
                if self.fs.requests_may_land_late and failures == 3:
                    break
                time.sleep(0.05)
                continue
            found = log.parse(data, self.fs.uri(name), version, where=self.where)
            if found.commit_id != commit_id:
                self.keep(found)  # what won: catching up reads it from here
            return found.commit_id == commit_id
        if self.fs.requests_may_land_late:
            raise OutcomeUnknown(
                f"{self.fs.uri(name)}: whether this log entry was written is not known "
                f"({failed or 'it could not be read back'}); nothing it names was deleted, and a read "
                "of the log tells whether it is there"
            )
        if error is not None:
            raise error
        raise StorageError(f"{self.fs.uri(name)}: could not be read back after a lost race")
