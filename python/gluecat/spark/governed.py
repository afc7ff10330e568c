"""Governed tables in Spark: each write job is one Lake Formation transaction, each read plans from the
table's object set (docs/governed.md).

A job's life cycle, as the shim drives it:

- begin: a READ_AND_WRITE transaction starts, kept alive by a heartbeat while the job runs; Spark's
  writers put the job's files in ``<table folder>/.gluecat-tx-<transaction id>``, a folder named by the
  transaction so that whoever finds it later can tell whether its job ended.
- commit: each file's final place (``<table folder>/<partition path>/<file>``) is recorded with
  DeleteObjectsOnCancel; UpdateTableObjects registers the files there (an overwrite also deletes the
  objects it replaces, read in the same transaction); the files move there, and the transaction commits.
  Any failure cancels it, which deletes the moved files (gluecat.catalog.transactions).
- a killed job: its heartbeat stops and the transaction aborts on its idle timeout, which deletes the files
  already moved; the next write to the table removes the folders of ended transactions, which hold the
  rest.

ETags are the files' MD5 digests in hex, as S3 gives them for single-part uploads.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import posixpath
import threading
import time
import urllib.parse
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.fs as pafs

from gluecat import LakeFormation, locations
from gluecat.catalog.background import stop_at_exit
from gluecat.catalog.governed import WAREHOUSE_VERSION
from gluecat.catalog.objects import canonical_value, is_governed, keys_of
from gluecat.catalog.transactions import DEFAULT_TIMEOUT_SECONDS, STALE_COMMIT_SECONDS
from gluecat.data.files import data_file_infos, delete_tree, filesystem, table_location
from gluecat.errors import (
    ConcurrentModificationException,
    EntityNotFoundException,
    GlueError,
    InternalServiceException,
    InvalidInputException,
    OperationTimeoutException,
    TransactionCanceledException,
    TransactionCommittedException,
)
from gluecat.spark.remote import GlueClient, RemoteCatalog, RemoteLakeFormation

LakeFormationClient = LakeFormation | RemoteLakeFormation
TX_FOLDER_PREFIX = ".gluecat-tx-"
BATCH = 100  # UpdateTableObjects and DeleteObjectsOnCancel take at most 100 entries a call
_HASH_THREADS = 4
_CHUNK = 1 << 20
_NULL_VALUE = "__HIVE_DEFAULT_PARTITION__"

__all__ = ["BATCH", "TX_FOLDER_PREFIX", "GovernedWrites", "is_governed", "md5_hex", "objects_answer"]


def md5_hex(path: str, fs: pafs.FileSystem) -> str:
    """A file's MD5 digest in hex: its ETag."""
    digest = hashlib.md5(usedforsecurity=False)
    with fs.open_input_stream(path) as f:
        while chunk := f.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


# What a URI's path may hold unescaped (RFC 3986 pchar and "/"); anything else, "%" among it, is
# percent-encoded, so that a folder Spark named with escapes (p=a%3Ab) is the folder the URI names.
_URI_PATH_SAFE = "/:@!$&'()*+,;=-._~"


def _uri(location: str, path: str) -> str:
    """A file's URI as objects hold it: ``file:///...`` for a local file, the table location's scheme
    otherwise, its path percent-encoded: pyarrow reads it as that file, and the shim too (shim_uri)."""
    if "://" in location and not location.startswith("file:"):
        scheme = location.split("://", 1)[0]
        return f"{scheme}://{urllib.parse.quote(path.lstrip('/'), safe=_URI_PATH_SAFE)}"
    return "file://" + urllib.parse.quote(path, safe=_URI_PATH_SAFE)


def shim_uri(uri: str) -> str:
    """An object's URI as the shim reads it: Hadoop's Path of a string takes no escapes, where pyarrow
    decodes them, so the path is handed over decoded (the same file for both)."""
    if "%" not in uri:  # most: a read may hand over a million, and urlsplit is the cost of each
        return uri
    parts = urllib.parse.urlsplit(uri)
    if not parts.scheme or "%" not in parts.path:
        return uri
    path = urllib.parse.unquote(parts.path)
    return f"{parts.scheme}://{parts.netloc}{path}" if parts.netloc else f"{parts.scheme}:{path}"


def transaction_of(folder: str) -> str:
    """The transaction a job's folder is named by."""
    name = folder.rstrip("/").rsplit("/", 1)[-1]
    if not name.startswith(TX_FOLDER_PREFIX):
        raise InvalidInputException(f"{folder} is not a gluecat governed write's folder")
    return name[len(TX_FOLDER_PREFIX) :]


