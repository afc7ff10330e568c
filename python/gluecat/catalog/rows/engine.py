"""The one owner of a store's row machinery: its latest views, their refolds, its merges and its queues
of writes waiting to share a commit."""

from __future__ import annotations

from gluecat.catalog.rows.group_commit import GroupCommit
from gluecat.catalog.rows.latest import LatestViews
from gluecat.catalog.rows.merging import Merger, Order
from gluecat.catalog.rows.view import TableView
from gluecat.store.snapshot import Key, Snapshot
from gluecat.store.store import Store


class RowEngine:
    """Row sets of one store: a table's partitions, a governed table's objects. The catalog Context
    holds one per store; everything that reads or writes rows goes through it.

    ``background_merges`` merges segments on a thread of their own (see merging.Merger.after_write).
    """

    def __init__(self, store: Store, *, background_merges: bool = True) -> None:
        self.store = store
        self.views = LatestViews(store)
        self.merger = Merger(store, background=background_merges)
        self.groups = GroupCommit()

    @property
    def background_merges(self) -> bool:
        return self.merger.background

    @background_merges.setter
    def background_merges(self, on: bool) -> None:
        self.merger.background = on

    def view(self, snap: Snapshot, key: Key, n_keys: int) -> TableView:
        """The folded view of row set ``key`` (rows of ``n_keys`` partition values) at ``snap``."""
        return self.views.view(snap, key, n_keys)

    def after_write(self, key: Key) -> None:
        """Called after each write to a row set: merges what has gathered (merging.Merger)."""
        self.merger.after_write(key)

    def compact(self, key: Key, order: Order | None = None) -> bool:
        """Merge all of a row set's segments into one, its rows in ``order`` (by identity without)."""
        return self.merger.compact(key, order)

    def wait_for_merges(self) -> None:
        """Wait until the merges this engine's writes have asked for are done."""
        self.merger.drain()

    def stop(self) -> None:
        """Let the merges and refolds under way end; no merge is started after."""
        self.merger.stop()
        self.views.join_refolds()

    def __repr__(self) -> str:
        return f"RowEngine({self.store.fs.uri('')!r})"
