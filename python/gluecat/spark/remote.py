"""The Spark plugin's catalog over the Glue API: ``RemoteCatalog`` answers the calls that
gluecat.spark.backend makes of a ``gluecat.Catalog``, with botocore's Glue and Lake Formation clients of
an endpoint (``gluecat serve``, any Glue-compatible service, or AWS Glue itself), built from the standard
AWS chain: credentials, region and CA bundle from the environment, ``~/.aws`` and the profile, exactly as
boto3 finds them.

What Glue's API lacks, by the server:

- gluecat (GetGluecatInfo answers): its own operations (gluecat.api.extensions) do what the local
  catalog does, in one commit each: CommitPartitions, UpdateTableAsRead, DeleteTableAsRead, RenameTable.
- any other Glue: what AWS's own clients do, not atomic: a write's partitions are BatchCreatePartition
  and BatchDeletePartition calls; an update of the table read is UpdateTable with its VersionId (Glue's
  optimistic lock; a table dropped and made again since, back at the same VersionId, is not told apart),
  and its column statistics go in calls of their own; a drop checks the table read, then deletes it; a
  rename is CreateTable, the partitions copied, the indexes made again, then DeleteTable (EMR's Glue
  client renames so too), undone as far as it got if a step fails.

Pushed filters travel as GetPartitions' Expression (where the server's indexes prune); a table of more
than one page is read again in Segments, in parallel. Reads are kept for the Spark statement that made
them (the shim names it with each call), never longer: any other statement, and any change, reads
afresh, so another application's commit is seen by the next statement.
"""

from __future__ import annotations

import atexit
import contextlib
import copy
import json
import shutil
import tempfile
import threading
import urllib.parse
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

import pyarrow as pa
from botocore.exceptions import BotoCoreError, ClientError, ParamValidationError

from gluecat.api import extensions
from gluecat.api.client import Catalog
from gluecat.api.pages import every
from gluecat.errors import (
    ConcurrentModificationException,
    EntityNotFoundException,
    GlueError,
    InternalServiceException,
    InvalidInputException,
    error_class,
)
from gluecat.spark.pushed import expression
from gluecat.spark.remote_lake_formation import RemoteLakeFormation

PAGE = 1000  # GetPartitions' and GetTableObjects' largest page
SEGMENTS = 4
"""How many segments of a table of more than one page are read at once (Glue allows up to 10)."""
_CREATE_BATCH, _DELETE_BATCH = 100, 25  # BatchCreatePartition's and BatchDeletePartition's limits
DEFAULT_REGION = "us-east-1"
"""The region signed for when an endpoint is given and the AWS chain names none (gluecat serve's)."""

# The Glue reads a statement may answer from what it read before (each is keyed by its parameters).
_READS = frozenset(
    {
        "get_database",
        "get_databases",
        "get_table",
        "get_tables",
        "get_table_versions",
        "get_partition",
        "get_partitions",
        "batch_get_partition",
        "get_partition_indexes",
        "get_column_statistics_for_table",
    }
)


# What a Glue that lacks an operation answers (moto's server, for one): AWS's code for an operation it does
# not know, or a bare HTTP status for an error the service model does not name.
_NOT_IMPLEMENTED = frozenset(
    {"UnknownOperationException", "InvalidAction", "NotImplemented", "NotImplementedException"}
)
# Reads of what such a Glue may not keep, answered as if it kept none: column statistics (then Spark plans
# without them) and partition indexes (the server scans).
_OPTIONAL: dict[str, dict[str, Any]] = {
    "get_column_statistics_for_table": {"ColumnStatisticsList": [], "Errors": []},
    "get_partition_indexes": {"PartitionIndexDescriptorList": []},
}


class NotImplementedByServer(InvalidInputException):
    """The catalog service lacks the operation (moto's server lacks column statistics and indexes)."""


# -- the client -------------------------------------------------------------------------------------


_MODELS: Path | None = None
_MODELS_LOCK = threading.Lock()


def _extension_models() -> Path:
    """A folder holding gluecat's extension model for botocore's loader (written once per process)."""
    global _MODELS
    with _MODELS_LOCK:
        if _MODELS is None:
            folder = Path(tempfile.mkdtemp(prefix="gluecat-botocore-"))
            atexit.register(shutil.rmtree, folder, True)
            _MODELS = extensions.write_client_model(folder)
        return _MODELS


