"""Glue partitions: create, update, delete (single and batch), read, and GetPartitions queries.

Partitions are rows of the row engine (gluecat.catalog.rows), keyed by their values, in the row set
(database, table). Every write is one commit that adds a small segment; reads plan the expression against
the table's ACTIVE partition indexes, look up the matching slice of the base, filter the rest in bulk with
Arrow, and merge the newer segments.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, cast

import pyarrow as pa
import pyarrow.compute as pc

from gluecat import expressions as ex
from gluecat import uniform
from gluecat.catalog import access, indexes, paging, statistics
from gluecat.catalog.context import (
    COLUMN_STATISTICS,
    MAX_LOG_SCAN,
    PARTITION_COLUMN_STATISTICS,
    PARTITION_INDEX,
    Context,
    partition_key_count,
    require_table,
)
from gluecat.catalog.rows import group_commit, merging
from gluecat.catalog.rows.query import Query, Window, planned
from gluecat.catalog.rows.query import select as query_rows
from gluecat.catalog.rows.segments import segment_table, value_key, value_keys
from gluecat.catalog.rows.view import TableView
from gluecat.errors import (
    AlreadyExistsException,
    EntityNotFoundException,
    GlueError,
    InvalidInputException,
    ResourceNumberLimitExceededException,
)
from gluecat.expressions.spark import relaxed
from gluecat.gc_pause import gc_paused
from gluecat.store import codec
from gluecat.store.conflicts import Reads
from gluecat.store.snapshot import Changes, Snapshot

# AWS Glue's own words for a missing or existing partition (they do not say which: the request does).
NO_PARTITION = "Cannot find partition."
PARTITION_EXISTS = "Partition already exists."
MAX_PAGE = 1000


def _view(ctx: Context, snap: Snapshot, table: dict[str, Any]) -> TableView:
    """The folded view of the table's partitions at ``snap``."""
    return ctx.rows.view(snap, (table["DatabaseName"], table["Name"]), partition_key_count(table))


def _keys(table: dict[str, Any]) -> list[tuple[str, str]]:
    return [(k["Name"], k.get("Type") or "string") for k in table.get("PartitionKeys") or []]


def _check_values(table: dict[str, Any], values: list[str], field: str) -> None:
    n = partition_key_count(table)
    if len(values) != n:
        raise InvalidInputException(
            f"{field}: {len(values)} values given, but table {table['DatabaseName']}.{table['Name']} "
            f"has {n} partition keys"
        )


def _partition_doc(part_input: dict[str, Any], creation_time: datetime) -> dict[str, Any]:
    doc = dict(part_input)  # a copy: a retried commit builds from the same inputs again
    doc.pop("Values", None)
    doc["CreationTime"] = creation_time
    return doc


def _partition_docs(inputs: list[dict[str, Any]], creation_time: datetime) -> list[dict[str, Any]]:
    """_partition_doc of each input; for inputs of only Values and a StorageDescriptor (what Spark's
    partition DDL, crawlers and bulk loaders send), in one pass without a call per partition."""
    if uniform.members_are(inputs, ("Values", "StorageDescriptor")):
        sds = map(operator.itemgetter("StorageDescriptor"), inputs)
        return [{"StorageDescriptor": sd, "CreationTime": creation_time} for sd in sds]
    return [_partition_doc(part, creation_time) for part in inputs]


def _responses(
    table: dict[str, Any],
    ctx: Context,
    values: Iterable[Sequence[str]],
    docs: list[dict[str, Any]],
    exclude: bool,
) -> list[dict[str, Any]]:
    """The Glue Partition of each (values, stored document); built in one comprehension, not a call
    per partition (a page is up to a thousand)."""
    database, name, catalog_id = table["DatabaseName"], table["Name"], ctx.catalog_id
    out = [
        {"Values": list(v), "DatabaseName": database, "TableName": name, **doc, "CatalogId": catalog_id}
        for v, doc in zip(values, docs, strict=True)
    ]
    if exclude:
        for part in out:
            if "StorageDescriptor" in part:
                sd = part["StorageDescriptor"]
                part["StorageDescriptor"] = {k: v for k, v in sd.items() if k != "Columns"}
    return access.project_partitions(database, name, out)


