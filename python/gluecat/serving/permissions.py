"""Who may do what over ``gluecat serve``: each operation of each protocol served, with the Lake
Formation permission it needs on which resource (``RULES``, the one table of them), and the
``Authorizer`` that decides a request by it and by the warehouse's newest grants.

The table follows Lake Formation's permissions reference: reading metadata needs DESCRIBE (implied by
any permission on the resource), reading partitions and statistics SELECT, changing metadata ALTER,
adding partitions INSERT, removing them DELETE, dropping DROP, making databases CREATE_DATABASE on the
catalog and tables CREATE_TABLE on their database, and placing either inside a registered data
location DATA_LOCATION_ACCESS on it. Listings need nothing: they show only what the caller may
DESCRIBE (gluecat.catalog.access). An operation the table does not name is refused once the warehouse
has permissions, so an operation added to a front end is closed until it is given its rule here.

Requests are decided by the names they carry, before anything is read: a refusal says which
permission on which named resource is missing, and the same whether or not the resource exists, so it
tells nothing about what the caller may not see. The front ends answer a refusal in their protocol's
words (AccessDeniedException; Hive's MetaException, or its not-found exception where Hive's own
authorization hides a table) and know nothing else of the rules.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from gluecat.catalog import grants
from gluecat.catalog.context import DATABASE, TABLE, missing_table
from gluecat.catalog.grants import (
    ALTER,
    CREATE_DATABASE,
    CREATE_TABLE,
    DATA_LOCATION_ACCESS,
    DELETE,
    DESCRIBE,
    DROP,
    INSERT,
    SELECT,
    Target,
)
from gluecat.catalog.permission_index import Index, View, index_of
from gluecat.errors import GlueError
from gluecat.serving.audit import AuditLog
from gluecat.store.snapshot import Key

log = logging.getLogger("gluecat.serve")

# Rule kinds.
CHECK = "check"
"""Every need must hold (and DATA_LOCATION_ACCESS on registered locations it names)."""
LISTING = "listing"
"""Its needs (if any) must hold; what it lists is what the caller may DESCRIBE."""
OPEN = "open"
"""Any authenticated caller (Lake Formation asks only IAM permissions for these)."""
ADMIN = "admin"
"""Data lake administrators only."""
READER = "reader"
"""Data lake administrators and read-only administrators."""
GRANT = "grant"
"""GrantPermissions and RevokePermissions: an administrator, or the permissions with grant option."""
EACH = "each"
"""A batch whose items are decided one by one: refused items are answered as the batch's own errors."""


class Unnamed(Exception):
    """A request that does not name the resource its rule needs (a malformed one)."""


@dataclass(frozen=True)
class Need:
    permission: str
    resource: Key
    whole: bool = False
    """SELECT on every column of the table (data files hold them all), not only some."""
    given_to: str | None = None
    """The permission with grant option, to give it to this principal (a database's
    CreateTableDefaultPermissions give it on each table made in the database), unless the database (or,
    for a new one, the settings) already gives it."""
    new_database: bool = False
    """For ``given_to``: the database is being made (compared with the settings' defaults only, so that
    a database of that name the caller may not see tells nothing)."""


Extract = Callable[[Any], Any]
Needs = Callable[[Any], list[Need]]


def _nothing(args: Any) -> list[Any]:
    return []


@dataclass(frozen=True)
class Batch:
    """How a batch is split into items decided one by one, and refused items answered."""

    items: Callable[[Any], list[Any]]
    rebuild: Callable[[Any, list[Any]], Any]
    """The request with only the allowed items."""
    errors: str
    """The answer's member that lists failed items."""
    error: Callable[[Any, str], dict[str, Any]]
    """A refused item as an entry of that list."""


@dataclass(frozen=True)
class Rule:
    kind: str
    needs: Needs = _nothing
    """What the request needs (for EACH: what one item needs)."""
    locations: Callable[[Any], list[str]] = _nothing
    """Where the request puts a database or table (DATA_LOCATION_ACCESS where registered)."""
    batch: Batch | None = None
    summary: str = ""
    """What it needs, in words (docs/permissions.md's table is checked against these)."""


