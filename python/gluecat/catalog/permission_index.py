"""The grants of a state of the warehouse, indexed by principal, and one caller's view of them: what
``gluecat serve`` checks each request against.

The index is built from the root log's grant, settings and location records, once per set of them: a
commit that changes none of them (partitions, statistics, a table's definition) keeps the records'
mappings (the store shares what a commit does not touch), and so the index. A check is then a few
dictionary lookups, whatever the number of grants.
"""

from __future__ import annotations

import threading
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from gluecat.catalog.grants import (
    ALL,
    CATALOG_RES,
    COLUMNS_RES,
    DATA_LOCATION_ACCESS,
    DATABASE_RES,
    DESCRIBE,
    GRANT,
    IAM_ALLOWED_PRINCIPALS,
    LOCATION,
    LOCATION_RES,
    SELECT,
    SETTINGS,
    SETTINGS_KEY,
    TABLE_RES,
    TABLES_RES,
    Columns,
    under,
)
from gluecat.store.snapshot import Key, LogState, Snapshot

Perms = tuple[frozenset[str], frozenset[str]]
"""A grant's permissions, and those of them with grant option."""
_NONE: Perms = (frozenset(), frozenset())


@dataclass
class Holder:
    """One principal's grants."""

    catalog: Perms = _NONE
    databases: dict[str, Perms] = field(default_factory=dict)
    wildcards: dict[str, Perms] = field(default_factory=dict)
    tables: dict[tuple[str, str], Perms] = field(default_factory=dict)
    columns: dict[tuple[str, str], tuple[Columns, Columns]] = field(default_factory=dict)
    locations: dict[str, Perms] = field(default_factory=dict)
    inside: set[str] = field(default_factory=set)
    """Databases in which it holds anything (on the database, or on tables of it): it may DESCRIBE them."""


def _perms(doc: Any) -> Perms:
    return frozenset(doc.get("Permissions") or ()), frozenset(doc.get("Grantable") or ())


class Index:
    """Every grant of one state, by principal; the settings (None: Lake Formation's initial state, in
    which every caller may do everything) and the registered locations."""

    def __init__(
        self,
        settings: dict[str, Any] | None,
        locations: Iterable[str],
        records: Iterable[tuple[Key, Any]],
    ) -> None:
        self.settings = settings
        settings = self.settings or {}
        self.admins = frozenset(
            p.get("DataLakePrincipalIdentifier") for p in settings.get("DataLakeAdmins") or []
        )
        self.readers = self.admins | frozenset(
            p.get("DataLakePrincipalIdentifier") for p in settings.get("ReadOnlyAdmins") or []
        )
        self.locations = tuple(locations)
        self.holders: dict[str, Holder] = {}
        for key, doc in records:
            self._add(key, doc)

    @staticmethod
    def of(state: LogState) -> Index:
        """The index of a root state's records."""
        return Index(
            state.get(SETTINGS, SETTINGS_KEY),
            (key[0] for key in state.records(LOCATION)),
            ((key, state.get(GRANT, key)) for key in state.records(GRANT)),
        )

    def _add(self, key: Key, doc: Any) -> None:
        if doc is None:
            return
        holder = self.holders.get(key[-1])
        if holder is None:
            holder = self.holders[key[-1]] = Holder()
        kind = key[0]
        if kind == CATALOG_RES:
            holder.catalog = _perms(doc)
        elif kind == DATABASE_RES:
            holder.databases[key[1]] = _perms(doc)
            holder.inside.add(key[1])
        elif kind == TABLES_RES:
            holder.wildcards[key[1]] = _perms(doc)
            holder.inside.add(key[1])
        elif kind == TABLE_RES:
            holder.tables[(key[1], key[2])] = _perms(doc)
            holder.inside.add(key[1])
        elif kind == COLUMNS_RES:
            select = Columns.from_json(doc.get("Select"))
            holder.columns[(key[1], key[2])] = (select, Columns.from_json(doc.get("Grantable")))
            holder.inside.add(key[1])
        elif kind == LOCATION_RES:
            holder.locations[key[1]] = _perms(doc)

    def registered(self, path: str) -> str | None:
        """The registered location holding ``path`` (the longest), or None."""
        best = None
        for location in self.locations:
            if under(path, location) and (best is None or len(location) > len(best)):
                best = location
        return best


