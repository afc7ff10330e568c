"""The data files of the tables Spark reads and writes through gluecat: the one place that moves and deletes them.

The rules, as Hive and Spark's built-in catalog keep them, plus one they lack (nothing another table reads
is ever deleted):

- A table's data is the catalog's (managed) when the table is a MANAGED_TABLE or GOVERNED, its Parameters do
  not say EXTERNAL=TRUE, and its folder lies inside its database's folder (the database's LocationUri, else
  ``<warehouse>/<db>.db``). Anything else is external: created with LOCATION, registered by a crawler, moved
  elsewhere with SET LOCATION.
- DROP TABLE [PURGE], ALTER TABLE DROP PARTITION [PURGE] and DROP DATABASE CASCADE delete managed data and
  never external data. A partition's folder is deleted only if it lies inside its table's managed folder.
  The folders are hidden before the catalog commit and deleted after it, so a killed drop leaves no
  files behind where they would read as rows again.
- TRUNCATE TABLE [PARTITION] deletes the files of a managed table's folders and is refused on an external
  table (CANNOT_TRUNCATE_EXTERNAL_TABLE).
- A folder is never deleted while another table, a partition of another table or a partition that stays
  uses it, lies inside it or contains it; nor anything holding the catalog's own ``_gluecat`` folder. Such
  a folder stays (DROP) or the statement is refused (TRUNCATE, INSERT OVERWRITE), so no table loses rows
  another statement wrote to a different table.
- A managed table is created in an empty folder (LOCATION_ALREADY_EXISTS otherwise), so files left behind
  never come back as rows of a new table. Renaming a managed table at its default folder moves the folder
  to the new name's default folder, taking the partitions inside it along (unless another table uses the
  folder: then it stays, and a new table of the old name is refused its folder).
- A write's files go to a staging folder private to the job; its commit sets aside the files an overwrite
  replaces, moves the new ones into place, registers new partitions in one catalog commit, and only then
  deletes the replaced files. A failed job leaves nothing; a killed one never leaves a partition folder
  with old and new rows together.
- An object store renames no folder and moves a file by a copy and a delete (gluecat.s3_access says how S3
  is reached). There a write sets every replaced file aside before any new one comes in; a folder moving
  across a commit (RENAME) is copied before it and deleted after it; and a drop marks each folder it
  deletes before its commit, so that what next registers, makes, renames or repairs something in a marked
  folder's place deletes it first, unless a table or partition uses it (the commit never happened).
"""

from __future__ import annotations

import bisect
import contextlib
import errno
import json
import posixpath
import threading
import uuid
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, TypeVar

import pyarrow.fs as pafs

from gluecat import locations
from gluecat.api.pages import every
from gluecat.api.partition_names import partition_namer
from gluecat.api.patterns import check_db_or_table_name
from gluecat.api.table_kinds import is_external
from gluecat.catalog import access
from gluecat.data.refusals import SparkRefusal, quoted
from gluecat.errors import EntityNotFoundException, InternalServiceException, InvalidInputException

GlueClient = Any
"""A Glue client: gluecat.Catalog, or a catalog service's (Spark's remote catalog, gluecat.spark.remote)."""

STAGING_PREFIX = ".gluecat-staging-"
DROPPING_PREFIX = ".gluecat-dropping-"  # a dropped table's or partition's folder, until it is deleted
DROPPED_PREFIX = ".gluecat-dropped-"
"""On an object store, where no folder renames: the mark beside a folder a drop deletes (``<parent>/
.gluecat-dropped-<name>``), written before its catalog commit and deleted after the folder."""
_FOLDER_RENAMES = ("local", "hdfs")  # file systems that rename a folder in one step
_REPLACED = ".replaced"  # in a staging folder: the files an overwrite replaces, until its commit
_STORE_FOLDER = "_gluecat"
# Write jobs' folders (a governed table's: gluecat.spark.governed's TX_FOLDER_PREFIX).
_JOB_PREFIXES = (STAGING_PREFIX, ".gluecat-tx-")
_MARKS_LOOKED_UP = 16  # more folders of one parent than this: their marks are found by listing the parent
_OBJECT_THREADS = 16  # an object store's requests wait on the network: copies and deletes run side by side
_T = TypeVar("_T")


def folder_key(location: str) -> str:
    """A location in one canonical form for comparing folders: the place Spark writes to and this module
    touches (gluecat.locations.literal: a ``file:`` URI's path as Hadoop reads it, not percent-decoded;
    local paths with ``..``, ``//`` and symbolic links resolved, s3a/s3n as s3, no trailing slash)."""
    return locations.literal(location)


def _inside(child: str, parent: str) -> bool:
    return child == parent or child.startswith(parent + "/")


def _ancestors(key: str) -> Iterator[str]:
    while True:
        parent = key.rsplit("/", 1)[0]
        if not parent or parent == key or parent.endswith(":/") or parent.endswith(":"):
            return
        yield parent
        key = parent


def filesystem(location: str) -> tuple[pafs.FileSystem, str]:
    """The file system and path of a table or partition location (a URI, or a local path), read as Spark
    reads it: a ``file:`` location's ``k=a%3Ab`` is the folder Spark wrote, not ``k=a:b``."""
    return locations.hadoop_filesystem(location)


def _visible(path: str) -> bool:
    name = path.rstrip("/").rsplit("/", 1)[-1]
    return not name.startswith(("_", "."))


def _listing(fs: pafs.FileSystem, path: str, recursive: bool = False) -> list[pafs.FileInfo]:
    """What a folder holds: nothing if it is not there, or if no folder can have its path (a name longer
    than the file system allows, ENAMETOOLONG: the Hive path of a partition registered without a
    location, whose values are long)."""
    try:
        return fs.get_file_info(pafs.FileSelector(path, allow_not_found=True, recursive=recursive))
    except OSError as e:
        if e.errno == errno.ENAMETOOLONG:
            return []
        raise


def _data_file_infos(fs: pafs.FileSystem, path: str) -> list[pafs.FileInfo]:
    return [info for info in _listing(fs, path) if info.type == pafs.FileType.File and _visible(info.path)]


def data_file_infos(location: str) -> list[pafs.FileInfo]:
    """The data files directly in a folder (not hidden ones, not subfolders), with their sizes, from one
    listing (on an object store, one request per thousand files rather than one per file)."""
    return _data_file_infos(*filesystem(location))


def data_files(location: str) -> list[str]:
    """The data files directly in a folder (not hidden ones, not subfolders), as file-system paths."""
    return [info.path for info in data_file_infos(location)]