def _rows_to_responses(
    ctx: Context, table: dict[str, Any], rows: pa.Table, n_keys: int, exclude: bool
) -> list[dict[str, Any]]:
    with gc_paused():  # thousands of acyclic containers (see gluecat.gc_pause)
        docs = codec.loads_many(cast(list[str], rows.column("doc").to_pylist()))
        columns = [rows.column(f"p{i}").to_pylist() for i in range(n_keys)]
        values = zip(*columns, strict=True) if columns else [()] * len(docs)
        return _responses(table, ctx, values, docs, exclude)


# -- writing ----------------------------------------------------------------------------------------


@dataclass
class _Batch:
    """Partition rows a commit adds or removes (with their identities), and per-item errors for batch calls."""

    rows: list[tuple[list[str], dict[str, Any] | None]]
    errors: list[dict[str, Any]]
    vks: list[str] | None = None


def _commit_rows(
    table: dict[str, Any],
    rows: list[tuple[list[str], dict[str, Any] | None]],
    changes: Changes,
    vks: list[str] | None = None,
    runs: Sequence[int] = (),
    snap: Snapshot | None = None,
) -> None:
    """Add ``rows`` to ``changes`` as a segment; given the snapshot they apply to, the column statistics
    of the partitions they remove (a None document) go with them."""
    if rows:
        key = (table["DatabaseName"], table["Name"])
        changes.segment_adds.append((key, segment_table(partition_key_count(table), rows, vks, runs)))
        if snap is not None:
            removed = [value_key(values) for values, doc in rows if doc is None]
            statistics.drop_partition_statistics(snap, key, removed, changes)


def _adding(
    ctx: Context,
    snap: Snapshot,
    table: dict[str, Any],
    inputs: list[dict[str, Any]],
    *,
    if_not_exists: bool = False,
    collect_errors: bool,
    added: set[str] | frozenset[str] = frozenset(),
) -> _Batch:
    """Check new partitions against the table, its indexes and each other, and against ``added``: the
    partitions earlier requests of the same commit add."""
    n_keys = partition_key_count(table)
    v = _view(ctx, snap, table)
    active = indexes.validating_indexes(snap, table)
    now = datetime.now(UTC)
    values_list = [part["Values"] for part in inputs]
    indexed_fine = not active or indexes.new_partitions_fine(table, active, values_list)
    identities = value_keys(values_list)
    distinct = set(identities)
    existing = v.existing(distinct)
    if (
        indexed_fine
        and not existing
        and len(distinct) == len(identities)
        and distinct.isdisjoint(added)
        and set(map(len, values_list)) <= {n_keys}
    ):
        # Every partition is new and fine (what a bulk load sends): no checks one by one.
        rows: list[tuple[list[str], dict[str, Any] | None]]
        rows = list(zip(values_list, _partition_docs(inputs, now), strict=True))
        batch = _Batch(rows=rows, errors=[], vks=identities)
        if batch.rows:
            _check_limit(ctx, table, v, len(added) + len(batch.rows))
        return batch
    check_indexed = indexes.new_partition_check(table, active)
    vks: list[str] = []
    batch = _Batch(rows=[], errors=[], vks=vks)
    seen: set[str] = set(added)
    for i, part in enumerate(inputs):
        values = part["Values"]
        vk = identities[i]
        try:
            if len(values) != n_keys:
                _check_values(
                    table,
                    values,
                    f"PartitionInputList[{i}].Values" if collect_errors else "PartitionInput.Values",
                )
            if vk in seen or vk in existing:
                if if_not_exists:
                    continue
                raise AlreadyExistsException(PARTITION_EXISTS)
            if not indexed_fine:
                check_indexed(values)
        except GlueError as e:
            if not collect_errors:
                raise
            batch.errors.append(
                {"PartitionValues": values, "ErrorDetail": {"ErrorCode": e.code, "ErrorMessage": e.message}}
            )
            continue
        seen.add(vk)
        batch.rows.append((values, _partition_doc(part, now)))
        vks.append(vk)
    if batch.rows:
        _check_limit(ctx, table, v, len(added) + len(batch.rows))
    return batch


def _identities(parts: list[dict[str, Any]]) -> list[str]:
    return value_keys([p["Values"] for p in parts if isinstance(p.get("Values"), list)])


def _index_reads(key: tuple[str, str]) -> Reads:
    """What every partition write reads: the table's partition indexes, which validate new values."""
    return Reads().prefix(PARTITION_INDEX, key)


def _near_limit(ctx: Context, v: TableView, adding: int) -> bool:
    """Whether a write's check of the partition limit depended on how many partitions there are (then
    any other addition may change its answer)."""
    return v.upper_bound() + adding > ctx.limits.partitions_per_table // 2


