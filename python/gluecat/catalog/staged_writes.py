"""What a Lake Formation transaction stages: its writes as journal records, and their effect on a state.

A staged write is a JSON document of one of two kinds:

- ``{"w": "table", "table": [database, name], "base": ..., "drop": ..., "puts": ..., "deletes": ...}``:
  the record changes a CreateTable, UpdateTable or DeleteTable made against the transaction's state,
  and the identity of the table it found there (``base``), which its commit checks again;
- ``{"w": "objects", "table": [database, name], "base": CreateTime, "ops": [...]}``: UpdateTableObjects'
  writes (``ObjectWrite.to_json``) to the table made at ``base``.

gluecat.catalog.transactions keeps them in the journal and applies them at commit.
"""

from __future__ import annotations

from typing import Any

from gluecat.catalog.context import TABLE
from gluecat.catalog.objects import ObjectWrite
from gluecat.catalog.removals import drop_table_changes, reshaped_rows_changes
from gluecat.store import codec
from gluecat.store.snapshot import Changes, Key, Raw, Snapshot, overlay


def table_identity(table: dict[str, Any] | None) -> list[Any] | None:
    """What tells one table from another of the same name, and one definition of it from the next."""
    if table is None:
        return None
    return [codec.to_micros(table["CreateTime"]), table["VersionId"]]


def with_table_write(snap: Snapshot, w: dict[str, Any], source: str) -> Snapshot:
    """``snap`` with a staged table write applied (not a committed state: its version is the one it
    was built on)."""
    changes = Changes()
    table_changes(snap, w, changes)
    records = [(k, key, doc) for k, key, doc in changes.puts] + [(k, key, None) for k, key in changes.deletes]
    return overlay(snap, records, changes.segment_removes)


def table_changes(snap: Snapshot, w: dict[str, Any], changes: Changes) -> None:
    """Add a staged table write's changes, made against ``snap``, to ``changes``."""
    if w.get("drop"):
        database, name = w["table"]
        if snap.get(TABLE, (database, name)) is not None:
            drop_table_changes(snap, database, name, changes)
        return
    for kind, key, text in w["puts"]:
        changes.put(kind, tuple(key), Raw(text, "a transaction's staged write"))
        old = snap.get(TABLE, tuple(key)) if kind == TABLE else None
        if old is not None:  # an update (of the number of keys, perhaps)
            reshaped_rows_changes(snap, old, codec.loads(text), changes)
    for kind, key in w["deletes"]:
        changes.delete(kind, tuple(key))


def staged_table_write(snap: Snapshot, key: Key, changes: Changes, *, drop: bool = False) -> dict[str, Any]:
    """A table write to stage: the record changes an operation made against the transaction's state
    ``snap`` (a drop is made again at commit, against the state then), and the table it found there."""
    return {
        "w": "table",
        "table": list(key),
        "base": table_identity(snap.get(TABLE, key)),
        "drop": drop,
        "puts": [] if drop else [[kind, list(k), _text(doc)] for kind, k, doc in changes.puts],
        "deletes": [] if drop else [[kind, list(k)] for kind, k in changes.deletes],
    }


def staged_object_write(table: dict[str, Any], writes: list[ObjectWrite]) -> dict[str, Any]:
    return {
        "w": "objects",
        "table": [table["DatabaseName"], table["Name"]],
        "base": codec.to_micros(table["CreateTime"]),
        "ops": [w.to_json() for w in writes],
    }


def _text(doc: Any) -> str:
    return doc.text if isinstance(doc, Raw) else codec.dumps(doc)