# -- reading a request's names -----------------------------------------------------------------------


def p(*path: str) -> Extract:
    """A member of an AWS request (a path into its parameters)."""

    def get(params: Any) -> Any:
        value = params
        for name in path:
            value = value.get(name) if isinstance(value, dict) else None
        return value

    return get


def a(index: int, *attrs: str) -> Extract:
    """An argument of a Thrift call, or an attribute of one (a struct's field)."""

    def get(args: Any) -> Any:
        value = args[index] if index < len(args) else None
        for name in attrs:
            value = getattr(value, name, None)
        return value

    return get


def first(extract: Extract, *attrs: str) -> Extract:
    """An attribute of the first element of a list argument (add_partitions' partitions)."""

    def get(args: Any) -> Any:
        items = extract(args)
        value = items[0] if isinstance(items, list) and items else None
        for name in attrs:
            value = getattr(value, name, None)
        return value

    return get


def _name(value: Any) -> str:
    if not isinstance(value, str) or not value:
        raise Unnamed()
    return value.lower()


@dataclass(frozen=True)
class Resource:
    """The resource a request names, as a rule reads it from the request; ``what`` it is, in words."""

    what: str
    key: Callable[[Any], Key]

    def __call__(self, args: Any) -> Key:
        return self.key(args)


def catalog() -> Resource:
    return Resource("the catalog", lambda args: (grants.CATALOG_RES,))


def database(name: Extract, what: str = "the database") -> Resource:
    return Resource(what, lambda args: (grants.DATABASE_RES, _name(name(args))))


def table(db: Extract, name: Extract) -> Resource:
    return Resource("the table", lambda args: (grants.TABLE_RES, _name(db(args)), _name(name(args))))


def need(permission: str, resource: Callable[[Any], Key], *, whole: bool = False) -> Needs:
    return lambda args: [Need(permission, resource(args), whole)]


def needs(*parts: Needs) -> Needs:
    return lambda args: [n for part in parts for n in part(args)]


def when(condition: Callable[[Any], bool], then: Needs) -> Needs:
    return lambda args: then(args) if condition(args) else []


PLACED = " (and DATA_LOCATION_ACCESS where registered)"
DEFAULTS = (
    "; and each permission its CreateTableDefaultPermissions give that the database does not already give"
    " (the settings', for a new one), with grant option on every table of the database"
)


def table_defaults(db: Extract, *, new: bool = False) -> Needs:
    """What a DatabaseInput's CreateTableDefaultPermissions give: each entry is a grant of its permissions
    to its principal on every table made in the database from then on, so naming it is granting them."""

    def get(args: Any) -> list[Need]:
        entries = p("DatabaseInput", "CreateTableDefaultPermissions")(args)
        if not isinstance(entries, list) or not entries:
            return []
        resource = (grants.TABLES_RES, _name(db(args)))
        out = []
        for entry in entries:
            given_to = p("Principal", "DataLakePrincipalIdentifier")(entry)
            permissions = entry.get("Permissions") if isinstance(entry, dict) else None
            for permission in permissions if isinstance(permissions, list) else []:
                if isinstance(permission, str) and isinstance(given_to, str):
                    out.append(Need(permission, resource, given_to=given_to, new_database=new))
        return out  # anything malformed is left to the call's own validation

    return get


def check(permission: str, resource: Resource, *locations: Extract, whole: bool = False) -> Rule:
    summary = (
        f"{permission}{' (every column)' if whole else ''} on {resource.what}{PLACED if locations else ''}"
    )
    return Rule(CHECK, need(permission, resource, whole=whole), _places(*locations), summary=summary)


def _places(*extracts: Extract) -> Callable[[Any], list[str]]:
    def get(args: Any) -> list[str]:
        found = [e(args) for e in extracts]
        return [f for f in found if isinstance(f, str) and f]

    return get


LISTED = Rule(LISTING, summary="none: it lists what the caller may DESCRIBE")
ANYONE = Rule(OPEN, summary="none")

_GLUE_ARN = re.compile(r"arn:aws[a-z-]*:glue:[^:]*:[^:]*:(catalog|database/([^/]+)|table/([^/]+)/([^/]+))")


