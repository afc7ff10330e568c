"""Whatever grants exist, nothing a caller is answered (a listing, any page of it, a continuation token, a
table's columns, a search, an error) names a database, table or column it may not DESCRIBE, beyond
what its own request named; and a listing read page by page is exactly what it may see, once each.

Random grants (to the caller, to another user and to IAM_ALLOWED_PRINCIPALS, on databases, tables,
every table of a database and some columns) are set on a fixed catalog whose every name is a token
found nowhere else; what the caller may see is worked out here from the grants alone, as Lake
Formation's rules say (an oracle independent of gluecat's index), and every read the caller can make
over boto3 and over Hive's TCP protocol is checked against it.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from botocore.exceptions import ClientError
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gluecat.catalog import grants
from gluecat.hms.gen.hive_metastore import ttypes
from gluecat.store.snapshot import Changes

from .permission_lake import IAM, PermissionLake, principal

pytestmark = pytest.mark.slow

DATABASES = ["dbkqa", "dbkqb"]
TABLES = ["tbjxa", "tbjxb", "tbjxc"]
COLUMNS = ["clvma", "clvmb", "clvmc"]


def table_name(db: int, t: int) -> str:
    return f"{TABLES[t]}{DATABASES[db][-1]}"


def column_name(db: int, t: int, c: int) -> str:
    return f"{COLUMNS[c]}{DATABASES[db][-1]}{TABLES[t][-1]}"


ALL_DATABASES = list(range(len(DATABASES)))
ALL_TABLES = [(d, t) for d in ALL_DATABASES for t in range(len(TABLES))]


@pytest.fixture(scope="module")
def lake(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PermissionLake]:
    served = PermissionLake(tmp_path_factory.mktemp("properties"))
    for d, db in enumerate(DATABASES):
        served.glue.create_database(DatabaseInput={"Name": db, "Description": "a database"})
        for t in range(len(TABLES)):
            served.glue.create_table(
                DatabaseName=db,
                TableInput={
                    "Name": table_name(d, t),
                    "StorageDescriptor": {
                        "Columns": [
                            {"Name": column_name(d, t, c), "Type": "int"} for c in range(len(COLUMNS))
                        ],
                        "Location": f"s3://lake/{db}/{table_name(d, t)}",
                    },
                    "PartitionKeys": [{"Name": "dt", "Type": "string"}],
                },
            )
            served.glue.create_partition(
                DatabaseName=db,
                TableName=table_name(d, t),
                PartitionInput={
                    "Values": ["x"],
                    "StorageDescriptor": {
                        "Columns": [
                            {"Name": column_name(d, t, c), "Type": "int"} for c in range(len(COLUMNS))
                        ]
                    },
                },
            )
    yield served
    served.stop()


@dataclass(frozen=True)
class Grant:
    who: str
    kind: str  # database, tables, table, columns
    db: int
    table: int
    permissions: tuple[str, ...]
    columns: tuple[int, ...] = ()
    excluded: bool = False
    grantable: bool = False


_PERMS = {
    "database": ["DESCRIBE", "ALTER", "CREATE_TABLE", "DROP"],
    "tables": ["DESCRIBE", "SELECT", "ALTER", "INSERT"],
    "table": ["DESCRIBE", "SELECT", "ALTER", "DELETE"],
    "columns": ["SELECT"],
}

grant_strategy = st.builds(
    lambda who, kind, db, table, perms, columns, excluded, grantable: Grant(
        who,
        kind,
        db,
        table,
        tuple(sorted({_PERMS[kind][i % len(_PERMS[kind])] for i in perms})),
        tuple(sorted(columns)),
        excluded,
        grantable and who != "IAM_ALLOWED_PRINCIPALS",
    ),
    st.sampled_from(["bob", "carol", "IAM_ALLOWED_PRINCIPALS"]),
    st.sampled_from(["database", "tables", "table", "columns"]),
    st.sampled_from(ALL_DATABASES),
    st.sampled_from(range(len(TABLES))),
    st.lists(st.integers(0, 3), min_size=1, max_size=2),
    st.sets(st.integers(0, len(COLUMNS) - 1), min_size=1, max_size=2),
    st.booleans(),
    st.booleans(),
)


def _resource(g: Grant) -> dict[str, Any]:
    db = DATABASES[g.db]
    if g.kind == "database":
        return {"Database": {"Name": db}}
    if g.kind == "tables":
        return {"Table": {"DatabaseName": db, "TableWildcard": {}}}
    if g.kind == "table":
        return {"Table": {"DatabaseName": db, "Name": table_name(g.db, g.table)}}
    names = [column_name(g.db, g.table, c) for c in g.columns]
    body: dict[str, Any] = {"DatabaseName": db, "Name": table_name(g.db, g.table)}
    if g.excluded:
        body["ColumnWildcard"] = {"ExcludedColumnNames": names}
    else:
        body["ColumnNames"] = names
    return {"TableWithColumns": body}


def set_grants(lake: PermissionLake, chosen: list[Grant]) -> None:
    """Replace every grant on the catalog's databases and tables with ``chosen`` (as its owner)."""

    def clear(snap: Any) -> tuple[Changes, None]:
        changes = Changes()
        for key in snap.sorted_keys(grants.GRANT):
            if key[0] != "catalog":
                changes.delete(grants.GRANT, key)
        return changes, None

    lake.glue.store.commit("ClearGrants", clear)
    entries = [
        {
            "Id": str(i),
            "Principal": IAM if g.who == "IAM_ALLOWED_PRINCIPALS" else principal(g.who),
            "Resource": _resource(g),
            "Permissions": list(g.permissions),
            "PermissionsWithGrantOption": list(g.permissions) if g.grantable else [],
        }
        for i, g in enumerate(chosen)
    ]
    if entries:
        assert lake.lf.batch_grant_permissions(Entries=entries)["Failures"] == []