_ENDED = (TransactionCommittedException, TransactionCanceledException, EntityNotFoundException)
"""What extending a transaction that has ended raises."""


class _Heartbeat:
    """Keeps the transactions of running jobs alive (ExtendTransaction every third of their timeout);
    when the process dies, so does the heartbeat, and the transactions time out."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._due: dict[str, tuple[LakeFormationClient, float]] = {}
        self._thread: threading.Thread | None = None
        self._stopping = threading.Event()
        stop_at_exit(self)

    def add(self, lf: LakeFormationClient, tx: str) -> None:
        with self._lock:
            self._due[tx] = (lf, time.monotonic() + lf.transaction_timeout / 3)
            if self._stopping.is_set():
                return
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._loop, name="gluecat-heartbeat", daemon=True)
                self._thread.start()

    def remove(self, tx: str) -> None:
        with self._lock:
            self._due.pop(tx, None)

    def stop(self) -> None:
        """Beat no more (the interpreter is exiting: a beat cut off inside the object store's client
        would abort the process). A beat under way ends first; the jobs' transactions then idle out."""
        self._stopping.set()
        with self._lock:
            thread = self._thread
        if thread is not None:
            thread.join(timeout=60)

    def _loop(self) -> None:
        while not self._stopping.is_set():
            with self._lock:
                if not self._due:
                    self._thread = None
                    return
                now = time.monotonic()
                due = [(tx, lf) for tx, (lf, at) in self._due.items() if at <= now]
                for tx, lf in due:
                    self._due[tx] = (lf, now + lf.transaction_timeout / 3)
                wait = min(at for _, at in self._due.values()) - now
            for tx, lf in due:
                try:
                    lf.extend_transaction(TransactionId=tx)
                except _ENDED:
                    # Ended by another (canceled, aborted by a conflict, timed out): nothing to keep
                    # alive. Its job's commit or abort says so; a driver that runs many jobs must not
                    # go on asking for every such transaction for its life.
                    self.remove(tx)
                except GlueError:
                    pass  # a passing failure: the next beat tries again
            self._stopping.wait(min(max(wait, 0.05), 1.0))
        with self._lock:
            self._thread = None


@dataclass
class _File:
    values: list[str]
    source: str
    target: str
    size: int
    etag: str = ""