def _tagged(params: Any) -> Key:
    """The resource a Glue ARN names (TagResource, UntagResource, GetTags)."""
    found = _GLUE_ARN.fullmatch(str(params.get("ResourceArn") or ""))
    if found is None:
        raise Unnamed()
    if found[1] == "catalog":
        return (grants.CATALOG_RES,)
    if found[2] is not None:
        return (grants.DATABASE_RES, found[2].lower())
    return (grants.TABLE_RES, found[3].lower(), found[4].lower())


tagged = Resource("the catalog, database or table the ARN names", _tagged)

# -- the table -----------------------------------------------------------------------------------------

_DB = p("DatabaseName")
_TABLE = table(_DB, p("TableName"))
_TABLE_NAMED = table(_DB, p("Name"))
_TABLE_INPUT = table(_DB, p("TableInput", "Name"))
_AS_READ = table(p("Table", "DatabaseName"), p("Table", "Name"))
_TABLE_LOCATION = p("TableInput", "StorageDescriptor", "Location")
_DATABASE_LOCATION = p("DatabaseInput", "LocationUri")
_ICEBERG_LOCATION = p("OpenTableFormatInput", "IcebergInput", "CreateIcebergTableInput", "Location")

GLUE: dict[str, Rule] = {
    "CreateDatabase": Rule(
        CHECK,
        needs(need(CREATE_DATABASE, catalog()), table_defaults(p("DatabaseInput", "Name"), new=True)),
        _places(_DATABASE_LOCATION),
        summary="CREATE_DATABASE on the catalog" + PLACED + DEFAULTS,
    ),
    "GetDatabase": check(DESCRIBE, database(p("Name"))),
    "GetDatabases": LISTED,
    "UpdateDatabase": Rule(
        CHECK,
        needs(need(ALTER, database(p("Name"))), table_defaults(p("Name"))),
        _places(_DATABASE_LOCATION),
        summary="ALTER on the database" + PLACED + DEFAULTS,
    ),
    "DeleteDatabase": check(DROP, database(p("Name"))),
    "CreateTable": check(CREATE_TABLE, database(_DB), _TABLE_LOCATION, _ICEBERG_LOCATION),
    "GetTable": check(DESCRIBE, _TABLE_NAMED),
    "GetTables": Rule(
        LISTING,
        need(DESCRIBE, database(_DB)),
        summary="DESCRIBE on the database: it lists the tables the caller may DESCRIBE",
    ),
    "SearchTables": LISTED,
    "UpdateTable": check(ALTER, _TABLE_INPUT, _TABLE_LOCATION),
    "DeleteTable": check(DROP, _TABLE_NAMED),
    "BatchDeleteTable": Rule(
        EACH,
        lambda item: [Need(DROP, (grants.TABLE_RES, _name(item[0]), _name(item[1])))],
        summary="DROP on each table (a table refused is one of its Errors)",
        batch=Batch(
            items=lambda params: [
                (params.get("DatabaseName"), n) for n in params.get("TablesToDelete") or []
            ],
            rebuild=lambda params, items: {**params, "TablesToDelete": [n for _, n in items]},
            errors="Errors",
            error=lambda item, why: {
                "TableName": item[1],
                "ErrorDetail": {"ErrorCode": "AccessDeniedException", "ErrorMessage": why},
            },
        ),
    ),
    "GetTableVersion": check(DESCRIBE, _TABLE),
    "GetTableVersions": check(DESCRIBE, _TABLE),
    "DeleteTableVersion": check(ALTER, _TABLE),
    "BatchDeleteTableVersion": check(ALTER, _TABLE),
    "CreatePartition": check(INSERT, _TABLE),
    "BatchCreatePartition": check(INSERT, _TABLE),
    "GetPartition": check(SELECT, _TABLE),
    "GetPartitions": check(SELECT, _TABLE),
    "BatchGetPartition": check(SELECT, _TABLE),
    "UpdatePartition": check(ALTER, _TABLE),
    "BatchUpdatePartition": check(ALTER, _TABLE),
    "DeletePartition": check(DELETE, _TABLE),
    "BatchDeletePartition": check(DELETE, _TABLE),
    "GetColumnStatisticsForTable": check(SELECT, _TABLE),
    "UpdateColumnStatisticsForTable": check(ALTER, _TABLE),
    "DeleteColumnStatisticsForTable": check(ALTER, _TABLE),
    "GetColumnStatisticsForPartition": check(SELECT, _TABLE),
    "UpdateColumnStatisticsForPartition": check(ALTER, _TABLE),
    "DeleteColumnStatisticsForPartition": check(ALTER, _TABLE),
    "CreatePartitionIndex": check(ALTER, _TABLE),
    "DeletePartitionIndex": check(ALTER, _TABLE),
    "GetPartitionIndexes": check(DESCRIBE, _TABLE),
    "TagResource": check(ALTER, tagged),
    "UntagResource": check(ALTER, tagged),
    "GetTags": check(DESCRIBE, tagged),
    # gluecat's own operations (gluecat.Catalog's; the Spark plugin's calls)
    "GetGluecatInfo": ANYONE,  # which server this is and what it answers: asked before any other call
    "UpdateTableAsRead": check(ALTER, _AS_READ, _TABLE_LOCATION),
    "DeleteTableAsRead": check(DROP, _AS_READ),
    "RenameTable": Rule(
        CHECK,
        needs(need(ALTER, _AS_READ), need(CREATE_TABLE, database(p("NewDatabaseName")))),
        _places(_TABLE_LOCATION, p("MovedFolder", "To")),  # the partitions go there too
        summary="ALTER on the table and CREATE_TABLE on the database it goes to" + PLACED,
    ),
    "ExplainPartitions": check(SELECT, _TABLE),
    "GetPartitionsArrow": check(SELECT, _TABLE),
    "CommitPartitions": Rule(
        CHECK,
        needs(need(INSERT, _TABLE), when(lambda params: bool(params.get("Drop")), need(DELETE, _TABLE))),
        summary="INSERT on the table, and DELETE if it drops partitions",
    ),
}


