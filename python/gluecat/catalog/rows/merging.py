"""Merging a row set's segments.

Every write adds one small segment, so segments are merged as they accumulate, by size tier as LSM
trees do: the newest run of ``MERGE_WIDTH`` becomes one, keeping deletions (which may cancel rows of
older segments), whenever the run's oldest holds at most twice the mean of the rest, so segments of
about one size are merged together and the result may complete the next tier. A table keeps at most
about twenty segments at a million partitions, and each row is rewritten about 4.5 times (merging
whenever the oldest held at most twice the *sum* of the rest rewrote each row about 8 times). Writes of
a few rows wait for more (``MIN_MERGE_ROWS``), so up to MAX_RUN - 1 small segments come on top.
``Merger.compact`` merges all segments into a single base with no deletions, in the order its caller
gives (by identity otherwise), in row groups with Parquet statistics.

Merges run on a background thread of the writing process (``Merger.after_write``), so writers do not
wait for them. A merge writes its file first and then commits a short ``merge_segments`` action that
puts the merged segment in the place of its run: segments other writers added meanwhile stay newer
than it.

Of several processes writing one table, the one that wrote a run's oldest segment merges the run: each
would otherwise read and write every merge, only for one of the two commits to find its run gone. (Not
the newest: a run grows by every segment written, so its newest changes hands, while its oldest stays.)
A process leaves a run only to a writer it saw at work: the run's oldest segment came while it wrote the
table, and not DUTY_SECONDS ago. Runs it found when it began (a job's one write to a table) are anyone's.

A merged segment records the segments it replaces in its Parquet metadata (``gluecat.replaces``), so a
reader whose folded view already covers them swaps names instead of rebuilding.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable

import pyarrow as pa
import pyarrow.compute as pc

from gluecat.catalog.background import stop_at_exit
from gluecat.catalog.rows.segments import (
    dedupe_last,
    distinct_identities,
    latest_by_identity,
    segment_schema,
    sort_by_identity,
)
from gluecat.errors import GlueError
from gluecat.newest import Newest
from gluecat.store import placement
from gluecat.store.conflicts import Reads
from gluecat.store.logs import OutcomeUnknown
from gluecat.store.snapshot import Changes, Key, Snapshot, run_at
from gluecat.store.store import Store

OPERATION = "CompactPartitions"
"""The operation name of merge commits: they rewrite segments but never change which rows exist."""
MERGE_WIDTH = 8
MAX_SEGMENTS = 128  # past this, merge the newest MERGE_WIDTH whatever their sizes
MAX_CASCADE = 8  # merges one write may trigger: 8 tiers of 8 cover 16M one-row writes (Glue allows 10M)
MAX_RUN = 4 * MERGE_WIDTH
MIN_MERGE_ROWS = 256
"""A run of fewer rows waits for more writes (up to MAX_RUN segments): a merge costs a file and a commit,
both synced, whatever its rows, while a few rows are cheap to read from the log entries that carry them.
Writes of a few rows each (a transaction of ten objects, a partition added at a time) merge a quarter
as often."""
BACKLOG = MAX_SEGMENTS // 2
"""Past this many segments a writer merges itself instead of leaving it to the background (a table at
10M partitions holds up to about 40 in its tiers, and up to 31 small segments besides)."""
DUTY_SECONDS = 1.0
"""How long a process leaves a run it did not start to the process that did (see the docstring)."""
IDLE_SECONDS = 2.0  # a store's merge thread ends after this long without work

MET_KEPT = 1024  # row sets a process remembers writing (Merger.met): a server writes to thousands
Order = Callable[[pa.Table], pa.Table]
"""How a compaction orders a row set's rows (e.g. by the typed keys of its first partition index)."""

log = logging.getLogger(__name__)


def key_count(rows: pa.Table) -> int:
    """How many partition values the rows of a segment carry (its p0..pN-1 columns)."""
    return sum(1 for name in rows.column_names if name[:1] == "p" and name[1:].isdigit())