def _without_none(params: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in params.items() if v is not None}


class RemoteCatalog:
    """What gluecat.spark.backend asks of a catalog, over a Glue endpoint (see the module's doc).

    ``endpoint`` is the service's URL (None: AWS Glue of the region); ``region`` and ``profile`` choose
    as boto3's options do; ``warehouse`` is where tables made without a location go
    (``<warehouse>/<db>.db/<table>``, for a database without a LocationUri): by default gluecat serve's
    own, and none for another Glue (such a database then needs a LOCATION).
    """

    def __init__(
        self,
        endpoint: str | None = None,
        *,
        region: str | None = None,
        profile: str | None = None,
        warehouse: str | None = None,
        segments: int = SEGMENTS,
    ) -> None:
        import botocore.session
        from botocore.config import Config

        self.segments = segments
        session = botocore.session.Session(profile=profile)
        # Before any client is made: the loader lists the services it knows once.
        session.get_component("data_loader").search_paths.append(str(_extension_models()))
        region = region or session.get_config_variable("region") or (DEFAULT_REGION if endpoint else None)
        if region is None:
            raise InvalidInputException(
                "region: the AWS chain names no region for AWS Glue; set the catalog's region option "
                "(or AWS_REGION, or a region in the profile)"
            )
        self.region = region
        config = Config(
            retries={"mode": "standard", "max_attempts": 3},
            max_pool_connections=max(10, 2 * segments),
            tcp_keepalive=True,
        )
        kwargs: dict[str, Any] = {"region_name": region, "config": config}
        if endpoint:
            kwargs["endpoint_url"] = endpoint
        self._glue = session.create_client("glue", **kwargs)
        self._lf = session.create_client("lakeformation", **kwargs)
        # gluecat's operations go where Glue's go: the endpoint, or one the AWS chain names
        # (AWS_ENDPOINT_URL_GLUE, a profile's endpoint_url); AWS Glue itself is not gluecat.
        self.endpoint = endpoint or str(self._glue.meta.endpoint_url)
        aws = urllib.parse.urlsplit(self.endpoint).hostname or ""
        self._gluecat_client: Any = None
        if not aws.endswith((".amazonaws.com", ".amazonaws.com.cn")):
            self._gluecat_client = session.create_client(
                extensions.SERVICE, **{**kwargs, "endpoint_url": self.endpoint}
            )
        self._warehouse = warehouse
        self._info: dict[str, Any] | None = None  # GetGluecatInfo's answer ({} from another Glue), once known
        self._local = threading.local()
        self._lock = threading.Lock()
        self._reads: dict[tuple[str, str], Any] = {}
        self._reads_of: str | None = None
        self._lake_formation: RemoteLakeFormation | None = None
        self._lacking: set[str] = set()
        """The operations the server answered it does not implement, not asked again."""

    def _server(self) -> dict[str, Any]:
        """What GetGluecatInfo answered ({} when the server is another Glue), asked once it answers."""
        if self._info is not None:
            return self._info
        info: dict[str, Any] = {}
        if self._gluecat_client is not None:
            try:
                info = self._gluecat_client.get_gluecat_info().get("Gluecat") or {}
            except ClientError as e:
                if _code(e) in (
                    "AccessDeniedException",
                    "UnrecognizedClientException",
                    "InvalidSignatureException",
                ):
                    raise _glue_error(e) from None  # the credentials, not the server, are wrong: say so
            except BotoCoreError as e:  # not reached: asked again at the next call
                raise InternalServiceException(
                    f"The catalog at {self.endpoint} cannot be reached: {e}"
                ) from e
        self._info = info
        return info

    @property
    def gluecat(self) -> bool:
        """Whether the server is gluecat (then its own operations are used)."""
        return bool(self._server())

    @property
    def warehouse(self) -> str | None:
        """Where tables made without a location go: the catalog's option, else gluecat serve's own."""
        if self._warehouse is not None:
            return self._warehouse
        found = self._server().get("Warehouse")
        return str(found) if found else None

    @property
    def _extensions(self) -> Any:
        return self._gluecat_client if self.gluecat else None

    def __repr__(self) -> str:
        kind = "gluecat" if self.gluecat else "Glue"
        return f"RemoteCatalog({kind} at {self.endpoint})"

    # -- statements and calls --------------------------------------------------------------------

    @contextmanager
    def statement(self, statement: str | None) -> Iterator[None]:
        """Calls made inside are for Spark statement ``statement`` (None: not known, nothing kept)."""
        before = getattr(self._local, "statement", None)
        self._local.statement = statement
        try:
            yield
        finally:
            self._local.statement = before

    def forget(self) -> None:
        """Drop every read kept: a change was made."""
        with self._lock:
            self._reads = {}

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        """One Glue call (boto3's method name), its error as gluecat's error class of the same code."""
        return self._call(self._glue, method, params)

    def _call(self, client: Any, method: str, params: dict[str, Any]) -> dict[str, Any]:
        if method in self._lacking:
            return self._lacks(method)
        try:
            return self._send(client, method, params)
        except GlueError as e:
            if client is self._gluecat_client or not _not_implemented(e.code):
                raise
            self._lacking.add(method)
            return self._lacks(method)

    def _lacks(self, method: str) -> dict[str, Any]:
        """What a read of something the server does not keep answers; a change of it is refused."""
        if method in _OPTIONAL:
            return copy.deepcopy(_OPTIONAL[method])
        operation = "".join(part.title() for part in method.split("_"))
        raise NotImplementedByServer(f"{operation}: the catalog at {self.endpoint} does not implement it")

    def _send(self, client: Any, method: str, params: dict[str, Any]) -> dict[str, Any]:
        params = _without_none(params)
        statement = getattr(self._local, "statement", None)
        key: tuple[str, str] | None = None
        if method in _READS and client is self._glue:
            if statement is not None:
                key = (method, json.dumps(params, sort_keys=True, default=str))
                with self._lock:
                    if self._reads_of == statement and key in self._reads:
                        return copy.deepcopy(self._reads[key])
        else:
            self.forget()
        try:
            result: dict[str, Any] = getattr(client, method)(**params)
        except ClientError as e:
            raise _glue_error(e) from None
        except ParamValidationError as e:
            raise InvalidInputException(str(e)) from None
        except BotoCoreError as e:
            raise InternalServiceException(f"The catalog at {self.endpoint} cannot be reached: {e}") from e
        finally:
            if key is None:
                self.forget()  # also after: a read of this statement made meanwhile may predate it
        result.pop("ResponseMetadata", None)
        if key is not None:
            with self._lock:
                if self._reads_of != statement:
                    self._reads, self._reads_of = {}, statement
                self._reads[key] = copy.deepcopy(result)
        return result

    def _extension(self, method: str, **params: Any) -> dict[str, Any]:
        return self._call(self._extensions, method, params)

    # -- Glue's operations ---------------------------------------------------------------------------

    def get_database(self, **params: Any) -> dict[str, Any]:
        return self.call("get_database", **params)

    def get_databases(self, **params: Any) -> dict[str, Any]:
        return self.call("get_databases", **params)

    def create_database(self, **params: Any) -> dict[str, Any]:
        return self.call("create_database", **params)

    def update_database(self, **params: Any) -> dict[str, Any]:
        return self.call("update_database", **params)

    def delete_database(self, **params: Any) -> dict[str, Any]:
        return self.call("delete_database", **params)

    def get_table(self, **params: Any) -> dict[str, Any]:
        return self.call("get_table", **params)

    def get_tables(self, **params: Any) -> dict[str, Any]:
        return self.call("get_tables", **params)

    def create_table(self, **params: Any) -> dict[str, Any]:
        return self.call("create_table", **params)

    def update_table(self, **params: Any) -> dict[str, Any]:
        return self.call("update_table", **params)

    def delete_table(self, **params: Any) -> dict[str, Any]:
        return self.call("delete_table", **params)

    def get_table_versions(self, **params: Any) -> dict[str, Any]:
        return self.call("get_table_versions", **params)

    def get_partition(self, **params: Any) -> dict[str, Any]:
        return self.call("get_partition", **params)

    def get_partitions(self, **params: Any) -> dict[str, Any]:
        return self.call("get_partitions", **params)

    def batch_get_partition(self, **params: Any) -> dict[str, Any]:
        return self.call("batch_get_partition", **params)

    def update_partition(self, **params: Any) -> dict[str, Any]:
        return self.call("update_partition", **params)

    def batch_create_partition(self, **params: Any) -> dict[str, Any]:
        return self.call("batch_create_partition", **params)

    def batch_delete_partition(self, **params: Any) -> dict[str, Any]:
        return self.call("batch_delete_partition", **params)

    def create_partition_index(self, **params: Any) -> dict[str, Any]:
        return self.call("create_partition_index", **params)

    def delete_partition_index(self, **params: Any) -> dict[str, Any]:
        return self.call("delete_partition_index", **params)

    def get_partition_indexes(self, **params: Any) -> dict[str, Any]:
        return self.call("get_partition_indexes", **params)

    def get_column_statistics_for_table(self, **params: Any) -> dict[str, Any]:
        return self.call("get_column_statistics_for_table", **params)

    def update_column_statistics_for_table(self, **params: Any) -> dict[str, Any]:
        return self.call("update_column_statistics_for_table", **params)

    def delete_column_statistics_for_table(self, **params: Any) -> dict[str, Any]:
        return self.call("delete_column_statistics_for_table", **params)

    # -- what a local catalog knows of its own log -----------------------------------------------------
    # A remote catalog's commits are not numbered for its clients: nothing derived from it is labelled
    # with a version that could later prove it current, so the shim reads again where it would check.

    def warehouse_version(self) -> int:
        return 0

    def table_version(self, DatabaseName: str, TableName: str) -> int:
        return 0

    def partitions_unchanged_since(
        self, database: str, table: str, version: int, excluding: Any = ()
    ) -> int | None:
        return None

    def tables_unchanged_since(self, database: str, version: int) -> int | None:
        """A listing of several GetTables pages is taken as it comes, as Glue's own clients take it."""
        return version

    def databases_unchanged_since(self, version: int) -> int | None:
        return version

    # -- partitions -------------------------------------------------------------------------------------

    def get_partitions_arrow(
        self,
        *,
        DatabaseName: str,
        TableName: str,
        SparkFilters: list[dict[str, Any]] | None = None,
        QueryAsOfTime: datetime | None = None,
    ) -> pa.Table:
        """The partitions matching Spark's pushed filters, as the local catalog's get_partitions_arrow
        answers them: a string column per key, then Location (None where a partition has none)."""
        table = self.get_table(DatabaseName=DatabaseName, Name=TableName, QueryAsOfTime=QueryAsOfTime)[
            "Table"
        ]
        keys = [(k["Name"], k.get("Type", "string")) for k in table.get("PartitionKeys") or []]
        text = expression(SparkFilters or [], keys)
        found = [] if text == "" else self._partitions(DatabaseName, TableName, text, QueryAsOfTime)
        columns = [
            [p["Values"][i] if i < len(p["Values"]) else None for p in found] for i in range(len(keys))
        ]
        locations = [(p.get("StorageDescriptor") or {}).get("Location") or None for p in found]
        return pa.table(
            [pa.array(c, pa.string()) for c in columns] + [pa.array(locations, pa.string())],
            names=[k for k, _ in keys] + ["Location"],
        )

    def _partitions(
        self, database: str, table: str, text: str | None, as_of: datetime | None
    ) -> list[dict[str, Any]]:
        """Every partition the Expression selects: one page, or, past one, the table's Segments read
        in parallel. An Expression the server refuses is dropped (Spark filters again), as is one a
        Glue other than gluecat cannot evaluate."""
        try:
            return self._all_partitions(database, table, text, as_of)
        except InvalidInputException:
            if text is None:
                raise
            return self._all_partitions(database, table, None, as_of)

    def _all_partitions(
        self, database: str, table: str, text: str | None, as_of: datetime | None
    ) -> list[dict[str, Any]]:
        args: dict[str, Any] = {
            "DatabaseName": database,
            "TableName": table,
            "Expression": text,
            "ExcludeColumnSchema": True,
            "QueryAsOfTime": as_of,
            "MaxResults": PAGE,
        }
        first = self.get_partitions(**args)
        if not first.get("NextToken"):
            return list(first["Partitions"])

        def segment(number: int) -> list[dict[str, Any]]:
            page_args = {**args, "Segment": {"SegmentNumber": number, "TotalSegments": self.segments}}
            return list(every(self.get_partitions, "Partitions", **page_args))

        with ThreadPoolExecutor(self.segments, thread_name_prefix="gluecat-segment") as pool:
            statement = getattr(self._local, "statement", None)

            def in_statement(number: int) -> list[dict[str, Any]]:
                with self.statement(statement):
                    return segment(number)

            return [p for part in pool.map(in_statement, range(self.segments)) for p in part]

    def commit_partitions(
        self,
        *,
        DatabaseName: str,
        TableName: str,
        Add: list[dict[str, Any]] | None = None,
        Drop: list[list[str]] | None = None,
        IfNotExists: bool = False,
        IfExists: bool = False,
    ) -> dict[str, Any]:
        """Partitions added and dropped: in one commit on gluecat; else in batches, added first (a
        failure part way leaves those done done: Glue has no transaction for it)."""
        if self._extensions is not None:
            return self._extension(
                "commit_partitions",
                DatabaseName=DatabaseName,
                TableName=TableName,
                Add=Add or [],
                Drop=Drop or [],
                IfNotExists=IfNotExists,
                IfExists=IfExists,
            )
        add, drop = list(Add or []), list(Drop or [])
        for start in range(0, len(add), _CREATE_BATCH):
            got = self.batch_create_partition(
                DatabaseName=DatabaseName,
                TableName=TableName,
                PartitionInputList=add[start : start + _CREATE_BATCH],
            )
            _raise_batch_errors(got, "AlreadyExistsException" if IfNotExists else None)
        for start in range(0, len(drop), _DELETE_BATCH):
            got = self.batch_delete_partition(
                DatabaseName=DatabaseName,
                TableName=TableName,
                PartitionsToDelete=[{"Values": v} for v in drop[start : start + _DELETE_BATCH]],
            )
            _raise_batch_errors(got, "EntityNotFoundException" if IfExists else None)
        return {"CommitVersion": 0}

    # -- tables changed as they were read -----------------------------------------------------------------

    def update_table_as_read(
        self,
        *,
        Table: dict[str, Any],
        TableInput: dict[str, Any],
        SkipArchive: bool = False,
        DropColumnStatistics: bool = False,
    ) -> dict[str, Any]:
        """UpdateTable of ``Table`` as it was read: on gluecat one commit that also checks its CreateTime;
        else UpdateTable with its VersionId, then its column statistics dropped one column at a time."""
        if self._extensions is not None:
            return self._extension(
                "update_table_as_read",
                Table=_identity(Table),
                TableInput=TableInput,
                SkipArchive=SkipArchive,
                DropColumnStatistics=DropColumnStatistics,
            )
        self.update_table(
            DatabaseName=Table["DatabaseName"],
            TableInput=TableInput,
            SkipArchive=SkipArchive or None,
            VersionId=Table.get("VersionId"),
        )
        if DropColumnStatistics:
            self._drop_column_statistics(Table["DatabaseName"], TableInput)
        return {}

    def _drop_column_statistics(self, database: str, table_input: dict[str, Any]) -> None:
        for column in (table_input.get("StorageDescriptor") or {}).get("Columns") or []:
            try:
                self.delete_column_statistics_for_table(
                    DatabaseName=database, TableName=table_input["Name"], ColumnName=column["Name"]
                )
            except EntityNotFoundException:
                continue  # it had none

    def _check_as_read(self, table: dict[str, Any]) -> None:
        now = self.get_table(DatabaseName=table["DatabaseName"], Name=table["Name"])["Table"]
        for key in ("CreateTime", "VersionId"):
            if now.get(key) != table.get(key):
                raise ConcurrentModificationException(
                    f"Table {table['DatabaseName']}.{table['Name']} was changed by another client since it "
                    f"was read (its {key} is {now.get(key)}, not {table.get(key)}); nothing was changed"
                )

    def delete_table_as_read(self, *, Table: dict[str, Any]) -> dict[str, Any]:
        """DeleteTable of ``Table`` as it was read: one commit on gluecat; else checked, then deleted."""
        if self._extensions is not None:
            return self._extension("delete_table_as_read", Table=_identity(Table))
        self._check_as_read(Table)
        return self.delete_table(DatabaseName=Table["DatabaseName"], Name=Table["Name"])

    def rename_table(
        self,
        *,
        Table: dict[str, Any],
        NewDatabaseName: str,
        TableInput: dict[str, Any],
        MovedFolder: dict[str, str] | None = None,
    ) -> dict[str, Any]:
        """One commit on gluecat; else CreateTable, the partitions copied (moved with the folder), the
        ACTIVE indexes made again, and DeleteTable, the new table dropped again if a step fails."""
        if self._extensions is not None:
            return self._extension(
                "rename_table",
                Table=_identity(Table),
                NewDatabaseName=NewDatabaseName,
                TableInput=TableInput,
                MovedFolder=MovedFolder,
            )
        self._check_as_read(Table)
        database, name = Table["DatabaseName"], Table["Name"]
        new_name = TableInput["Name"]
        self.create_table(DatabaseName=NewDatabaseName, TableInput=TableInput)
        try:
            relocate = _relocation(MovedFolder)
            parts = list(every(self.get_partitions, "Partitions", DatabaseName=database, TableName=name))
            add = [_partition_input(p, relocate) for p in parts]
            for start in range(0, len(add), _CREATE_BATCH):
                got = self.batch_create_partition(
                    DatabaseName=NewDatabaseName,
                    TableName=new_name,
                    PartitionInputList=add[start : start + _CREATE_BATCH],
                )
                _raise_batch_errors(got, None)
            indexes = self.get_partition_indexes(DatabaseName=database, TableName=name)
            for index in indexes.get("PartitionIndexDescriptorList") or []:
                if index.get("IndexStatus") == "ACTIVE":
                    self.create_partition_index(
                        DatabaseName=NewDatabaseName,
                        TableName=new_name,
                        PartitionIndex={
                            "IndexName": index["IndexName"],
                            "Keys": [k["Name"] for k in index["Keys"]],
                        },
                    )
            self._check_as_read(Table)
            self.delete_table(DatabaseName=database, Name=name)
        except BaseException:
            with contextlib.suppress(GlueError):  # the error that stopped the rename is the one to report
                self.delete_table(DatabaseName=NewDatabaseName, Name=new_name)
            raise
        return {}

    # -- Lake Formation ------------------------------------------------------------------------------------

    def lake_formation(self) -> RemoteLakeFormation:
        if self._lake_formation is None:
            self._lake_formation = RemoteLakeFormation(self)
        return self._lake_formation