def _writes(kind: str) -> Callable[[Any], bool]:
    return lambda params: any(kind in (op or {}) for op in params.get("WriteOperations") or [])


_ENTRIES = Batch(
    items=lambda params: list(params.get("Entries") or []),
    rebuild=lambda params, items: {**params, "Entries": items},
    errors="Failures",
    error=lambda entry, why: {
        "RequestEntry": entry,
        "Error": {"ErrorCode": "AccessDeniedException", "ErrorMessage": why},
    },
)

_GRANTING = (
    "each permission it gives or takes, with grant option, on the resource (or a data lake administrator)"
)
_GRANTING_EACH = "as GrantPermissions for each entry (an entry refused is one of its Failures)"
_ADMINS = Rule(ADMIN, summary="a data lake administrator")
_READERS = Rule(READER, summary="a data lake administrator or read-only administrator")
_LISTED_GRANTS = Rule(
    LISTING, summary="none: it lists the grants on what the caller holds a permission with grant option on"
)

LAKE_FORMATION: dict[str, Rule] = {
    # Transactions are not resources: Lake Formation asks only IAM permissions for them.
    "StartTransaction": ANYONE,
    "CommitTransaction": ANYONE,
    "CancelTransaction": ANYONE,
    "ExtendTransaction": ANYONE,
    "DescribeTransaction": ANYONE,
    "ListTransactions": ANYONE,
    "GetTableObjects": check(SELECT, _TABLE, whole=True),
    "UpdateTableObjects": Rule(
        CHECK,
        summary="INSERT on the table to add objects, DELETE to delete them",
        needs=needs(
            when(lambda params: not _writes("DeleteObject")(params), need(INSERT, _TABLE)),
            when(_writes("AddObject"), need(INSERT, _TABLE)),
            when(_writes("DeleteObject"), need(DELETE, _TABLE)),
        ),
    ),
    "DeleteObjectsOnCancel": check(INSERT, _TABLE),
    "GrantPermissions": Rule(GRANT, summary=_GRANTING),
    "RevokePermissions": Rule(GRANT, summary=_GRANTING),
    "BatchGrantPermissions": Rule(EACH, batch=_ENTRIES, summary=_GRANTING_EACH),
    "BatchRevokePermissions": Rule(EACH, batch=_ENTRIES, summary=_GRANTING_EACH),
    "ListPermissions": _LISTED_GRANTS,
    "GetEffectivePermissionsForPath": _LISTED_GRANTS,
    "GetDataLakeSettings": ANYONE,
    "PutDataLakeSettings": _ADMINS,
    "RegisterResource": _ADMINS,
    "DeregisterResource": _ADMINS,
    "DescribeResource": _READERS,
    "ListResources": _READERS,
    # gluecat's own operations (gluecat.LakeFormation's)
    "StartTransactionAtVersion": ANYONE,
    "GetTableObjectsArrow": check(SELECT, _TABLE, whole=True),
}