def has_files(location: str) -> bool:
    """Whether a folder holds any file, at any depth."""
    fs, path = filesystem(location)
    return any(info.type == pafs.FileType.File for info in _listing(fs, path, recursive=True))


def _renames_folders(fs: pafs.FileSystem) -> bool:
    """Whether ``fs`` renames a folder in one step (object stores copy every file, and pyarrow moves no
    folder there)."""
    return fs.type_name in _FOLDER_RENAMES


def _each(fs: pafs.FileSystem, work: Callable[[_T], object], items: Iterable[_T]) -> None:
    """``work`` on every item: one after another where ``fs`` is a file system, on several threads for an
    object store, where each is a request or two. Every item is tried; the first failure is raised after
    the others finished, so that no copy or delete is still under way when the caller undoes them."""
    items = list(items)
    if _renames_folders(fs) or len(items) < 2:
        for item in items:
            work(item)
        return
    failures: list[BaseException] = []

    def attempt(item: _T) -> None:
        try:
            work(item)
        except BaseException as e:
            failures.append(e)

    with ThreadPoolExecutor(min(_OBJECT_THREADS, len(items))) as pool:
        list(pool.map(attempt, items))
    if failures:
        raise failures[0]


def _in_staging(path: str) -> bool:
    return any(part.startswith((STAGING_PREFIX, DROPPING_PREFIX, DROPPED_PREFIX)) for part in path.split("/"))


def row_files(location: str, removed: Iterable[str] = ()) -> list[str]:
    """The files at any depth of a folder that could read as rows: not those in write jobs' staging
    folders or drops' hidden folders (a killed job or drop leaves its own behind), nor those inside
    ``removed``."""
    fs, path = filesystem(location)
    gone = [folder_key(f) for f in removed]
    root = len(path.rstrip("/"))
    out = []
    for info in _listing(fs, path, recursive=True):
        below = info.path[root:]
        if info.type != pafs.FileType.File or _in_staging(below):
            continue
        if not any(_inside(folder_key(f"{location.rstrip('/')}{below}"), g) for g in gone):
            out.append(info.path)
    return out


def delete_tree_except(location: str, keep: str) -> None:
    """Delete a folder and everything in it but the folder ``keep`` (and the folders holding it)."""
    fs, path = filesystem(location)
    keep_key = folder_key(keep)
    if not _inside(keep_key, folder_key(location)):
        delete_tree(location)
        return
    for info in fs.get_file_info(pafs.FileSelector(path, allow_not_found=True)):
        child = f"{location.rstrip('/')}/{info.path.rstrip('/').rsplit('/', 1)[-1]}"
        key = folder_key(child)
        if key == keep_key:
            continue
        if _inside(keep_key, key):
            delete_tree_except(child, keep)
        elif info.type == pafs.FileType.Directory:
            fs.delete_dir(info.path)
        else:
            fs.delete_file(info.path)


def _marked(folders: Iterable[str]) -> list[tuple[str, pafs.FileSystem, str, dict[str, Any]]]:
    """Those of ``folders`` (locations) that an object store's drop marked: (location, file system, path,
    the mark's note). Marks are looked up one by one, or found by one listing of a parent when many of its
    folders are asked about (MSCK REPAIR's)."""
    by_parent: dict[tuple[int, str], list[tuple[str, pafs.FileSystem, str]]] = {}
    for location in dict.fromkeys(folders):
        fs, path = filesystem(location)
        if not _renames_folders(fs):
            path = path.rstrip("/")
            by_parent.setdefault((id(fs), posixpath.dirname(path)), []).append((location, fs, path))
    marked: list[tuple[str, pafs.FileSystem, str]] = []
    for (_, parent), group in by_parent.items():
        fs = group[0][1]
        if len(group) > _MARKS_LOOKED_UP:
            there = {i.path for i in _listing(fs, parent) if i.base_name.startswith(DROPPED_PREFIX)}
            marked += [g for g in group if _mark_of(g[2]) in there]
        else:
            marked += _looked_up(fs, group)
    found = []
    for location, fs, path in marked:
        try:
            with fs.open_input_stream(_mark_of(path)) as f:
                note = json.loads(f.read() or b"{}")
        except (FileNotFoundError, ValueError):
            note = {}
        found.append((location, fs, path, note if isinstance(note, dict) else {}))
    return found


def _looked_up(
    fs: pafs.FileSystem, group: list[tuple[str, pafs.FileSystem, str]]
) -> list[tuple[str, pafs.FileSystem, str]]:
    """Those of ``group`` whose marks are there, each looked up (a request or two, side by side)."""
    there: set[str] = set()

    def look_up(g: tuple[str, pafs.FileSystem, str]) -> None:
        if fs.get_file_info(_mark_of(g[2])).type == pafs.FileType.File:
            there.add(g[2])

    _each(fs, look_up, group)
    return [g for g in group if g[2] in there]


def _marked_inside(location: str) -> list[str]:
    """The folders inside ``location`` (a location) that an object store's drop marked."""
    fs, path = filesystem(location)
    if _renames_folders(fs):
        return []
    root = len(path.rstrip("/"))
    return [
        f"{location.rstrip('/')}{posixpath.dirname(info.path[root:])}/{info.base_name[len(DROPPED_PREFIX) :]}"
        for info in _listing(fs, path, recursive=True)
        if info.type == pafs.FileType.File and info.base_name.startswith(DROPPED_PREFIX)
    ]


def _delete_but_staging(fs: pafs.FileSystem, path: str) -> None:
    """Deletes a folder and everything in it but write jobs' staging folders (``CREATE TABLE AS SELECT``,
    run again after a killed REPLACE TABLE, stages its rows in the folder it makes the table in)."""
    infos = _listing(fs, path)
    if not any(i.base_name.startswith(_JOB_PREFIXES) for i in infos):
        if fs.get_file_info(path).type != pafs.FileType.NotFound:
            fs.delete_dir(path)
        return
    for info in infos:
        if info.base_name.startswith(_JOB_PREFIXES):
            continue
        if info.type == pafs.FileType.Directory:
            fs.delete_dir(info.path)
        else:
            fs.delete_file(info.path)


def _delete_files(location: str) -> None:
    fs, _ = filesystem(location)
    _each(fs, fs.delete_file, data_files(location))


def delete_tree(location: str) -> None:
    """Delete a folder and everything in it; one that is gone already counts as deleted."""
    fs, path = filesystem(location)
    try:
        found = fs.get_file_info(path).type != pafs.FileType.NotFound
    except OSError as e:
        if e.errno != errno.ENAMETOOLONG:  # else a path no folder can have: none to delete
            raise
        found = False
    if found:
        fs.delete_dir(path)


