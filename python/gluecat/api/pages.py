"""Every item of a paged Glue call, following NextToken (what boto3's paginators do)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any

from gluecat.errors import OperationTimeoutException

READ_ATTEMPTS = 5
"""How many times a listing is read while commits changing it keep landing during the read."""
TABLE_PAGE = 100  # GetTables' largest page


def every(call: Callable[..., dict[str, Any]], key: str, **kwargs: Any) -> Iterator[dict[str, Any]]:
    """The items under ``key`` of every page of ``call(**kwargs)``, in order."""
    while True:
        page = call(**kwargs)
        yield from page[key]
        if not page.get("NextToken"):
            return
        kwargs["NextToken"] = page["NextToken"]


DATABASE_PAGE = 100  # GetDatabases' largest page


def every_database(catalog: Any) -> list[dict[str, Any]]:
    """Every database, as of one state of the warehouse (a ``gluecat.Catalog``'s GetDatabases), as
    every_table reads a database's tables."""
    return _of_one_state(
        lambda: list(every(catalog.get_databases, "DatabaseList", MaxResults=DATABASE_PAGE)),
        DATABASE_PAGE,
        catalog,
        catalog.databases_unchanged_since,
        "the databases",
    )


def every_table(catalog: Any, database: str) -> list[dict[str, Any]]:
    """Every table of a database, as of one state of the warehouse (a ``gluecat.Catalog``'s GetTables).

    Each page is read at the latest state, so a commit landing between two pages would make the listing
    a mix of two states (a table renamed meanwhile under neither name, or both): a listing of more than
    one page is read again while a commit changed the database or its tables meanwhile, and after
    READ_ATTEMPTS such reads it is read as of one moment (time travel: slower, of one state however busy
    the database)."""

    def read(as_of: datetime | None = None) -> list[dict[str, Any]]:
        return list(
            every(
                catalog.get_tables,
                "TableList",
                DatabaseName=database,
                MaxResults=TABLE_PAGE,
                QueryAsOfTime=as_of,
            )
        )

    return _of_one_state(
        read,
        TABLE_PAGE,
        catalog,
        lambda since: catalog.tables_unchanged_since(database, since),
        f"the tables of database {database}",
        lambda: read(datetime.now(UTC)),
    )


def _of_one_state(
    read: Callable[[], list[dict[str, Any]]],
    page: int,
    catalog: Any,
    unchanged_since: Callable[[int], int | None],
    what: str,
    as_of_now: Callable[[], list[dict[str, Any]]] | None = None,
) -> list[dict[str, Any]]:
    for _ in range(READ_ATTEMPTS):
        since = catalog.warehouse_version()
        found = read()
        # One page is one call, of one state.
        if len(found) <= page or unchanged_since(since) is not None:
            return found
    if as_of_now is not None:
        return as_of_now()
    raise OperationTimeoutException(
        f"{what} changed each of the {READ_ATTEMPTS} times they were read; try again"
    )