_H_TABLE = table(a(0), a(1))
_H_SELECT = check(SELECT, _H_TABLE)


def _renames(args: Any) -> bool:
    new = args[2] if len(args) > 2 else None
    return (getattr(new, "dbName", None) or args[0] or "").lower() != (args[0] or "").lower() or (
        getattr(new, "tableName", None) or ""
    ).lower() != (args[1] or "").lower()


def _hive_alter_table() -> Rule:
    return Rule(
        CHECK,
        summary="ALTER on the table; to rename it, CREATE_TABLE on its new database too" + PLACED,
        needs=needs(
            need(ALTER, _H_TABLE),
            when(
                _renames,
                need(CREATE_TABLE, database(lambda args: getattr(args[2], "dbName", None) or args[0])),
            ),
        ),
        locations=_places(a(2, "sd", "location")),
    )


HIVE: dict[str, Rule] = {
    "get_all_databases": LISTED,
    "get_databases": LISTED,
    "get_database": check(DESCRIBE, database(a(0))),
    "get_all_tables": LISTED,
    "get_tables": LISTED,
    "get_tables_by_type": LISTED,
    "get_table": check(DESCRIBE, _H_TABLE),
    "get_table_objects_by_name": LISTED,
    "get_table_objects_by_name_req": LISTED,
    "get_partition_names": _H_SELECT,
    "get_partitions": _H_SELECT,
    "get_partitions_by_filter": _H_SELECT,
    "get_partitions_ps": _H_SELECT,
    "get_partitions_ps_with_auth": _H_SELECT,
    "get_partitions_with_auth": _H_SELECT,
    "get_partition_names_ps": _H_SELECT,
    "get_partition": _H_SELECT,
    "get_partition_with_auth": _H_SELECT,
    "get_partition_by_name": _H_SELECT,
    "get_partitions_by_names": _H_SELECT,
    "get_functions": ANYONE,
    "get_all_functions": ANYONE,
    "create_database": check(CREATE_DATABASE, catalog(), a(0, "locationUri")),
    "alter_database": check(ALTER, database(a(0)), a(1, "locationUri")),
    "drop_database": check(DROP, database(a(0))),
    "create_table": check(CREATE_TABLE, database(a(0, "dbName")), a(0, "sd", "location")),
    "create_table_with_environment_context": check(
        CREATE_TABLE, database(a(0, "dbName")), a(0, "sd", "location")
    ),
    "alter_table": _hive_alter_table(),
    "alter_table_with_environment_context": _hive_alter_table(),
    "alter_table_with_cascade": _hive_alter_table(),
    "drop_table": check(DROP, _H_TABLE),
    "drop_table_with_environment_context": check(DROP, _H_TABLE),
    "add_partition": check(INSERT, table(a(0, "dbName"), a(0, "tableName"))),
    "add_partition_with_environment_context": check(INSERT, table(a(0, "dbName"), a(0, "tableName"))),
    "add_partitions": Rule(
        CHECK,
        summary="INSERT on the table",
        needs=when(
            lambda args: bool(args and args[0]),
            need(INSERT, table(first(a(0), "dbName"), first(a(0), "tableName"))),
        ),
    ),
    "add_partitions_req": check(INSERT, table(a(0, "dbName"), a(0, "tblName"))),
    "alter_partition": check(ALTER, _H_TABLE),
    "alter_partition_with_environment_context": check(ALTER, _H_TABLE),
    "alter_partitions": check(ALTER, _H_TABLE),
    "alter_partitions_with_environment_context": check(ALTER, _H_TABLE),
    "rename_partition": check(ALTER, _H_TABLE),
    "drop_partition": check(DELETE, _H_TABLE),
    "drop_partition_with_environment_context": check(DELETE, _H_TABLE),
    "drop_partition_by_name": check(DELETE, _H_TABLE),
    "drop_partition_by_name_with_environment_context": check(DELETE, _H_TABLE),
    "set_ugi": ANYONE,
    "shutdown": ANYONE,
    "getStatus": ANYONE,
    "getName": ANYONE,
    "getVersion": ANYONE,
}

