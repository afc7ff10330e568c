"""A model-based test of the catalog: random sequences of Glue calls through ``gluecat.Catalog``,
interleaved with the store's life-cycle events (a reopened Catalog, a second Catalog writing in between,
segment merges and refolds, checkpoints, compaction and expiry), checked after every step against a plain
in-memory model of Glue's semantics (the Glue documents in /work/shared/seeds).

After each step everything readable is compared with the model: databases, tables and their versions,
partitions (all of them, by value, through expressions and partition indexes, in pages and segments),
partition indexes, column statistics of tables and partitions, and tags; recorded states are read back
with QueryAsOfTime. At the end of each run ``gluecat fsck`` must find nothing.

The value spaces are small on purpose, so that names collide and are made again after deletion, which is
where a store that folds, merges and expires history can bring deleted things back.
"""

from __future__ import annotations

import copy
import itertools
import logging
import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from botocore.exceptions import ClientError
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from gluecat import Catalog
from gluecat.catalog.rows import latest, merging
from gluecat.cli import main as cli
from gluecat.store import fsck, maintenance, store

ACCOUNT = "000000000000"
ARN = f"arn:aws:glue:us-east-1:{ACCOUNT}"
DATABASES = ["db1", "db2"]
TABLES = ["t1", "t2"]
YEARS = ["2020", "2021", "02021", "x"]  # "02021" is 2021 as an int; "x" is no int at all
REGIONS = ["eu", "us", "", "e'u", "é"]  # an empty value, one that needs quoting, one not ASCII
KEY_SETS = {
    "n": (("year", "int"), ("region", "string")),
    "s": (("year", "string"), ("region", "string")),  # year retyped: compared as text
    "w": (("region", "string"), ("year", "int")),  # the names swapped: the same values, other keys
    "o": (("year", "int"),),  # one key: allowed while the table holds no partitions
}
COLUMN_SETS = {
    "a": (("id", "bigint"), ("amount", "double")),
    "b": (("id", "bigint"), ("amount", "string")),  # amount retyped
    "c": (("id", "bigint"),),  # amount dropped
    "d": (("id", "bigint"), ("amount", "double"), ("note", "string")),
}
STAT_COLUMNS = ["id", "amount", "note"]
FITTING = {"LONG": {"bigint"}, "DOUBLE": {"double"}, "STRING": {"string"}}
INDEX_KEYS = [("year",), ("region",), ("year", "region"), ("region", "year")]
INDEX_NAMES = ["i1", "i2"]
TAG_KEYS = ["k1", "k2"]
BACKGROUND = os.environ.get("GLUECAT_MODEL_BACKGROUND") is not None
"""Merge on the Catalogs' background threads (exploration only: a run is then not repeatable)."""

Values = tuple[str, ...]


# -- the model ------------------------------------------------------------------------------------------


@dataclass
class MPartition:
    location: str
    columns: str | None  # a COLUMN_SETS key, or None: the table's columns
    creation_time: datetime | None = None  # as first read: updates keep it


@dataclass
class MTable:
    description: str
    columns: str
    create_time: datetime | None = None  # as first read: updates keep it
    keys: str = "n"  # a KEY_SETS key
    version: int = 1
    versions: dict[int, tuple[Any, ...]] = field(default_factory=dict)
    """By VersionId: (Description, Columns, the year key's type)."""
    partitions: dict[Values, MPartition] = field(default_factory=dict)
    indexes: dict[str, tuple[tuple[str, ...], str]] = field(default_factory=dict)
    stats: dict[str, tuple[str, int]] = field(default_factory=dict)
    part_stats: dict[tuple[Values, str], tuple[str, int]] = field(default_factory=dict)
    tags: dict[str, str] = field(default_factory=dict)

    def columns_of(self, values: Values) -> dict[str, str]:
        own = self.partitions[values].columns
        return dict(COLUMN_SETS[own if own is not None else self.columns])


@dataclass
class MDatabase:
    description: str
    tables: dict[str, MTable] = field(default_factory=dict)
    tags: dict[str, str] = field(default_factory=dict)


@dataclass
class Model:
    databases: dict[str, MDatabase] = field(default_factory=dict)
    catalog_tags: dict[str, str] = field(default_factory=dict)

    def table(self, db: str, name: str) -> MTable | None:
        database = self.databases.get(db)
        return None if database is None else database.tables.get(name)


class Expected(Exception):
    """The error the model expects a call to end with (a Glue error code)."""

    def __init__(self, code: str) -> None:
        super().__init__(code)
        self.code = code


def index_problem(value: str, key_type: str) -> bool:
    """Whether a partition value cannot be held by an index on a key of ``key_type`` (004:
    INVALID_PARTITION_TYPE_DATA, MISSING_PARTITION_VALUE)."""
    if value == "":
        return True
    return key_type == "int" and as_int(value) is None


def as_int(value: str) -> int | None:
    if not re.fullmatch(r"[+-]?[0-9]{1,19}", value):
        return None
    n = int(value)
    return n if -(2**31) <= n < 2**31 else None


def check_count(table: MTable, values: Values) -> None:
    """Values must be one per partition key."""
    if len(values) != len(KEY_SETS[table.keys]):
        raise Expected("InvalidInputException")


def key_names(table: MTable) -> set[str]:
    return {name for name, _ in KEY_SETS[table.keys]}


def named_keys(e: Expr) -> set[str]:
    """The keys an expression names (naming one the table lacks is InvalidInputException)."""
    if e[0] in ("and", "or"):
        return named_keys(e[1]) | named_keys(e[2])
    if e[0] == "not":
        return named_keys(e[1])
    return {e[1]}


def check_indexed(table: MTable, values: Values) -> None:
    """A new partition must suit every index that exists (and has not failed)."""
    for keys, status in table.indexes.values():
        if status == "ACTIVE" and any(problem(values, k, table.keys) for k in keys):
            raise Expected("InvalidInputException")


def position(key: str, keys: str) -> int:
    return [name for name, _ in KEY_SETS[keys]].index(key)


def problem(values: Values, key: str, keys: str) -> bool:
    return index_problem(values[position(key, keys)], dict(KEY_SETS[keys])[key])


def outdated(column: str, before: dict[str, str], after: dict[str, str]) -> bool:
    return column not in before or column not in after or before[column] != after[column]


# -- expressions: a small grammar, rendered as Glue text and evaluated with SQL's three values ---------

Expr = tuple[Any, ...]


def expressions() -> st.SearchStrategy[Expr]:
    year_literal = st.sampled_from([2019, 2020, 2021, 2022])
    region_literal = st.sampled_from(["eu", "us", "", "e", "e'u", "é"])
    ops = st.sampled_from(["=", "<>", "<", "<=", ">", ">="])
    leaves = st.one_of(
        st.tuples(st.just("cmp"), st.just("year"), ops, year_literal),
        st.tuples(st.just("cmp"), st.just("region"), ops, region_literal),
        st.tuples(st.just("in"), st.just("year"), st.lists(year_literal, min_size=1, max_size=3)),
        st.tuples(st.just("in"), st.just("region"), st.lists(region_literal, min_size=1, max_size=3)),
        st.tuples(st.just("between"), st.just("year"), year_literal, year_literal),
        st.tuples(st.just("like"), st.just("region"), st.sampled_from(["e%", "%u%", "_s", "%"])),
    )
    return st.recursive(
        leaves,
        lambda inner: st.one_of(
            st.tuples(st.sampled_from(["and", "or"]), inner, inner), st.tuples(st.just("not"), inner)
        ),
        max_leaves=4,
    )