# -- helpers ---------------------------------------------------------------------------------------------


def _not_implemented(code: str) -> bool:
    return code in _NOT_IMPLEMENTED or code.isdigit()


def _code(e: ClientError) -> str:
    return str(e.response.get("Error", {}).get("Code") or "InternalServiceException")


def _glue_error(e: ClientError) -> GlueError:
    """A botocore error as gluecat's class of its code, with the server's message."""
    error = e.response.get("Error", {})
    message = str(error.get("Message") or error.get("message") or e)
    return error_class(_code(e))(message, operation_name=e.operation_name)


def _raise_batch_errors(answer: dict[str, Any], ignored: str | None) -> None:
    """A batch call's first error that is not ``ignored``, raised as its class."""
    for error in answer.get("Errors") or []:
        detail = error.get("ErrorDetail") or {}
        code = str(detail.get("ErrorCode") or "InternalServiceException")
        if code != ignored:
            values = error.get("PartitionValues") or error.get("PartitionValueList")
            raise error_class(code)(f"{detail.get('ErrorMessage') or code} (partition {values})")


def _identity(table: dict[str, Any]) -> dict[str, Any]:
    """A table as GetTable returned it, as gluecat's operations name it."""
    return {k: table[k] for k in ("DatabaseName", "Name", "VersionId", "CreateTime")}


def _relocation(moved: dict[str, str] | None) -> Callable[[str], str]:
    from gluecat import locations

    if moved is None:
        return lambda location: location
    return lambda location: locations.moved(location, moved["From"], moved["To"])


def _partition_input(partition: dict[str, Any], relocate: Callable[[str], str]) -> dict[str, Any]:
    out: dict[str, Any] = {
        k: partition[k]
        for k in ("Values", "StorageDescriptor", "Parameters", "LastAccessTime")
        if k in partition
    }
    sd = dict(out.get("StorageDescriptor") or {})
    if sd.get("Location"):
        sd["Location"] = relocate(sd["Location"])
    out["StorageDescriptor"] = sd
    return out


GlueClient = Catalog | RemoteCatalog
"""What the Spark plugin's Python side works on: a warehouse opened here, or a catalog service."""