RULES: dict[str, dict[str, Rule]] = {"glue": GLUE, "lakeformation": LAKE_FORMATION, "hive": HIVE}
"""Every operation served, by protocol ("glue", "lakeformation", "hive"), with its rule."""


# -- deciding ----------------------------------------------------------------------------------------------


def _absent_table(view: View, resource: Key) -> bool:
    """Whether ``resource`` is a table that does not exist in a database the caller may see."""
    if resource[0] != grants.TABLE_RES or view.root is None or not view.database_visible(resource[1]):
        return False
    return view.root.get(TABLE, (resource[1], resource[2])) is None


def _already_given(view: View, n: Need) -> bool:
    """Whether the database of ``n`` already gives its permission to its principal by default (or, for a
    database being made, the settings give it to each new one): sending it back changes nothing."""
    if view.root is None:
        return False
    db = None if n.new_database else view.root.get(DATABASE, (n.resource[1],))
    if db is not None:
        current = db.get("CreateTableDefaultPermissions")
    else:
        current = grants.settings_of(view.root).get("CreateTableDefaultPermissions")
    return any(
        p("Principal", "DataLakePrincipalIdentifier")(entry) == n.given_to
        and n.permission in (entry.get("Permissions") or [])
        for entry in current or []
        if isinstance(entry, dict)
    )


refusal = grants.refusal


@dataclass
class Decision:
    """How a request is decided. ``view`` is the caller's, to run the request with (its listings and
    columns filtered, what it creates granted to it)."""

    view: View
    allowed: bool
    resource: str = ""
    """The resource the request is about, as the audit log names it."""
    reason: str = ""
    """Why it is refused (the message), or how it is allowed."""
    hidden: bool = False
    """Refused for want of DESCRIBE: Hive answers as for a table it does not have."""
    absent: bool = False
    """Refused because the table is not there, which the caller may know: EntityNotFoundException."""
    invalid: bool = False
    """The request names no resource its rule can be checked on: it is malformed."""
    batch: Batch | None = None
    refused_items: list[tuple[Any, str]] = field(default_factory=list)
    """A batch's items refused, with why (answered as the batch's own errors)."""
    allowed_items: list[Any] | None = None
    """A batch's items to run (None: not a batch)."""

    def request(self, args: Any) -> Any:
        """The request to run: a batch's with its allowed items only."""
        if self.batch is None or self.allowed_items is None:
            return args
        return self.batch.rebuild(args, self.allowed_items)

    @property
    def nothing_to_run(self) -> bool:
        """A batch all of whose items are refused."""
        return self.batch is not None and not self.allowed_items and bool(self.refused_items)

    def answer(self, result: Any) -> Any:
        """The answer, a batch's with the refused items among its errors (``result`` None: nothing ran)."""
        if self.batch is None or not self.refused_items:
            return result
        out = dict(result or {})
        out[self.batch.errors] = [
            *(out.get(self.batch.errors) or []),
            *(self.batch.error(item, why) for item, why in self.refused_items),
        ]
        return out