def literal(key: str, value: Any) -> str:
    return str(value) if key == "year" else "'" + str(value).replace("'", "''") + "'"


def render(e: Expr) -> str:
    kind = e[0]
    if kind == "cmp":
        return f"{e[1]} {e[2]} {literal(e[1], e[3])}"
    if kind == "in":
        return f"{e[1]} IN ({', '.join(literal(e[1], v) for v in e[2])})"
    if kind == "between":
        return f"{e[1]} BETWEEN {e[2]} AND {e[3]}"
    if kind == "like":
        return f"{e[1]} LIKE '{e[2]}'"
    if kind == "not":
        return f"NOT ({render(e[1])})"
    return f"({render(e[1])}) {kind.upper()} ({render(e[2])})"


def typed(key: str, values: Values, keys: str) -> Any:
    raw = values[position(key, keys)]
    return as_int(raw) if dict(KEY_SETS[keys])[key] == "int" else raw


def evaluate(e: Expr, values: Values, keys: str) -> bool | None:
    """SQL's three-valued logic: a value that is not of its key's type is NULL (docs/partitions.md)."""
    kind = e[0]
    if kind in ("and", "or", "not"):
        a = evaluate(e[1], values, keys)
        if kind == "not":
            return None if a is None else not a
        b = evaluate(e[2], values, keys)
        if kind == "and":
            return False if a is False or b is False else (None if a is None or b is None else True)
        return True if a is True or b is True else (None if a is None or b is None else False)
    v = typed(e[1], values, keys)
    if v is None:
        return None
    if isinstance(v, str):  # a number compared with a string key is compared as text
        e = tuple(
            [str(x) if isinstance(x, int) else [str(y) for y in x] if isinstance(x, list) else x for x in e]
        )
    if kind == "cmp":
        op, lit = e[2], e[3]
        return {
            "=": v == lit,
            "<>": v != lit,
            "<": v < lit,
            "<=": v <= lit,
            ">": v > lit,
            ">=": v >= lit,
        }[op]
    if kind == "in":
        return v in e[2]
    if kind == "between":
        return e[2] <= v <= e[3]
    pattern = "".join(".*" if c == "%" else "." if c == "_" else re.escape(c) for c in e[2])
    return re.fullmatch(pattern, v, re.DOTALL) is not None


# -- requests -------------------------------------------------------------------------------------------


def columns(key: str) -> list[dict[str, str]]:
    return [{"Name": n, "Type": t} for n, t in COLUMN_SETS[key]]


def table_input(name: str, description: str, cols: str, keys: str = "n") -> dict[str, Any]:
    return {
        "Name": name,
        "Description": description,
        "Parameters": {"d": description},
        "StorageDescriptor": {"Columns": columns(cols), "Location": f"s3://bucket/{name}/"},
        "PartitionKeys": [{"Name": k, "Type": t} for k, t in KEY_SETS[keys]],
    }


def partition_input(values: Values, tag: str, cols: str | None) -> dict[str, Any]:
    sd: dict[str, Any] = {"Location": f"s3://bucket/{'/'.join(values)}/{tag}"}
    if cols is not None:
        sd["Columns"] = columns(cols)
    return {"Values": list(values), "StorageDescriptor": sd}


def statistics(column: str, kind: str, nulls: int) -> dict[str, Any]:
    data: dict[str, Any] = {"NumberOfNulls": nulls, "NumberOfDistinctValues": 1}
    if kind == "STRING":
        data.update(MaximumLength=1, AverageLength=1.0)
    member = {"LONG": "LongColumnStatisticsData", "DOUBLE": "DoubleColumnStatisticsData"}.get(
        kind, "StringColumnStatisticsData"
    )
    return {
        "ColumnName": column,
        "ColumnType": {"LONG": "bigint", "DOUBLE": "double", "STRING": "string"}[kind],
        "AnalyzedTime": datetime(2024, 1, 1, tzinfo=UTC),
        "StatisticsData": {"Type": kind, member: data},
    }


def fitting(stats: list[tuple[str, str, int]], cols: dict[str, str]) -> list[tuple[str, str, int]]:
    return [s for s in stats if s[0].lower() in cols and cols[s[0].lower()] in FITTING[s[1]]]


def arn(resource: tuple[str, ...]) -> str:
    if resource == ("catalog",):
        return f"{ARN}:catalog"
    return f"{ARN}:{resource[0]}/{'/'.join(resource[1:])}"


def code_of(call: Any) -> str | None:
    """Run a call; the Glue error code it ended with, or None."""
    try:
        call()
    except ClientError as e:
        return str(e.response["Error"]["Code"])
    return None


def every(method: Any, member: str, **kwargs: Any) -> list[Any]:
    out: list[Any] = []
    token = None
    while True:
        page = method(**kwargs, **({"NextToken": token} if token else {}))
        out.extend(page[member])
        token = page.get("NextToken")
        if not token:
            return out


def batch_errors(response: dict[str, Any], member: str) -> list[tuple[Any, str]]:
    return sorted(
        (tuple(e[member]) if isinstance(e[member], list) else e[member], e["ErrorDetail"]["ErrorCode"])
        for e in response["Errors"]
    )


# -- observing -----------------------------------------------------------------------------------------


def observe_partitions(
    glue: Catalog, db: str, name: str, times: dict[Values, datetime] | None = None, **kwargs: Any
) -> list[tuple[Values, str, Any]]:
    parts = every(glue.get_partitions, "Partitions", DatabaseName=db, TableName=name, **kwargs)
    if times is not None:
        times.update((tuple(p["Values"]), p["CreationTime"]) for p in parts)
    return [
        (
            tuple(p["Values"]),
            p["StorageDescriptor"]["Location"],
            tuple((c["Name"], c["Type"]) for c in p["StorageDescriptor"].get("Columns") or []) or None,
        )
        for p in parts
    ]


def observe(glue: Catalog, times: dict[tuple[str, str], Any]) -> dict[str, Any]:
    """Everything readable, in the model's terms; ``times`` gets each table's CreateTime and its
    partitions' CreationTimes."""
    out: dict[str, Any] = {
        "catalog_tags": glue.get_tags(ResourceArn=arn(("catalog",)))["Tags"],
        "databases": {},
    }
    for d in every(glue.get_databases, "DatabaseList", MaxResults=1):
        db = d["Name"]
        tables: dict[str, Any] = {}
        out["databases"][db] = {
            "description": d.get("Description"),
            "tags": glue.get_tags(ResourceArn=arn(("database", db)))["Tags"],
            "tables": tables,
        }
        for t in every(glue.get_tables, "TableList", DatabaseName=db, MaxResults=1):
            created: dict[Values, datetime] = {}
            tables[t["Name"]] = observe_table(glue, db, t, created)
            times[(db, t["Name"])] = (t["CreateTime"], created)
    return out