def _check_limit(ctx: Context, table: dict[str, Any], v: TableView, adding: int) -> None:
    limit = ctx.limits.partitions_per_table
    if v.upper_bound() + adding > limit and v.count() + adding > limit:
        raise ResourceNumberLimitExceededException(
            f"table {table['DatabaseName']}.{table['Name']} would exceed {limit} partitions"
        )


def create_partition(ctx: Context, database: str, table_name: str, part: dict[str, Any]) -> None:
    _add(ctx, database, table_name, group_commit.Request([part], collect_errors=False))


def batch_create_partition(
    ctx: Context, database: str, table_name: str, parts: list[dict[str, Any]]
) -> dict[str, Any]:
    result = _add(ctx, database, table_name, group_commit.Request(parts, collect_errors=True))
    assert result is not None
    return result


def _add(
    ctx: Context, database: str, table_name: str, request: group_commit.Request[dict[str, Any]]
) -> dict[str, Any] | None:
    """Add partitions in a commit shared with the other additions to the table queued meanwhile."""

    def commit(group: list[group_commit.Request[Any]]) -> None:
        def build(snap: Snapshot) -> tuple[Changes, list[tuple[Any, Any]]]:
            table = require_table(snap, database, table_name)
            rows: list[tuple[list[str], dict[str, Any] | None]] = []
            vks: list[str] = []
            runs: list[int] = []  # rows per request
            added: set[str] = set()
            outcomes: list[tuple[Any, Any]] = []  # (result, error) of each request, in order
            for r in group:
                try:
                    batch = _adding(ctx, snap, table, r.parts, collect_errors=r.collect_errors, added=added)
                except GlueError as e:
                    outcomes.append((None, e))
                    continue
                rows.extend(batch.rows)
                runs.append(len(batch.rows))
                vks.extend(batch.vks or [])
                added.update(batch.vks or [])
                outcomes.append(({"Errors": batch.errors} if r.collect_errors else None, None))
            changes = Changes()
            _commit_rows(table, rows, changes, vks, runs)
            # What the checks read: the table's indexes and whether these partitions existed. A commit
            # that lost its version to others that added other partitions is still right as it is.
            changes.reads = _index_reads(key).rows(key, {vk for r in group for vk in _identities(r.parts)})
            if _near_limit(ctx, _view(ctx, snap, table), len(rows)):
                changes.reads.all_rows(key)
            return changes, outcomes

        single = len(group) == 1 and not group[0].collect_errors
        key = (database, table_name)
        with gc_paused():  # a few containers per partition, none in a cycle
            outcomes = ctx.store.commit(
                "CreatePartition" if single else "BatchCreatePartition", build, table=key
            )
        for r, (result, error) in zip(group, outcomes, strict=True):
            r.result, r.error = result, error
        ctx.rows.after_write((database, table_name))

    return ctx.rows.groups.submit((database, table_name), request, commit)


def _existing_doc(
    ctx: Context, snap: Snapshot, table: dict[str, Any], values: list[str]
) -> dict[str, Any] | None:
    v = _view(ctx, snap, table)
    vk = value_key(values)
    if not v.exists(vk):
        return None
    rows = _identity_rows(v, [vk])
    return codec.loads(str(rows.column("doc")[0].as_py())) if rows.num_rows else None


def require_partition(
    ctx: Context, snap: Snapshot, table: dict[str, Any], values: list[str], field: str = "PartitionValues"
) -> dict[str, Any]:
    """The stored document of a partition, or InvalidInputException (values against the keys) or
    EntityNotFoundException."""
    _check_values(table, values, field)
    doc = _existing_doc(ctx, snap, table, values)
    if doc is None:
        raise EntityNotFoundException(NO_PARTITION)
    return doc


def _identity_rows(v: TableView, vks: list[str]) -> pa.Table:
    """The live rows of some identities."""
    wanted = pa.array(vks, pa.string())

    def pick(t: pa.Table) -> pa.Table:
        return t.filter(pc.is_in(t.column("_vk"), value_set=wanted))

    return v.select(pick(v.base), pick)


