"""The folded views of a store's row sets at their latest state, kept and extended as segments appear.

The latest view of each row set is kept and extended in place as new segments appear, so a stream of
small writes costs O(batch) each; a view for an older snapshot (time travel) is folded on demand and
kept with that snapshot.

Refolding a view's deltas into its base copies every row (60 to 600 ms for a table of 100,000 to
160,000 partitions, refolded after 50,000 newer rows; 0.4 s and more at a million), so it runs on a
thread of its own: writes go on extending the view (and squashing the deltas that came after those the
refold folds), and the first view asked for after the refold ends takes its base, keeping the deltas
that came after it. Most of a refold is pyarrow work, which runs beside the writer's Python.
"""

from __future__ import annotations

import json
import logging
import threading
from collections import OrderedDict

from gluecat.catalog.background import stop_at_exit
from gluecat.catalog.rows.view import TableView, extend, fold, refold
from gluecat.store.snapshot import Key, Snapshot
from gluecat.store.store import Store

# Refold the in-memory base when the deltas exceed this many rows (or a tenth of the base); squash the
# newest deltas into one when there are more than this many of them (merges only their identity maps).
MAX_DELTA_ROWS = 50_000
MAX_DELTA_SEGMENTS = 64
PENDING_DELTA_FACTOR = 3  # past this many times the refold threshold, a view waits for the pending refold
RECENT_VIEWS = 4
"""How many of a row set's views before the latest are kept (they share its base; a few small lists each)."""
LATEST_VIEW_ROWS = 4_000_000
"""The rows the latest views of all row sets hold together, at most (past the one used last): a server
reads thousands of tables over its life, and each view holds its table's every partition (a million
of them take about a gigabyte). A view pushed out, the least recently used first, is folded again from
its segments when next asked for (60 to 600 ms for 100,000 to 160,000 partitions)."""

log = logging.getLogger(__name__)


class Refold:
    """A refold of ``source`` running on its own thread."""

    def __init__(self, source: TableView) -> None:
        self.source = source
        self.result: TableView | None = None
        self.thread = threading.Thread(target=self._run, name="gluecat-refold", daemon=True)
        stop_at_exit(self)
        self.thread.start()

    def _run(self) -> None:
        try:
            self.result = refold(self.source, self.source.segments)
        except Exception as e:  # only an optimisation: the next view that needs one refolds itself
            log.warning("refolding a view failed: %s", e)

    def done(self) -> bool:
        return not self.thread.is_alive()

    def stop(self) -> None:
        """Wait for the refold to end."""
        self.thread.join(timeout=60)

    def adopt(self, fresh: TableView) -> TableView | None:
        """``fresh`` on the refolded base, if ``fresh`` still extends the view the refold started from
        (same base, its deltas first); else None."""
        self.thread.join()
        folded, source, k = self.result, self.source, len(self.source.deltas)
        if (
            folded is None
            or fresh.base is not source.base
            or len(fresh.deltas) < k
            or any(a is not b for a, b in zip(fresh.deltas[:k], source.deltas, strict=True))
        ):
            return None
        return TableView(
            n_keys=fresh.n_keys,
            base_segments=fresh.segments,
            base=folded.base,
            deltas=fresh.deltas[k:],
            delta_segments=(),
            delta_maps=fresh.delta_maps[k:],
            _live=folded._live,
            _lookups=folded._lookups,  # what the refold carried over for its base (e.g. locations)
        )


def _expanded(store: Store, known: tuple[str, ...], segments: tuple[str, ...]) -> list[str] | None:
    """``segments`` with each merged segment that replaced some of ``known`` written as the segments it
    replaced (recursively: a merge may have replaced merged segments this view never saw); None if a
    replaced file is gone (expired), so the caller rebuilds from the files."""
    known_set = set(known)

    def expand(path: str) -> list[str] | None:
        if path in known_set:
            return [path]
        replaces = store.segment_footer(path)[1].get(b"gluecat.replaces")
        if replaces is None:
            return [path]
        out: list[str] = []
        missing = False
        for name in json.loads(replaces):
            if name not in known_set and not store.segment_exists(name):
                missing = True
                continue
            sub = expand(name)
            if sub is None:
                return None
            out.extend(sub)
        if not any(n in known_set for n in out):
            return [path]  # nothing this view holds: read the merged file as it is
        return None if missing else out

    expanded: list[str] = []
    for path in segments:
        names = expand(path)
        if names is None:
            return None
        expanded.extend(names)
    return expanded


def _rows(view: TableView) -> int:
    return view.base.num_rows + view.delta_rows()