class GovernedWrites:
    """The write jobs and reads of one warehouse's governed tables, on its Lake Formation API."""

    def __init__(self, catalog: GlueClient) -> None:
        self.catalog = catalog
        self._clients: dict[float, LakeFormation] = {}
        self._heartbeat = _Heartbeat()

    def lake_formation(self, timeout: float | None = None) -> LakeFormationClient:
        """The Lake Formation client whose transactions idle out after ``timeout`` seconds (a catalog
        service's: after the server's own timeout, at the same endpoint)."""
        if isinstance(self.catalog, RemoteCatalog):
            return self.catalog.lake_formation()
        key = float(timeout or DEFAULT_TIMEOUT_SECONDS)
        if key not in self._clients:
            self._clients[key] = LakeFormation(self.catalog, transaction_timeout=key)
        return self._clients[key]

    # -- reads -------------------------------------------------------------------------------------

    def objects(
        self,
        table: dict[str, Any],
        filters: list[dict[str, Any]],
        transaction: str | None,
        as_of: Any,
        version: int | None = None,
    ) -> pa.Table:
        """The objects of the partitions matching Spark's pushed filters, at a transaction, a time, a
        warehouse version, or now (the version read in the answer's metadata, ``WAREHOUSE_VERSION``)."""
        return self.lake_formation().get_table_objects_arrow(
            DatabaseName=table["DatabaseName"],
            TableName=table["Name"],
            SparkFilters=filters,
            TransactionId=transaction,
            QueryAsOfTime=as_of,
            WarehouseVersion=version,
        )

    def committed(self, transaction: str) -> None:
        """VERSION AS OF reads a committed transaction only: an active one's writes are not the table's."""
        status = self.lake_formation().describe_transaction(TransactionId=transaction)
        state = status["TransactionDescription"]["TransactionStatus"]
        if state != "COMMITTED":
            raise InvalidInputException(
                f"VERSION AS OF '{transaction}': the transaction is {state}; only a committed transaction's "
                "state can be read"
            )

    # -- writes ------------------------------------------------------------------------------------

    def begin(self, table: dict[str, Any], timeout: float | None, loaded_version: int | None = None) -> str:
        """Starts a job's transaction; answers the folder its files go to, named by the transaction.

        ``loaded_version`` is the warehouse's version when Spark loaded the table for the write, before it
        planned the query's reads: the transaction starts there, so that a commit made after the query read
        the table, to a partition the job writes, conflicts; starting later, an overwrite would delete
        that commit's objects unread (INSERT OVERWRITE t SELECT ... FROM t)."""
        location = table_location(table)
        self.sweep(table)
        lf = self.lake_formation(timeout)
        if loaded_version is None:
            tx = lf.start_transaction()["TransactionId"]
        else:
            tx = lf.start_transaction_at_version(WarehouseVersion=loaded_version)["TransactionId"]
        self._heartbeat.add(lf, tx)
        return f"{location}/{TX_FOLDER_PREFIX}{tx}"

    def sweep(self, table: dict[str, Any]) -> list[str]:
        """Removes the folders of ended jobs' transactions in the table's folder (a killed job's files);
        asking about a transaction idle past its timeout aborts it, which deletes the files it had moved.
        Answers the folders removed."""
        location = table_location(table)
        fs, path = filesystem(location)
        lf = self.lake_formation()
        removed = []
        for info in fs.get_file_info(pafs.FileSelector(path, allow_not_found=True)):
            name = info.path.rstrip("/").rsplit("/", 1)[-1]
            if info.type != pafs.FileType.Directory or not name.startswith(TX_FOLDER_PREFIX):
                continue
            try:
                got = lf.describe_transaction(TransactionId=name[len(TX_FOLDER_PREFIX) :])
            except GlueError:
                continue  # not a transaction of this warehouse: not ours to remove
            if got["TransactionDescription"]["TransactionStatus"] in ("ABORTED", "COMMITTED"):
                fs.delete_dir(info.path)
                removed.append(f"{location}/{name}")
        return removed

    @staticmethod
    def owns(folder: str) -> bool:
        """Whether a job's folder is a governed write's."""
        return folder.rstrip("/").rsplit("/", 1)[-1].startswith(TX_FOLDER_PREFIX)

    def abort(self, folder: str) -> None:
        """A failed job: its transaction is canceled (deleting any file it moved) and its folder removed."""
        tx = transaction_of(folder)
        self._heartbeat.remove(tx)
        try:
            with contextlib.suppress(GlueError):  # ended already (a conflict aborted it, or it timed out)
                self.lake_formation().cancel_transaction(TransactionId=tx)
        finally:
            delete_tree(folder)

    def commit(
        self,
        table: dict[str, Any],
        folder: str,
        mode: str,
        written: list[dict[str, Any]],
        overwrite: list[list[str]],
    ) -> None:
        """Registers a finished job's files and commits its transaction (see the module's docstring);
        ``written`` is each partition written (its folder under the job's ``fragment``, its values),
        ``mode`` APPEND, OVERWRITE_BY_FILTER (``overwrite``: the values of the partitions Spark's filters
        match, as the shim evaluated them), OVERWRITE_DYNAMIC or TRUNCATE."""
        tx = transaction_of(folder)
        lf = self.lake_formation()
        db, name = table["DatabaseName"], table["Name"]
        fs, _ = filesystem(folder)
        moved: list[str] = []
        try:
            files = self._files(table, folder, written)
            for batch in _batches(files):
                lf.delete_objects_on_cancel(
                    DatabaseName=db,
                    TableName=name,
                    TransactionId=tx,
                    Objects=[{"Uri": f.target, "ETag": f.etag} for f in batch],
                )
            operations: list[dict[str, Any]] = [
                {"DeleteObject": {"Uri": uri, **({"PartitionValues": values} if values else {})}}
                for values, uri in self._replaced(table, tx, mode, written, overwrite)
            ]
            operations += [
                {
                    "AddObject": {
                        "Uri": f.target,
                        "ETag": f.etag,
                        "Size": f.size,
                        **({"PartitionValues": f.values} if f.values else {}),
                    }
                }
                for f in files
            ]
            for start in range(0, len(operations), BATCH):
                lf.update_table_objects(
                    DatabaseName=db,
                    TableName=name,
                    TransactionId=tx,
                    WriteOperations=operations[start : start + BATCH],
                )
            # Checked and staged: now the files take their places (recorded for deletion on cancel).
            for f in files:
                _, to = locations.filesystem(f.target)  # a URI gluecat made: percent-encoded
                fs.create_dir(posixpath.dirname(to), recursive=True)
                fs.move(f.source, to)
                moved.append(to)
            self._heartbeat.remove(tx)
            _commit(lf, tx)
        except BaseException:
            # Canceling deletes the files moved so far; a commit that raised ConcurrentModificationException
            # aborted the transaction already (and deleted them), so the cancel has nothing left to do.
            self._heartbeat.remove(tx)
            with contextlib.suppress(GlueError):
                lf.cancel_transaction(TransactionId=tx)
            _remove_if_aborted(lf, tx, fs, moved)
            raise
        finally:
            delete_tree(folder)

    def truncate(self, table: dict[str, Any], partitions: list[list[str]] | None) -> None:
        """TRUNCATE TABLE [PARTITION (...)]: one transaction deleting the objects of the table (or of those
        partitions); their files stay, for reads of earlier versions."""
        lf = self.lake_formation()
        tx = lf.start_transaction()["TransactionId"]
        try:
            mode, written = "TRUNCATE", []
            if partitions is not None and table.get("PartitionKeys"):
                mode, written = "OVERWRITE_DYNAMIC", [{"values": v} for v in partitions]
            deletes = [
                {"DeleteObject": {"Uri": uri, **({"PartitionValues": values} if values else {})}}
                for values, uri in self._replaced(table, tx, mode, written, [])
            ]
            for start in range(0, len(deletes), BATCH):
                lf.update_table_objects(
                    DatabaseName=table["DatabaseName"],
                    TableName=table["Name"],
                    TransactionId=tx,
                    WriteOperations=deletes[start : start + BATCH],
                )
            lf.commit_transaction(TransactionId=tx)
        except BaseException:
            with contextlib.suppress(GlueError):
                lf.cancel_transaction(TransactionId=tx)
            raise

    def _files(self, table: dict[str, Any], folder: str, written: list[dict[str, Any]]) -> list[_File]:
        """The job's files with their final places, sizes and ETags (hashed on a few threads: hashlib
        releases the GIL)."""
        base = table_location(table)
        _, base_path = filesystem(base)
        fs, _ = filesystem(folder)
        files = []
        for w in written:
            source = f"{folder}/{w['fragment']}" if w["fragment"] else folder
            # Spark's folder name as Spark wrote it (p=a%3Ab), not read as a URI (which would decode it).
            target_path = f"{base_path.rstrip('/')}/{w['fragment']}" if w["fragment"] else base_path
            for info in data_file_infos(source):  # sizes from the listing: no request per file
                files.append(
                    _File(
                        values=list(w["values"]),
                        source=info.path,
                        target=_uri(base, f"{target_path.rstrip('/')}/{posixpath.basename(info.path)}"),
                        size=int(info.size or 0),
                    )
                )
        with ThreadPoolExecutor(_HASH_THREADS) as pool:
            for f, etag in zip(files, pool.map(lambda f: md5_hex(f.source, fs), files), strict=True):
                f.etag = etag
        return files

    def _replaced(
        self,
        table: dict[str, Any],
        tx: str,
        mode: str,
        written: list[dict[str, Any]],
        overwrite: list[list[str]],
    ) -> Iterator[tuple[list[str], str]]:
        """The objects an overwrite replaces, as the transaction reads them: those of the partitions
        ``overwrite`` names (OVERWRITE_BY_FILTER: the partitions its filters match), of every partition
        (TRUNCATE), of the partitions the job wrote (OVERWRITE_DYNAMIC, and the static ones too, as Hive
        overwrites them).

        Objects committed to those partitions since the transaction started (which is before the job's
        query read the table) are ConcurrentModificationException: the query may have read them, and
        the transaction cannot delete what it does not see; a partition the job writes would conflict
        at commit anyway, but one an overwrite only empties would not."""
        if mode == "APPEND":
            return
        keys = [k["Name"] for k in table.get("PartitionKeys") or []]
        lf = self.lake_formation()
        args: dict[str, Any] = {"DatabaseName": table["DatabaseName"], "TableName": table["Name"]}
        wanted: set[tuple[str, ...]] | None = None  # None: every partition
        narrowing: list[dict[str, Any]] = []
        if keys and mode != "TRUNCATE":
            written_values = [list(w["values"]) for w in written]
            if mode == "OVERWRITE_BY_FILTER":
                written_values += [list(v) for v in overwrite]
            # As objects keep them: Spark spells a decimal(10,2) key's value 1.50, objects keep 1.5.
            written_values = [_as_kept(table, v) for v in written_values]
            if not written_values:
                return
            # The replaced partitions' objects, by an equality filter per key's values.
            wanted = {tuple(v) for v in written_values}
            for i, k in enumerate(keys):
                column = sorted({v[i] for v in written_values})
                if _NULL_VALUE not in column:  # Hive's null marker is no value of a typed key
                    narrowing.append({"op": "In", "attribute": k, "values": column})

        def replaced(**at: Any) -> dict[str, list[str]]:
            rows = lf.get_table_objects_arrow(**args, **at, SparkFilters=narrowing)
            return {uri: v for v, uri in _pairs(rows, keys) if wanted is None or tuple(v) in wanted}

        mine = replaced(TransactionId=tx)
        for uri, values in replaced().items():
            if uri not in mine:
                name = f"{table['DatabaseName']}.{table['Name']}"
                raise ConcurrentModificationException(
                    f"The objects of partition {json.dumps(values, separators=(',', ':'))} of {name}, which "
                    f"the overwrite replaces, were changed by a commit made after transaction {tx} started"
                )
        yield from ((values, uri) for uri, values in mine.items())