@dataclass
class Claims:
    """The folders that tables use, for checking a deletion: each folder's canonical key and its user."""

    users: dict[str, str] = field(default_factory=dict)
    trees: dict[str, str] = field(default_factory=dict)
    """Folders whose every subfolder is in use too (the catalog's own files)."""
    _sorted: list[str] = field(default_factory=list)

    def add(self, location: str, user: str) -> None:
        # Hadoop reads a file: URI's percent-escapes as they are, pyarrow decodes them: both folders.
        for key in {folder_key(location), locations.literal(location)}:
            self.users.setdefault(key, user)

    def add_tree(self, location: str, user: str) -> None:
        self.add(location, user)
        self.trees.setdefault(folder_key(location), user)

    def seal(self) -> Claims:
        self._sorted = sorted(self.users)
        return self

    def using(self, key: str) -> str | None:
        """Who uses exactly this folder (or a folder it lies in, for the catalog's own)."""
        if key in self.users:
            return self.users[key]
        return next((user for tree, user in self.trees.items() if _inside(key, tree)), None)

    def overlapping(self, key: str) -> str | None:
        """Who uses this folder, a folder inside it, or a folder containing it."""
        if key in self.users:
            return self.users[key]
        for parent in _ancestors(key):
            if parent in self.users:
                return self.users[parent]
        i = bisect.bisect_left(self._sorted, key + "/")
        if i < len(self._sorted) and self._sorted[i].startswith(key + "/"):
            return self.users[self._sorted[i]]
        return None


@dataclass
class Removal:
    """What a drop deletes once its catalog commit is done: whole folders, and why others stay; partition
    folders' emptied parents go too, up to ``within`` (the table's folder), as Hive removes them."""

    trees: list[str] = field(default_factory=list)
    kept: list[tuple[str, str]] = field(default_factory=list)
    within: str | None = None
    partitions_of: dict[str, Any] | None = None
    """The table whose partitions these are (None: whole tables' folders)."""


@dataclass
class Hidden:
    """A folder a drop renamed out of the way until its catalog commit is done (``within``: not the folder
    but what it held, moved into ``at`` inside it); on an object store, ``at`` is its mark instead
    (``marked``), and the folder stays where it is."""

    fs: pafs.FileSystem
    folder: str
    at: str
    within: bool = False
    marked: bool = False


def _mark_of(path: str) -> str:
    parent, name = posixpath.split(path.rstrip("/"))
    return f"{parent}/{DROPPED_PREFIX}{name}"


def _mark(fs: pafs.FileSystem, path: str, partitions_of: dict[str, Any] | None) -> Hidden:
    """Marks the folder at ``path`` as being deleted; the mark says whose partitions it holds, if any, so that
    whoever finds it can tell whether the folder is still in use."""
    owner = [partitions_of["DatabaseName"], partitions_of["Name"]] if partitions_of is not None else None
    with fs.open_output_stream(_mark_of(path)) as out:
        out.write(json.dumps({"partitions_of": owner}).encode())
    return Hidden(fs, path, _mark_of(path), marked=True)


