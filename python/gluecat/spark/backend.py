"""The Python half of the Spark shim: answers io.gluecat.spark.PythonCatalog calls from gluecat.Catalog.

Each call carries one operation and a JSON document; the answer is {"ok": result} or
{"error": <Glue error code>, "message": ...} so the shim can raise Spark's own exception with our message.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

from gluecat import Catalog
from gluecat.errors import GlueError, InvalidInputException

# Glue keeps the namespace comment and location in fields of their own, Spark in reserved properties.
_DB_FIELDS = {"comment": "Description", "location": "LocationUri"}


def _pages(method: Callable[..., dict[str, Any]], key: str, **kwargs: Any) -> Iterator[dict[str, Any]]:
    token: str | None = None
    while True:
        page = method(**kwargs, **({"NextToken": token} if token else {}))
        yield from page[key]
        token = page.get("NextToken")
        if not token:
            return


class Backend:
    """Implements io.gluecat.spark.PythonCatalog for one warehouse."""

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog

    def call(self, operation: str, arguments: str) -> str:
        handler = getattr(self, "op_" + operation, None)
        try:
            if handler is None:
                raise InvalidInputException(f"unknown gluecat backend operation {operation!r}")
            return json.dumps({"ok": handler(json.loads(arguments))})
        except GlueError as e:
            return json.dumps({"error": e.code, "message": e.message})
        except Exception as e:  # a Python bug must still reach Spark as a message, not a Py4J trace
            return json.dumps({"error": "InternalServiceException", "message": f"{type(e).__name__}: {e}"})

    def op_list_databases(self, args: dict[str, Any]) -> list[str]:
        return [db["Name"] for db in _pages(self.catalog.get_databases, "DatabaseList")]

    def op_get_database(self, args: dict[str, Any]) -> dict[str, str]:
        db = self.catalog.get_database(Name=args["name"])["Database"]
        props = dict(db.get("Parameters", {}))
        for spark_key, glue_key in _DB_FIELDS.items():
            if db.get(glue_key):
                props[spark_key] = db[glue_key]
        return props

    def op_create_database(self, args: dict[str, Any]) -> None:
        props = dict(args.get("properties", {}))
        db: dict[str, Any] = {"Name": args["name"]}
        for spark_key, glue_key in _DB_FIELDS.items():
            if spark_key in props:
                db[glue_key] = props.pop(spark_key)
        props.pop("owner", None)
        db["Parameters"] = props
        self.catalog.create_database(DatabaseInput=db)

    def op_alter_database(self, args: dict[str, Any]) -> None:
        db = self.catalog.get_database(Name=args["name"])["Database"]
        params = dict(db.get("Parameters", {}))
        new: dict[str, Any] = {"Name": db["Name"]}
        for key in ("Description", "LocationUri"):
            if key in db:
                new[key] = db[key]
        for key, value in args.get("set", {}).items():
            if key in _DB_FIELDS:
                new[_DB_FIELDS[key]] = value
            elif key != "owner":
                params[key] = value
        for key in args.get("remove", []):
            params.pop(key, None)
        new["Parameters"] = params
        self.catalog.update_database(Name=args["name"], DatabaseInput=new)

    def op_drop_database(self, args: dict[str, Any]) -> bool:
        tables = self.op_list_tables(args)
        if tables and not args.get("cascade"):
            raise InvalidInputException(
                f"Database {args['name']} is not empty ({len(tables)} tables); use DROP NAMESPACE ... CASCADE"
            )
        self.catalog.delete_database(Name=args["name"])
        return True

    def op_list_tables(self, args: dict[str, Any]) -> list[str]:
        return [t["Name"] for t in _pages(self.catalog.get_tables, "TableList", DatabaseName=args["name"])]

    def op_get_table(self, args: dict[str, Any]) -> dict[str, Any]:
        table = self.catalog.get_table(DatabaseName=args["database"], Name=args["name"])["Table"]
        sd = table.get("StorageDescriptor", {})

        def columns(cols: list[dict[str, Any]]) -> list[dict[str, str]]:
            return [
                {"name": c["Name"], "type": c.get("Type", "string"), "comment": c.get("Comment", "")}
                for c in cols
            ]

        props = dict(table.get("Parameters", {}))
        if sd.get("Location"):
            props["location"] = sd["Location"]
        if table.get("Description"):
            props["comment"] = table["Description"]
        return {
            "columns": columns(sd.get("Columns", [])),
            "partition_keys": columns(table.get("PartitionKeys", [])),
            "properties": props,
        }

    def op_drop_table(self, args: dict[str, Any]) -> None:
        self.catalog.delete_table(DatabaseName=args["database"], Name=args["name"])

    class Java:
        implements = ["io.gluecat.spark.PythonCatalog"]  # noqa: RUF012 (Py4J reads this class attribute)