class _Updates:
    """The partitions a commit of updates changes, as they will be after it: by identity, the new
    document or None for a partition renamed away. Later updates in the same commit see earlier ones.

    Column statistics go as they would with the updates made one by one: all of a partition's when it
    is renamed away (even if another is then renamed to its values: they describe the data that moved),
    and those of the columns an update in place drops, renames or retypes."""

    def __init__(self, ctx: Context, snap: Snapshot, table: dict[str, Any]) -> None:
        self.ctx, self.snap, self.table = ctx, snap, table
        self.view = _view(ctx, snap, table)
        self.pending: dict[str, dict[str, Any] | None] = {}
        self.rows: list[tuple[list[str], dict[str, Any] | None]] = []
        self.renamed_away: set[str] = set()
        self.in_place: dict[str, list[tuple[dict[str, str], dict[str, str]]]] = {}
        """By identity, the statistics columns before and after each update in place, in order."""

    def doc(self, values: list[str]) -> dict[str, Any] | None:
        vk = value_key(values)
        if vk in self.pending:
            return self.pending[vk]
        return _existing_doc(self.ctx, self.snap, self.table, values)

    def update(self, values: list[str], part: dict[str, Any], fields: tuple[str, str]) -> None:
        """One UpdatePartition; ``fields`` name the values and the input in errors."""
        _check_values(self.table, values, fields[0])
        _check_values(self.table, part["Values"], f"{fields[1]}.Values")
        old = self.doc(values)
        if old is None:
            raise EntityNotFoundException(NO_PARTITION)
        if part["Values"] != values:
            vk = value_key(part["Values"])
            taken = self.pending[vk] is not None if vk in self.pending else self.view.exists(vk)
            if taken:
                raise AlreadyExistsException(PARTITION_EXISTS)
            indexes.check_new_partition(
                self.table, indexes.validating_indexes(self.snap, self.table), part["Values"]
            )
            self.rows.append((values, None))
            self.pending[value_key(values)] = None
            self.renamed_away.add(value_key(values))
        doc = _partition_doc(part, old["CreationTime"])
        self.rows.append((part["Values"], doc))
        self.pending[value_key(part["Values"])] = doc
        if part["Values"] == values:
            columns = (
                statistics.partition_columns(old, self.table),
                statistics.partition_columns(doc, self.table),
            )
            self.in_place.setdefault(value_key(values), []).append(columns)

    def commit_to(self, changes: Changes) -> None:
        """One row a partition, as the updates left it; none for one that a rename made and another
        renamed away (it never existed outside this commit)."""
        final: dict[str, tuple[list[str], dict[str, Any] | None]] = {}
        for values, doc in self.rows:
            final[value_key(values)] = (values, doc)
        rows = [(v, doc) for vk, (v, doc) in final.items() if doc is not None or self.view.exists(vk)]
        _commit_rows(self.table, rows, changes, snap=self.snap)
        key = (self.table["DatabaseName"], self.table["Name"])
        gone = [vk for vk in self.renamed_away if final[vk][1] is not None]  # the others went with their row
        statistics.drop_partition_statistics(self.snap, key, gone, changes)
        for vk, steps in self.in_place.items():
            if vk not in self.renamed_away:
                for before, after in steps:
                    statistics.drop_outdated(
                        self.snap, PARTITION_COLUMN_STATISTICS, (*key, vk), before, after, changes
                    )


def statistics_outdated_by_table_update(
    ctx: Context, snap: Snapshot, old: dict[str, Any], new: dict[str, Any], changes: Changes
) -> None:
    """Add to ``changes`` the removal of the column statistics that an UpdateTable from ``old`` to
    ``new`` outdates: those of the columns it drops, renames or retypes, the table's and those of the
    partitions whose columns are the table's (they have none of their own)."""
    key = (old["DatabaseName"], old["Name"])
    before, after = statistics.columns_of(old), statistics.columns_of(new)
    statistics.drop_outdated(snap, COLUMN_STATISTICS, key, before, after, changes)
    stats = snap.keys_with_prefix(PARTITION_COLUMN_STATISTICS, key)
    if not stats:
        return
    candidates = [k for k in stats if statistics.outdated(k[-1], before, after)]
    if not candidates:
        return
    rows = _identity_rows(_view(ctx, snap, old), sorted({k[2] for k in candidates}))
    docs = cast(list[str], rows.column("doc").to_pylist())
    own = {
        vk
        for vk, doc in zip(rows.column("_vk").to_pylist(), docs, strict=True)
        if statistics.columns_of(codec.loads(doc))
    }
    for k in candidates:
        if k[2] not in own:
            changes.delete(PARTITION_COLUMN_STATISTICS, k)