def _unmark(fs: pafs.FileSystem, path: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        fs.delete_file(_mark_of(path))


class DataFiles:
    """The data-file life cycle of one warehouse's tables, by the rules in this module's docstring."""

    def __init__(self, catalog: GlueClient) -> None:
        self.catalog = catalog

    # -- where tables live ---------------------------------------------------------------------

    def database_folder(self, database: str) -> str:
        return self._folder_of(self.catalog.get_database(Name=database)["Database"])

    def _folder_of(self, db: dict[str, Any]) -> str:
        if db.get("LocationUri"):
            return str(db["LocationUri"]).rstrip("/")
        return self._default_database_folder(db["Name"])

    def _default_database_folder(self, name: str) -> str:
        """``<warehouse>/<db>.db``, of the database's name as the catalog stores it (lower case)."""
        if self.catalog.warehouse is None:  # a catalog service that is not gluecat names none
            raise InvalidInputException(
                f"Database {name} has no LocationUri, and the catalog names no warehouse to put its tables "
                "in: give the database a LOCATION, or set the Spark catalog's warehouse option"
            )
        return f"{self.catalog.warehouse.rstrip('/')}/{name}.db"

    def default_location(self, database: str, name: str) -> str:
        """Where a table made without LOCATION lives: ``<database folder>/<table>``, both named as the
        catalog names them (in lower case, as Hive's and Spark's own catalogs name their folders), so that
        the folder is one of those its database manages. InvalidInputException if either name cannot be
        the name of one folder: the table's folder would lie inside another table's, be its database's
        folder, lie outside it, or be refused by the file system (ENAMETOOLONG)."""
        db = self.catalog.get_database(Name=database)["Database"]
        table = check_db_or_table_name(name, "Name")
        if not db.get("LocationUri"):
            why = locations.folder_name_problem(f"{db['Name']}.db")
            if why is not None:
                raise InvalidInputException(
                    f"Database {db['Name']} has no folder for table {table}: {db['Name'] + '.db'!r} cannot "
                    f"be the name of a folder ({why}); give the database a LOCATION, or the table one"
                )
        why = locations.folder_name_problem(table)
        if why is not None:
            raise InvalidInputException(
                f"Table {db['Name']}.{table} has no default folder: {table!r} cannot be the name of a "
                f"folder ({why}); give the table a LOCATION"
            )
        return f"{self._folder_of(db)}/{table}"

    def managed_folder(self, table: dict[str, Any]) -> str | None:
        """The table's folder when its data is the catalog's to delete, else None."""
        location = (table.get("StorageDescriptor") or {}).get("Location")
        if not location or is_external(table):
            return None
        key = folder_key(location)
        db_key = folder_key(self.database_folder(table["DatabaseName"]))
        if key == db_key or not _inside(key, db_key):
            return None
        return str(location).rstrip("/")

    def partition_folders(
        self, table: dict[str, Any], values: list[list[str]] | None = None
    ) -> list[tuple[list[str], str]]:
        """The partitions of a table (those with ``values``, if given, that exist) with their folders."""
        keys = [k["Name"] for k in table.get("PartitionKeys") or []]
        if not keys:
            return []
        base = str((table.get("StorageDescriptor") or {}).get("Location") or "").rstrip("/")
        name = partition_namer(keys)
        if values is None:
            rows = self.catalog.get_partitions_arrow(
                DatabaseName=table["DatabaseName"], TableName=table["Name"]
            )
            columns = [rows.column(k).to_pylist() for k in keys]
            found = [list(v) for v in zip(*columns, strict=True)]
            locations = rows.column("Location").to_pylist()
            return [(v, loc or f"{base}/{name(v)}") for v, loc in zip(found, locations, strict=True)]
        out = []
        for start in range(0, len(values), 1000):
            got = self.catalog.batch_get_partition(
                DatabaseName=table["DatabaseName"],
                TableName=table["Name"],
                PartitionsToGet=[{"Values": v} for v in values[start : start + 1000]],
            )
            for p in got["Partitions"]:
                loc = (p.get("StorageDescriptor") or {}).get("Location")
                out.append((list(p["Values"]), loc or f"{base}/{name(p['Values'])}"))
        return out

    def claims(
        self,
        skip_tables: Iterable[tuple[str, str]] = (),
        table: dict[str, Any] | None = None,
        leaving: Iterable[list[str]] = (),
    ) -> Claims:
        """Every folder some table uses, except the tables in ``skip_tables``; of ``table``, its partitions
        other than those ``leaving`` (its own folder is the partitions' parent by design, so not a claim).
        Every table of the catalog counts, those the caller a server acts for may not see too: a folder
        a hidden table uses is not to be deleted or moved from under it (what is kept is not told)."""
        with access.acting(None):
            return self._claims(skip_tables, table, leaving)

    def _claims(
        self,
        skip_tables: Iterable[tuple[str, str]],
        table: dict[str, Any] | None,
        leaving: Iterable[list[str]],
    ) -> Claims:
        skipped = set(skip_tables)
        own = (table["DatabaseName"], table["Name"]) if table is not None else None
        gone = {tuple(v) for v in leaving}
        claims = Claims()
        if self.catalog.warehouse is not None:
            claims.add_tree(
                f"{self.catalog.warehouse.rstrip('/')}/{_STORE_FOLDER}", "the catalog's own files"
            )
        for db in every(self.catalog.get_databases, "DatabaseList"):
            for t in every(self.catalog.get_tables, "TableList", DatabaseName=db["Name"]):
                ident = (db["Name"], t["Name"])
                if ident in skipped:
                    continue
                location = (t.get("StorageDescriptor") or {}).get("Location")
                if location and ident != own:
                    claims.add(location, f"table {db['Name']}.{t['Name']}")
                if t.get("PartitionKeys") and location:
                    for values, folder in self.partition_folders(t):
                        if ident == own and tuple(values) in gone:
                            continue
                        claims.add(folder, f"partition {values} of {db['Name']}.{t['Name']}")
        return claims.seal()

    # -- creating ------------------------------------------------------------------------------

    def check_new_managed_folder(
        self, database: str, name: str, location: str, removed: Iterable[str] = ()
    ) -> None:
        """A managed table starts empty: files already in its folder would read as its rows (those of
        write jobs' staging folders never do; ``removed``: folders deleted before the table is made). A drop
        killed before it deleted the folder (or folders in it) on an object store is finished first."""
        self.finish_drops([location, *_marked_inside(location)])
        if row_files(location, removed):
            raise SparkRefusal(
                "LOCATION_ALREADY_EXISTS",
                {"identifier": quoted(database, name), "location": f"'{location}'"},
                f"Table {database}.{name}: its folder {location} already holds files; pick another name, "
                "or remove the folder first",
            )

    # -- dropping ------------------------------------------------------------------------------

    def plan_drop_table(self, table: dict[str, Any]) -> Removal:
        """What DROP TABLE [PURGE] deletes: a managed table's folder, unless another table uses it."""
        removal = Removal()
        folder = self.managed_folder(table)
        if folder is not None:
            self._plan_tree(
                folder, self.claims(skip_tables=[(table["DatabaseName"], table["Name"])]), removal
            )
        return removal

    def plan_drop_database(self, database: str) -> Removal:
        """What DROP DATABASE CASCADE deletes: the folders of its managed tables, as DROP TABLE would."""
        removal = Removal()
        tables = list(every(self.catalog.get_tables, "TableList", DatabaseName=database))
        folders = [f for f in map(self.managed_folder, tables) if f is not None]
        if folders:
            claims = self.claims(skip_tables=[(database, t["Name"]) for t in tables])
            for folder in folders:
                self._plan_tree(folder, claims, removal)
        return removal

    def plan_drop_partitions(self, table: dict[str, Any], values: list[list[str]]) -> Removal:
        """What ALTER TABLE DROP PARTITION [PURGE] deletes: the folders of those partitions that lie inside
        a managed table's folder, unless a partition that stays or another table uses them."""
        removal = Removal()
        folder = self.managed_folder(table)
        if folder is None:
            return removal
        inside = [
            (v, f)
            for v, f in self.partition_folders(table, values)
            if _inside(folder_key(f), folder_key(folder)) and folder_key(f) != folder_key(folder)
        ]
        if inside:
            claims = self.claims(table=table, leaving=values)
            for _, f in inside:
                self._plan_tree(f, claims, removal)
        removal.within = folder
        removal.partitions_of = table
        return removal

    def _plan_tree(self, folder: str, claims: Claims, removal: Removal) -> None:
        user = claims.overlapping(folder_key(folder))
        if user is None:
            removal.trees.append(folder)
        else:
            removal.kept.append((folder, f"{user} uses it"))

    def remove(self, removal: Removal, keep: str | None = None, hidden: Iterable[Hidden] = ()) -> None:
        """Deletes what a plan said (and the folders ``hide`` renamed); called after the catalog commit, so
        no reader sees half a table. ``keep``: a folder inside them that stays (a REPLACE TABLE's staged
        rows). An object store's marks go once their folders are gone."""
        hidden = list(hidden)
        for h in hidden:
            if not h.marked:
                h.fs.delete_dir(h.at)
        for folder in removal.trees:
            if keep is None:
                delete_tree(folder)
            else:
                delete_tree_except(folder, keep)
        for h in hidden:
            if h.marked:
                _unmark(h.fs, h.folder)
        if removal.within is not None:
            stop = folder_key(removal.within)
            for folder in removal.trees:
                parent = folder.rstrip("/").rsplit("/", 1)[0]
                while _inside(folder_key(parent), stop) and folder_key(parent) != stop:
                    fs, path = filesystem(parent)
                    infos = fs.get_file_info(pafs.FileSelector(path, allow_not_found=True))
                    if infos or fs.get_file_info(path).type != pafs.FileType.Directory:
                        break
                    fs.delete_dir(path)
                    parent = parent.rsplit("/", 1)[0]

    def hide(self, removal: Removal) -> list[Hidden]:
        """Before a drop's catalog commit: each folder it deletes is renamed to a hidden folder beside it
        (``.gluecat-dropping-<uuid>``), where no read, MSCK REPAIR or later write of a partition or table
        in its place finds its files, should the process die before deleting them. An object store renames
        no folder: there each is marked instead (``.gluecat-dropped-<name>`` beside it), and whatever next
        registers, makes or repairs something in its place deletes it first (``finish_drops``)."""
        hidden = []
        marks = []
        for folder in removal.trees:
            fs, path = filesystem(folder)
            if not _renames_folders(fs):
                marks.append((fs, path.rstrip("/")))
                continue
            if fs.get_file_info(path).type != pafs.FileType.Directory:
                continue
            path = path.rstrip("/")
            at = f"{posixpath.dirname(path)}/{DROPPING_PREFIX}{uuid.uuid4()}"
            fs.move(path, at)
            hidden.append(Hidden(fs, path, at))
        if marks:
            made: list[Hidden] = []
            _each(marks[0][0], lambda m: made.append(_mark(m[0], m[1], removal.partitions_of)), marks)
            hidden += made
        return hidden

    def hide_except(self, removal: Removal, keep: str) -> list[Hidden]:
        """``hide`` for REPLACE TABLE, whose old folder holds the new rows' staging folder ``keep``: there
        everything else is hidden inside the folder, in a ``.gluecat-dropping-<uuid>`` of its own (on an
        object store, the folder is marked)."""
        hidden = []
        keep_key = folder_key(keep)
        for folder in removal.trees:
            fs, path = filesystem(folder)
            if not _inside(keep_key, folder_key(folder)) or not _renames_folders(fs):
                hidden += self.hide(Removal(trees=[folder], partitions_of=removal.partitions_of))
                continue
            path = path.rstrip("/")
            at = f"{path}/{DROPPING_PREFIX}{uuid.uuid4()}"
            entries = fs.get_file_info(pafs.FileSelector(path, allow_not_found=True))
            fs.create_dir(at)
            for info in entries:
                if not info.base_name.startswith((STAGING_PREFIX, DROPPING_PREFIX)):
                    fs.move(info.path, f"{at}/{info.base_name}")
            hidden.append(Hidden(fs, path, at, within=True))
        return hidden

    @staticmethod
    def unhide(hidden: list[Hidden]) -> None:
        """The drop's catalog commit failed: its folders go back (an object store's marks go)."""
        for h in reversed(hidden):
            if h.marked:
                _unmark(h.fs, h.folder)
                continue
            if not h.within:
                h.fs.move(h.at, h.folder)
                continue
            for info in h.fs.get_file_info(pafs.FileSelector(h.at)):
                h.fs.move(info.path, f"{h.folder}/{info.base_name}")
            h.fs.delete_dir(h.at)

    def finish_drops(self, folders: Iterable[str]) -> list[str]:
        """Of ``folders`` (locations), those an object store's drop marked and did not delete (its process
        killed after its catalog commit): each is deleted now (but the write jobs' staging folders in it),
        unless a table or partition uses it (the commit never happened: then only the mark goes). Answers
        the folders deleted. Nothing is marked where folders rename: no request is made there."""
        found = _marked(folders)
        deleted = []
        claims: dict[str, Claims] = {}
        for location, fs, path, note in found:
            owner = note.get("partitions_of")
            key = json.dumps(owner)
            if key not in claims:
                table = self._table_or_none(owner) if owner else None
                claims[key] = self.claims(table=table)
            if claims[key].overlapping(folder_key(location)) is None:
                _delete_but_staging(fs, path)
                deleted.append(location)
            _unmark(fs, path)
        return deleted

    def _table_or_none(self, owner: list[str]) -> dict[str, Any] | None:
        try:
            table: dict[str, Any] = self.catalog.get_table(DatabaseName=owner[0], Name=owner[1])["Table"]
        except EntityNotFoundException:
            return None
        return table

    def remove_empty_database_folder(self, database: str, folder: str) -> None:
        """Hive removes a dropped database's folder; gluecat does when nothing is left in it."""
        default = self._default_database_folder(check_db_or_table_name(database, "Name"))
        if folder_key(folder) == folder_key(default):
            fs, path = filesystem(folder)
            if fs.get_file_info(path).type == pafs.FileType.Directory and not has_files(folder):
                fs.delete_dir(path)

    # -- truncating ----------------------------------------------------------------------------

    def truncate(self, table: dict[str, Any], values: list[list[str]] | None) -> None:
        """TRUNCATE TABLE [PARTITION]: the files of the folders go, the partitions stay (as in Hive)."""
        if is_external(table):
            raise SparkRefusal(
                "CANNOT_TRUNCATE_EXTERNAL_TABLE",
                {"tableName": quoted(table["DatabaseName"], table["Name"])},
                f"Table {table['DatabaseName']}.{table['Name']} is external: TRUNCATE TABLE would delete "
                "data the catalog does not own",
            )
        if not table.get("PartitionKeys"):
            folders = [table_location(table)]
            claims = self.claims(table=table)
        else:
            found = self.partition_folders(table, values)
            if values is not None:
                missing = {tuple(v) for v in values} - {tuple(v) for v, _ in found}
                if missing:
                    raise _no_partition(table, list(next(iter(missing))))
            folders = [f for _, f in found]
            claims = self.claims(table=table, leaving=[v for v, _ in found])
        self._check_files_deletable(table, folders, claims, "TRUNCATE TABLE")
        for folder in folders:
            _delete_files(folder)

    def _check_files_deletable(
        self, table: dict[str, Any], folders: list[str], claims: Claims, statement: str
    ) -> None:
        for folder in folders:
            user = claims.using(folder_key(folder))
            if user is not None:
                why = f"among {user}" if user in claims.trees.values() else f"which {user} also reads"
                raise InvalidInputException(
                    f"{statement} on {table['DatabaseName']}.{table['Name']} would delete the files in "
                    f"{folder}, {why}; refused"
                )

    # -- renaming ------------------------------------------------------------------------------

    def plan_rename(self, table: dict[str, Any], database: str, name: str) -> tuple[str, str] | None:
        """For ALTER TABLE RENAME: (old folder, new folder) when a managed table at its default folder moves
        to the new name's default folder (as Hive moves it); None when the data stays where it is."""
        folder = self.managed_folder(table)
        if folder is None:
            return None
        try:
            old_default = self.default_location(table["DatabaseName"], table["Name"])
        except InvalidInputException:
            return None  # a name with no default folder (made through another client): not at it
        if folder_key(folder) != folder_key(old_default):
            return None
        if self.claims(skip_tables=[(table["DatabaseName"], table["Name"])]).overlapping(folder_key(folder)):
            return None  # another table reads it: the data stays, and the old name's folder stays taken
        new = self.default_location(database, name)
        fs, path = filesystem(new)
        taken = fs.get_file_info(path).type != pafs.FileType.NotFound
        if taken and self.finish_drops([new]):
            taken = fs.get_file_info(path).type != pafs.FileType.NotFound
        if taken:
            raise SparkRefusal(
                "LOCATION_ALREADY_EXISTS",
                {"identifier": quoted(database, name), "location": f"'{new}'"},
                f"Cannot rename {table['DatabaseName']}.{table['Name']} to {database}.{name}: its new "
                f"folder {new} already exists",
            )
        return folder, new

    @staticmethod
    def moved(location: str, old: str, new: str) -> str:
        """``location`` with the folder ``old`` it lies in replaced by ``new``; unchanged if outside it."""
        return locations.moved(location, old, new)

    def plan_rename_partition(
        self, table: dict[str, Any], values: list[str], new_values: list[str], location: str
    ) -> tuple[str, str] | None:
        """For PARTITION RENAME TO: (old folder, new folder) when a managed table's partition is at its
        Hive path, which then moves to the new values' Hive path; else None."""
        root = self.managed_folder(table)
        if root is None:
            return None
        name = partition_namer([k["Name"] for k in table["PartitionKeys"]])
        if folder_key(location) != folder_key(f"{root}/{name(values)}"):
            return None
        new = f"{root}/{name(new_values)}"
        if has_files(new) and not self.finish_drops([new]):
            raise InvalidInputException(
                f"Cannot rename partition {values} of {table['DatabaseName']}.{table['Name']} to "
                f"{new_values}: its new folder {new} already holds files"
            )
        return location, new

    # -- writing -------------------------------------------------------------------------------

    def begin_write(self, table: dict[str, Any]) -> str:
        """A staging folder private to one write job, inside the table's folder (hidden from readers)."""
        return f"{table_location(table)}/{STAGING_PREFIX}{uuid.uuid4()}"

    def abort_write(self, staging: str) -> None:
        """A failed job: its staging folder and everything in it go."""
        if STAGING_PREFIX not in staging.rsplit("/", 1)[-1]:
            raise InvalidInputException(f"{staging} is not a gluecat staging folder")
        delete_tree(staging)

    def commit_write(
        self,
        table: dict[str, Any],
        staging: str,
        mode: str,
        written: list[dict[str, Any]],
        overwrite: list[list[str]],
    ) -> None:
        """Moves a finished job's files into the partitions that exist, setting aside the files an
        overwrite replaces; registers new partitions (and drops the ones an overwrite emptied) in one
        catalog commit; then moves the new partitions' files in and deletes the replaced ones.

        ``written``: each partition the job wrote, as its folder under the staging folder (``fragment``)
        and its values. ``mode``: APPEND, OVERWRITE_BY_FILTER (``overwrite``: the values of the partitions
        Spark's filters match, as the shim evaluated them), OVERWRITE_DYNAMIC or TRUNCATE.

        Partition by partition, the replaced files go into the staging folder's hidden ``.replaced``
        before the new ones come in, so a driver killed meanwhile never leaves a partition reading old
        and new rows together (as Spark's own dynamic overwrite replaces one folder at a time), and the
        replaced files are still there to be moved back (on an object store, every replaced file goes
        aside before any new one comes in). A new partition's files come in only once it is
        registered: a killed driver leaves a registered partition without its rows (they stay in the
        hidden staging folder), never files in an unregistered folder, which MSCK REPAIR would take for
        rows and a later write would be refused. A failure before the catalog commit puts every file back.
        The folders of the partitions an overwrite dropped go once empty, as DROP PARTITION's do.
        """
        keep_staging = False
        try:
            plan = self._plan_write(table, mode, [w["values"] for w in written], overwrite)
            self._check_new_partition_folders(table, plan.add)
            claims = None
            if plan.overwritten:
                claims = self.claims(table=table, leaving=plan.overwritten_values)
                self._check_files_deletable(table, plan.overwritten, claims, "INSERT OVERWRITE")
            moves = _Moves(staging, plan.overwritten)
            new = {tuple(p["Values"]) for p in plan.add}
            # New partitions' files: placed once registered, so none is ever found unregistered.
            later: list[tuple[str, str]] = []
            try:
                now: list[tuple[str, str]] = []
                for w, target in zip(written, plan.targets, strict=True):
                    source = f"{staging}/{w['fragment']}" if w["fragment"] else staging
                    (later if tuple(w["values"]) in new else now).append((source, target))
                moves.replace(now)
                if plan.add or plan.drop:
                    self._commit_partitions(table, plan)
            except InternalServiceException as e:
                # The commit's outcome may be unknown: the files go where the commit would have them.
                problem = self._place_after_commit(moves, later)
                keep_staging = problem is not None
                if problem is not None:
                    raise InternalServiceException(f"{e.message}; {problem}") from e
                raise
            except BaseException as e:
                problem = moves.undo()
                keep_staging = problem is not None
                if problem is not None:
                    raise InternalServiceException(f"{type(e).__name__}: {e}; {problem}") from e
                raise
            problem = self._place_after_commit(moves, later)
            if problem is not None:
                keep_staging = True
                raise InternalServiceException(problem)
            if claims is not None and plan.dropped:
                self._remove_emptied(table, plan.dropped, claims)
        finally:
            if not keep_staging:
                delete_tree(staging)

    def _commit_partitions(self, table: dict[str, Any], plan: _WritePlan) -> None:
        self.catalog.commit_partitions(
            DatabaseName=table["DatabaseName"],
            TableName=table["Name"],
            Add=plan.add,
            Drop=plan.drop,
            IfNotExists=True,
            IfExists=True,
        )

    def _remove_emptied(self, table: dict[str, Any], folders: list[str], claims: Claims) -> None:
        """The folders of the partitions an overwrite dropped, if nothing is left in them (an empty folder at
        a partition's Hive path is a partition to MSCK REPAIR TABLE; on an object store, moving the files
        out leaves the folder's marker). Best effort: the write is committed."""
        managed = self.managed_folder(table)
        if managed is None:
            return
        root = folder_key(managed)
        with contextlib.suppress(OSError):
            empty = [
                f
                for f in folders
                if _inside(folder_key(f), root)
                and folder_key(f) != root
                and claims.overlapping(folder_key(f)) is None
                and not has_files(f)
            ]
            self.remove(Removal(trees=empty, within=managed))

    @staticmethod
    def _place_after_commit(moves: _Moves, later: list[tuple[str, str]]) -> str | None:
        """The new partitions' files into their folders, after their catalog commit; what went wrong and
        where the files not moved are (the staging folder, which must then stay), or None."""
        try:
            moves.place_all(later)
        except Exception as e:
            return (
                f"the write's new partitions were registered, but moving their files in failed ({e}); the "
                f"files not in place are in {moves.staging}"
            )
        return None

    def _check_new_partition_folders(self, table: dict[str, Any], add: list[dict[str, Any]]) -> None:
        """Refuses to register a new partition of a managed table at a folder of it that already holds data
        files. Only a partition dropped through another client leaves them there (Glue's DeletePartition
        keeps a partition's files; Spark's DROP PARTITION deletes a managed one's): registered again, the
        dropped rows would come back beside the new ones, as files left behind never come back as rows of
        a new managed table (LOCATION_ALREADY_EXISTS)."""
        managed = self.managed_folder(table)
        if managed is None:
            return
        inside = folder_key(managed)
        for partition in add:
            folder = partition["StorageDescriptor"]["Location"]
            if _inside(folder_key(folder), inside) and data_files(folder) and not self.finish_drops([folder]):
                raise InvalidInputException(
                    f"Partition {partition['Values']} of {table['DatabaseName']}.{table['Name']} is new, but its "
                    f"folder {folder} holds data files that no registered partition reads (left by a partition "
                    "dropped through another client, whose files Glue keeps): registered now, their rows would "
                    "come back. Delete them, or register them first (ALTER TABLE ADD PARTITION, MSCK REPAIR "
                    "TABLE)"
                )

    def _plan_write(
        self, table: dict[str, Any], mode: str, written: list[list[str]], replaced: list[list[str]]
    ) -> _WritePlan:
        base = table_location(table)
        keys = [k["Name"] for k in table.get("PartitionKeys") or []]
        if not keys:
            overwrite = mode != "APPEND"
            return _WritePlan(targets=[base], overwritten=[base] if overwrite else [])
        existing = {tuple(v): f for v, f in self.partition_folders(table, written)}
        name = partition_namer(keys)
        targets = [existing.get(tuple(v)) or f"{base}/{name(v)}" for v in written]
        sd = dict(table.get("StorageDescriptor") or {})
        add = [
            {"Values": v, "StorageDescriptor": {**sd, "Location": t}}
            for v, t in zip(written, targets, strict=True)
            if tuple(v) not in existing
        ]
        plan = _WritePlan(targets=targets, add=add)
        if mode == "OVERWRITE_DYNAMIC":
            plan.overwritten = list(existing.values())
            plan.overwritten_values = [list(v) for v in existing]
        elif mode in ("OVERWRITE_BY_FILTER", "TRUNCATE"):
            # Exactly the partitions the filters match (a selection by the catalog's own evaluation of
            # Spark's filters may hold more, which is only right for a read): all of them for TRUNCATE.
            found = self.partition_folders(table, replaced if mode == "OVERWRITE_BY_FILTER" else None)
            matched = [v for v, _ in found]
            locations = [loc for _, loc in found]
            written_keys = {tuple(v) for v in written}
            plan.overwritten = sorted(set(locations) | set(existing.values()))
            plan.overwritten_values = matched + [list(v) for v in existing]
            plan.drop = [v for v in matched if tuple(v) not in written_keys]
            plan.dropped = [loc for v, loc in found if tuple(v) not in written_keys]
        return plan


class FolderMove:
    """A folder's files moving to another folder, across the catalog commit that names the new one.

    Where folders rename in one step, ``switch`` renames it (``undo`` renames it back). An object store has
    no rename (each object is copied, then deleted), so there ``prepare`` copies every object before the
    commit and ``finish`` deletes the old ones after it (``undo``: the copies go): a process killed at any
    moment leaves every file in the folder the catalog names, never some in each. Both folders are marked
    meanwhile, as a drop marks what it deletes, so that the one the catalog does not name is deleted by
    whatever next makes something in its place (``DataFiles.finish_drops``). ``partitions_of``: the table
    whose partition folder this is.
    """

    def __init__(self, old: str, new: str, partitions_of: dict[str, Any] | None = None) -> None:
        self.old, self.new = old, new
        self.partitions_of = partitions_of
        self.fs, self._src = filesystem(old)
        _, self._dst = filesystem(new)
        self._src, self._dst = self._src.rstrip("/"), self._dst.rstrip("/")
        self.renames = _renames_folders(self.fs)
        self._switched = False

    def prepare(self) -> None:
        """Before the commit: on an object store, every object copied to the new folder."""
        if self.renames:
            return
        _mark(self.fs, self._dst, self.partitions_of)
        infos = _listing(self.fs, self._src, recursive=True)
        files = [info.path for info in infos if info.type == pafs.FileType.File]
        holding = {posixpath.dirname(f) for f in files}
        holding |= {a for f in files for a in _ancestors(posixpath.dirname(f))}
        empty = [i.path for i in infos if i.type == pafs.FileType.Directory and i.path not in holding]
        _each(self.fs, lambda path: self.fs.copy_file(path, self._to(path)), files)
        _each(self.fs, lambda path: self.fs.create_dir(self._to(path)), empty)  # kept, as a rename keeps them
        _mark(self.fs, self._src, self.partitions_of)

    def _to(self, path: str) -> str:
        return self._dst + path[len(self._src) :]

    def switch(self) -> None:
        """Where folders rename: the rename."""
        if not self.renames or self.fs.get_file_info(self._src).type == pafs.FileType.NotFound:
            return
        self.fs.create_dir(posixpath.dirname(self._dst), recursive=True)
        self.fs.move(self._src, self._dst)
        self._switched = True

    def finish(self) -> None:
        """After the commit: on an object store, the old objects deleted."""
        if not self.renames:
            delete_tree(self.old)
            _unmark(self.fs, self._src)
            _unmark(self.fs, self._dst)

    def undo(self) -> None:
        """The commit failed: the folder as it was."""
        if self.renames:
            if self._switched:
                self.fs.move(self._dst, self._src)
                self._switched = False
        else:
            delete_tree(self.new)
            _unmark(self.fs, self._dst)
            _unmark(self.fs, self._src)

    def stranded(self, error: BaseException) -> str:
        """What ``undo`` failing with ``error`` left, and what to do about it."""
        if self.renames:
            return (
                f"the folder could not be moved back from {self.new} to {self.old} ({error}): its data files "
                f"are in {self.new}; move them back by hand"
            )
        return (
            f"the copy of the folder's files in {self.new} could not be deleted ({error}): the files are whole "
            f"in {self.old}, where the catalog reads them; delete {self.new} by hand"
        )


class _Moves:
    """A write's file moves, undone in reverse if the write fails before its catalog commit.

    Where a folder holds no folder (a partition's, usually), it moves as one: its old files go aside by one
    rename, and the job's folder of new files takes its place by another (as Spark's own dynamic overwrite
    deletes a partition's folder and renames the new one in), so a process killed meanwhile leaves each such
    partition with all its old rows, none, or all its new ones. Elsewhere (a table's own folder, which holds
    the staging folder) the files move one by one: old ones all aside first, then the new ones in.

    An object store moves no folder, and moves each file by a copy and a delete: there every old file of
    the write goes aside first, then every new one comes in, each batch on several threads."""

    def __init__(self, staging: str, overwritten: list[str]) -> None:
        self.staging = staging
        self.fs, staging_path = filesystem(staging)
        self.aside_folder = f"{staging_path.rstrip('/')}/{_REPLACED}"
        self.replaced: dict[str, list[str]] = {}
        """The files each overwritten folder holds that are not set aside yet, by the folder's path: two
        partitions can name one folder in two spellings (``file:`` or not, a trailing slash), and its
        old files are set aside once, before new ones come in."""
        for folder in overwritten:
            self.replaced.setdefault(self._path(folder), data_files(folder))
        self.done: list[tuple[str, str]] = []
        """Every move made, (from, to), in order."""
        self._asides = 0
        self._lock = threading.Lock()

    def _move(self, source: str, to: str) -> None:
        self.fs.move(source, to)
        with self._lock:
            self.done.append((source, to))

    def _move_all(self, pairs: list[tuple[str, str]]) -> None:
        _each(self.fs, lambda pair: self._move(*pair), pairs)

    def _flat(self, path: str) -> bool:
        """Whether ``path`` can move as one: a folder holding no folder, where renaming one is one step."""
        if not _renames_folders(self.fs):
            return False
        infos = self.fs.get_file_info(pafs.FileSelector(path, allow_not_found=True))
        return all(info.type == pafs.FileType.File for info in infos)

    @staticmethod
    def _path(folder: str) -> str:
        return filesystem(folder)[1].rstrip("/")

    def replace(self, pairs: list[tuple[str, str]]) -> None:
        """The job's files of each (``source`` in the staging folder, ``target`` folder) pair into the target,
        its old files set aside first; then the old files of every other overwritten folder set aside."""
        if _renames_folders(self.fs):
            for source, target in pairs:
                self._set_aside(self._path(target))
                self.place(source, target)
        else:
            self._move_all([m for path in list(self.replaced) for m in self._aside_moves(path)])
            self.place_all(pairs)
        for path in list(self.replaced):
            self._set_aside(path)

    def _aside_moves(self, path: str) -> list[tuple[str, str]]:
        """The moves that set aside the old files of the folder at ``path`` (a key of ``replaced``)."""
        files = self.replaced.pop(path, [])
        to = f"{self.aside_folder}/{self._asides}"
        self._asides += 1
        return [(file, f"{to}/{posixpath.basename(file)}") for file in files]

    def _set_aside(self, path: str) -> None:
        """An overwritten folder's files go to the staging folder (hidden from readers) until the commit."""
        files = self.replaced.get(path, [])
        if not files:
            self.replaced.pop(path, None)
            return
        # As one only while it holds just the files listed: never new rows placed in it meanwhile.
        if self._flat(path) and sorted(i.path for i in _data_file_infos(self.fs, path)) == sorted(files):
            self.replaced.pop(path)
            to = f"{self.aside_folder}/{self._asides}"
            self._asides += 1
            self.fs.create_dir(self.aside_folder, recursive=True)
            self._move(path, to)
            return
        moves = self._aside_moves(path)
        self._mkdir(posixpath.dirname(moves[0][1]))
        self._move_all(moves)

    def _mkdir(self, path: str) -> None:
        """A folder made where folders are things of their own (an object store has keys, not folders)."""
        if _renames_folders(self.fs):
            self.fs.create_dir(path, recursive=True)

    def _place_moves(self, source: str, target: str) -> list[tuple[str, str]]:
        _, to = filesystem(target)
        self._mkdir(to.rstrip("/"))
        return [(path, f"{to.rstrip('/')}/{posixpath.basename(path)}") for path in data_files(source)]

    def place_all(self, pairs: list[tuple[str, str]]) -> None:
        """``place`` of each (source, target): on an object store, every file in one batch."""
        if _renames_folders(self.fs):
            for source, target in pairs:
                self.place(source, target)
        else:
            self._move_all([m for source, target in pairs for m in self._place_moves(source, target)])

    def place(self, source: str, target: str) -> None:
        """The job's files of one partition (``source``, in the staging folder) into its folder."""
        _, to = filesystem(target)
        _, source_path = filesystem(source)
        to = to.rstrip("/")
        if self._flat(source_path) and self.fs.get_file_info(to).type == pafs.FileType.NotFound:
            self.fs.create_dir(posixpath.dirname(to), recursive=True)
            self._move(source_path.rstrip("/"), to)
            return
        self._move_all(self._place_moves(source, target))

    def undo(self) -> str | None:
        """Puts every file back; when that fails, what went wrong and where the replaced files are (the
        staging folder, which must then stay)."""
        try:
            if _renames_folders(self.fs):
                for source, to in reversed(self.done):
                    self.fs.move(to, source)
            else:  # the new files out first, then the old ones back in
                aside = [m for m in self.done if m[1].startswith(self.aside_folder + "/")]
                placed = [m for m in self.done if not m[1].startswith(self.aside_folder + "/")]
                for batch in (placed, aside):
                    _each(self.fs, lambda pair: self.fs.move(pair[1], pair[0]), batch)
        except Exception as e:
            return (
                f"putting the files back failed too ({e}); replaced files not back in their folders are in "
                f"{self.aside_folder}"
            )
        return None


@dataclass
class _WritePlan:
    targets: list[str]
    overwritten: list[str] = field(default_factory=list)
    overwritten_values: list[list[str]] = field(default_factory=list)
    add: list[dict[str, Any]] = field(default_factory=list)
    drop: list[list[str]] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)
    """The folders of the partitions in ``drop``."""


def table_location(table: dict[str, Any]) -> str:
    """A table's StorageDescriptor.Location without a trailing slash; InvalidInputException if none."""
    location = (table.get("StorageDescriptor") or {}).get("Location")
    if not location:
        raise InvalidInputException(
            f"Table {table['DatabaseName']}.{table['Name']} has no StorageDescriptor.Location to read or write"
        )
    return str(location).rstrip("/")


def _no_partition(table: dict[str, Any], values: list[str]) -> Exception:
    return EntityNotFoundException(f"Partition {values} not found in {table['Name']}")