def table_view(t: dict[str, Any]) -> tuple[Any, ...]:
    """(VersionId, Description, Columns, PartitionKeys)."""
    return (
        int(t["VersionId"]),
        t["Description"],
        tuple((c["Name"], c["Type"]) for c in t["StorageDescriptor"]["Columns"]),
        tuple((k["Name"], k["Type"]) for k in t["PartitionKeys"]),
    )


def observe_table(glue: Catalog, db: str, t: dict[str, Any], times: dict[Values, datetime]) -> dict[str, Any]:
    name = t["Name"]
    where = {"DatabaseName": db, "TableName": name}
    current = glue.get_table(DatabaseName=db, Name=name)["Table"]
    assert current == t, "GetTable and GetTables answer differently"
    versions = {}
    for v in every(glue.get_table_versions, "TableVersions", MaxResults=2, **where):
        assert v["Table"]["VersionId"] == v["VersionId"]
        versions[int(v["VersionId"])] = table_view(v["Table"])[1:]
    for vid, view in versions.items():
        one = glue.get_table_version(**where, VersionId=str(vid))["TableVersion"]
        assert (one["VersionId"], table_view(one["Table"])[1:]) == (str(vid), view), f"GetTableVersion {vid}"
    unknown = str(max(versions, default=0) + 1)
    assert code_of(lambda: glue.get_table_version(**where, VersionId=unknown)) == "EntityNotFoundException"
    assert glue.get_table_version(**where)["TableVersion"]["VersionId"] == t["VersionId"]
    parts = observe_partitions(glue, db, name, times)
    assert len({p[0] for p in parts}) == len(parts), f"GetPartitions repeats a partition: {parts}"
    candidates = list(itertools.product(YEARS, *[REGIONS] * (len(t["PartitionKeys"]) - 1)))
    got = glue.batch_get_partition(**where, PartitionsToGet=[{"Values": list(v)} for v in candidates])[
        "Partitions"
    ]
    assert sorted(tuple(p["Values"]) for p in got) == sorted(p[0] for p in parts), "BatchGetPartition"
    present = {p[0] for p in parts}
    for values in candidates:
        try:
            found = glue.get_partition(**where, PartitionValues=list(values))["Partition"]["Values"]
        except ClientError as e:
            assert values not in present and e.response["Error"]["Code"] == "EntityNotFoundException"
        else:
            assert values in present and tuple(found) == values, f"GetPartition {values}"
    indexes = {
        d["IndexName"]: (tuple(k["Name"] for k in d["Keys"]), d["IndexStatus"])
        for d in glue.get_partition_indexes(**where)["PartitionIndexDescriptorList"]
    }
    stats = glue.get_column_statistics_for_table(**where, ColumnNames=STAT_COLUMNS)
    part_stats = {}
    for values, _, _ in parts:
        found = glue.get_column_statistics_for_partition(
            **where, PartitionValues=list(values), ColumnNames=STAT_COLUMNS
        )
        part_stats[values] = stats_view(found)
    return {
        "current": table_view(t),
        "versions": versions,
        "partitions": {values: (location, cols) for values, location, cols in parts},
        "indexes": indexes,
        "stats": stats_view(stats),
        "part_stats": part_stats,
        "tags": glue.get_tags(ResourceArn=arn(("table", db, name)))["Tags"],
    }


def stats_view(response: dict[str, Any]) -> dict[str, Any]:
    """Each asked column: its statistics (type, NumberOfNulls), or its error code."""
    out: dict[str, Any] = {}
    for s in response["ColumnStatisticsList"]:
        data = s["StatisticsData"]
        member = next(k for k in data if k != "Type")
        out[s["ColumnName"]] = (data["Type"], data[member]["NumberOfNulls"])
    for e in response["Errors"]:
        out[e["ColumnName"]] = e["Error"]["ErrorCode"]
    return out


def expected_stats(cols: dict[str, str], found: dict[str, tuple[str, int]]) -> dict[str, Any]:
    return {
        c: found.get(c, "EntityNotFoundException" if c in cols else "InvalidInputException")
        for c in STAT_COLUMNS
    }


def expect(model: Model) -> dict[str, Any]:
    out: dict[str, Any] = {"catalog_tags": model.catalog_tags, "databases": {}}
    for db, d in model.databases.items():
        tables = {}
        for name, t in d.tables.items():
            tables[name] = {
                "current": (t.version, *t.versions[t.version]),
                "versions": {v: t.versions[v] for v in t.versions},
                "partitions": {
                    values: (p.location, COLUMN_SETS[p.columns] if p.columns else None)
                    for values, p in t.partitions.items()
                },
                "indexes": t.indexes,
                "stats": expected_stats(dict(COLUMN_SETS[t.columns]), t.stats),
                "part_stats": {
                    values: expected_stats(
                        t.columns_of(values), {c: s for (v, c), s in t.part_stats.items() if v == values}
                    )
                    for values in t.partitions
                },
                "tags": t.tags,
            }
        out["databases"][db] = {"description": d.description, "tags": d.tags, "tables": tables}
    return out


def as_of_view(model: Model, expression: Expr | None) -> dict[str, Any]:
    """What time travel reads of a state: its tables and their partitions (those matching ``expression``)."""
    return {
        db: {
            name: (
                (t.version, *t.versions[t.version]),
                sorted(
                    (v, p.location)
                    for v, p in t.partitions.items()
                    if expression is None or evaluate(expression, v, t.keys)
                ),
            )
            for name, t in d.tables.items()
        }
        for db, d in model.databases.items()
    }


