"""Governed tables' objects (Lake Formation's TableObject): what UpdateTableObjects writes and
GetTableObjects reads.

A governed table is a Glue table whose TableType is GOVERNED; its data is the set of objects committed
transactions registered. The objects are rows of the row engine (gluecat.catalog.rows) in a row set of
their own, ``(database, table, "objects")``, beside the table's partitions: keyed by the object's
partition values and Uri (identity ``[value, ..., uri]``, so a partition's objects are next to one
another), the Uri in ``Location``, ETag and Size in ``doc``. They are queried with the partitions'
machinery: a PartitionPredicate is parsed, bound and planned as a GetPartitions expression (partition
indexes apply), and evaluated over the folded view in bulk.

A partition value is parsed as its key's type and kept in one canonical form, so that ``007`` and ``7``
of an int key are one partition: integers without sign or leading zeros, decimals without trailing
zeros, timestamps in UTC (``yyyy-MM-dd HH:mm:ss[.fffffffff]``, an offset applied).
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any, cast

import pyarrow as pa

from gluecat import expressions as ex
from gluecat.catalog import paging
from gluecat.catalog.context import TABLE, Context, partition_key_count
from gluecat.catalog.rows.query import Query, Window, planned, select
from gluecat.catalog.rows.segments import rows_segment, value_key
from gluecat.catalog.rows.view import TableView, extend
from gluecat.errors import EntityNotFoundException, InvalidInputException
from gluecat.expressions.types import (
    DATE_VALUE,
    DECIMAL_VALUE,
    INT64_MAX,
    INT64_MIN,
    INTEGER_VALUE,
    Date,
    KeyType,
    UnsupportedKeyType,
    key_type,
)
from gluecat.gc_pause import gc_paused
from gluecat.store import codec
from gluecat.store.log import OBJECTS
from gluecat.store.snapshot import Key, Snapshot

GOVERNED = "GOVERNED"
MAX_PAGE = 1000
SUPPORTED_TYPES = "integer, long, date (yyyy-MM-dd), timestamp, string and decimal"


def rows_key(database: str, table: str) -> Key:
    """The row set holding a governed table's objects."""
    return (database, table, OBJECTS)


def is_governed(table: dict[str, Any]) -> bool:
    return str(table.get("TableType") or "").upper() == GOVERNED


def require_governed(snap: Snapshot, database: str, name: str) -> dict[str, Any]:
    """The table, which must exist and be governed (EntityNotFoundException, InvalidInputException)."""
    table = snap.get(TABLE, (database, name))
    if table is None:
        raise EntityNotFoundException(f"Table {name} not found.")
    if not is_governed(table):
        raise InvalidInputException(
            f"TableName: {database}.{name} is not a governed table (its TableType is "
            f"{table.get('TableType') or 'not set'}, not GOVERNED): it has no table objects"
        )
    return table


def keys_of(table: dict[str, Any]) -> list[tuple[str, str]]:
    return [(k["Name"], k.get("Type") or "string") for k in table.get("PartitionKeys") or []]


# -- partition values ---------------------------------------------------------------------------------

_OFFSET = re.compile(r"(Z|[+-][0-9]{2}(?::?[0-9]{2})?)$")
_TIMESTAMP = re.compile(r"([0-9]{4}-[0-9]{2}-[0-9]{2})[ T]([0-9]{2}:[0-9]{2}:[0-9]{2})(\.[0-9]{1,9})?")