# -- the oracle: Lake Formation's rules, from the grants alone ---------------------------------------------


@dataclass
class Seen:
    databases: set[int]
    tables: set[tuple[int, int]]
    columns: dict[tuple[int, int], set[int]]
    grants_on: set[tuple[str, int, int]]
    """Resources whose grants ListPermissions shows the caller: (kind, db, table)."""


def oracle(chosen: list[Grant]) -> Seen:
    mine = [g for g in chosen if g.who in ("bob", "IAM_ALLOWED_PRINCIPALS")]
    tables: set[tuple[int, int]] = set()
    columns: dict[tuple[int, int], set[int]] = {}
    for d, t in ALL_TABLES:
        whole = any(
            (g.kind == "table" and (g.db, g.table) == (d, t)) or (g.kind == "tables" and g.db == d)
            for g in mine
        )
        parts = [g for g in mine if g.kind == "columns" and (g.db, g.table) == (d, t)]
        if whole:
            tables.add((d, t))
            columns[(d, t)] = set(range(len(COLUMNS)))
        elif parts:
            tables.add((d, t))
            shown: set[int] = set()
            for g in parts:
                shown |= set(range(len(COLUMNS))) - set(g.columns) if g.excluded else set(g.columns)
            columns[(d, t)] = shown
    databases = {d for d, _ in tables} | {g.db for g in mine}
    grants_on: set[tuple[str, int, int]] = set()
    for g in chosen:
        if g.who == "bob" and g.grantable:
            grants_on.add(
                (
                    g.kind if g.kind != "columns" else "table",
                    g.db,
                    g.table if g.kind in ("table", "columns") else -1,
                )
            )
    return Seen(databases, tables, columns, grants_on)


def hidden_names(seen: Seen) -> set[str]:
    names = {DATABASES[d] for d in ALL_DATABASES if d not in seen.databases}
    names |= {table_name(d, t) for d, t in ALL_TABLES if (d, t) not in seen.tables}
    for d, t in ALL_TABLES:
        shown = seen.columns.get((d, t), set())
        names |= {column_name(d, t, c) for c in range(len(COLUMNS)) if c not in shown}
    return names


# -- reading everything the caller can read ----------------------------------------------------------------


def _text(value: Any) -> str:
    """An answer as text, its continuation tokens decoded (they are base64 of JSON)."""
    text = json.dumps(value, default=str)
    tokens: list[str] = []

    def walk(v: Any) -> None:
        if isinstance(v, dict):
            for k, item in v.items():
                if k == "NextToken" and isinstance(item, str):
                    tokens.append(base64.urlsafe_b64decode(item + "=" * (-len(item) % 4)).decode("latin-1"))
                walk(item)
        elif isinstance(v, list):
            for item in v:
                walk(item)

    walk(value)
    return text + " ".join(tokens)