def update_partition(
    ctx: Context, database: str, table_name: str, values: list[str], part: dict[str, Any]
) -> None:
    def build(snap: Snapshot) -> tuple[Changes, None]:
        updates = _Updates(ctx, snap, require_table(snap, database, table_name))
        updates.update(values, part, ("PartitionValueList", "PartitionInput"))
        changes = Changes()
        updates.commit_to(changes)
        return changes, None

    ctx.store.commit("UpdatePartition", build, table=(database, table_name))
    ctx.rows.after_write((database, table_name))


def batch_update_partition(
    ctx: Context, database: str, table_name: str, entries: list[dict[str, Any]]
) -> dict[str, Any]:
    """BatchUpdatePartition: each entry as UpdatePartition, in order, in one commit; an entry that fails
    is reported in Errors and changes nothing."""

    def build(snap: Snapshot) -> tuple[Changes, dict[str, Any]]:
        updates = _Updates(ctx, snap, require_table(snap, database, table_name))
        errors = []
        for i, entry in enumerate(entries):
            values = entry["PartitionValueList"]
            fields = (f"Entries[{i}].PartitionValueList", f"Entries[{i}].PartitionInput")
            try:
                updates.update(values, entry["PartitionInput"], fields)
            except GlueError as e:
                errors.append(
                    {
                        "PartitionValueList": values,
                        "ErrorDetail": {"ErrorCode": e.code, "ErrorMessage": e.message},
                    }
                )
        changes = Changes()
        updates.commit_to(changes)
        return changes, {"Errors": errors}

    result = ctx.store.commit("BatchUpdatePartition", build, table=(database, table_name))
    ctx.rows.after_write((database, table_name))
    return result


def delete_partition(ctx: Context, database: str, table_name: str, values: list[str]) -> None:
    def build(snap: Snapshot) -> tuple[Changes, None]:
        table = require_table(snap, database, table_name)
        _check_values(table, values, "PartitionValues")
        v = _view(ctx, snap, table)
        if not v.exists(value_key(values)):
            raise EntityNotFoundException(NO_PARTITION)
        changes = Changes()
        _commit_rows(table, [(values, None)], changes, snap=snap)
        changes.reads = _deletion_reads((database, table_name), [value_key(values)])
        return changes, None

    ctx.store.commit("DeletePartition", build, table=(database, table_name))
    ctx.rows.after_write((database, table_name))


def batch_delete_partition(
    ctx: Context, database: str, table_name: str, values_list: list[list[str]]
) -> dict[str, Any]:
    def build(snap: Snapshot) -> tuple[Changes, dict[str, Any]]:
        table = require_table(snap, database, table_name)
        v = _view(ctx, snap, table)
        rows: list[tuple[list[str], dict[str, Any] | None]] = []
        errors = []
        seen: set[str] = set()
        for i, values in enumerate(values_list):
            try:
                _check_values(table, values, f"PartitionsToDelete[{i}].Values")
                vk = value_key(values)
                if vk in seen or not v.exists(vk):
                    raise EntityNotFoundException(NO_PARTITION)
            except GlueError as e:
                errors.append(
                    {
                        "PartitionValues": values,
                        "ErrorDetail": {"ErrorCode": e.code, "ErrorMessage": e.message},
                    }
                )
                continue
            seen.add(vk)
            rows.append((values, None))
        changes = Changes()
        _commit_rows(table, rows, changes, snap=snap)
        changes.reads = _deletion_reads(
            (database, table_name), [value_key(v) for v in values_list if isinstance(v, list)]
        )
        return changes, {"Errors": errors}

    result = ctx.store.commit("BatchDeletePartition", build, table=(database, table_name))
    ctx.rows.after_write((database, table_name))
    return result


def _deletion_reads(key: tuple[str, str], identities: list[str]) -> Reads:
    """What a removal of partitions reads: whether they exist, and the statistics it removes with them
    (a table's partitions' statistics written meanwhile must not outlive a partition removed)."""
    return Reads().rows(key, identities).prefix(PARTITION_COLUMN_STATISTICS, key)