def _commit(lf: LakeFormationClient, tx: str) -> None:
    """Commits a job's transaction. A commit that failed for the store's sake (not a conflict) may have
    published already, and is finished by whoever reads the transaction once it is stale: the job's
    error says so rather than let the job's data appear after a failure that did not mention it."""
    try:
        lf.commit_transaction(TransactionId=tx)
    except (InternalServiceException, OperationTimeoutException) as e:
        raise type(e)(
            f"{e.message} (the commit of transaction {tx} did not finish: its outcome is unknown until it is "
            f"finished, committed or aborted, by the first call that reads it after {STALE_COMMIT_SECONDS:g} "
            "s; its data may still appear. describe_transaction tells the outcome)"
        ) from e


def _remove_if_aborted(lf: LakeFormationClient, tx: str, fs: pafs.FileSystem, moved: list[str]) -> None:
    """The files a failed job moved into place, deleted once its transaction is known to be ABORTED. An
    abort by someone else (a cancel, its idle timeout noticed) may have deleted its recorded files before
    they were moved there, and nothing else would; a commit whose outcome is unknown keeps them."""
    if not moved:
        return
    try:
        got = lf.describe_transaction(TransactionId=tx)["TransactionDescription"]
    except GlueError:
        return
    if got["TransactionStatus"] != "ABORTED":
        return
    for path in moved:
        # Gone already (the abort deleted it), or it stays: the job's own error is the one to report.
        with contextlib.suppress(OSError):
            fs.delete_file(path)