def _utc_timestamp(text: str) -> str | None:
    """A timestamp (``yyyy-MM-dd HH:mm:ss[.f]``, an offset ``Z``, ``+hh``, ``+hhmm`` or ``+hh:mm``
    allowed) in UTC as ``yyyy-MM-dd HH:mm:ss[.f]`` (trailing zeros of the fraction dropped); None if
    it is none."""
    offset = _OFFSET.search(text)
    body = text[: offset.start()] if offset else text
    m = _TIMESTAMP.fullmatch(body)
    if m is None or body.startswith("0000"):
        return None
    try:
        whole = datetime.strptime(f"{m.group(1)} {m.group(2)}", "%Y-%m-%d %H:%M:%S")
    except ValueError:
        return None
    if offset is not None and offset.group(1) != "Z":
        sign = -1 if offset.group(1)[0] == "-" else 1
        digits = offset.group(1)[1:].replace(":", "")
        hours, minutes = int(digits[:2]), int(digits[2:] or 0)
        if hours > 23 or minutes > 59:
            return None
        try:
            whole -= sign * timedelta(hours=hours, minutes=minutes)
        except OverflowError:
            return None
    fraction = (m.group(3) or "").rstrip("0")
    return whole.strftime("%Y-%m-%d %H:%M:%S").zfill(19) + ("" if fraction == "." else fraction)


@functools.lru_cache(maxsize=256)
def _key_type(glue_type: str) -> KeyType | str:
    """The key type, or why objects cannot have it."""
    try:
        return key_type(glue_type)
    except UnsupportedKeyType as e:
        return e.message.split(", which")[0]


def canonical_value(text: str, glue_type: str, field: str) -> str:
    """A partition value of a key of ``glue_type`` in its canonical form, or InvalidInputException
    naming ``field``."""
    found = _canonical(text, glue_type)
    if isinstance(found, str):
        return found
    if found[0] == "type":
        raise InvalidInputException(
            f"{field}: the partition key has {found[1]}; governed table objects take partition keys of "
            f"types {SUPPORTED_TYPES}"
        )
    raise InvalidInputException(
        f"{field}: {text!r} is not {found[1]} (the partition key's type is {glue_type})"
    )


@functools.lru_cache(maxsize=4096)
def _canonical(text: str, glue_type: str) -> str | tuple[str, str]:
    """canonical_value's answer, or ("type" or "value", why not); cached, as the objects of a
    partition (often all of a call's) share their values."""
    kt = _key_type(glue_type)
    if isinstance(kt, str):
        return ("type", kt)
    if kt.kind == "string":
        return text
    if kt.kind == "integer":
        if not INTEGER_VALUE.fullmatch(text) or not INT64_MIN <= int(text) <= INT64_MAX:
            return ("value", "an integer of 64 bits")
        return str(int(text))
    if kt.kind == "decimal":
        if not DECIMAL_VALUE.fullmatch(text):
            return ("value", "a decimal number (digits, an optional sign and point)")
        d = Decimal(text).normalize()
        return "0" if d.is_zero() else format(d, "f")
    if kt.kind == "date":
        if not DATE_VALUE.fullmatch(text):
            return ("value", "a date (yyyy-MM-dd)")
        try:
            Date.of(int(text[:4]), int(text[5:7]), int(text[8:10]))  # years 0000 to 9999, as partitions
        except ValueError:
            return ("value", "a date (yyyy-MM-dd)")
        return text
    found = _utc_timestamp(text)
    if found is None:
        return ("value", "a timestamp (yyyy-MM-dd HH:mm:ss, with an optional fraction and offset)")
    return found


def key_forms(table: dict[str, Any]) -> list[str]:
    """How each partition key's values are parsed and kept: its type's kind (``int`` and ``bigint`` keep
    values alike). Objects' identities depend on nothing else of the keys."""
    out = []
    for _, glue_type in keys_of(table):
        kt = _key_type(glue_type)
        out.append(kt.kind if not isinstance(kt, str) else f"unsupported {glue_type.strip().lower()}")
    return out


def check_type_change(old: dict[str, Any], new: dict[str, Any]) -> None:
    """UpdateTable may not make a governed table another type (nor leave TableType out, which does the
    same): its data is its objects, and its folder keeps the files of objects that overwrites and
    deletions removed (for reads of earlier versions), which a table read from its folder would show
    again; its objects would come back too if it were made governed again."""
    if is_governed(old) and not is_governed(new):
        raise InvalidInputException(
            f"TableInput.TableType: {old['DatabaseName']}.{old['Name']} is a governed table and stays one "
            f"(not {new.get('TableType') or 'left out'}): its folder holds files its objects no longer name, "
            "which a table of another type would read"
        )