_cache_lock = threading.Lock()
_cache: list[tuple[tuple[Any, Any, Any], Index]] = []
_CACHED = 4


def index_of(state: LogState) -> Index:
    """The index of a root state's grants, shared with every state that has the same grant, settings and
    location records."""
    meta: Mapping[str, Any] = state.meta
    sources = (meta.get(GRANT), meta.get(SETTINGS), meta.get(LOCATION))
    with _cache_lock:
        for cached_sources, index in _cache:
            if all(a is b for a, b in zip(cached_sources, sources, strict=True)):
                return index
    index = Index.of(state)
    with _cache_lock:
        _cache.insert(0, (sources, index))
        del _cache[_CACHED:]
    return index


class View:
    """What one caller may do and see, by the grants of an index: its own and IAM_ALLOWED_PRINCIPALS'
    (every authenticated caller belongs to that group). ``principal`` None is a caller with no name (a
    Thrift client that sent no set_ugi): the group's grants alone."""

    def __init__(
        self, index: Index, principal: str | None, staged: Index | None = None, root: Snapshot | None = None
    ) -> None:
        self.index = index
        self.root = root
        """The root state the grants were read from (None where not known)."""
        self.principal = principal
        self.open = index.settings is None
        self.admin = principal is not None and principal in index.admins
        self.reader = principal is not None and principal in index.readers
        # A transaction's own grants (those of the tables it made) count in its requests.
        holders = []
        for source in (index, staged):
            if source is not None:
                if principal is not None:
                    holders.append(source.holders.get(principal))
                holders.append(source.holders.get(IAM_ALLOWED_PRINCIPALS))
        self._holders = [h for h in holders if h is not None]

    # -- permissions -------------------------------------------------------------------------------

    def allows(self, permission: str, resource: Key) -> bool:
        """Whether the caller holds ``permission`` on ``resource`` (("catalog",), ("database", db),
        ("table", db, table) or ("location", uri)). DESCRIBE holds wherever any permission does; SELECT
        on a table holds with a grant of some of its columns (``select`` says which)."""
        if self.open:
            return True
        kind = resource[0]
        if permission == DESCRIBE:
            if kind == DATABASE_RES:
                return self.database_visible(resource[1])
            if kind == TABLE_RES:
                return self.table_visible(resource[1], resource[2])
        if kind == CATALOG_RES:
            # Everyone sees the catalog; administrators make databases and tag it.
            return (
                permission == DESCRIBE or self.admin or any(permission in h.catalog[0] for h in self._holders)
            )
        if kind == DATABASE_RES:
            return any(_has(h.databases.get(resource[1]), permission) for h in self._holders)
        if kind == TABLE_RES:
            db, table = resource[1], resource[2]
            if any(
                _has(h.tables.get((db, table)), permission) or _has(h.wildcards.get(db), permission)
                for h in self._holders
            ):
                return True
            return permission == SELECT and any((db, table) in h.columns for h in self._holders)
        if kind == LOCATION_RES:
            return self.admin or any(
                under(resource[1], location) and _has(perms, permission)
                for h in self._holders
                for location, perms in h.locations.items()
            )
        return False

    def grantable(self, permission: str, resource: Key, columns: Columns | None = None) -> bool:
        """Whether the caller may grant (or revoke) ``permission`` on ``resource``: a data lake
        administrator may grant anything; others need the permission with grant option."""
        if self.admin:
            return True
        if self.open:
            return False
        kind = resource[0]
        if kind == CATALOG_RES:
            return any(permission in h.catalog[1] for h in self._holders)
        if kind == DATABASE_RES:
            return any(_grantable(h.databases.get(resource[1]), permission) for h in self._holders)
        if kind == TABLES_RES:
            return any(_grantable(h.wildcards.get(resource[1]), permission) for h in self._holders)
        if kind in (TABLE_RES, COLUMNS_RES):
            db, table = resource[1], resource[2]
            if any(
                _grantable(h.tables.get((db, table)), permission)
                or _grantable(h.wildcards.get(db), permission)
                for h in self._holders
            ):
                return True
            if permission != SELECT or columns is None:
                return False
            held = Columns()
            for h in self._holders:
                found = h.columns.get((db, table))
                if found is not None:
                    held = held | found[1]
            return held.covers(columns)
        if kind == LOCATION_RES:
            return any(
                under(resource[1], location) and _grantable(perms, permission)
                for h in self._holders
                for location, perms in h.locations.items()
            )
        return False

    def holds_any_grantable(self, resource: Key) -> bool:
        """Whether the caller holds some permission with grant option on ``resource`` (which lets it see
        the resource's grants, in Lake Formation)."""
        if self.open:
            return False
        kind = resource[0]
        for h in self._holders:
            if kind == CATALOG_RES and h.catalog[1]:
                return True
            if kind == DATABASE_RES and h.databases.get(resource[1], _NONE)[1]:
                return True
            if kind == TABLES_RES and h.wildcards.get(resource[1], _NONE)[1]:
                return True
            if kind in (TABLE_RES, COLUMNS_RES):
                db, table = resource[1], resource[2]
                if h.tables.get((db, table), _NONE)[1] or h.wildcards.get(db, _NONE)[1]:
                    return True
                found = h.columns.get((db, table))
                if found is not None and not found[1].is_empty():
                    return True
            if kind == LOCATION_RES and h.locations.get(resource[1], _NONE)[1]:
                return True
        return False

    # -- what the caller sees (gluecat.catalog.access) ----------------------------------------------

    def database_visible(self, database: str) -> bool:
        """DESCRIBE on a database: any grant on it or inside it (Lake Formation's implicit DESCRIBE)."""
        return self.open or self.reader or any(database in h.inside for h in self._holders)

    def table_visible(self, database: str, table: str) -> bool:
        """DESCRIBE on a table: any grant on it, on every table of its database, or on columns of it."""
        if self.open or self.reader:
            return True
        key = (database, table)
        return any(key in h.tables or database in h.wildcards or key in h.columns for h in self._holders)

    def visible_columns(self, database: str, table: str) -> Columns | None:
        """The columns the caller may see: all of them (None) with any grant on the table itself, else
        those its column grants name."""
        if self.open or self.reader:
            return None
        key = (database, table)
        if any(key in h.tables or database in h.wildcards for h in self._holders):
            return None
        shown = Columns()
        for h in self._holders:
            found = h.columns.get(key)
            if found is not None:
                shown = shown | found[0]
        return None if shown.is_every() else shown

    def grants_visible(self, resource: tuple[str, ...]) -> bool:
        """ListPermissions shows an administrator every grant, others the grants on resources they hold a
        permission with grant option on."""
        return self.reader or self.holds_any_grantable(resource)

    def columns_key(self, database: str, table: str) -> Hashable:
        columns = self.visible_columns(database, table)
        return None if columns is None else (columns.excluding, tuple(sorted(columns.names)))

    def listing_key(self) -> Hashable:
        """What a cached listing must be keyed by besides the request: None when every caller sees the
        same (the initial state)."""
        return None if self.open else ("reader" if self.reader else self.principal)

    def location_access(self, path: str) -> str | None:
        """The registered location holding ``path`` that the caller lacks DATA_LOCATION_ACCESS on, or
        None (not registered, or the caller has it)."""
        if self.open or self.admin:
            return None
        registered = self.index.registered(path)
        if registered is None or self.allows(DATA_LOCATION_ACCESS, (LOCATION_RES, path)):
            return None
        return registered


def _has(perms: Perms | None, permission: str) -> bool:
    return perms is not None and (permission in perms[0] or ALL in perms[0])


def _grantable(perms: Perms | None, permission: str) -> bool:
    return perms is not None and (permission in perms[1] or ALL in perms[1])