class Reader:
    """Every call made as the caller, with what each answered and what its request named."""

    def __init__(self) -> None:
        self.answers: list[tuple[str, str]] = []

    def call(self, named: str, fn: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            out = fn(*args, **kwargs)
        except ClientError as e:
            self.answers.append((named, e.response["Error"]["Message"]))
            return None
        except (ttypes.MetaException, ttypes.NoSuchObjectException) as e:
            self.answers.append((named, str(e.message)))
            return None
        self.answers.append((named, _text(out) if not isinstance(out, list | ttypes.Table) else repr(out)))
        return out

    def pages(self, named: str, fn: Any, key: str, **kwargs: Any) -> list[Any] | None:
        items: list[Any] = []
        while True:
            page = self.call(named, fn, MaxResults=1, **kwargs)
            if page is None:
                return None
            items += page[key]
            if not page.get("NextToken"):
                return items
            kwargs["NextToken"] = page["NextToken"]


@settings(
    max_examples=30, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck)
)
@given(chosen=st.lists(grant_strategy, max_size=6))
def test_nothing_answered_names_what_the_caller_may_not_see(
    lake: PermissionLake, chosen: list[Grant]
) -> None:
    set_grants(lake, chosen)
    seen = oracle(chosen)
    glue, lf, hive = lake.client("bob"), lake.client("bob", "lakeformation"), lake.hive("bob")
    read = Reader()

    databases = read.pages("", glue.get_databases, "DatabaseList")
    assert databases is not None and [d["Name"] for d in databases] == [
        DATABASES[d] for d in sorted(seen.databases)
    ]
    found = read.pages("", glue.search_tables, "TableList")
    assert found is not None
    assert sorted(t["Name"] for t in found) == sorted(table_name(d, t) for d, t in seen.tables)
    for d, db in enumerate(DATABASES):
        listed = read.pages(db, glue.get_tables, "TableList", DatabaseName=db)
        if d not in seen.databases:
            assert listed is None  # refused, by the name it was asked
        else:
            assert listed is not None
            assert [t["Name"] for t in listed] == sorted(table_name(d, t) for dd, t in seen.tables if dd == d)
        assert sorted(read.call(db, hive.get_all_tables, db)) == sorted(
            table_name(d, t) for dd, t in seen.tables if dd == d
        )
        read.call(db, glue.get_database, Name=db)
        read.call(db, hive.get_database, db)
        objects = read.call(
            db, hive.get_table_objects_by_name, db, [table_name(d, t) for t in range(len(TABLES))]
        )
        assert sorted(o.tableName for o in objects) == sorted(
            table_name(d, t) for dd, t in seen.tables if dd == d
        )
    assert sorted(read.call("", hive.get_all_databases)) == sorted(DATABASES[d] for d in seen.databases)
    for d, t in ALL_TABLES:
        db, name = DATABASES[d], table_name(d, t)
        got = read.call(f"{db} {name}", glue.get_table, DatabaseName=db, Name=name)
        if (d, t) in seen.tables:
            shown = [c["Name"] for c in got["Table"]["StorageDescriptor"]["Columns"]]
            assert shown == [column_name(d, t, c) for c in sorted(seen.columns[(d, t)])]
            parts = read.call(f"{db} {name}", glue.get_partitions, DatabaseName=db, TableName=name)
            if parts is not None:
                assert [c["Name"] for c in parts["Partitions"][0]["StorageDescriptor"]["Columns"]] == shown
        else:
            assert got is None
        read.call(f"{db} {name}", hive.get_table, db, name)
        for c in range(len(COLUMNS)):
            # a search for a column's own token finds its table only if the column is one it may see
            hits = read.pages("", glue.search_tables, "TableList", SearchText=column_name(d, t, c)) or []
            visible = (d, t) in seen.tables and c in seen.columns[(d, t)]
            assert [h["Name"] for h in hits] == ([name] if visible else [])
    permissions = read.pages("", lf.list_permissions, "PrincipalResourcePermissions")
    assert permissions is not None
    for row in permissions:
        resource = row["Resource"]
        if "Database" in resource:
            where = ("database", DATABASES.index(resource["Database"]["Name"]), -1)
        elif "TableWildcard" in resource.get("Table", {}):
            where = ("tables", DATABASES.index(resource["Table"]["DatabaseName"]), -1)
        else:
            body = resource.get("Table") or resource["TableWithColumns"]
            d = DATABASES.index(body["DatabaseName"])
            where = ("table", d, next(t for t in range(len(TABLES)) if table_name(d, t) == body["Name"]))
        assert where in seen.grants_on or (where[0] == "table" and ("tables", where[1], -1) in seen.grants_on)
    for db in DATABASES:
        read.call(db, lf.get_effective_permissions_for_path, ResourceArn=f"arn:aws:s3:::lake/{db}")

    hidden = hidden_names(seen)
    for named, text in read.answers:
        leaked = {h for h in hidden if h in text and h not in named}
        assert not leaked, f"{text} names {leaked}"