def check_key_change(old: dict[str, Any], new: dict[str, Any], holds_objects: Callable[[], bool]) -> None:
    """UpdateTable may not change the number of partition keys of a table that holds objects, nor a
    key's type to one whose values are parsed otherwise: its objects' values, kept in the old keys'
    canonical form, would no longer name their partitions (objects that no write could delete, one
    partition under two names)."""
    before, after = key_forms(old), key_forms(new)
    if before == after or not holds_objects():
        return
    if len(before) != len(after):
        why = f"the number of partition keys cannot change from {len(before)} to {len(after)}"
    else:
        i = next(i for i, (b, a) in enumerate(zip(before, after, strict=True)) if b != a)
        name, old_type = keys_of(old)[i]
        why = f"key {name} cannot change type from {old_type} to {keys_of(new)[i][1]}"
    raise InvalidInputException(
        f"TableInput.PartitionKeys: {old['DatabaseName']}.{old['Name']} holds table objects, whose "
        f"partition values are kept as its keys' types parse them: {why}"
    )


def conforms(table: dict[str, Any], values: tuple[str, ...]) -> bool:
    """Whether partition values are one per key of ``table``, each in its key's canonical form."""
    keys = keys_of(table)
    return len(values) == len(keys) and all(
        _canonical(v, t) == v for v, (_, t) in zip(values, keys, strict=True)
    )


def canonical_values(table: dict[str, Any], values: Sequence[str] | None, field: str) -> tuple[str, ...]:
    """An object's PartitionValues, one per partition key, each in its canonical form."""
    keys = keys_of(table)
    given = list(values or [])
    if len(given) != len(keys):
        names = [name for name, _ in keys]
        raise InvalidInputException(
            f"{field}: {len(given)} values given, but {table['DatabaseName']}.{table['Name']} has "
            f"{len(keys)} partition keys {names}: a value is needed for each"
        )
    found = [_canonical(v, t) for v, (_, t) in zip(given, keys, strict=True)]
    canonical = tuple(f for f in found if isinstance(f, str))
    if len(canonical) < len(found):  # the field path is made for the error only
        i = next(i for i, f in enumerate(found) if not isinstance(f, str))
        canonical_value(given[i], keys[i][1], f"{field}[{i}]")
    return canonical


# -- writes ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ObjectWrite:
    """One WriteOperation in canonical form: an object added (ETag and Size) or deleted (Size None)."""

    values: tuple[str, ...]
    uri: str
    etag: str | None
    size: int | None

    @property
    def deleted(self) -> bool:
        return self.size is None

    partition: str = field(init=False, repr=False, compare=False)
    """The partition's key (value_key of the values)."""
    identity: str = field(init=False, repr=False, compare=False)
    """The object's row key (value_key of the values and the Uri)."""

    def __post_init__(self) -> None:
        # Computed once here: a commit asks every write for both, and functools.cached_property takes a
        # lock on each first read (Python 3.11).
        partition = value_key(self.values)
        object.__setattr__(self, "partition", partition)
        object.__setattr__(self, "identity", identity_key(partition, self.uri))

    def to_json(self) -> list[Any]:
        return [list(self.values), self.uri, self.etag, self.size]

    @staticmethod
    def from_json(doc: list[Any]) -> ObjectWrite:
        values, uri, etag, size = doc
        return ObjectWrite(tuple(values), uri, etag, size)


def identity_key(partition: str, uri: str) -> str:
    """value_key([*values, uri]) from value_key(values): the compact JSON list with one more item."""
    uri_json = value_key([uri])[1:-1]
    return partition[:-1] + ("," if partition != "[]" else "") + uri_json + "]"


