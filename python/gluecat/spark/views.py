"""Spark views (ViewCatalog) stored as Glue stores views: TableType VIRTUAL_VIEW, the query as ViewOriginalText
and ViewExpandedText, its output columns as the descriptor's columns, and what Spark needs to run it again
under the table parameters Spark's Hive catalog uses (view.catalogAndNamespace.*, view.query.out.*,
view.sqlConfig.*, view.schemaMode). A view and a table share one namespace of names, as in Glue and Hive.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gluecat.api.pages import every_table
from gluecat.api.table_kinds import is_external
from gluecat.errors import EntityNotFoundException

if TYPE_CHECKING:
    from gluecat.spark.remote import GlueClient

VIEW = "VIRTUAL_VIEW"
_NAMESPACE = "view.catalogAndNamespace."
_OUT = "view.query.out."
_CONF = "view.sqlConfig."
_MODE = "view.schemaMode"
_SPARK_ONLY = {"comment", "owner", "table_type", "provider", "location"}


def is_view(table: dict[str, Any]) -> bool:
    return table.get("TableType") == VIEW


def view_input(name: str, view: dict[str, Any]) -> dict[str, Any]:
    """The Glue TableInput of a Spark view."""
    props = dict(view.get("properties") or {})
    params = {
        k: v for k, v in props.items() if k not in _SPARK_ONLY and not k.startswith(("view.", "option."))
    }
    parts = [view.get("current_catalog") or "", *(view.get("current_namespace") or [])]
    params[_NAMESPACE + "numParts"] = str(len(parts))
    params.update({f"{_NAMESPACE}part.{i}": p for i, p in enumerate(parts)})
    out_columns = view.get("query_column_names") or []
    params[_OUT + "numCols"] = str(len(out_columns))
    params.update({f"{_OUT}col.{i}": c for i, c in enumerate(out_columns)})
    params.update({_CONF + k: v for k, v in (view.get("sql_configs") or {}).items()})
    if view.get("schema_mode"):
        params[_MODE] = view["schema_mode"]

    def column(c: dict[str, Any]) -> dict[str, Any]:
        out = {"Name": c["name"], "Type": c["type"]}
        if c.get("comment"):
            out["Comment"] = c["comment"]
        return out

    table: dict[str, Any] = {
        "Name": name,
        "TableType": VIEW,
        "ViewOriginalText": view["query"],
        "ViewExpandedText": view["query"],
        "StorageDescriptor": {"Columns": [column(c) for c in view.get("columns") or []]},
        "PartitionKeys": [],
        "Parameters": params,
    }
    if props.get("comment"):
        table["Description"] = props["comment"]
    if props.get("owner"):
        table["Owner"] = props["owner"]
    return table


def view_of(table: dict[str, Any]) -> dict[str, Any]:
    """A Glue view as the shim builds Spark's View from it."""
    params = dict(table.get("Parameters") or {})
    count = int(params.get(_NAMESPACE + "numParts", "0"))
    parts = [params.get(f"{_NAMESPACE}part.{i}", "") for i in range(count)]
    out_count = int(params.get(_OUT + "numCols", "0"))
    props = {k: v for k, v in params.items() if not k.startswith("view.")}
    if table.get("Description"):
        props["comment"] = table["Description"]
    if table.get("Owner"):
        props["owner"] = table["Owner"]
    return {
        "query": table.get("ViewOriginalText") or table.get("ViewExpandedText") or "",
        "current_catalog": parts[0] if parts else None,
        "current_namespace": parts[1:],
        "sql_configs": {k[len(_CONF) :]: v for k, v in params.items() if k.startswith(_CONF)},
        "schema_mode": params.get(_MODE),
        "query_column_names": [params.get(f"{_OUT}col.{i}", "") for i in range(out_count)],
        "columns": [
            {"name": c["Name"], "type": c.get("Type", "string"), "comment": c.get("Comment", "")}
            for c in (table.get("StorageDescriptor") or {}).get("Columns", [])
        ],
        "properties": props,
    }


def _get(catalog: GlueClient, database: str, name: str) -> dict[str, Any]:
    table: dict[str, Any] = catalog.get_table(DatabaseName=database, Name=name)["Table"]
    if not is_view(table):
        raise EntityNotFoundException(f"{database}.{name} is a table, not a view")
    return table


def get_view(catalog: GlueClient, database: str, name: str) -> dict[str, Any]:
    return view_of(_get(catalog, database, name))


def create_view(catalog: GlueClient, database: str, name: str, view: dict[str, Any], replace: bool) -> None:
    """CREATE VIEW (a name any table or view holds is taken) or, with ``replace``, ALTER VIEW / CREATE OR
    REPLACE of an existing view (never of a table)."""
    table = view_input(name, view)
    if replace:
        # Of the view read, not of a table another client made under its name meanwhile.
        catalog.update_table_as_read(Table=_get(catalog, database, name), TableInput=table)
    else:
        catalog.create_table(DatabaseName=database, TableInput=table)


def drop_view(catalog: GlueClient, database: str, name: str) -> bool:
    try:
        read = _get(catalog, database, name)
    except EntityNotFoundException:
        return False
    catalog.delete_table_as_read(Table=read)  # never a table made under the name since
    return True


def rename_view(catalog: GlueClient, database: str, name: str, new_database: str, new_name: str) -> None:
    old = _get(catalog, database, name)
    catalog.rename_table(
        Table=old, NewDatabaseName=new_database, TableInput=view_input(new_name, view_of(old))
    )


def kinds(catalog: GlueClient, database: str) -> list[list[str]]:
    """Each table and view of a database with its kind (MANAGED, EXTERNAL or VIEW), as Spark's TableSummary
    names them."""
    out = []
    for t in every_table(catalog, database):
        kind = "VIEW" if is_view(t) else "EXTERNAL" if is_external(t) else "MANAGED"
        out.append([t["Name"], kind])
    return out
