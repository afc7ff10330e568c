"""Lake Formation permissions as the catalog keeps them: grants, the data lake settings and the
registered data locations, each a record of the root log (so durable, time-travelable and verified by
fsck as every record is), and the rules of granting and revoking.

Records (kind ``lf_grant``) are keyed by resource then principal, so that a resource's grants go with
it when it is dropped or renamed:

| key | resource |
|---|---|
| ``("catalog", principal)`` | the Data Catalog (CREATE_DATABASE) |
| ``("database", db, principal)`` | a database |
| ``("tables", db, principal)`` | every table of a database (Table with TableWildcard), present and future |
| ``("table", db, table, principal)`` | a table |
| ``("columns", db, table, principal)`` | some columns of a table (TableWithColumns): SELECT only |
| ``("location", uri, principal)`` | a data location (DATA_LOCATION_ACCESS) |

A grant's document is ``{"Permissions": [...], "Grantable": [...], "LastUpdated", "LastUpdatedBy"}``; a
column grant's ``{"Select": columns, "Grantable": columns or null, ...}``, columns being
``{"Names": [...]}`` or ``{"Excluded": [...]}`` (every column but those). The settings are one record
(``lf_settings``, key ``("settings",)``), a registered location one record (``lf_location``, key
``(uri,)``).

A warehouse without a settings record is in Lake Formation's initial state: every caller has ALL on
every database and table and may create databases (IAM_ALLOWED_PRINCIPALS, which every authenticated
caller belongs to), and nobody is an administrator. The first change of the settings or of a grant
writes those implicit grants out as records, in the same commit (``materialize``), after which the
records alone decide.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from gluecat import locations
from gluecat.catalog import access
from gluecat.catalog.context import DATABASE, TABLE, Context, copy_doc, require_database, require_table
from gluecat.errors import AccessDeniedException, EntityNotFoundException, GlueError, InvalidInputException
from gluecat.store.snapshot import Changes, Key, Snapshot

GRANT = "lf_grant"
SETTINGS = "lf_settings"
LOCATION = "lf_location"
SETTINGS_KEY: Key = ("settings",)

IAM_ALLOWED_PRINCIPALS = "IAM_ALLOWED_PRINCIPALS"

ALL = "ALL"
SELECT = "SELECT"
ALTER = "ALTER"
DROP = "DROP"
DELETE = "DELETE"
INSERT = "INSERT"
DESCRIBE = "DESCRIBE"
CREATE_DATABASE = "CREATE_DATABASE"
CREATE_TABLE = "CREATE_TABLE"
DATA_LOCATION_ACCESS = "DATA_LOCATION_ACCESS"

# Resource kinds, the first member of a grant's key.
CATALOG_RES = "catalog"
DATABASE_RES = "database"
TABLES_RES = "tables"
TABLE_RES = "table"
COLUMNS_RES = "columns"
LOCATION_RES = "location"

TABLE_PERMISSIONS = frozenset({ALL, ALTER, DELETE, DESCRIBE, DROP, INSERT, SELECT})
DATABASE_PERMISSIONS = frozenset({ALL, ALTER, CREATE_TABLE, DESCRIBE, DROP})
VALID: dict[str, frozenset[str]] = {
    CATALOG_RES: frozenset({CREATE_DATABASE}),
    DATABASE_RES: DATABASE_PERMISSIONS,
    TABLES_RES: TABLE_PERMISSIONS,
    TABLE_RES: TABLE_PERMISSIONS,
    COLUMNS_RES: frozenset({SELECT}),
    LOCATION_RES: frozenset({DATA_LOCATION_ACCESS}),
}
"""The permissions each kind of resource takes (Lake Formation's permissions reference)."""

_RESOURCE_NAMES = {
    CATALOG_RES: "Catalog",
    DATABASE_RES: "Database",
    TABLES_RES: "Table (TableWildcard)",
    TABLE_RES: "Table",
    COLUMNS_RES: "TableWithColumns",
    LOCATION_RES: "DataLocation",
}
_SUPPORTED = ("Catalog", "Database", "Table", "TableWithColumns", "DataLocation")
_USER_ARN = re.compile(r"arn:aws:iam::([0-9]{12}):user/([A-Za-z0-9._@-]{1,128})")
_S3_ARN = re.compile(r"arn:aws[a-z-]*:s3:::(.+)")


# -- principals --------------------------------------------------------------------------------------


def user_arn(catalog_id: str, name: str) -> str:
    """The principal of a gluecat user: arn:aws:iam::<catalog id>:user/NAME."""
    return f"arn:aws:iam::{catalog_id}:user/{name}"


def check_principal(ctx: Context, principal: Any, field: str, *, group: bool = True) -> str:
    """A DataLakePrincipal of a request: a user of this catalog's account, or (with ``group``) the
    group IAM_ALLOWED_PRINCIPALS."""
    ident = principal.get("DataLakePrincipalIdentifier") if isinstance(principal, dict) else None
    where = f"{field}.DataLakePrincipalIdentifier"
    if ident is None:
        raise InvalidInputException(f"{where}: is required")
    if ident == IAM_ALLOWED_PRINCIPALS and group:
        return ident
    found = _USER_ARN.fullmatch(ident)
    if found is None:
        also = " or IAM_ALLOWED_PRINCIPALS" if group else ""
        raise InvalidInputException(
            f"{where}: {ident!r} is not a principal of gluecat: give a user as "
            f"arn:aws:iam::{ctx.catalog_id}:user/NAME{also}"
        )
    if found[1] != ctx.catalog_id:
        raise InvalidInputException(
            f"{where}: {ident!r} is of account {found[1]}; this catalog is {ctx.catalog_id} "
            "(gluecat grants to its own users only)"
        )
    return ident


# -- columns -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Columns:
    """A set of a table's columns by lowercase name: ``names``, or every column but ``names``."""

    names: frozenset[str] = frozenset()
    excluding: bool = False

    @staticmethod
    def every() -> Columns:
        return Columns(frozenset(), True)

    @staticmethod
    def of(names: list[str] | tuple[str, ...] | frozenset[str], excluding: bool = False) -> Columns:
        return Columns(frozenset(n.lower() for n in names), excluding)

    def contains(self, name: str) -> bool:
        return (name.lower() not in self.names) if self.excluding else (name.lower() in self.names)

    def is_empty(self) -> bool:
        return not self.excluding and not self.names

    def is_every(self) -> bool:
        return self.excluding and not self.names

    def __or__(self, other: Columns) -> Columns:
        if self.excluding and other.excluding:
            return Columns(self.names & other.names, True)
        if self.excluding:
            return Columns(self.names - other.names, True)
        if other.excluding:
            return Columns(other.names - self.names, True)
        return Columns(self.names | other.names)

    def __sub__(self, other: Columns) -> Columns:
        if not other.excluding:
            return (
                Columns(self.names | other.names, True)
                if self.excluding
                else Columns(self.names - other.names)
            )
        return Columns(other.names - self.names) if self.excluding else Columns(self.names & other.names)

    def covers(self, other: Columns) -> bool:
        return (other - self).is_empty()

    def to_json(self) -> dict[str, list[str]]:
        return {"Excluded" if self.excluding else "Names": sorted(self.names)}

    @staticmethod
    def from_json(doc: Any) -> Columns:
        if not isinstance(doc, dict):
            return Columns()
        if "Excluded" in doc:
            return Columns(frozenset(doc["Excluded"]), True)
        return Columns(frozenset(doc.get("Names") or ()))

    def resource(self, database: str, table: str, catalog_id: str) -> dict[str, Any]:
        """The TableWithColumns resource that names these columns."""
        out: dict[str, Any] = {"CatalogId": catalog_id, "DatabaseName": database, "Name": table}
        if self.excluding:
            out["ColumnWildcard"] = {"ExcludedColumnNames": sorted(self.names)} if self.names else {}
        else:
            out["ColumnNames"] = sorted(self.names)
        return out


# -- resources -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Target:
    """A resource of a request: the grant key's resource part, the columns of a TableWithColumns, and
    the kind the request named it by (whose permissions apply)."""

    key: Key
    columns: Columns | None = None
    named_as: str = ""

    @property
    def kind(self) -> str:
        return self.key[0]


def describe(key: Key) -> str:
    """A resource as messages name it: ``table sales.orders``, ``database sales``, ..."""
    kind = key[0]
    if kind == CATALOG_RES:
        return "catalog"
    if kind == DATABASE_RES:
        return f"database {key[1]}"
    if kind == TABLES_RES:
        return f"every table of database {key[1]}"
    if kind in (TABLE_RES, COLUMNS_RES):
        return f"table {key[1]}.{key[2]}"
    return f"data location {key[1]}"


def location_of(text: str, field: str) -> str:
    """A data location by an S3 ARN (arn:aws:s3:::bucket/prefix) or a URI, as locations are compared:
    s3a:// and s3n:// are s3://, and no trailing slash."""
    found = _S3_ARN.fullmatch(text)
    if found is not None:
        uri = f"s3://{found[1]}"
    elif "://" in text:
        uri = text
    else:
        raise InvalidInputException(
            f"{field}: {text[:200]!r} is not a data location: give an S3 ARN (arn:aws:s3:::bucket/prefix) "
            "or a URI (s3://, gs://, file://, ...)"
        )
    return normalized_location(uri)


def normalized_location(uri: str) -> str:
    scheme, _, rest = uri.partition("://")
    scheme = scheme.lower()
    if scheme in ("s3a", "s3n"):
        scheme = "s3"
    rest = rest.rstrip("/")
    return f"{scheme}://{rest}" if rest else f"{scheme}://"


def placed_forms(uri: str) -> list[str]:
    """The normalized forms a location is checked for DATA_LOCATION_ACCESS under: as written, and, for a
    folder on this machine however it is spelled (a plain path, ``file:/``, ``..``, a symbolic link), as
    the ``file://`` URI of the folder it leads to, so that no spelling of a registered place evades it."""
    forms = [normalized_location(uri)]
    if "://" not in uri or uri.lower().startswith("file:"):
        try:
            real = locations.canonical(uri)
        except (OSError, ValueError):
            return forms
        if real.startswith("/"):
            forms.append(normalized_location(f"file://{real}"))
    return forms


def refusal(permission: str, resource: Key) -> str:
    """What a refusal says: the permission and the resource, as the request named it."""
    return f"Insufficient Lake Formation permission(s): Required {permission} on {describe(resource)}"


def require_placing(location: Any) -> None:
    """AccessDeniedException unless the caller the running call acts for (gluecat.catalog.access) may
    place data at ``location``: DATA_LOCATION_ACCESS on the registered location holding it. For the
    locations a server chooses itself (Hive's default folders, a renamed table's moved folder), which
    the check of the request, made on what it names, cannot see."""
    view = access.current()
    if view is None or not isinstance(location, str) or not location:
        return
    for form in placed_forms(location):
        registered = view.location_access(form)
        if registered is not None:
            raise AccessDeniedException(refusal(DATA_LOCATION_ACCESS, (LOCATION_RES, registered)))


def under(path: str, location: str) -> bool:
    """Whether ``path`` is ``location`` or inside it (both normalized)."""
    return path == location or path.startswith(location.rstrip("/") + "/")


def _catalog_id(ctx: Context, value: Any, field: str) -> None:
    if value is not None and value != ctx.catalog_id:
        raise EntityNotFoundException(
            f"{field}: catalog {value} not found (this catalog is {ctx.catalog_id})"
        )


def parse_resource(ctx: Context, resource: Any, field: str = "Resource") -> Target:
    """The resource a request names (boto3's Resource shape, checked by the model already)."""
    if not isinstance(resource, dict):
        raise InvalidInputException(f"{field}: is required")
    named = [k for k, v in resource.items() if v is not None]
    unsupported = [k for k in named if k not in _SUPPORTED]
    if unsupported:
        raise InvalidInputException(
            f"{field}.{unsupported[0]}: gluecat does not support {unsupported[0]} resources "
            f"(it supports {', '.join(_SUPPORTED)})"
        )
    if len(named) != 1:
        raise InvalidInputException(f"{field}: give exactly one of {', '.join(_SUPPORTED)}")
    kind = named[0]
    body = resource[kind]
    where = f"{field}.{kind}"
    if kind == "Catalog":
        _catalog_id(ctx, body.get("Id"), f"{where}.Id")
        return Target((CATALOG_RES,), named_as=CATALOG_RES)
    _catalog_id(ctx, body.get("CatalogId"), f"{where}.CatalogId")
    if kind == "Database":
        return Target((DATABASE_RES, body["Name"].lower()), named_as=DATABASE_RES)
    if kind == "DataLocation":
        return Target(
            (LOCATION_RES, location_of(body["ResourceArn"], f"{where}.ResourceArn")), named_as=LOCATION_RES
        )
    database = body["DatabaseName"].lower()
    if kind == "Table":
        if (body.get("Name") is None) == (body.get("TableWildcard") is None):
            raise InvalidInputException(f"{where}: give exactly one of Name and TableWildcard")
        if body.get("Name") is None:
            return Target((TABLES_RES, database), named_as=TABLES_RES)
        return Target((TABLE_RES, database, body["Name"].lower()), named_as=TABLE_RES)
    table = body["Name"].lower()
    if (body.get("ColumnNames") is None) == (body.get("ColumnWildcard") is None):
        raise InvalidInputException(f"{where}: give exactly one of ColumnNames and ColumnWildcard")
    if body.get("ColumnNames") is not None:
        if not body["ColumnNames"]:
            raise InvalidInputException(f"{where}.ColumnNames: name at least one column")
        columns = Columns.of(body["ColumnNames"])
    else:
        columns = Columns.of((body["ColumnWildcard"] or {}).get("ExcludedColumnNames") or [], excluding=True)
    if columns.is_every():
        # Every column: SELECT on the table itself, as Lake Formation treats it.
        return Target((TABLE_RES, database, table), named_as=COLUMNS_RES)
    return Target((COLUMNS_RES, database, table), columns, named_as=COLUMNS_RES)


def resource_json(key: Key, catalog_id: str, columns: Columns | None = None) -> dict[str, Any]:
    """A grant's resource in boto3's Resource shape."""
    kind = key[0]
    if kind == CATALOG_RES:
        return {"Catalog": {"Id": catalog_id}}
    if kind == DATABASE_RES:
        return {"Database": {"CatalogId": catalog_id, "Name": key[1]}}
    if kind == TABLES_RES:
        return {"Table": {"CatalogId": catalog_id, "DatabaseName": key[1], "TableWildcard": {}}}
    if kind == TABLE_RES:
        return {"Table": {"CatalogId": catalog_id, "DatabaseName": key[1], "Name": key[2]}}
    if kind == COLUMNS_RES:
        return {"TableWithColumns": (columns or Columns()).resource(key[1], key[2], catalog_id)}
    return {"DataLocation": {"CatalogId": catalog_id, "ResourceArn": _arn_of(key[1])}}


def _arn_of(location: str) -> str:
    return f"arn:aws:s3:::{location[len('s3://') :]}" if location.startswith("s3://") else location


def _require_resource(snap: Snapshot, target: Target, field: str) -> None:
    """The resource must exist (a registered location, for a data location)."""
    key = target.key
    if key[0] in (DATABASE_RES, TABLES_RES):
        require_database(snap, key[1])
    elif key[0] in (TABLE_RES, COLUMNS_RES):
        table = require_table(snap, key[1], key[2])
        if target.columns is not None:
            have = {c["Name"].lower() for c in all_columns(table)}
            unknown = sorted(n for n in target.columns.names if n not in have)
            if unknown:
                raise InvalidInputException(
                    f"{field}: {unknown[0]!r} is not a column of table {key[1]}.{key[2]}"
                )
    elif key[0] == LOCATION_RES and registered_under(snap, key[1]) is None:
        raise InvalidInputException(
            f"{field}: data location {key[1]} is not registered with Lake Formation (RegisterResource)"
        )


def all_columns(table: dict[str, Any]) -> list[dict[str, Any]]:
    """A table's data columns and partition keys."""
    return list((table.get("StorageDescriptor") or {}).get("Columns") or []) + list(
        table.get("PartitionKeys") or []
    )


# -- settings ----------------------------------------------------------------------------------------------


def _all_of(principal: str) -> dict[str, Any]:
    return {"Principal": {"DataLakePrincipalIdentifier": principal}, "Permissions": [ALL]}


def default_settings() -> dict[str, Any]:
    """Lake Formation's initial settings: no administrators, ALL for IAM_ALLOWED_PRINCIPALS on every new
    database and table."""
    return {
        "DataLakeAdmins": [],
        "ReadOnlyAdmins": [],
        "CreateDatabaseDefaultPermissions": [_all_of(IAM_ALLOWED_PRINCIPALS)],
        "CreateTableDefaultPermissions": [_all_of(IAM_ALLOWED_PRINCIPALS)],
        "Parameters": {},
        "TrustedResourceOwners": [],
    }


def settings_record(snap: Snapshot) -> dict[str, Any] | None:
    """The settings the warehouse holds; None in Lake Formation's initial state (none yet)."""
    found = snap.get(SETTINGS, SETTINGS_KEY)
    return copy_doc(found) if found is not None else None


def settings_of(snap: Snapshot) -> dict[str, Any]:
    stored = snap.get(SETTINGS, SETTINGS_KEY)
    return copy_doc(stored) if stored is not None else default_settings()


def get_settings(ctx: Context) -> dict[str, Any]:
    return {"DataLakeSettings": settings_of(ctx.snapshot())}


def _check_defaults(ctx: Context, entries: list[dict[str, Any]], valid: frozenset[str], field: str) -> None:
    for i, entry in enumerate(entries):
        check_principal(ctx, entry.get("Principal"), f"{field}[{i}].Principal")
        for permission in entry.get("Permissions") or []:
            if permission not in valid:
                raise InvalidInputException(
                    f"{field}[{i}].Permissions: {permission} is not a permission of "
                    f"{'databases' if valid is DATABASE_PERMISSIONS else 'tables'} ({', '.join(sorted(valid))})"
                )


def put_settings(ctx: Context, settings: dict[str, Any]) -> None:
    """PutDataLakeSettings: the settings are replaced whole, as Lake Formation replaces them."""
    for field in ("DataLakeAdmins", "ReadOnlyAdmins"):
        for i, principal in enumerate(settings.get(field) or []):
            check_principal(ctx, principal, f"DataLakeSettings.{field}[{i}]", group=False)
    _check_defaults(
        ctx,
        settings.get("CreateDatabaseDefaultPermissions") or [],
        DATABASE_PERMISSIONS,
        "DataLakeSettings.CreateDatabaseDefaultPermissions",
    )
    _check_defaults(
        ctx,
        settings.get("CreateTableDefaultPermissions") or [],
        TABLE_PERMISSIONS,
        "DataLakeSettings.CreateTableDefaultPermissions",
    )
    doc: dict[str, Any] = {
        "DataLakeAdmins": [],
        "ReadOnlyAdmins": [],
        "CreateDatabaseDefaultPermissions": [],
        "CreateTableDefaultPermissions": [],
        "Parameters": {},
        "TrustedResourceOwners": [],
        **{k: v for k, v in settings.items() if v is not None},
    }

    def build(snap: Snapshot) -> tuple[Changes, None]:
        changes = Changes()
        records = _Records(snap, changes)
        materialize(snap, records)
        records.put_settings(doc)
        records.flush()
        return changes, None

    ctx.store.commit("PutDataLakeSettings", build)


def add_admins(ctx: Context, names: list[str]) -> list[str]:
    """Make the users ``names`` data lake administrators if the warehouse has no settings yet (``gluecat
    serve --admin``): the first administrators. Returns the administrators the settings name now."""

    def build(snap: Snapshot) -> tuple[Changes, list[str]]:
        changes = Changes()
        stored = snap.get(SETTINGS, SETTINGS_KEY)
        if stored is not None:
            return changes, [p["DataLakePrincipalIdentifier"] for p in stored.get("DataLakeAdmins") or []]
        records = _Records(snap, changes)
        materialize(snap, records)
        settings = default_settings()
        settings["DataLakeAdmins"] = [
            {"DataLakePrincipalIdentifier": user_arn(ctx.catalog_id, n)} for n in names
        ]
        records.put_settings(settings)
        records.flush()
        return changes, [p["DataLakePrincipalIdentifier"] for p in settings["DataLakeAdmins"]]

    return ctx.store.commit("PutDataLakeSettings", build)


# -- the records a commit changes --------------------------------------------------------------------------


class _Records:
    """Grant records as one commit changes them: read from the snapshot, changed in memory, written to
    ``changes`` by ``flush`` (so several changes of one record in a commit compose)."""

    def __init__(self, snap: Snapshot, changes: Changes) -> None:
        self.snap = snap
        self.changes = changes
        self._docs: dict[Key, dict[str, Any] | None] = {}
        self._settings: dict[str, Any] | None = None
        self._databases: dict[str, dict[str, Any]] = {}
        self.when = datetime.now(UTC)
        self.by = access.creator()

    def get(self, key: Key) -> dict[str, Any] | None:
        if key not in self._docs:
            found = self.snap.get(GRANT, key)
            self._docs[key] = copy_doc(found) if found is not None else None
        return self._docs[key]

    def assign(self, key: Key, doc: dict[str, Any] | None) -> None:
        self._docs[key] = doc

    def put_settings(self, doc: dict[str, Any]) -> None:
        self._settings = doc

    def put_database(self, name: str, doc: dict[str, Any]) -> None:
        self._databases[name] = doc

    def flush(self) -> None:
        for key, doc in self._docs.items():
            before = self.snap.get(GRANT, key)
            if doc is None:
                if before is not None:
                    self.changes.delete(GRANT, key)
            elif doc != before:
                self.changes.put(GRANT, key, doc)
        for name, doc in self._databases.items():
            self.changes.put(DATABASE, (name,), doc)
        if self._settings is not None:
            self.changes.put(SETTINGS, SETTINGS_KEY, self._settings)

    def stamp(self, doc: dict[str, Any]) -> dict[str, Any]:
        doc["LastUpdated"] = self.when
        if self.by is not None:
            doc["LastUpdatedBy"] = self.by
        else:
            doc.pop("LastUpdatedBy", None)
        return doc

    # -- plain grants

    def add(self, key: Key, permissions: set[str], grantable: set[str]) -> None:
        doc = self.get(key) or {"Permissions": [], "Grantable": []}
        doc["Permissions"] = sorted(set(doc["Permissions"]) | permissions)
        doc["Grantable"] = sorted(set(doc["Grantable"]) | grantable)
        self.assign(key, self.stamp(doc))

    def add_columns(self, key: Key, select: Columns, grantable: bool) -> None:
        doc = self.get(key)
        have = Columns.from_json(doc["Select"]) if doc else Columns()
        have_grantable = Columns.from_json(doc.get("Grantable")) if doc else Columns()
        new_grantable = have_grantable | select if grantable else have_grantable
        self.assign(
            key,
            self.stamp(
                {
                    "Select": (have | select).to_json(),
                    "Grantable": None if new_grantable.is_empty() else new_grantable.to_json(),
                }
            ),
        )


def materialize(snap: Snapshot, records: _Records) -> None:
    """Write out Lake Formation's initial state, once (the warehouse has no settings yet): the default
    settings, and the grants they imply: IAM_ALLOWED_PRINCIPALS may create databases and has ALL on
    every database and table, and each database grants it ALL on its new tables, as every database made
    before the settings behaved."""
    if snap.get(SETTINGS, SETTINGS_KEY) is not None:
        return
    records.put_settings(default_settings())
    records.add((CATALOG_RES, IAM_ALLOWED_PRINCIPALS), {CREATE_DATABASE}, set())
    for (name,) in snap.sorted_keys(DATABASE):
        records.add((DATABASE_RES, name, IAM_ALLOWED_PRINCIPALS), {ALL}, set())
        db = snap.get(DATABASE, (name,))
        if db is not None and not db.get("CreateTableDefaultPermissions"):
            records.put_database(
                name, {**copy_doc(db), "CreateTableDefaultPermissions": [_all_of(IAM_ALLOWED_PRINCIPALS)]}
            )
    for database, table in snap.sorted_keys(TABLE):
        records.add((TABLE_RES, database, table, IAM_ALLOWED_PRINCIPALS), {ALL}, set())


# -- grant and revoke --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Request:
    """One GrantPermissions or RevokePermissions: checked, its resource parsed."""

    principal: str
    target: Target
    permissions: frozenset[str]
    grantable: frozenset[str]


def parse_request(ctx: Context, entry: dict[str, Any], field: str = "") -> Request:
    """A Grant/RevokePermissions request (or a batch entry): the principal, the resource, and the
    permissions the resource takes, those with grant option among them."""
    prefix = f"{field}." if field else ""
    if entry.get("Condition") is not None:
        raise InvalidInputException(f"{prefix}Condition: gluecat does not support conditional grants")
    principal = check_principal(ctx, entry.get("Principal"), f"{prefix}Principal")
    target = parse_resource(ctx, entry.get("Resource"), f"{prefix}Resource")
    permissions = frozenset(entry.get("Permissions") or [])
    grantable = frozenset(entry.get("PermissionsWithGrantOption") or [])
    valid = VALID[target.named_as]
    for name, given in (("Permissions", permissions), ("PermissionsWithGrantOption", grantable)):
        wrong = sorted(given - valid)
        if wrong:
            raise InvalidInputException(
                f"{prefix}{name}: {wrong[0]} is not a permission of a {_RESOURCE_NAMES[target.named_as]} "
                f"resource ({', '.join(sorted(valid))})"
            )
    if principal == IAM_ALLOWED_PRINCIPALS and grantable:
        raise InvalidInputException(
            f"{prefix}PermissionsWithGrantOption: IAM_ALLOWED_PRINCIPALS cannot be given the grant option"
        )
    return Request(principal, target, permissions, grantable)


def _apply_grant(snap: Snapshot, records: _Records, request: Request, field: str) -> None:
    if not request.permissions:
        raise InvalidInputException(f"{field}Permissions: name at least one permission to grant")
    extra = sorted(request.grantable - request.permissions)
    if extra:
        raise InvalidInputException(
            f"{field}PermissionsWithGrantOption: {extra[0]} is not among the Permissions granted"
        )
    target = request.target
    _require_resource(snap, target, f"{field}Resource")
    key = (*target.key, request.principal)
    if target.columns is not None:
        records.add_columns(key, target.columns, SELECT in request.grantable)
    else:
        records.add(key, set(request.permissions), set(request.grantable))


def _apply_revoke(snap: Snapshot, records: _Records, request: Request, field: str) -> None:
    target = request.target
    if target.kind in (DATABASE_RES, TABLES_RES, TABLE_RES, COLUMNS_RES):
        require_database(snap, target.key[1])
    key = (*target.key, request.principal)
    revoked = False
    if target.columns is not None:
        revoked = _revoke_columns(records, target, request)
    else:
        doc = records.get(key)
        if doc is not None:
            held, grantable = set(doc["Permissions"]), set(doc["Grantable"])
            gone = held & request.permissions
            gone_options = grantable & (request.grantable | request.permissions)
            if gone or gone_options:
                revoked = True
                held -= gone
                grantable = (grantable - gone_options) & held
                records.assign(
                    key,
                    records.stamp({**doc, "Permissions": sorted(held), "Grantable": sorted(grantable)})
                    if held
                    else None,
                )
        if target.kind == TABLE_RES and SELECT in (request.permissions | request.grantable):
            # SELECT on the table is every column: revoking it revokes the column grants too.
            columns_key = (COLUMNS_RES, *target.key[1:], request.principal)
            column_doc = records.get(columns_key)
            if column_doc is not None:
                revoked = True
                if SELECT in request.permissions:
                    records.assign(columns_key, None)
                else:
                    records.assign(columns_key, records.stamp({**column_doc, "Grantable": None}))
    if not revoked:
        raise InvalidInputException(
            f"No permissions revoked. Grantee {request.principal} has none of the given permissions "
            f"on {describe(target.key)}"
        )


def _revoke_columns(records: _Records, target: Target, request: Request) -> bool:
    """Revoke SELECT (or its grant option) on some columns; a SELECT on the whole table becomes SELECT
    on the other columns."""
    assert target.columns is not None
    database, table = target.key[1], target.key[2]
    key = (*target.key, request.principal)
    table_key = (TABLE_RES, database, table, request.principal)
    revoke_select = SELECT in request.permissions
    revoke_option = revoke_select or SELECT in request.grantable
    doc = records.get(key)
    select = Columns.from_json(doc["Select"]) if doc else Columns()
    grantable = Columns.from_json(doc.get("Grantable")) if doc else Columns()
    converted = False
    table_doc = records.get(table_key)
    if table_doc is not None and SELECT in table_doc["Permissions"]:
        table_option = SELECT in table_doc["Grantable"]
        if revoke_select or (revoke_option and table_option):
            # The table-wide SELECT is every column: it becomes a column grant, which then loses these.
            converted = True
            select = Columns.every()
            if table_option:
                grantable = Columns.every()
            held = [p for p in table_doc["Permissions"] if p != SELECT]
            records.assign(
                table_key,
                records.stamp(
                    {
                        **table_doc,
                        "Permissions": held,
                        "Grantable": [p for p in table_doc["Grantable"] if p in held],
                    }
                )
                if held
                else None,
            )
    new_select = select - target.columns if revoke_select else select
    new_grantable = within(grantable - target.columns if revoke_option else grantable, new_select)
    if new_select == select and new_grantable == grantable and not converted:
        return False
    if new_select.is_empty():
        records.assign(key, None)
    else:
        records.assign(
            key,
            records.stamp(
                {
                    "Select": new_select.to_json(),
                    "Grantable": None if new_grantable.is_empty() else new_grantable.to_json(),
                }
            ),
        )
    return True


def within(columns: Columns, bound: Columns) -> Columns:
    """``columns`` ∩ ``bound``."""
    return columns - (Columns.every() - bound)


def grant(ctx: Context, entry: dict[str, Any]) -> None:
    request = parse_request(ctx, entry)

    def build(snap: Snapshot) -> tuple[Changes, None]:
        changes = Changes()
        records = _Records(snap, changes)
        materialize(snap, records)
        _apply_grant(snap, records, request, "")
        records.flush()
        return changes, None

    ctx.store.commit("GrantPermissions", build)


def revoke(ctx: Context, entry: dict[str, Any]) -> None:
    request = parse_request(ctx, entry)

    def build(snap: Snapshot) -> tuple[Changes, None]:
        changes = Changes()
        records = _Records(snap, changes)
        materialize(snap, records)
        _apply_revoke(snap, records, request, "")
        records.flush()
        return changes, None

    ctx.store.commit("RevokePermissions", build)


def batch(ctx: Context, entries: list[dict[str, Any]], revoking: bool) -> dict[str, Any]:
    """BatchGrantPermissions / BatchRevokePermissions: each entry on its own (a failing one is a
    Failures entry), the others in one commit."""
    parsed: list[tuple[dict[str, Any], Request | GlueError]] = []
    seen: set[str] = set()
    for i, entry in enumerate(entries):
        try:
            if entry["Id"] in seen:
                raise InvalidInputException(f"Entries[{i}].Id: {entry['Id']!r} is used twice")
            seen.add(entry["Id"])
            parsed.append((entry, parse_request(ctx, entry, f"Entries[{i}]")))
        except (InvalidInputException, EntityNotFoundException) as e:
            parsed.append((entry, e))
    operation = "BatchRevokePermissions" if revoking else "BatchGrantPermissions"
    apply = _apply_revoke if revoking else _apply_grant

    def build(snap: Snapshot) -> tuple[Changes, list[dict[str, Any]]]:
        changes = Changes()
        records = _Records(snap, changes)
        materialize(snap, records)
        failures = []
        for i, (entry, request) in enumerate(parsed):
            error = request if isinstance(request, GlueError) else None
            if isinstance(request, Request):
                saved = dict(records._docs)
                try:
                    apply(snap, records, request, f"Entries[{i}].")
                except (InvalidInputException, EntityNotFoundException) as e:
                    records._docs = saved
                    error = e
            if error is not None:
                failures.append(
                    {
                        "RequestEntry": entry,
                        "Error": {"ErrorCode": error.code, "ErrorMessage": error.message},
                    }
                )
        records.flush()
        return changes, failures

    return {"Failures": ctx.store.commit(operation, build)}


def staged(ctx: Context, transaction_id: str) -> list[tuple[Key, Any]]:
    """The grants a transaction has staged (those of the tables it made), as records: they count for
    its own requests before it commits. None staged for a transaction not known here."""
    from gluecat.store import codec

    try:
        tx = ctx.transactions().get(transaction_id)
    except GlueError:
        return []
    out = []
    for write in tx.writes:
        if write.get("w") == "table" and not write.get("drop"):
            out += [(tuple(key), codec.loads(text)) for kind, key, text in write["puts"] if kind == GRANT]
    return out


# -- the grants of a resource made, dropped or renamed ---------------------------------------------------


def _default_entries(entries: list[dict[str, Any]] | None) -> list[tuple[str, set[str]]]:
    out = []
    for entry in entries or []:
        principal = (entry.get("Principal") or {}).get("DataLakePrincipalIdentifier")
        if principal:
            out.append((principal, set(entry.get("Permissions") or [])))
    return out


def database_defaults(snap: Snapshot) -> list[dict[str, Any]]:
    """A new database's CreateTableDefaultPermissions when its input gives none: the settings'."""
    return settings_of(snap)["CreateTableDefaultPermissions"]


def created_database(snap: Snapshot, name: str, changes: Changes) -> None:
    """Add to ``changes`` the grants of a new database: the settings' CreateDatabaseDefaultPermissions,
    and ALL with grant option to its creator."""
    records = _Records(snap, changes)
    for principal, permissions in _default_entries(settings_of(snap)["CreateDatabaseDefaultPermissions"]):
        if permissions:
            records.add((DATABASE_RES, name, principal), permissions, set())
    if records.by is not None:
        records.add((DATABASE_RES, name, records.by), {ALL}, {ALL})
    records.flush()


def created_table(snap: Snapshot, database: dict[str, Any], name: str, changes: Changes) -> None:
    """Add to ``changes`` the grants of a new table: its database's CreateTableDefaultPermissions, and
    ALL with grant option to its creator."""
    records = _Records(snap, changes)
    db = database["Name"]
    for principal, permissions in _default_entries(database.get("CreateTableDefaultPermissions")):
        if permissions:
            records.add((TABLE_RES, db, name, principal), permissions, set())
    if records.by is not None:
        records.add((TABLE_RES, db, name, records.by), {ALL}, {ALL})
    records.flush()


def dropped_table(snap: Snapshot, database: str, name: str, changes: Changes) -> None:
    """Add to ``changes`` the removal of every grant on a table (Lake Formation revokes them with it)."""
    for kind in (TABLE_RES, COLUMNS_RES):
        for key in snap.keys_with_prefix(GRANT, (kind, database, name)):
            changes.delete(GRANT, key)


def dropped_database(snap: Snapshot, name: str, changes: Changes) -> None:
    """Add to ``changes`` the removal of the grants on a database and on every table of it."""
    for kind in (DATABASE_RES, TABLES_RES):
        for key in snap.keys_with_prefix(GRANT, (kind, name)):
            changes.delete(GRANT, key)


def renamed_table(snap: Snapshot, old: Key, new: Key, changes: Changes) -> None:
    """Add to ``changes`` the grants of table ``old`` as the renamed table's: a rename keeps the table,
    and who may do what with it."""
    for kind in (TABLE_RES, COLUMNS_RES):
        for key in snap.keys_with_prefix(GRANT, (kind, *old)):
            doc = snap.get(GRANT, key)
            changes.delete(GRANT, key)
            changes.put(GRANT, (kind, *new, *key[3:]), doc)


def registered_under(snap: Snapshot, path: str) -> str | None:
    """The registered location that holds ``path`` (the longest), or None."""
    best = None
    for (location,) in snap.sorted_keys(LOCATION):
        if under(path, location) and (best is None or len(location) > len(best)):
            best = location
    return best