def parse_writes(table: dict[str, Any], operations: list[dict[str, Any]]) -> list[ObjectWrite]:
    """UpdateTableObjects' WriteOperations (already checked against the model's shapes) in canonical
    form; InvalidInputException naming the operation for a value that is not of its key's type."""
    out = []
    for i, op in enumerate(operations):
        field = f"WriteOperations[{i}]"
        if ("AddObject" in op) == ("DeleteObject" in op):
            raise InvalidInputException(f"{field}: must hold exactly one of AddObject and DeleteObject")
        if "AddObject" in op:
            add = op["AddObject"]
            values = canonical_values(table, add.get("PartitionValues"), f"{field}.AddObject.PartitionValues")
            if add["Size"] < 0:
                raise InvalidInputException(f"{field}.AddObject.Size: {add['Size']} is negative")
            out.append(ObjectWrite(values, add["Uri"], add["ETag"], add["Size"]))
        else:
            delete = op["DeleteObject"]
            values = canonical_values(
                table, delete.get("PartitionValues"), f"{field}.DeleteObject.PartitionValues"
            )
            out.append(ObjectWrite(values, delete["Uri"], delete.get("ETag"), None))
    return out


def check_writes(view: TableView, writes: list[ObjectWrite], table: dict[str, Any]) -> None:
    """Refuse (InvalidInputException, naming the operation) an add of a Uri that ``view`` holds (in any
    partition) or that an earlier add of the same call makes, and a delete of an object it does not
    hold; ``view`` is the table's objects as the call finds them."""
    held = view.held_locations({w.uri for w in writes})  # Uri -> the identity holding it
    name = f"{table['DatabaseName']}.{table['Name']}"
    for i, w in enumerate(writes):
        field = f"WriteOperations[{i}]"
        holder = held.get(w.uri)
        if w.deleted:
            if holder != w.identity:
                where = "" if holder is None else " (it is held in another partition)"
                raise InvalidInputException(
                    f"{field}.DeleteObject: {name} holds no object {w.uri!r} in partition {list(w.values)}{where}"
                )
            del held[w.uri]
        else:
            if holder is not None:
                raise InvalidInputException(f"{field}.AddObject: {name} already holds an object {w.uri!r}")
            held[w.uri] = w.identity


def write_rows(n_keys: int, writes: Iterable[ObjectWrite]) -> pa.Table:
    """Writes as a segment's rows, in order."""
    writes = list(writes)
    return rows_segment(
        n_keys,
        [w.values for w in writes],
        [w.identity for w in writes],
        [w.deleted for w in writes],
        [w.uri for w in writes],
        [None if w.deleted else codec.dumps({"ETag": w.etag, "Size": w.size}) for w in writes],
    )


def with_writes(view: TableView, n_keys: int, writes: list[ObjectWrite], name: str) -> TableView:
    """``view`` with ``writes`` on top, as one more delta (a transaction's own writes)."""
    if not writes:
        return view
    return extend(view, [name], [write_rows(n_keys, writes)])


def view_of(ctx: Context, snap: Snapshot, table: dict[str, Any]) -> TableView:
    """The folded view of a governed table's objects at ``snap``."""
    return ctx.rows.view(snap, rows_key(table["DatabaseName"], table["Name"]), partition_key_count(table))


# -- reads -----------------------------------------------------------------------------------------

_PREDICATE_OPS = frozenset({"=", ">", "<", ">=", "<="})


def plan(snap: Snapshot, table: dict[str, Any], predicate: str | None, active: list[ex.Index]) -> Query:
    """A PartitionPredicate planned on the table's partition keys: comparisons (=, >, <, >=, <=) of a key
    with a value, joined by AND, compared by the key's type; anything else is InvalidInputException."""
    keys = keys_of(table)
    try:
        parsed = ex.parse(predicate or "", [name for name, _ in keys])
        _check_predicate(parsed)
        parsed = _utc_literals(parsed, keys)
        bound = ex.bind(parsed, keys)
    except InvalidInputException as e:
        message = e.message.removeprefix("Invalid Expression: ")
        raise InvalidInputException(f"PartitionPredicate: {message}") from None
    return planned(keys, bound, active)