def objects_answer(rows: pa.Table, keys: list[str]) -> dict[str, Any]:
    """Objects as the shim reads them: a column of values per key, then each object's URI and size, and
    the warehouse version they were read at."""
    read_at = (rows.schema.metadata or {}).get(WAREHOUSE_VERSION.encode())
    return {
        "version": int(read_at) if read_at is not None else None,
        "values": [rows.column(k).to_pylist() for k in keys],
        "uris": [shim_uri(str(u)) for u in rows.column("Uri").to_pylist()],
        "sizes": rows.column("Size").to_pylist(),
    }


def _as_kept(table: dict[str, Any], values: list[str]) -> list[str]:
    """Partition values as Spark spells them, in the canonical form objects keep them in; a value no key
    of its type takes (Hive's null marker in an integer key) stays as it is: no object has it."""
    out = []
    for value, (_, glue_type) in zip(values, keys_of(table), strict=True):
        try:
            out.append(canonical_value(value, glue_type, "PartitionValues"))
        except InvalidInputException:
            out.append(value)
    return out


def _pairs(rows: pa.Table, keys: list[str]) -> list[tuple[list[str], str]]:
    """Each object's partition values and URI."""
    uris = [str(u) for u in rows.column("Uri").to_pylist()]
    if not keys:
        return [([], uri) for uri in uris]
    columns = [rows.column(k).to_pylist() for k in keys]
    return [(list(v), uri) for v, uri in zip(zip(*columns, strict=True), uris, strict=True)]


def _batches(files: list[_File]) -> Iterator[list[_File]]:
    for start in range(0, len(files), BATCH):
        yield files[start : start + BATCH]