def partitions_unchanged_since(
    ctx: Context, database: str, name: str, version: int, excluding: Collection[int] = ()
) -> int | None:
    """The table's latest version (``Catalog.table_version``), if no commit after ``version`` other
    than those in ``excluding`` added or removed a partition of the table (merges rewrite segments, not
    partitions); else None.

    Any segment added or removed for the table by another operation counts as a change, which also
    covers the table being dropped and made again under its name.
    """
    table = (database, name)
    latest = ctx.store.table_version(table)
    if version < 0 or version > latest or latest - version > MAX_LOG_SCAN:
        return None
    skip = set(excluding)
    for entry in ctx.store.table_entries(table, version, latest):
        if entry.expired is not None:
            return None  # what it did is no longer known
        if entry.version in skip or entry.operation == merging.OPERATION:
            continue
        if any(getattr(action, "table", None) == table for action in entry.actions):
            return None
    return latest


def commit_partitions(
    ctx: Context,
    database: str,
    table_name: str,
    add: list[dict[str, Any]],
    drop: list[list[str]],
    *,
    if_not_exists: bool,
    if_exists: bool = False,
) -> int:
    """One atomic commit of any number of additions and removals (for Spark's writes and partition DDL).

    Nothing is committed unless every addition is new (or ``if_not_exists``) and every removal exists
    (or ``if_exists``). Returns the version of the table's log the commit landed as (Catalog.table_version),
    so that a caller holding the table's partitions can apply the change to its copy and label it.
    """

    def build(snap: Snapshot) -> tuple[Changes, None]:
        table = require_table(snap, database, table_name)
        v = _view(ctx, snap, table)
        rows: list[tuple[list[str], dict[str, Any] | None]] = []
        dropped: set[str] = set()
        for i, values in enumerate(drop):
            _check_values(table, values, f"Drop[{i}]")
            vk = value_key(values)
            if v.exists(vk) and vk not in dropped:
                rows.append((values, None))
                dropped.add(vk)
            elif not if_exists:
                raise EntityNotFoundException(NO_PARTITION)
        # Re-adding a partition dropped in the same commit replaces it, once: a second addition of it is
        # what the same request without the drop answers (AlreadyExistsException, or skipped).
        fresh: list[dict[str, Any]] = []
        readded: set[str] = set()
        for p in add if dropped else []:
            vk = value_key(p["Values"])
            if vk not in dropped:
                continue
            if vk in readded:
                if if_not_exists:
                    continue
                raise AlreadyExistsException(PARTITION_EXISTS)
            readded.add(vk)
            fresh.append(p)
        others = [p for p in add if value_key(p["Values"]) not in dropped] if dropped else add
        batch = _adding(ctx, snap, table, others, if_not_exists=if_not_exists, collect_errors=False)
        now = datetime.now(UTC)
        rows.extend((p["Values"], _partition_doc(p, now)) for p in fresh)
        vks = [value_key(values) for values, _ in rows] + (batch.vks or [])
        rows.extend(batch.rows)
        changes = Changes()
        _commit_rows(table, rows, changes, vks, snap=snap)
        key = (database, table_name)
        changes.reads = _deletion_reads(key, vks + _identities(add)).prefix(PARTITION_INDEX, key)
        if _near_limit(ctx, v, len(rows)):
            changes.reads.all_rows(key)
        return changes, None

    with gc_paused():  # as _add's commit
        _, landed = ctx.store.commit_landing("CommitPartitions", build, table=(database, table_name))
    ctx.rows.after_write((database, table_name))
    return landed


def copy_partitions(
    ctx: Context,
    snap: Snapshot,
    table: dict[str, Any],
    to: dict[str, Any],
    relocate: Callable[[dict[str, Any]], dict[str, Any]],
    changes: Changes,
) -> None:
    """Add to ``changes`` every partition of ``table`` at ``snap``, as a partition of ``to`` (a table
    being made in the same commit, with the same keys), each StorageDescriptor through ``relocate``."""
    rows = select(ctx, snap, table, plan_query(snap, table, None))
    if not rows.num_rows:
        return
    n = partition_key_count(table)
    with gc_paused():
        docs = codec.loads_many(cast(list[str], rows.column("doc").to_pylist()))
        for doc in docs:
            if "StorageDescriptor" in doc:
                doc["StorageDescriptor"] = relocate(doc["StorageDescriptor"])
        columns = [rows.column(f"p{i}").to_pylist() for i in range(n)]
        values = [list(v) for v in zip(*columns, strict=True)] if columns else [[] for _ in docs]
        copied: list[tuple[list[str], dict[str, Any] | None]] = list(zip(values, docs, strict=True))
        _commit_rows(to, copied, changes)


# -- reading ----------------------------------------------------------------------------------------