class LatestViews:
    """One store's latest views, by row set, and the refolds running for them."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._lock = threading.Lock()
        self._latest: OrderedDict[Key, TableView] = OrderedDict()
        """The latest view of each row set, the least recently used first."""
        self._rows = 0
        """The rows of the views in ``_latest``."""
        self._recent: dict[Key, list[TableView]] = {}
        self.refolds: dict[Key, Refold] = {}
        """The refold running (or ended and not yet taken) for each row set."""

    def view(self, snap: Snapshot, key: Key, n_keys: int) -> TableView:
        """The folded view of row set ``key`` (rows of ``n_keys`` partition values) at ``snap``.

        For any state but the store's latest (an older version, or a transaction's own), the latest or
        a recent view is taken if it has the same segments (the same rows), else one is folded and kept
        with that state."""
        store = self.store
        segments = snap.table_segments(key)
        if not store.is_latest(snap, key):
            with self._lock:
                kept = [self._latest[key]] if key in self._latest else []
                kept += self._recent.get(key, [])
            for found in kept:
                if found.segments == segments and found.n_keys == n_keys:
                    return found
            return snap.derived(
                ("partition-view", key),
                lambda: fold(n_keys, segments, store.read_segments(list(segments))),
            )
        with self._lock:
            cached = self._latest.get(key)
            if cached is not None:
                self._latest.move_to_end(key)
        if cached is not None and cached.segments == segments and cached.n_keys == n_keys:
            if not self._refold_ended(key):
                return cached
            fresh = self._folded(key, cached)
            with self._lock:
                if self._latest.get(key) is cached:
                    self._keep(key, fresh)
            return fresh
        known = cached.segments if cached is not None else ()
        expanded = (
            _expanded(store, known, segments) if cached is not None and cached.n_keys == n_keys else None
        )
        if cached is not None and expanded is not None and tuple(expanded[: len(known)]) == known:
            # The cached rows are all still there (some now inside merged segments): add only what is newer.
            new_paths = expanded[len(known) :]
            fresh = extend(cached, new_paths, store.read_segments(list(new_paths), cache=False)).renamed(
                segments
            )
            fresh = self._folded(key, fresh)
        else:
            fresh = fold(n_keys, segments, store.read_segments(list(segments), cache=False))
        with self._lock:
            self._keep(key, fresh)
        return fresh

    def _keep(self, key: Key, fresh: TableView) -> None:
        """Make ``fresh`` the latest view of ``key`` (holding the lock); the one it replaces joins the
        recent views, which serve states a little older (a transaction's start) without a fold."""
        old = self._latest.pop(key, None)
        self._latest[key] = fresh
        self._rows += _rows(fresh) - (_rows(old) if old is not None else 0)
        # Only views on the same base are kept: one on an older base would hold a second copy of the
        # rows (a refold copies them all).
        recent = [v for v in self._recent.get(key, []) if v.base is fresh.base]
        if old is not None and old.segments != fresh.segments and old.base is fresh.base:
            recent.insert(0, old)
        self._recent[key] = recent[:RECENT_VIEWS]
        while self._rows > LATEST_VIEW_ROWS and len(self._latest) > 1:
            gone, view = self._latest.popitem(last=False)
            self._rows -= _rows(view)
            self._recent.pop(gone, None)
        # A refold of a view let go, once ended, holds a copy of rows nobody reads (one still running
        # stays, for join_refolds, and goes at a later view's keeping).
        for other in [k for k, r in self.refolds.items() if k not in self._latest and r.done()]:
            del self.refolds[other]

    def _refold_ended(self, key: Key) -> bool:
        with self._lock:
            pending = self.refolds.get(key)
        return pending is not None and pending.done()

    def _folded(self, key: Key, fresh: TableView) -> TableView:
        """``fresh`` on the base of a refold that has ended; a refold started if its deltas have grown
        too big, and its newest deltas squashed if there are too many."""
        with self._lock:
            pending = self.refolds.get(key)
        limit = max(MAX_DELTA_ROWS, fresh.base.num_rows // 10)
        if pending is not None and (pending.done() or fresh.delta_rows() > PENDING_DELTA_FACTOR * limit):
            with self._lock:
                if self.refolds.get(key) is pending:
                    del self.refolds[key]
            adopted = pending.adopt(fresh)
            fresh, pending = (fresh if adopted is None else adopted), None
            limit = max(MAX_DELTA_ROWS, fresh.base.num_rows // 10)
        if fresh.delta_rows() > limit and pending is None:
            with self._lock:
                pending = self.refolds.get(key)
                if pending is None:
                    pending = self.refolds[key] = Refold(fresh)
        # The deltas a pending refold folds stay as they are, so that the view still extends what it
        # started from and can take its base; those after them are squashed as usual.
        keep = len(pending.source.deltas) if pending is not None else 0
        if len(fresh.deltas) - keep > MAX_DELTA_SEGMENTS:
            return fresh.squashed(keep)
        return fresh

    def join_refolds(self) -> None:
        """Wait for the refolds under way."""
        with self._lock:
            pending = list(self.refolds.values())
        for r in pending:
            r.stop()