class Warnings(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


# -- the machine ----------------------------------------------------------------------------------------

names = st.sampled_from
# Mostly db1.t1, which exists from the start: the other names are there to be made, dropped and made again.
db_st = st.sampled_from(["db1", "db1", "db1", "db2"])
table_st = st.sampled_from(["t1", "t1", "t1", "t2"])
# Made mostly under the other names, dropped mostly under those: runs spend few steps without db1.t1.
# (Hypothesis favours the first of a sampled_from, so the name wanted most comes first.)
new_db_st = st.sampled_from(["db2", "db2", "db1"])
new_table_st = st.sampled_from(["t2", "t2", "t1"])
gone_db_st = st.sampled_from(["db2", "db2", "db2", "db2", "db2", "db1"])
gone_table_st = st.sampled_from(["t2", "t2", "t2", "t2", "t2", "t1"])
pair_st = st.tuples(st.sampled_from(YEARS), st.sampled_from(REGIONS))
# Mostly values for two keys; some for one, which tables whose keys were changed to one take.
values_st = st.one_of(pair_st, pair_st, pair_st, st.tuples(st.sampled_from(YEARS)))
tags_st = st.dictionaries(st.sampled_from(TAG_KEYS), st.sampled_from(["a", "b"]), min_size=1, max_size=2)
stats_st = st.lists(
    st.tuples(
        st.sampled_from(STAT_COLUMNS), st.sampled_from(["LONG", "DOUBLE", "STRING"]), st.integers(0, 9)
    ),
    min_size=1,
    max_size=3,
    unique_by=lambda s: s[0],
)
writer_st = st.sampled_from(["main", "other"])


class CatalogMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.root = tempfile.mkdtemp(prefix="gluecat-model-")
        self.warehouse = os.path.join(self.root, "warehouse")
        self.model = Model()
        self.main = self.open()
        self.other: Catalog | None = None
        self.reader = "main"
        self.history: list[tuple[datetime, Model]] = []
        self.expired_before = datetime.min.replace(tzinfo=UTC)
        self.tick = 0
        # What gluecat only logs (a merge, a refold or a checkpoint that failed) is a failure here too:
        # nothing runs concurrently, so none of them has a reason to fail.
        self.warnings = Warnings()
        logging.getLogger("gluecat").addHandler(self.warnings)

    def open(self) -> Catalog:
        glue = Catalog(self.warehouse, fsync=False, background_merges=BACKGROUND)
        glue.store.checkpoint_interval = 7  # checkpoints every few steps, so reads cross them
        return glue

    def client(self, writer: str) -> Catalog:
        if writer == "other":
            if self.other is None:
                self.other = self.open()
            return self.other
        return self.main

    def teardown(self) -> None:
        logging.getLogger("gluecat").removeHandler(self.warnings)
        try:
            for glue in (self.main, self.other):
                if glue is not None:
                    glue.close()
                    glue._ctx.rows.stop()
            report = fsck.check(self.warehouse)
            assert not report.damaged, fsck.render(report, verbose=True)
        finally:
            shutil.rmtree(self.root, ignore_errors=True)

    # -- calling, and applying the model's expectation --------------------------------------------------

    def call(self, expected: str | None, fn: Any) -> Any:
        """Run ``fn``; it must end with the error the model expects (or succeed if it expects none)."""
        try:
            result = fn()
        except ClientError as e:
            got = e.response["Error"]["Code"]
            assert got == expected, f"expected {expected or 'success'}, got {got}: {e}"
            return None
        assert expected is None, f"expected {expected}, the call succeeded"
        return result

    def attempt(self, plan: Any, fn: Any) -> Any:
        """``plan`` checks the model's preconditions (raising Expected) and returns how to apply the call's
        effect to the model; the call is run and must agree."""
        trial = copy.deepcopy(self.model)
        try:
            effect = plan(trial)
        except Expected as e:
            return self.call(e.code, fn)
        result = self.call(None, fn)
        self.model = trial
        if effect is not None:
            effect(result)
        return result

    def require_table(self, m: Model, db: str, name: str) -> MTable:
        if db not in m.databases:
            raise Expected("EntityNotFoundException")
        t = m.databases[db].tables.get(name)
        if t is None:
            raise Expected("EntityNotFoundException")
        return t

    @initialize(cols=names(list(COLUMN_SETS)), batch=st.lists(pair_st, max_size=6))
    def a_table_with_partitions(self, cols: str, batch: list[Values]) -> None:
        """Most calls name db1.t1, so that a run spends its steps on a table that exists."""
        self.create_database("main", "db1", "x", False)
        self.create_table("main", "db1", "t1", cols, None, False)
        self.batch_create_partition("main", "db1", "t1", [(v, None) for v in batch])

    # -- databases -------------------------------------------------------------------------------------

    @rule(writer=writer_st, db=new_db_st, description=st.sampled_from(["x", "y"]), upper=st.booleans())
    def create_database(self, writer: str, db: str, description: str, upper: bool) -> None:
        def plan(m: Model) -> None:
            if db in m.databases:
                raise Expected("AlreadyExistsException")
            m.databases[db] = MDatabase(description)

        name = db.upper() if upper else db
        self.attempt(
            plan,
            lambda: self.client(writer).create_database(
                DatabaseInput={"Name": name, "Description": description}
            ),
        )

    @rule(writer=writer_st, db=db_st, description=st.sampled_from(["x", "y", "z"]))
    def update_database(self, writer: str, db: str, description: str) -> None:
        def plan(m: Model) -> None:
            if db not in m.databases:
                raise Expected("EntityNotFoundException")
            m.databases[db].description = description

        self.attempt(
            plan,
            lambda: self.client(writer).update_database(
                Name=db, DatabaseInput={"Name": db, "Description": description}
            ),
        )

    @rule(writer=writer_st, db=gone_db_st)
    def delete_database(self, writer: str, db: str) -> None:
        def plan(m: Model) -> None:
            if db not in m.databases:
                raise Expected("EntityNotFoundException")
            del m.databases[db]

        self.attempt(plan, lambda: self.client(writer).delete_database(Name=db))

    # -- tables and versions ---------------------------------------------------------------------------

    @rule(
        writer=writer_st,
        db=new_db_st,
        name=new_table_st,
        cols=names(list(COLUMN_SETS)),
        index=st.none() | st.sampled_from(INDEX_KEYS),
        upper=st.booleans(),
    )
    def create_table(
        self, writer: str, db: str, name: str, cols: str, index: tuple[str, ...] | None, upper: bool
    ) -> None:
        def plan(m: Model) -> None:
            if db not in m.databases:
                raise Expected("EntityNotFoundException")
            if name in m.databases[db].tables:
                raise Expected("AlreadyExistsException")
            t = MTable(description="v1", columns=cols)
            t.versions[1] = ("v1", COLUMN_SETS[cols], KEY_SETS["n"])
            if index is not None:
                t.indexes["i1"] = (index, "ACTIVE")
            m.databases[db].tables[name] = t

        extra = {} if index is None else {"PartitionIndexes": [{"IndexName": "i1", "Keys": list(index)}]}
        given = name.upper() if upper else name
        self.attempt(
            plan,
            lambda: self.client(writer).create_table(
                DatabaseName=db, TableInput=table_input(given, "v1", cols), **extra
            ),
        )

    @rule(
        writer=writer_st,
        db=db_st,
        name=table_st,
        cols=names(list(COLUMN_SETS)),
        version=st.sampled_from(["none", "current", "stale"]),
        skip_archive=st.booleans(),
        keys=st.sampled_from(["n", "o", "n", "s", "w"]),
    )
    def update_table(
        self, writer: str, db: str, name: str, cols: str, version: str, skip_archive: bool, keys: str
    ) -> None:
        t0 = self.model.table(db, name)
        current = t0.version if t0 is not None else 1
        version_id = {"none": None, "current": str(current), "stale": str(current - 1)}[version]
        self.tick += 1
        description = f"u{self.tick}"

        def plan(m: Model) -> None:
            t = self.require_table(m, db, name)
            if version_id is not None and int(version_id) != t.version:
                raise Expected("ConcurrentModificationException")
            if keys != t.keys and any(status == "ACTIVE" for _, status in t.indexes.values()):
                # Indexed keys cannot be renamed, reordered or retyped; nor, with an index, any key.
                names_before = [k for k, _ in KEY_SETS[t.keys]]
                retyped = any(
                    dict(KEY_SETS[t.keys])[k] != dict(KEY_SETS[keys]).get(k)
                    for index_keys, status in t.indexes.values()
                    if status == "ACTIVE"
                    for k in index_keys
                )
                if names_before != [k for k, _ in KEY_SETS[keys]] or retyped:
                    raise Expected("InvalidInputException")
            if len(KEY_SETS[keys]) != len(KEY_SETS[t.keys]) and t.partitions:
                raise Expected("InvalidInputException")  # partitions keep their number of values
            t.keys = keys
            before, after = dict(COLUMN_SETS[t.columns]), dict(COLUMN_SETS[cols])
            if skip_archive:
                del t.versions[t.version]
            t.version += 1
            t.description, t.columns = description, cols
            t.versions[t.version] = (description, COLUMN_SETS[cols], KEY_SETS[keys])
            # Statistics of a column the update drops or retypes go, as Hive's metastore drops them;
            # a partition's too when its columns are the table's.
            t.stats = {c: s for c, s in t.stats.items() if not outdated(c, before, after)}
            t.part_stats = {
                (v, c): s
                for (v, c), s in t.part_stats.items()
                if t.partitions[v].columns is not None or not outdated(c, before, after)
            }

        extra: dict[str, Any] = {"SkipArchive": skip_archive}
        if version_id is not None:
            extra["VersionId"] = version_id
        self.attempt(
            plan,
            lambda: self.client(writer).update_table(
                DatabaseName=db, TableInput=table_input(name, description, cols, keys), **extra
            ),
        )

    @rule(writer=writer_st, db=db_st, name=gone_table_st)
    def delete_table(self, writer: str, db: str, name: str) -> None:
        def plan(m: Model) -> None:
            self.require_table(m, db, name)
            del m.databases[db].tables[name]

        self.attempt(plan, lambda: self.client(writer).delete_table(DatabaseName=db, Name=name))

    @rule(writer=writer_st, db=db_st, which=st.lists(gone_table_st, min_size=1, max_size=3))
    def batch_delete_table(self, writer: str, db: str, which: list[str]) -> None:
        expected_errors: list[tuple[str, str]] = []

        def plan(m: Model) -> Any:
            if db not in m.databases:
                raise Expected("EntityNotFoundException")
            for name in dict.fromkeys(which):
                if m.databases[db].tables.pop(name, None) is None:
                    expected_errors.append((name, "EntityNotFoundException"))
            return lambda r: self.same(batch_errors(r, "TableName"), sorted(expected_errors))

        self.attempt(
            plan, lambda: self.client(writer).batch_delete_table(DatabaseName=db, TablesToDelete=which)
        )

    @rule(writer=writer_st, db=db_st, name=table_st, back=st.integers(0, 3))
    def delete_table_version(self, writer: str, db: str, name: str, back: int) -> None:
        t0 = self.model.table(db, name)
        vid = str(max(1, (t0.version if t0 else 1) - back))

        def plan(m: Model) -> None:
            t = self.require_table(m, db, name)
            if int(vid) not in t.versions:
                raise Expected("EntityNotFoundException")
            if int(vid) == t.version:
                raise Expected("InvalidInputException")
            del t.versions[int(vid)]

        self.attempt(
            plan,
            lambda: self.client(writer).delete_table_version(DatabaseName=db, TableName=name, VersionId=vid),
        )

    @rule(
        writer=writer_st,
        db=db_st,
        name=table_st,
        backs=st.lists(st.integers(0, 4), min_size=1, max_size=4),
    )
    def batch_delete_table_version(self, writer: str, db: str, name: str, backs: list[int]) -> None:
        t0 = self.model.table(db, name)
        vids = [str(max(1, (t0.version if t0 else 1) - b)) for b in backs]
        expected_errors: list[tuple[str, str]] = []

        def plan(m: Model) -> Any:
            t = self.require_table(m, db, name)
            for vid in dict.fromkeys(vids):
                if int(vid) not in t.versions:
                    expected_errors.append((vid, "EntityNotFoundException"))
                elif int(vid) == t.version:
                    expected_errors.append((vid, "InvalidInputException"))
                else:
                    del t.versions[int(vid)]
            return lambda r: self.same(batch_errors(r, "VersionId"), sorted(expected_errors))

        self.attempt(
            plan,
            lambda: self.client(writer).batch_delete_table_version(
                DatabaseName=db, TableName=name, VersionIds=vids
            ),
        )

    # -- partitions ------------------------------------------------------------------------------------

    def adding(self, t: MTable, values: Values, tag: str, cols: str | None, taken: set[Values]) -> None:
        check_count(t, values)
        if values in t.partitions or values in taken:
            raise Expected("AlreadyExistsException")
        check_indexed(t, values)
        t.partitions[values] = MPartition(
            partition_input(values, tag, cols)["StorageDescriptor"]["Location"], cols
        )
        taken.add(values)

    def new_tag(self) -> str:
        self.tick += 1
        return f"w{self.tick}"

    @rule(
        writer=writer_st,
        db=db_st,
        name=table_st,
        values=values_st,
        cols=st.none() | names(list(COLUMN_SETS)),
    )
    def create_partition(self, writer: str, db: str, name: str, values: Values, cols: str | None) -> None:
        tag = self.new_tag()

        def plan(m: Model) -> None:
            self.adding(self.require_table(m, db, name), values, tag, cols, set())

        self.attempt(
            plan,
            lambda: self.client(writer).create_partition(
                DatabaseName=db, TableName=name, PartitionInput=partition_input(values, tag, cols)
            ),
        )

    @rule(
        writer=writer_st,
        db=db_st,
        name=table_st,
        batch=st.lists(st.tuples(values_st, st.none() | names(list(COLUMN_SETS))), min_size=1, max_size=6),
    )
    def batch_create_partition(
        self, writer: str, db: str, name: str, batch: list[tuple[Values, str | None]]
    ) -> None:
        tag = self.new_tag()
        expected_errors: list[tuple[Values, str]] = []

        def plan(m: Model) -> Any:
            t = self.require_table(m, db, name)
            taken: set[Values] = set()
            for values, cols in batch:
                try:
                    self.adding(t, values, tag, cols, taken)
                except Expected as e:
                    expected_errors.append((values, e.code))
            return lambda r: self.same(batch_errors(r, "PartitionValues"), sorted(expected_errors))

        self.attempt(
            plan,
            lambda: self.client(writer).batch_create_partition(
                DatabaseName=db,
                TableName=name,
                PartitionInputList=[partition_input(v, tag, c) for v, c in batch],
            ),
        )

    def updating(self, t: MTable, values: Values, new: Values, tag: str, cols: str | None) -> None:
        check_count(t, values)
        check_count(t, new)
        if values not in t.partitions:
            raise Expected("EntityNotFoundException")
        if new != values:
            if new in t.partitions:
                raise Expected("AlreadyExistsException")
            check_indexed(t, new)
        before = t.columns_of(values)
        old = t.partitions.pop(values)
        location = partition_input(new, tag, cols)["StorageDescriptor"]["Location"]
        t.partitions[new] = MPartition(location, cols, old.creation_time)
        if new != values:  # statistics describe the data that moved: all of the old partition's go
            t.part_stats = {(v, c): s for (v, c), s in t.part_stats.items() if v != values}
        else:
            after = t.columns_of(values)
            t.part_stats = {
                (v, c): s
                for (v, c), s in t.part_stats.items()
                if v != values or not outdated(c, before, after)
            }

    @rule(
        writer=writer_st,
        db=db_st,
        name=table_st,
        values=values_st,
        new=st.none() | values_st,
        cols=st.none() | names(list(COLUMN_SETS)),
    )
    def update_partition(
        self, writer: str, db: str, name: str, values: Values, new: Values | None, cols: str | None
    ) -> None:
        tag = self.new_tag()
        target = new or values

        def plan(m: Model) -> None:
            self.updating(self.require_table(m, db, name), values, target, tag, cols)

        self.attempt(
            plan,
            lambda: self.client(writer).update_partition(
                DatabaseName=db,
                TableName=name,
                PartitionValueList=list(values),
                PartitionInput=partition_input(target, tag, cols),
            ),
        )

    @rule(
        writer=writer_st,
        db=db_st,
        name=table_st,
        entries=st.lists(
            st.tuples(values_st, st.none() | values_st, st.none() | names(list(COLUMN_SETS))),
            min_size=1,
            max_size=4,
        ),
    )
    def batch_update_partition(
        self, writer: str, db: str, name: str, entries: list[tuple[Values, Values | None, str | None]]
    ) -> None:
        tag = self.new_tag()
        expected_errors: list[tuple[Values, str]] = []

        def plan(m: Model) -> Any:
            t = self.require_table(m, db, name)
            for values, new, cols in entries:
                try:
                    self.updating(t, values, new or values, tag, cols)
                except Expected as e:
                    expected_errors.append((values, e.code))
            return lambda r: self.same(batch_errors(r, "PartitionValueList"), sorted(expected_errors))

        self.attempt(
            plan,
            lambda: self.client(writer).batch_update_partition(
                DatabaseName=db,
                TableName=name,
                Entries=[
                    {"PartitionValueList": list(v), "PartitionInput": partition_input(n or v, tag, c)}
                    for v, n, c in entries
                ],
            ),
        )

    def deleting(self, t: MTable, values: Values) -> None:
        check_count(t, values)
        if t.partitions.pop(values, None) is None:
            raise Expected("EntityNotFoundException")
        t.part_stats = {(v, c): s for (v, c), s in t.part_stats.items() if v != values}

    @rule(writer=writer_st, db=db_st, name=table_st, values=values_st)
    def delete_partition(self, writer: str, db: str, name: str, values: Values) -> None:
        def plan(m: Model) -> None:
            self.deleting(self.require_table(m, db, name), values)

        self.attempt(
            plan,
            lambda: self.client(writer).delete_partition(
                DatabaseName=db, TableName=name, PartitionValues=list(values)
            ),
        )

    @rule(
        writer=writer_st,
        db=db_st,
        name=table_st,
        batch=st.lists(values_st, min_size=1, max_size=6),
    )
    def batch_delete_partition(self, writer: str, db: str, name: str, batch: list[Values]) -> None:
        expected_errors: list[tuple[Values, str]] = []

        def plan(m: Model) -> Any:
            t = self.require_table(m, db, name)
            for values in batch:
                try:
                    self.deleting(t, values)
                except Expected as e:
                    expected_errors.append((values, e.code))
            return lambda r: self.same(batch_errors(r, "PartitionValues"), sorted(expected_errors))

        self.attempt(
            plan,
            lambda: self.client(writer).batch_delete_partition(
                DatabaseName=db, TableName=name, PartitionsToDelete=[{"Values": list(v)} for v in batch]
            ),
        )

    @rule(writer=writer_st, db=db_st, name=table_st)
    def delete_every_partition(self, writer: str, db: str, name: str) -> None:
        """BatchDeletePartition of all the partitions the model has: empty tables (which may change
        their number of keys) come often."""
        t = self.model.table(db, name)
        if t is not None and t.partitions:
            self.batch_delete_partition(writer, db, name, sorted(t.partitions))

    @rule(
        writer=writer_st,
        db=db_st,
        name=table_st,
        add=st.lists(values_st, max_size=4),
        drop=st.lists(values_st, max_size=3),
        if_not_exists=st.booleans(),
        if_exists=st.booleans(),
    )
    def commit_partitions(
        self,
        writer: str,
        db: str,
        name: str,
        add: list[Values],
        drop: list[Values],
        if_not_exists: bool,
        if_exists: bool,
    ) -> None:
        """gluecat's own atomic add-and-drop (Spark's writes and partition DDL): all of it or nothing."""
        tag = self.new_tag()

        def plan(m: Model) -> None:
            t = self.require_table(m, db, name)
            dropped: set[Values] = set()
            for values in drop:
                check_count(t, values)
                if values in t.partitions and values not in dropped:
                    dropped.add(values)
                elif not if_exists:
                    raise Expected("EntityNotFoundException")
            for values in dropped:
                self.deleting(t, values)
            taken: set[Values] = set()
            for values in add:
                if values in dropped:  # dropped and added again: replaced
                    t.partitions[values] = MPartition(
                        partition_input(values, tag, None)["StorageDescriptor"]["Location"], None
                    )
                    continue
                try:
                    self.adding(t, values, tag, None, taken)
                except Expected as e:
                    if e.code != "AlreadyExistsException" or not if_not_exists:
                        raise

        self.attempt(
            plan,
            lambda: self.client(writer).commit_partitions(
                DatabaseName=db,
                TableName=name,
                Add=[partition_input(v, tag, None) for v in add],
                Drop=[list(v) for v in drop],
                IfNotExists=if_not_exists,
                IfExists=if_exists,
            ),
        )

    # -- partition indexes -----------------------------------------------------------------------------

    @rule(
        writer=writer_st,
        db=db_st,
        name=table_st,
        index=names(INDEX_NAMES),
        keys=st.sampled_from(INDEX_KEYS),
    )
    def create_partition_index(
        self, writer: str, db: str, name: str, index: str, keys: tuple[str, ...]
    ) -> None:
        def plan(m: Model) -> None:
            t = self.require_table(m, db, name)
            if index in t.indexes and t.indexes[index][1] != "FAILED":
                raise Expected("AlreadyExistsException")
            if not set(keys) <= key_names(t):
                raise Expected("InvalidInputException")
            failed = any(problem(v, k, t.keys) for v in t.partitions for k in keys)
            t.indexes[index] = (keys, "FAILED" if failed else "ACTIVE")

        self.attempt(
            plan,
            lambda: self.client(writer).create_partition_index(
                DatabaseName=db, TableName=name, PartitionIndex={"IndexName": index, "Keys": list(keys)}
            ),
        )

    @rule(writer=writer_st, db=db_st, name=table_st, index=names(INDEX_NAMES))
    def delete_partition_index(self, writer: str, db: str, name: str, index: str) -> None:
        def plan(m: Model) -> None:
            t = self.require_table(m, db, name)
            if t.indexes.pop(index, None) is None:
                raise Expected("EntityNotFoundException")

        self.attempt(
            plan,
            lambda: self.client(writer).delete_partition_index(
                DatabaseName=db, TableName=name, IndexName=index
            ),
        )

    # -- column statistics -----------------------------------------------------------------------------

    @rule(writer=writer_st, db=db_st, name=table_st, stats=stats_st)
    def update_table_statistics(
        self, writer: str, db: str, name: str, stats: list[tuple[str, str, int]]
    ) -> None:
        def plan(m: Model) -> Any:
            t = self.require_table(m, db, name)
            fine = fitting(stats, dict(COLUMN_SETS[t.columns]))
            for c, kind, nulls in fine:
                t.stats[c] = (kind, nulls)
            return lambda r: self.same(len(r["Errors"]), len(stats) - len(fine))

        self.attempt(
            plan,
            lambda: self.client(writer).update_column_statistics_for_table(
                DatabaseName=db, TableName=name, ColumnStatisticsList=[statistics(*s) for s in stats]
            ),
        )

    @rule(writer=writer_st, db=db_st, name=table_st, column=names(STAT_COLUMNS))
    def delete_table_statistics(self, writer: str, db: str, name: str, column: str) -> None:
        def plan(m: Model) -> None:
            t = self.require_table(m, db, name)
            if t.stats.pop(column, None) is None:
                raise Expected("EntityNotFoundException")

        self.attempt(
            plan,
            lambda: self.client(writer).delete_column_statistics_for_table(
                DatabaseName=db, TableName=name, ColumnName=column
            ),
        )

    @rule(writer=writer_st, db=db_st, name=table_st, values=values_st, stats=stats_st)
    def update_partition_statistics(
        self, writer: str, db: str, name: str, values: Values, stats: list[tuple[str, str, int]]
    ) -> None:
        def plan(m: Model) -> Any:
            t = self.require_table(m, db, name)
            check_count(t, values)
            if values not in t.partitions:
                raise Expected("EntityNotFoundException")
            fine = fitting(stats, t.columns_of(values))
            for c, kind, nulls in fine:
                t.part_stats[(values, c)] = (kind, nulls)
            return lambda r: self.same(len(r["Errors"]), len(stats) - len(fine))

        self.attempt(
            plan,
            lambda: self.client(writer).update_column_statistics_for_partition(
                DatabaseName=db,
                TableName=name,
                PartitionValues=list(values),
                ColumnStatisticsList=[statistics(*s) for s in stats],
            ),
        )

    @rule(writer=writer_st, db=db_st, name=table_st, values=values_st, column=names(STAT_COLUMNS))
    def delete_partition_statistics(
        self, writer: str, db: str, name: str, values: Values, column: str
    ) -> None:
        def plan(m: Model) -> None:
            t = self.require_table(m, db, name)
            check_count(t, values)
            if values not in t.partitions or t.part_stats.pop((values, column), None) is None:
                raise Expected("EntityNotFoundException")

        self.attempt(
            plan,
            lambda: self.client(writer).delete_column_statistics_for_partition(
                DatabaseName=db, TableName=name, PartitionValues=list(values), ColumnName=column
            ),
        )

    # -- tags ------------------------------------------------------------------------------------------

    def resource_tags(self, m: Model, resource: tuple[str, ...]) -> dict[str, str]:
        if resource == ("catalog",):
            return m.catalog_tags
        if resource[0] == "database":
            if resource[1] not in m.databases:
                raise Expected("EntityNotFoundException")
            return m.databases[resource[1]].tags
        return self.require_table(m, resource[1], resource[2]).tags

    resources = st.sampled_from(
        [("catalog",)]
        + [("database", d) for d in DATABASES]
        + [("table", d, t) for d in DATABASES for t in TABLES]
    )

    @rule(writer=writer_st, resource=resources, tags=tags_st)
    def tag_resource(self, writer: str, resource: tuple[str, ...], tags: dict[str, str]) -> None:
        def plan(m: Model) -> None:
            self.resource_tags(m, resource).update(tags)

        self.attempt(
            plan, lambda: self.client(writer).tag_resource(ResourceArn=arn(resource), TagsToAdd=tags)
        )

    @rule(writer=writer_st, resource=resources, keys=st.lists(names(TAG_KEYS), min_size=1, max_size=2))
    def untag_resource(self, writer: str, resource: tuple[str, ...], keys: list[str]) -> None:
        def plan(m: Model) -> None:
            current = self.resource_tags(m, resource)
            for k in keys:
                current.pop(k, None)

        self.attempt(
            plan, lambda: self.client(writer).untag_resource(ResourceArn=arn(resource), TagsToRemove=keys)
        )

    # -- reads that take arguments ---------------------------------------------------------------------

    @rule(
        db=db_st,
        name=table_st,
        expression=expressions(),
        page=st.integers(1, 4),
        segments=st.integers(1, 3),
        exclude=st.booleans(),
    )
    def query_partitions(
        self, db: str, name: str, expression: Expr, page: int, segments: int, exclude: bool
    ) -> None:
        t = self.model.table(db, name)
        text = render(expression)
        glue = self.client(self.reader)
        if t is None:
            assert code_of(lambda: glue.get_partitions(DatabaseName=db, TableName=name, Expression=text)) == (
                "EntityNotFoundException"
            )
            return
        if not named_keys(expression) <= key_names(t):
            code = code_of(lambda: glue.get_partitions(DatabaseName=db, TableName=name, Expression=text))
            assert code == "InvalidInputException", f"{text} names a key {db}.{name} lacks: {code}"
            return
        wanted = sorted(v for v in t.partitions if evaluate(expression, v, t.keys))
        found: list[Values] = []
        for i in range(segments):
            segment = {"SegmentNumber": i, "TotalSegments": segments}
            got = observe_partitions(
                glue, db, name, Expression=text, MaxResults=page, Segment=segment, ExcludeColumnSchema=exclude
            )
            found.extend(p[0] for p in got)
            columns = {p[0]: p[2] for p in got}
            assert columns == {
                v: None
                if exclude or t.partitions[v].columns is None
                else COLUMN_SETS[t.partitions[v].columns]
                for v in columns
            }, "ExcludeColumnSchema"
        assert sorted(found) == wanted, f"{text}: got {sorted(found)}, the model has {wanted}"

    @rule(data=st.data(), expression=st.none() | expressions())
    @precondition(lambda self: bool(self.history))
    def time_travel(self, data: st.DataObject, expression: Expr | None) -> None:
        when, model = data.draw(st.sampled_from(self.history[-12:]))
        tables = [t for d in model.databases.values() for t in d.tables.values()]
        if expression is not None and any(not named_keys(expression) <= key_names(t) for t in tables):
            expression = None  # (that is InvalidInputException, as query_partitions checks)
        expected = as_of_view(model, expression)
        text = {} if expression is None else {"Expression": render(expression)}
        glue = self.client(self.reader)
        try:
            got = {
                d: {
                    t["Name"]: (
                        table_view(t),
                        sorted(
                            (tuple(p["Values"]), p["StorageDescriptor"]["Location"])
                            for p in every(
                                glue.get_partitions,
                                "Partitions",
                                DatabaseName=d,
                                TableName=t["Name"],
                                QueryAsOfTime=when,
                                MaxResults=2,
                                **text,
                            )
                        ),
                    )
                    for t in every(glue.get_tables, "TableList", DatabaseName=d, QueryAsOfTime=when)
                }
                for d in expected
            }
        except ClientError as e:
            # History older than the last expiry may be gone, but only as an error, never as another answer.
            assert when < self.expired_before, f"as of {when.isoformat()}: {e}"
            return
        assert got == expected, f"as of {when.isoformat()}"
        for db in set(DATABASES) - set(expected):
            code = code_of(lambda: glue.get_tables(DatabaseName=db, QueryAsOfTime=when))  # noqa: B023
            expired = code is not None and when < self.expired_before
            assert code == "EntityNotFoundException" or expired, f"{db} as of {when}: {code}"

    # -- the store's life cycle ------------------------------------------------------------------------

    @rule()
    def reopen(self) -> None:
        """A new process's view of the warehouse."""
        self.main.close()
        self.main = self.open()

    @rule()
    @precondition(lambda self: self.other is not None)
    def forget_other(self) -> None:
        assert self.other is not None
        self.other.close()
        self.other = None

    @rule(reader=writer_st)
    def read_through(self, reader: str) -> None:
        self.reader = reader
        self.client(reader)

    @rule(writer=writer_st, db=db_st, name=table_st, whole=st.booleans())
    def merge_segments(self, writer: str, db: str, name: str, whole: bool) -> None:
        glue = self.client(writer)
        if whole:
            from gluecat.catalog.compact import compact_table

            compact_table(glue._ctx, db, name)
        else:
            glue._ctx.rows.merger.maybe_merge((db, name))

    @rule(writer=writer_st)
    def checkpoint(self, writer: str) -> None:
        self.client(writer).store.checkpoint()

    @rule(expire=st.booleans())
    def compact(self, expire: bool) -> None:
        """`gluecat compact --apply`: merge every table, checkpoint, and expire everything older (or
        nothing, with the default retention)."""
        started = datetime.now(UTC)
        args = ["compact", "-w", self.warehouse, "--apply"] + (["--retain-hours", "0"] if expire else [])
        assert cli(args) == 0
        if expire:
            self.expired_before = started

    @rule()
    def compact_dry_run(self) -> None:
        """`gluecat compact` without --apply changes nothing."""
        for glue in (self.main, self.other):
            if glue is not None:
                glue.close()  # (merges on the Catalogs' own threads would change files meanwhile)
        before = warehouse_files(self.warehouse)
        assert cli(["compact", "-w", self.warehouse, "--retain-hours", "0"]) == 0
        assert warehouse_files(self.warehouse) == before

    @rule(writer=writer_st)
    def expire_now(self, writer: str) -> None:
        """Expiry alone, with no grace for unnamed files: nothing writes meanwhile."""
        started = datetime.now(UTC)
        # (A merge on a background thread writes its file before its commit names it: the grace keeps it.)
        grace = timedelta(hours=1) if BACKGROUND else timedelta(0)
        maintenance.expire(self.client(writer).store, retain=timedelta(0), grace=grace, dry_run=False)
        self.expired_before = started

    # -- after every step ------------------------------------------------------------------------------

    def same(self, got: Any, wanted: Any) -> None:
        assert got == wanted, f"got {got!r}, the model has {wanted!r}"

    def same_creation_times(self, times: dict[tuple[str, str], Any]) -> None:
        """A table's CreateTime and a partition's CreationTime are those first read, whatever updates
        came since; a table or partition made again has a new one."""
        for (db, name), (create_time, created) in times.items():
            t = self.model.databases[db].tables[name]
            t.create_time = t.create_time or create_time
            assert create_time == t.create_time, f"{db}.{name} CreateTime"
            for values, when in created.items():
                p = t.partitions[values]
                p.creation_time = p.creation_time or when
                assert when == p.creation_time, f"{db}.{name} {values} CreationTime"

    @invariant()
    def nothing_failed_quietly(self) -> None:
        assert self.warnings.messages == [], self.warnings.messages

    @invariant()
    def everything_readable_is_the_model(self) -> None:
        glue = self.client(self.reader)
        times: dict[tuple[str, str], Any] = {}
        got, wanted = observe(glue, times), expect(self.model)
        for db in set(got["databases"]) | set(wanted["databases"]):
            g, w = got["databases"].get(db), wanted["databases"].get(db)
            if g is None or w is None:
                continue
            for name in set(g["tables"]) | set(w["tables"]):
                gt, wt = g["tables"].get(name), w["tables"].get(name)
                if gt is not None and wt is not None:
                    for part in wt:
                        assert gt[part] == wt[part], (
                            f"{db}.{name} {part}: got {gt[part]}, the model has {wt[part]}"
                        )
        assert got == wanted
        self.same_creation_times(times)
        for db, d in self.model.databases.items():
            for name, t in d.tables.items():
                for text, expression in FIXED_QUERIES:
                    if not named_keys(expression) <= key_names(t):
                        continue
                    parts = observe_partitions(glue, db, name, Expression=text)
                    wanted_values = sorted(v for v in t.partitions if evaluate(expression, v, t.keys))
                    assert sorted(p[0] for p in parts) == wanted_values, f"{db}.{name} {text}"
        now = datetime.now(UTC)
        self.history.append((now, copy.deepcopy(self.model)))
        while datetime.now(UTC) <= now:  # so that the next commit is later than the recorded time
            pass


def warehouse_files(warehouse: str) -> dict[str, float]:
    return {
        os.path.join(folder, name): os.stat(os.path.join(folder, name)).st_mtime
        for folder, _, found in os.walk(warehouse)
        for name in found
    }


FIXED_QUERIES = [
    ("year = 2021", ("cmp", "year", "=", 2021)),
    ("year >= 2021 AND region = 'eu'", ("and", ("cmp", "year", ">=", 2021), ("cmp", "region", "=", "eu"))),
    ("region = 'us' AND year < 2021", ("and", ("cmp", "region", "=", "us"), ("cmp", "year", "<", 2021))),
]


@pytest.fixture
def small_merges(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Merge and refold after a write or two instead of after hundreds of rows, so that the few rows of
    a run go through merges (of runs that are and are not the oldest), refolds and squashes."""
    monkeypatch.setattr(merging, "MERGE_WIDTH", 2)
    monkeypatch.setattr(merging, "MIN_MERGE_ROWS", 1)
    monkeypatch.setattr(latest, "MAX_DELTA_ROWS", 3)
    monkeypatch.setattr(latest, "MAX_DELTA_SEGMENTS", 2)
    # Time travel to a moment just past need not wait for commits in flight: none is, here.
    monkeypatch.setattr(store, "COMMIT_SETTLE", timedelta(0))
    yield


def run_settings(examples: int, steps: int, prefix: str = "GLUECAT_MODEL") -> settings:
    """A model test's hypothesis settings: ``examples`` runs of ``steps`` steps, derandomized (the same
    sequences each time), unless the environment's ``<prefix>_EXAMPLES``, ``<prefix>_STEPS`` and
    ``<prefix>_RANDOM`` say otherwise (for longer, exploratory runs)."""
    return settings(
        max_examples=int(os.environ.get(f"{prefix}_EXAMPLES", str(examples))),
        stateful_step_count=int(os.environ.get(f"{prefix}_STEPS", str(steps))),
        derandomize=os.environ.get(f"{prefix}_RANDOM") is None,
        suppress_health_check=list(HealthCheck),
        deadline=None,
        database=None,
    )


def test_the_catalog_answers_as_the_model_of_glue_does(small_merges: None) -> None:
    """A bounded, derandomized run (the same sequences each time). To explore, set
    GLUECAT_MODEL_RANDOM=1 with larger GLUECAT_MODEL_EXAMPLES and GLUECAT_MODEL_STEPS, and
    GLUECAT_MODEL_BACKGROUND=1 to merge on the Catalogs' own threads."""
    run_state_machine_as_test(CatalogMachine, settings=run_settings(40, 50))
