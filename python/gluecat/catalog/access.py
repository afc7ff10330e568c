"""Whom a catalog call acts for, and what that caller may see.

``gluecat serve`` decides each request before it reaches the catalog (gluecat/serving/permissions.py)
and runs it ``acting(view)``: the catalog's reads then leave out what the caller may not DESCRIBE (from
listings, and a table's columns it may not SELECT), and what it creates is granted to it. A call made
with no view (the in-process API, a local Spark warehouse: the warehouse owner's) sees everything and
creates without a creator's grants.

The view is a context variable, not a parameter: the boto3-shaped API takes only boto3's parameters,
and a server runs each request in one thread from start to end.
"""

from __future__ import annotations

import contextlib
from collections.abc import Hashable, Iterator
from contextvars import ContextVar
from typing import Any, Protocol


class Access(Protocol):
    """What the catalog asks of a caller's view (gluecat.catalog.grants.View is the one there is)."""

    principal: str | None
    """The caller's principal (``arn:aws:iam::<catalog id>:user/NAME``), None for no one in particular."""

    def database_visible(self, database: str) -> bool: ...

    def table_visible(self, database: str, table: str) -> bool: ...

    def visible_columns(self, database: str, table: str) -> Any:
        """The columns of the table the caller may see (a grants.Columns), or None for all of them."""
        ...

    def location_access(self, path: str) -> str | None:
        """The registered location holding ``path`` (normalized) that the caller may not place data in
        (it lacks DATA_LOCATION_ACCESS on it), or None."""
        ...

    def grants_visible(self, resource: tuple[str, ...]) -> bool:
        """Whether ListPermissions shows the caller the grants on a resource."""
        ...

    def columns_key(self, database: str, table: str) -> Hashable:
        """What a cached reply about the table must be keyed by besides the request: None when every
        caller sees it alike."""
        ...


_current: ContextVar[Access | None] = ContextVar("gluecat_access", default=None)


def current() -> Access | None:
    """The view of the caller the running call acts for; None: the warehouse owner."""
    return _current.get()


@contextlib.contextmanager
def acting(view: Access | None) -> Iterator[None]:
    """Run the calls of the block for the caller ``view`` describes."""
    token = _current.set(view)
    try:
        yield
    finally:
        _current.reset(token)


def creator() -> str | None:
    """The principal that a resource made now is made by (it gets ALL on it, grantable)."""
    view = _current.get()
    return None if view is None else view.principal


def project_table(doc: dict[str, Any]) -> dict[str, Any]:
    """A table document (the caller's own copy) as the caller may see it: only the data columns it may
    SELECT, when it holds column grants alone. Partition keys are always shown (they name partitions)."""
    view = _current.get()
    if view is None:
        return doc
    columns = view.visible_columns(doc["DatabaseName"], doc["Name"])
    if columns is None:
        return doc
    return _keep_columns(doc, columns)


def project_partitions(database: str, table: str, partitions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Partition documents (the caller's own copies) with only the data columns the caller may see."""
    view = _current.get()
    if view is None:
        return partitions
    columns = view.visible_columns(database, table)
    if columns is None:
        return partitions
    return [_keep_columns(p, columns) for p in partitions]


def _keep_columns(doc: dict[str, Any], columns: Any) -> dict[str, Any]:
    out = dict(doc)
    sd = doc.get("StorageDescriptor")
    if isinstance(sd, dict):
        sd = dict(sd)
        sd["Columns"] = [c for c in sd.get("Columns") or [] if columns.contains(str(c.get("Name", "")))]
        # The lists that name columns name only shown ones.
        if sd.get("BucketColumns"):
            sd["BucketColumns"] = [n for n in sd["BucketColumns"] if columns.contains(str(n))]
        if sd.get("SortColumns"):
            sd["SortColumns"] = [c for c in sd["SortColumns"] if columns.contains(str(c.get("Column", "")))]
        skewed = sd.get("SkewedInfo")
        if isinstance(skewed, dict) and skewed.get("SkewedColumnNames"):
            names = [n for n in skewed["SkewedColumnNames"] if columns.contains(str(n))]
            sd["SkewedInfo"] = {**skewed, "SkewedColumnNames": names}
        out["StorageDescriptor"] = sd
    params = doc.get("Parameters")
    if isinstance(params, dict) and any(k.startswith(SCHEMA_PARAMETERS) for k in params):
        # Spark keeps a table's whole schema in its properties: not shown to a caller of some columns.
        out["Parameters"] = {k: v for k, v in params.items() if not k.startswith(SCHEMA_PARAMETERS)}
    return out


SCHEMA_PARAMETERS = ("spark.sql.sources.schema",)
"""Table parameters that spell out every column (Spark's data source tables keep their schema there)."""