def _check_predicate(p: ex.Predicate) -> None:
    if isinstance(p, ex.TrueP):
        return
    parts = p.children if isinstance(p, ex.And) else (p,)
    for part in parts:
        if isinstance(part, ex.Compare) and part.op in _PREDICATE_OPS:
            continue
        what = {
            ex.Or: "OR",
            ex.Not: "NOT",
            ex.In: "IN",
            ex.Between: "BETWEEN",
            ex.Like: "LIKE",
            ex.IsNull: "IS NULL",
            ex.And: "nested AND",
        }.get(type(part), "<>" if isinstance(part, ex.Compare) else type(part).__name__)
        raise InvalidInputException(
            f"{what} is not supported: a predicate compares partition keys with values by =, >, <, >= "
            "and <=, joined by AND"
        )


def _utc_literals(p: ex.Predicate, keys: list[tuple[str, str]]) -> ex.Predicate:
    """The predicate with timestamp literals given with an offset converted to UTC, as stored values are."""
    types = {name.casefold(): t for name, t in keys}

    def fix(c: ex.Predicate) -> ex.Predicate:
        if (
            isinstance(c, ex.Compare)
            and isinstance(c.value, ex.Literal)
            and types.get(c.column.casefold(), "").strip().lower() == "timestamp"
            and _OFFSET.search(c.value.text)
        ):
            utc = _utc_timestamp(c.value.text)
            if utc is not None:
                return ex.Compare(c.op, c.column, ex.Literal(utc, c.value.kind))
        return c

    if isinstance(p, ex.And):
        return ex.And(tuple(fix(c) for c in p.children))
    return fix(p)


def page(
    ctx: Context,
    view: TableView,
    table: dict[str, Any],
    query: Query,
    *,
    token_query: str,
    next_token: str | None,
    max_results: int | None,
) -> dict[str, Any]:
    """One page of GetTableObjects: up to ``max_results`` objects after the token's, grouped by
    partition (a partition may continue on the next page), and a NextToken if more follow."""
    after = paging.read_token(ctx.store.secret, token_query, next_token)
    limit = max_results or MAX_PAGE
    rows = select(view, query, Window(after=None if after is None else str(after), limit=limit))
    kept = rows.slice(0, limit)
    out: dict[str, Any] = {"Objects": partition_objects(kept, len(keys_of(table)))}
    if rows.num_rows > limit:
        out["NextToken"] = paging.make_token(ctx.store.secret, token_query, kept.column("_vk")[-1].as_py())
    return out


def partition_objects(rows: pa.Table, n_keys: int) -> list[dict[str, Any]]:
    """Rows in identity order as PartitionObjects: one per run of rows of one partition."""
    with gc_paused():
        docs = codec.loads_many(cast(list[str], rows.column("doc").to_pylist()))
        uris = rows.column("Location").to_pylist()
        values = list(zip(*(rows.column(f"p{i}").to_pylist() for i in range(n_keys)), strict=True))
        if not values:
            values = [()] * rows.num_rows
        out = []
        for partition, group in itertools.groupby(zip(values, uris, docs, strict=True), key=lambda r: r[0]):
            entry: dict[str, Any] = {}
            if n_keys:
                entry["PartitionValues"] = list(partition)
            entry["Objects"] = [
                {"Uri": uri, "ETag": doc["ETag"], "Size": doc["Size"]} for _, uri, doc in group
            ]
            out.append(entry)
        return out


def objects_arrow(view: TableView, table: dict[str, Any], query: Query) -> pa.Table:
    """Every matching object as one Arrow table: a string column per partition key, Uri, ETag, Size."""
    rows = select(view, query)
    keys = keys_of(table)
    docs = codec.loads_many(cast(list[str], rows.column("doc").to_pylist()))
    return pa.Table.from_arrays(
        [rows.column(f"p{i}") for i in range(len(keys))]
        + [
            rows.column("Location"),
            pa.array([d["ETag"] for d in docs], pa.string()),
            pa.array([d["Size"] for d in docs], pa.int64()),
        ],
        names=[k for k, _ in keys] + ["Uri", "ETag", "Size"],
    )


def as_of_key(when: datetime | None) -> str | None:
    return None if when is None else when.astimezone(UTC).isoformat()
