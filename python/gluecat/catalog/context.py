"""What every catalog operation needs: the store, its row engine, the catalog's identity and its
resource limits."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from dataclasses import InitVar, dataclass, field
from typing import TYPE_CHECKING, Any

from gluecat.catalog.rows import RowEngine
from gluecat.errors import EntityNotFoundException, InvalidInputException, StorageError
from gluecat.store.log import Entry
from gluecat.store.snapshot import Key, Snapshot
from gluecat.store.store import HistoryExpired, Store

if TYPE_CHECKING:
    from gluecat.catalog.transactions import Transactions

_TRANSACTIONS_LOCK = threading.Lock()

DATABASE = "database"
TABLE = "table"
TABLE_VERSION = "table_version"
COLUMN_STATISTICS = "column_statistics"
PARTITION_COLUMN_STATISTICS = "partition_column_statistics"
PARTITION_INDEX = "partition_index"


@dataclass(frozen=True)
class Limits:
    """Glue's default service quotas, enforced as ResourceNumberLimitExceededException."""

    databases: int = 10_000
    tables_per_database: int = 200_000
    versions_per_table: int = 100_000
    partitions_per_table: int = 10_000_000
    indexes_per_table: int = 3


@dataclass
class Context:
    store: Store
    catalog_id: str = "000000000000"
    principal: str = "gluecat"
    limits: Limits = field(default_factory=Limits)
    background_merges: InitVar[bool] = True
    """Merge segments on a background thread (see rows.merging.Merger.after_write)."""
    rows: RowEngine = field(init=False, repr=False)
    """The one owner of this store's row machinery (views, refolds, merges, group commits)."""
    _transactions: Transactions | None = field(default=None, init=False, repr=False)

    def __post_init__(self, background_merges: bool) -> None:
        self.rows = RowEngine(self.store, background_merges=background_merges)

    def snapshot(self, as_of: Any = None, table: Key | None = None) -> Snapshot:
        """The latest state, or the state as of a time (QueryAsOfTime); a time before the history the
        warehouse keeps is InvalidInputException (the caller's choice of time, not damage). ``table``:
        a read of that one table (its log alone is read to find what changed)."""
        if as_of is None:
            return self.store.latest() if table is None else self.store.latest_for(table)
        try:
            return self.store.as_of(as_of)
        except HistoryExpired as e:
            raise InvalidInputException(
                f"QueryAsOfTime: {as_of} is before the history this warehouse keeps "
                "(gluecat compact --retain-hours sets how long it keeps it)"
            ) from e

    def read_snapshot(
        self, as_of: Any = None, transaction_id: str | None = None, table: Key | None = None
    ) -> Snapshot:
        """The state a read sees: the latest, as of a time (QueryAsOfTime), or in a transaction
        (TransactionId: its start state and its own writes); both together are InvalidInputException.
        ``table``: a read of that one table."""
        exclusive(as_of, transaction_id)
        if transaction_id is not None:
            return self.transactions().read_snapshot(transaction_id)[1]
        return self.snapshot(as_of, table)

    def transactions(self) -> Transactions:
        """This store's Lake Formation transactions (their journal is opened on first use)."""
        if self._transactions is None:
            with _TRANSACTIONS_LOCK:
                if self._transactions is None:
                    from gluecat.catalog.transactions import Transactions

                    self._transactions = Transactions(self)
        return self._transactions

    def check_catalog_id(self, catalog_id: str | None) -> None:
        if catalog_id is not None and catalog_id != self.catalog_id:
            raise EntityNotFoundException(
                f"Catalog {catalog_id} not found (this catalog is {self.catalog_id})"
            )


MAX_LOG_SCAN = 256
"""Past this many commits, reading the log to prove something unchanged costs more than reading it
again."""


def commits_since(ctx: Context, version: int) -> tuple[int, Iterator[Entry]] | None:
    """The latest warehouse version and the log entries of the commits after ``version`` up to it; None
    when they are not worth reading (more than MAX_LOG_SCAN) or ``version`` is not a version read."""
    latest = ctx.store.latest().version
    if version < 0 or version > latest or latest - version > MAX_LOG_SCAN:
        return None
    return latest, ctx.store.log_entries(version, latest)


def records_unchanged_since(ctx: Context, version: int, counts: Callable[[str, Key], bool]) -> int | None:
    """The latest warehouse version, if no commit after ``version`` put or deleted a record that
    ``counts(kind, key)``; else None (also when that is not known: too many commits to read, or
    history expired). What a listing read in several calls checks, to know it is of one state."""
    since = commits_since(ctx, version)
    if since is None:
        return None
    latest, entries = since
    for entry in entries:
        if entry.expired is not None:
            return None
        try:
            records = ctx.store.entry_records(entry)
        except StorageError:
            return None
        if any(counts(kind, key) for kind, key in records):
            return None
    return latest


def copy_doc(doc: Any) -> Any:
    """A caller's own copy of a stored document (stored documents are shared and never mutated).

    Documents hold only dicts, lists and immutable scalars, so this is copy.deepcopy without its
    memo and dispatch (several times faster, which GetTables of 100 tables notices).
    """
    if isinstance(doc, dict):
        return {k: copy_doc(v) for k, v in doc.items()}
    if isinstance(doc, list):
        return [copy_doc(v) for v in doc]
    return doc


def base_type(hive_type: str) -> str:
    """The type's name without its parameters: ``varchar(10)`` is varchar, ``array<int>`` is array."""
    return hive_type.split("(", 1)[0].split("<", 1)[0].strip().lower()


def type_spelling(glue_type: str) -> str:
    """A Hive type name as compared for a change: case and spaces ignored (``DECIMAL(10, 2)`` is
    ``decimal(10,2)``)."""
    return "".join(glue_type.lower().split())


def partition_key_count(table: dict[str, Any]) -> int:
    return len(table.get("PartitionKeys") or [])


def missing_database(name: str) -> str:
    """What a read of a database that is not there (or not for the caller to see) says."""
    return f"Database {name} not found."


def missing_table(database: str, name: str) -> str:
    return f"Table {name} not found."  # AWS Glue's words


def require_database(snap: Snapshot, name: str) -> Any:
    db = snap.get(DATABASE, (name,))
    if db is None:
        raise EntityNotFoundException(missing_database(name))
    return db


def require_table(snap: Snapshot, database: str, name: str) -> Any:
    require_database(snap, database)
    table = snap.get(TABLE, (database, name))
    if table is None:
        raise EntityNotFoundException(missing_table(database, name))
    return table


def require_table_at(ctx: Context, snap: Snapshot, database: str, name: str, as_of: Any) -> Any:
    """``require_table``, in a read as of a time (QueryAsOfTime): a table missing then is said to have
    not existed at that time, and when the table of that name now was made, rather than plainly not
    found, which reads as if it did not exist now either."""
    try:
        return require_table(snap, database, name)
    except EntityNotFoundException:
        if as_of is None:
            raise
    now = ctx.snapshot().get(TABLE, (database, name))
    made = f" (it was made at {now['CreateTime'].isoformat()})" if now is not None else ""
    raise EntityNotFoundException(
        f"Table {name} not found in database {database}: it did not exist at QueryAsOfTime "
        f"{as_of.isoformat()}{made}."
    )


def exclusive(as_of: Any, transaction_id: str | None) -> None:
    if as_of is not None and transaction_id is not None:
        raise InvalidInputException("QueryAsOfTime: cannot be specified along with TransactionId")