def merged_rows(store: Store, paths: tuple[str, ...], *, keep_deletions: bool) -> pa.Table:
    """The rows of the segments ``paths`` as one segment: the newest row of each identity, deletions
    kept if ``keep_deletions`` (they may cancel rows of older segments)."""
    tables = store.read_segments(list(paths), cache=False)
    schema = segment_schema(key_count(tables[0]))
    rows = pa.concat_tables([t.select(schema.names) for t in tables])
    if distinct_identities(rows) and (keep_deletions or not pc.any(rows.column("_tomb")).as_py()):
        # Already one row an identity, as a merge keeps: the run's order can stay (readers sort as they
        # fold), which spares copying every row (a third of a 100,000-row merge).
        return rows
    if keep_deletions:
        return latest_by_identity(rows, keep_deletions=True)
    return dedupe_last(rows)


def run_to_merge(store: Store, segments: tuple[str, ...]) -> tuple[str, ...]:
    """The newest run of at least MERGE_WIDTH segments of one size tier: the run's oldest (normally its
    largest) holds at most twice the mean of the others, so a big segment is rewritten only when as many
    rows as it holds have gathered behind it in segments of its size. A run of fewer than MIN_MERGE_ROWS
    rows waits until it is MAX_RUN segments long. Past MAX_SEGMENTS, the newest MERGE_WIDTH."""
    if len(segments) < MERGE_WIDTH:
        return ()
    if len(segments) > MAX_SEGMENTS:
        return segments[-MERGE_WIDTH:]
    rows = [store.segment_footer(p)[0] for p in segments]
    for at in range(len(segments) - MERGE_WIDTH, -1, -1):
        run = rows[at : at + MERGE_WIDTH]
        if run[0] * (MERGE_WIDTH - 1) <= 2 * sum(run[1:]):
            # Writes that outpaced the merging leave more than a run's worth of the tier: take the older
            # ones of it too, or they would be stranded between bigger segments and merged too often.
            total, end = sum(run), at + MERGE_WIDTH
            while at > 0 and end - at < MAX_RUN and rows[at - 1] * (end - at) <= 2 * total:
                at -= 1
                total += rows[at]
            if total < MIN_MERGE_ROWS and end - at < MAX_RUN:
                return ()
            return segments[at:end]
    return ()


def merge(
    store: Store,
    key: Key,
    *,
    whole: bool,
    order: Order | None = None,
    may: Callable[[tuple[str, ...]], bool] | None = None,
) -> bool:
    """Merge a row set's segments (all, or a run of MERGE_WIDTH of one size); False if there was
    nothing to do or the segments changed under the merge. ``order`` orders a whole merge's rows;
    ``may`` says whether this process merges a run (all runs without).

    The merged file is written before the commit, so the commit itself is short; it puts the merged
    segment in the run's place, so other writers' segments added meanwhile stay newer than it.
    """
    table = placement.table_of_rows(key)
    segments = (store.latest_for(table) if table is not None else store.latest()).table_segments(key)
    if len(segments) < 2:
        return False
    chosen = segments if whole else run_to_merge(store, segments)
    if not chosen or (may is not None and not may(chosen)):
        return False
    # Deletions in the run may cancel rows of older segments, so they are kept unless none is older.
    rows = merged_rows(store, chosen, keep_deletions=chosen[0] != segments[0])
    if whole:
        rows = order(rows) if order is not None else sort_by_identity(rows)
    rows = rows.replace_schema_metadata({b"gluecat.replaces": json.dumps(list(chosen)).encode()})
    into = store.write_segment(rows)

    def build(latest: Snapshot) -> tuple[Changes, bool]:
        changes = Changes()
        now = latest.table_segments(key)
        if (now != segments) if whole else run_at(now, chosen) < 0:
            return changes, False
        if not whole and chosen[0] == segments[0] and now[0] != chosen[0]:
            return changes, False  # the run is no longer the oldest, but its deletions were dropped
        changes.segment_merges.append((key, chosen, into))
        # Lost to writes that only added segments (or merged others), a partial merge is still right.
        changes.reads = Reads().run(key, chosen)
        if whole:  # a whole merge is of every segment: one added since would be left out of it
            changes.reads.all_rows(key)
        return changes, True

    try:
        merged = bool(store.commit(OPERATION, build, table=table))
    except GlueError as e:
        if not isinstance(e, OutcomeUnknown):  # refused before its entry was published
            store.discard_segment(into)
        raise
    # Any other failure (the interpreter interrupted, a request that failed on a disk whose every
    # read back failed too) leaves a segment the entry may name: compaction sweeps it if none does.
    if not merged:
        store.discard_segment(into)
    return merged