class Authorizer:
    """Decides requests against the newest grants of a catalog's warehouse.

    Each decision reads the root log's newest state (one look: a revocation takes effect on the next
    request) and that state's grant index (built once per change of the grants, then dictionary
    lookups). ``rules`` is the table to decide by (RULES).
    """

    def __init__(
        self, catalog: Any, rules: dict[str, dict[str, Rule]] | None = None, audit: AuditLog | None = None
    ) -> None:
        self.catalog = catalog
        self.catalog_id = str(catalog._ctx.catalog_id)
        self.rules = RULES if rules is None else rules
        self.audit = audit

    def record(
        self,
        *,
        protocol: str,
        operation: str | None,
        user: str | None,
        source: str | None,
        decision: Decision | None,
        outcome: str,
        started: float,
        verdict: str = "unauthenticated",
        **extra: Any,
    ) -> None:
        """One request's line of the audit log (if there is one): names, the decision and the outcome,
        never the request's content."""
        if self.audit is None:
            return
        entry: dict[str, Any] = {
            "source": source,
            "principal": self.principal(user),
            "protocol": protocol,
            "operation": operation,
        }
        if decision is not None:
            entry["resource"] = decision.resource or None
            entry["decision"] = "allowed" if decision.allowed else "denied"
            entry["reason"] = decision.reason
            if decision.refused_items:
                entry["refused_items"] = len(decision.refused_items)
        else:
            entry["decision"] = verdict  # refused before a decision: unauthenticated, or malformed
        entry["outcome"] = outcome
        entry["ms"] = round((time.monotonic() - started) * 1000, 3)
        entry.update(extra)
        self.audit.record(entry)

    def principal(self, user: str | None) -> str | None:
        """A gluecat user's principal: arn:aws:iam::<catalog id>:user/NAME."""
        return None if not user else grants.user_arn(self.catalog_id, user)

    def view(self, user: str | None, transaction_id: Any = None) -> View:
        """The caller's view of the newest grants (and, in a transaction, of those it staged)."""
        root = self.catalog.store.latest().root
        index = index_of(root)
        staged = None
        if isinstance(transaction_id, str) and index.settings is not None:
            records = grants.staged(self.catalog._ctx, transaction_id)
            staged = Index(None, (), records) if records else None
        return View(index, self.principal(user), staged, root)

    def decide(self, user: str | None, protocol: str, operation: str, args: Any) -> Decision:
        """The decision on ``operation`` of ``protocol`` with its arguments (an AWS request's parameters,
        a Thrift call's argument tuple), for the gluecat user ``user`` (None: nobody in particular)."""
        view = self.view(user, args.get("TransactionId") if isinstance(args, dict) else None)
        rule = self.rules.get(protocol, {}).get(operation)
        if view.open:
            # Lake Formation's initial state: everything is allowed but the administrators' calls
            # (there are none yet).
            if rule is not None and rule.kind in (ADMIN, READER, GRANT, EACH) and protocol == "lakeformation":
                return self._decide(view, rule, protocol, operation, args)
            return Decision(view, True, reason="no permissions set up yet (IAM_ALLOWED_PRINCIPALS)")
        if rule is None:
            return Decision(
                view,
                False,
                reason=f"gluecat has no permission rule for {operation}: it is refused to everyone",
            )
        return self._decide(view, rule, protocol, operation, args)

    def _decide(self, view: View, rule: Rule, protocol: str, operation: str, args: Any) -> Decision:
        try:
            if rule.kind == OPEN:
                return Decision(view, True, reason="open to every caller")
            if rule.kind in (ADMIN, READER):
                ok = view.admin if rule.kind == ADMIN else view.reader
                who = (
                    "data lake administrators"
                    if rule.kind == ADMIN
                    else "data lake administrators and readers"
                )
                return Decision(
                    view,
                    ok,
                    resource="catalog",
                    reason="data lake administrator"
                    if ok
                    else f"Insufficient Lake Formation permission(s): {operation} is for {who}",
                )
            if rule.kind == GRANT:
                return self._grant(view, args)
            if rule.kind == EACH:
                return self._each(view, rule, protocol, args)
            found = rule.needs(args)
            places = rule.locations(args)
        except Unnamed:
            return Decision(view, False, invalid=True, reason=f"{operation}: the request names no resource")
        resource = grants.describe(found[0].resource) if found else ""
        why = self._missing(view, found, places)
        if why is not None:
            missing, message = why
            hidden = missing is not None and missing.permission == DESCRIBE and missing.given_to is None
            if missing is not None and _absent_table(view, missing.resource):
                # As AWS Glue answers one who may see the database: the table is not there. Spark asks
                # whether a table exists before it makes one; a refusal would fail the CREATE TABLE of a
                # user granted CREATE_TABLE. Answered here, not by the call, which a table made meanwhile
                # would let through.
                message, hidden = missing_table(missing.resource[1], missing.resource[2]), True
                return Decision(view, False, resource=resource, reason=message, hidden=hidden, absent=True)
            return Decision(view, False, resource=resource, reason=message, hidden=hidden)
        return Decision(
            view, True, resource=resource, reason=", ".join(f"{n.permission}" for n in found) or rule.kind
        )

    def _missing(
        self, view: View, found: Iterable[Need], places: list[str]
    ) -> tuple[Need | None, str] | None:
        for n in found:
            if n.given_to is not None:
                if not _already_given(view, n) and not view.grantable(n.permission, n.resource):
                    return n, (
                        f"Insufficient Lake Formation permission(s): Required {n.permission} with grant option "
                        f"on {grants.describe(n.resource)} (or a data lake administrator), to give it to "
                        f"{n.given_to} in CreateTableDefaultPermissions"
                    )
                continue
            if not view.allows(n.permission, n.resource):
                return n, refusal(n.permission, n.resource)
            whole = n.whole and n.resource[0] == grants.TABLE_RES
            if whole and view.visible_columns(n.resource[1], n.resource[2]) is not None:
                return n, refusal(n.permission, n.resource) + " (every column)"
        for place in places:
            for form in grants.placed_forms(place):
                registered = view.location_access(form)
                if registered is not None:
                    return None, refusal(DATA_LOCATION_ACCESS, (grants.LOCATION_RES, registered))
        return None

    def _grant(self, view: View, params: Any) -> Decision:
        why = self._grant_refusal(view, params)
        if why is None:
            return Decision(view, True, resource=self._grant_resource(params), reason="grantable")
        return Decision(view, False, resource=self._grant_resource(params), reason=why)

    def _grant_resource(self, params: Any) -> str:
        try:
            return grants.describe(grants.parse_resource(self.catalog._ctx, params.get("Resource")).key)
        except (GlueError, KeyError, TypeError, AttributeError):
            return ""

    def _grant_refusal(self, view: View, entry: Any) -> str | None:
        """Why the caller may not grant or revoke ``entry`` (None: it may). An entry that cannot be read
        is left to the call, which refuses it the same way."""
        try:
            target: Target = grants.parse_resource(self.catalog._ctx, entry.get("Resource"))
        except (GlueError, KeyError, TypeError, AttributeError):
            return None
        wanted = set(entry.get("Permissions") or []) | set(entry.get("PermissionsWithGrantOption") or [])
        resource = target.key
        for permission in sorted(wanted):
            if not view.grantable(permission, resource, target.columns):
                return (
                    f"Insufficient Lake Formation permission(s): Required {permission} with grant option on "
                    f"{grants.describe(resource)} (or a data lake administrator)"
                )
        return None

    def _each(self, view: View, rule: Rule, protocol: str, args: Any) -> Decision:
        assert rule.batch is not None
        allowed: list[Any] = []
        refused: list[tuple[Any, str]] = []
        for item in rule.batch.items(args):
            if protocol == "lakeformation":
                why = self._grant_refusal(view, item)
            else:
                try:
                    found = self._missing(view, rule.needs(item), [])
                    why = found[1] if found is not None else None
                except Unnamed:
                    why = None  # left to the call's own validation
            if why is None:
                allowed.append(item)
            else:
                refused.append((item, why))
        return Decision(
            view,
            True,
            reason=f"{len(allowed)} allowed, {len(refused)} refused" if refused else "every item allowed",
            batch=rule.batch,
            refused_items=refused,
            allowed_items=allowed,
        )