def get_partition(ctx: Context, database: str, table_name: str, values: list[str]) -> dict[str, Any]:
    snap = ctx.snapshot(table=(database, table_name))
    table = require_table(snap, database, table_name)
    _check_values(table, values, "PartitionValues")
    doc = _existing_doc(ctx, snap, table, values)
    if doc is None:
        raise EntityNotFoundException(NO_PARTITION)
    return {"Partition": _responses(table, ctx, [values], [doc], False)[0]}


def batch_get_partition(
    ctx: Context, database: str, table_name: str, values_list: list[list[str]]
) -> dict[str, Any]:
    snap = ctx.snapshot(table=(database, table_name))
    table = require_table(snap, database, table_name)
    for i, values in enumerate(values_list):
        _check_values(table, values, f"PartitionsToGet[{i}].Values")
    n = partition_key_count(table)
    v = _view(ctx, snap, table)
    rows = _identity_rows(v, [value_key(values) for values in values_list])
    # Missing partitions are simply absent, as in Glue; nothing is left unprocessed.
    return {"Partitions": _rows_to_responses(ctx, table, rows, n, False), "UnprocessedKeys": []}


def plan_query(snap: Snapshot, table: dict[str, Any], expression: str | None, predicate: Any = None) -> Query:
    """``predicate``: Spark's pushed filters (gluecat.expressions.spark), instead of an expression."""
    keys = _keys(table)
    if predicate is None:
        predicate = ex.parse(expression or "", [name for name, _ in keys])
    else:
        predicate = relaxed(predicate, keys)
    return planned(keys, ex.bind(predicate, keys), indexes.planning_indexes(snap, table))


def select(
    ctx: Context, snap: Snapshot, table: dict[str, Any], query: Query, window: Window | None = None
) -> pa.Table:
    """The live partitions of the table that match the query and fall in the window (rows.query.select)."""
    return query_rows(_view(ctx, snap, table), query, window or Window())


def get_partitions(
    ctx: Context,
    database: str,
    table_name: str,
    *,
    expression: str | None,
    next_token: str | None,
    segment: dict[str, int] | None,
    max_results: int | None,
    exclude_column_schema: bool,
    as_of: datetime | None,
    transaction_id: str | None = None,
) -> dict[str, Any]:
    snap = ctx.read_snapshot(as_of, transaction_id, (database, table_name))
    table = require_table(snap, database, table_name)
    query = plan_query(snap, table, expression)
    token_query = paging.query_digest(
        "GetPartitions", database, table_name, table["CreateTime"], expression, segment, as_of, transaction_id
    )
    after = paging.read_token(ctx.store.secret, token_query, next_token)
    limit = max_results or MAX_PAGE
    window = Window(after=None if after is None else str(after), segment=segment, limit=limit)
    rows = select(ctx, snap, table, query, window)
    page = rows.slice(0, limit)
    n = partition_key_count(table)
    out: dict[str, Any] = {"Partitions": _rows_to_responses(ctx, table, page, n, exclude_column_schema)}
    if rows.num_rows > limit:
        out["NextToken"] = paging.make_token(ctx.store.secret, token_query, page.column("_vk")[-1].as_py())
    return out


def get_partitions_arrow(
    ctx: Context,
    database: str,
    table_name: str,
    expression: str | None,
    predicate: Any,
    as_of: datetime | None = None,
) -> pa.Table:
    """The matching partitions as one Arrow table: a string column per key, plus Location."""
    snap = ctx.snapshot(as_of, (database, table_name))
    table = require_table(snap, database, table_name)
    rows = select(ctx, snap, table, plan_query(snap, table, expression, predicate))
    keys = _keys(table)
    return pa.Table.from_arrays(
        [rows.column(f"p{i}") for i in range(len(keys))] + [rows.column("Location")],
        names=[k for k, _ in keys] + ["Location"],
    )


def explain(ctx: Context, database: str, table_name: str, expression: str | None) -> dict[str, Any]:
    snap = ctx.snapshot(table=(database, table_name))
    table = require_table(snap, database, table_name)
    query = plan_query(snap, table, expression)
    out = dict(ex.explain(query.plan))
    out["Expression"] = expression or ""
    out["MatchingPartitions"] = select(ctx, snap, table, query).num_rows
    return out


def partition_count(ctx: Context, snap: Snapshot, table: dict[str, Any]) -> int:
    return _view(ctx, snap, table).count()