class Merger:
    """A store's merging: a background thread, started when there is work, that merges the row sets
    written to and ends when idle. ``lock`` is held for a row set's whole merge pass, by this thread or
    by a writer merging itself, so two passes never pick overlapping runs of one process's row sets."""

    def __init__(self, store: Store, *, background: bool = True) -> None:
        self.store = store
        self.background = background
        """Merge on the background thread (else, and past a backlog, in the writer)."""
        self.lock = threading.RLock()
        self._cond = threading.Condition()
        self._pending: dict[Key, None] = {}
        self._thread: threading.Thread | None = None
        self._busy = False
        self._stopping = False
        self._met: Newest[Key, tuple[frozenset[str], dict[str, float]]] = Newest(MET_KEPT)
        """Row sets this process writes (``on_duty``): the segments they held when it began, and the
        oldest segments of runs it left to others, with when it first left each."""
        stop_at_exit(self)

    def after_write(self, key: Key) -> None:
        """Called after each write to a row set: merge what has gathered, on the merge thread unless the
        row set has a backlog (then the writer merges, so merging keeps up with any rate of writes).

        The write has landed by then, and a merge is only an optimisation: one that fails is logged
        (the next write tries again), never raised. Its caller would take the error for its write's,
        and a client that retries would apply the write twice."""
        try:
            segments = self.store.cached().table_segments(key)
            self.met(key, segments)
            run = run_to_merge(self.store, segments)
            if not run or not self.on_duty(key, run):
                return
            if self.background and len(segments) <= BACKLOG:
                self._submit(key)
            else:
                self.maybe_merge(key)
        except Exception as e:
            log.warning("merging the segments of %s after a write failed: %s", ".".join(key), e)

    def maybe_merge(self, key: Key) -> None:
        """Merge runs of a row set's segments while there are any (a merge may complete the next tier's
        run, as a binary counter carries)."""
        with self.lock:
            for _ in range(MAX_CASCADE):
                segments = self.store.cached().table_segments(key)
                run = run_to_merge(self.store, segments)
                if not run or not self.on_duty(key, run):
                    return
                if not merge(self.store, key, whole=False, may=lambda run: self.on_duty(key, run)):
                    return

    def met(self, key: Key, segments: tuple[str, ...]) -> None:
        """Called after each write to row set ``key``: the first time, ``segments`` are what it held
        when this process began writing it."""
        with self._cond:
            if self._met.touch(key) is None:
                self._met[key] = (frozenset(segments), {})

    def on_duty(self, key: Key, run: tuple[str, ...]) -> bool:
        """Whether this process merges ``run`` of row set ``key`` (see the module's docstring)."""
        if self.store.wrote(run[0]):
            return True
        now = time.monotonic()
        with self._cond:
            found = self._met.get(key)
            if found is None or run[0] in found[0]:
                return True
            left = found[1]
            since = left.setdefault(run[0], now)
            if len(left) > MERGE_WIDTH:  # only the newest few runs can still be waiting
                for oldest in list(left)[: len(left) - MERGE_WIDTH]:
                    del left[oldest]
            return now - since > DUTY_SECONDS

    def compact(self, key: Key, order: Order | None = None) -> bool:
        """Merge all of a row set's segments into one, its rows in ``order``; False if nothing changed."""
        with self.lock:
            return merge(self.store, key, whole=True, order=order)

    def _submit(self, key: Key) -> None:
        with self._cond:
            if self._stopping:
                return
            self._pending[key] = None
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="gluecat-merge", daemon=True)
                self._thread.start()
            self._cond.notify_all()

    def _run(self) -> None:
        while True:
            with self._cond:
                if not self._pending and not self._stopping:
                    self._cond.wait(IDLE_SECONDS)
                if self._stopping or not self._pending:
                    self._thread = None
                    self._cond.notify_all()
                    return
                key, _ = self._pending.popitem()
                self._busy = True
            try:
                self.maybe_merge(key)
            except Exception as e:  # a merge is only an optimisation: the next write tries again
                log.warning("merging the segments of %s failed: %s", ".".join(key), e)
            finally:
                with self._cond:
                    self._busy = False
                    self._cond.notify_all()

    def drain(self) -> None:
        """Wait until every merge asked for so far is done."""
        with self._cond:
            while self._pending or self._busy:
                self._cond.wait()

    def stop(self) -> None:
        """End the merges: the one under way is let finish, none starts after."""
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
            thread = self._thread
        if thread is not None:
            thread.join(timeout=60)
