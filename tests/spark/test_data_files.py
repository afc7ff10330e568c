"""The data-file life cycle's rules, once, without Spark: which folders a drop, truncate, rename or write may
touch. Tables are made through the Python API, files on disk by hand."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from gluecat import Catalog
from gluecat.data.files import DataFiles, folder_key, is_external
from gluecat.data.refusals import SparkRefusal
from gluecat.errors import EntityNotFoundException, InvalidInputException

PARQUET = {
    "SerdeInfo": {"SerializationLibrary": "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe"}
}


@pytest.fixture
def warehouse(tmp_path: Path) -> str:
    """Its own warehouse (not the Spark session's): nothing here runs Spark."""
    return str(tmp_path / "warehouse")


@pytest.fixture
def cat(warehouse: str) -> Catalog:
    c = Catalog(warehouse)
    c.create_database(DatabaseInput={"Name": "db"})
    return c


def make(
    cat: Catalog, name: str, location: str, *, managed: bool = True, keys: list[str] | None = None
) -> dict[str, Any]:
    cat.create_table(
        DatabaseName="db",
        TableInput={
            "Name": name,
            "TableType": "MANAGED_TABLE" if managed else "EXTERNAL_TABLE",
            "StorageDescriptor": {**PARQUET, "Columns": [{"Name": "v", "Type": "int"}], "Location": location},
            "PartitionKeys": [{"Name": k, "Type": "string"} for k in keys or []],
        },
    )
    return table(cat, name)


def table(cat: Catalog, name: str) -> dict[str, Any]:
    got: dict[str, Any] = cat.get_table(DatabaseName="db", Name=name)["Table"]
    return got


def put(folder: Path, name: str = "part-0.parquet") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text("rows")
    return folder / name


def add_partition(cat: Catalog, name: str, value: str, location: str) -> None:
    sd = {**PARQUET, "Location": location}
    cat.create_partition(
        DatabaseName="db", TableName=name, PartitionInput={"Values": [value], "StorageDescriptor": sd}
    )


def test_managed_means_a_managed_table_inside_its_database_folder(cat: Catalog, warehouse: str) -> None:
    files = DataFiles(cat)
    home = files.default_location("db", "t")
    assert home == f"{warehouse}/db.db/t"
    assert files.managed_folder(make(cat, "t", home)) == home
    assert files.managed_folder(make(cat, "ext", f"{warehouse}/db.db/ext", managed=False)) is None
    # Moved elsewhere (SET LOCATION), or the database folder itself: not the catalog's to delete.
    assert files.managed_folder(make(cat, "moved", "/somewhere/else")) is None
    assert files.managed_folder(make(cat, "whole", f"{warehouse}/db.db")) is None
    cat.update_table(
        DatabaseName="db",
        TableInput={
            **{k: table(cat, "t")[k] for k in ("Name", "StorageDescriptor", "TableType")},
            "Parameters": {"EXTERNAL": "TRUE"},
        },
    )
    assert is_external(table(cat, "t"))  # Hive's EXTERNAL=TRUE wins over the TableType


def test_folder_keys_compare_uris_and_paths() -> None:
    assert folder_key("file:/tmp/a/") == folder_key("file:///tmp/a") == folder_key("/tmp/a/b/..") == "/tmp/a"
    assert folder_key("s3a://bucket/x/") == folder_key("s3://bucket/x") == "s3://bucket/x"


def test_drop_table_deletes_the_managed_folder_unless_another_table_uses_it(
    cat: Catalog, warehouse: str
) -> None:
    files = DataFiles(cat)
    t = make(cat, "t", f"{warehouse}/db.db/t")
    put(Path(f"{warehouse}/db.db/t"))
    assert files.plan_drop_table(t).trees == [f"{warehouse}/db.db/t"]
    # An external table reading a folder inside t's keeps all of t's folder in place.
    make(cat, "inner", f"{warehouse}/db.db/t/sub", managed=False)
    plan = files.plan_drop_table(t)
    assert plan.trees == [] and "db.inner" in plan.kept[0][1]
    # So does a partition of another table registered inside it.
    cat.delete_table(DatabaseName="db", Name="inner")
    make(cat, "parted", "/elsewhere/parted", managed=False, keys=["p"])
    add_partition(cat, "parted", "a", f"file:{warehouse}/db.db/t/borrowed")
    assert "partition ['a'] of db.parted" in files.plan_drop_table(t).kept[0][1]
    assert files.plan_drop_table(make(cat, "ext", "/data/ext", managed=False)).trees == []


def test_nothing_holding_the_catalog_files_is_ever_deleted(cat: Catalog, warehouse: str) -> None:
    cat.create_database(DatabaseInput={"Name": "odd", "LocationUri": str(Path(warehouse).parent)})
    cat.create_table(
        DatabaseName="odd",
        TableInput={"Name": "t", "TableType": "MANAGED_TABLE", "StorageDescriptor": {"Location": warehouse}},
    )
    plan = DataFiles(cat).plan_drop_table(cat.get_table(DatabaseName="odd", Name="t")["Table"])
    assert plan.trees == [] and plan.kept[0][1] == "the catalog's own files uses it"


def test_drop_partitions_deletes_folders_inside_a_managed_table_only(cat: Catalog, warehouse: str) -> None:
    files = DataFiles(cat)
    home = f"{warehouse}/db.db/t"
    t = make(cat, "t", home, keys=["p"])
    add_partition(cat, "t", "a", f"{home}/p=a")
    add_partition(cat, "t", "b", "/outside/b")  # ADD PARTITION ... LOCATION elsewhere: not the table's
    add_partition(cat, "t", "c", f"{home}/shared")
    add_partition(cat, "t", "d", f"{home}/shared")
    assert files.plan_drop_partitions(t, [["a"], ["b"]]).trees == [f"{home}/p=a"]
    plan = files.plan_drop_partitions(t, [["c"]])  # partition d stays, in the same folder
    assert plan.trees == [] and "partition ['d'] of db.t" in plan.kept[0][1]
    assert files.plan_drop_partitions(t, [["c"], ["d"]]).trees == [f"{home}/shared", f"{home}/shared"]
    ext = make(cat, "ext", "/data/ext", managed=False, keys=["p"])
    add_partition(cat, "ext", "a", "/data/ext/p=a")
    assert files.plan_drop_partitions(ext, [["a"]]).trees == []


def test_a_folder_whose_name_ends_in_a_space_is_its_own(cat: Catalog, warehouse: str) -> None:
    # "t " and "t" are two folders; compared as one, DROP PARTITION kept a managed partition's files
    # (its folder seemed outside "t "'s, so not the table's: a write then registered them again).
    files = DataFiles(cat)
    home = f"{warehouse}/db.db/t "
    spaced = make(cat, "t ", home, keys=["p"])
    add_partition(cat, "t ", "a", f"{home}/p=a")
    put(Path(f"{home}/p=a"))
    assert files.plan_drop_partitions(spaced, [["a"]]).trees == [f"{home}/p=a"]
    make(cat, "t", f"{warehouse}/db.db/t")
    put(Path(f"{warehouse}/db.db/t"))
    assert files.plan_drop_table(spaced).trees == [home]  # t's folder is not "t "'s
    assert folder_key(home) != folder_key(f"{warehouse}/db.db/t")


def test_a_partition_whose_hive_path_no_folder_can_have_is_dropped_and_truncated(
    cat: Catalog, warehouse: str
) -> None:
    # Registered through Glue without a location, its folder is <table>/p=<300 x's>: a name longer
    # than a folder's may be (ENAMETOOLONG), so no file is there. DROP PARTITION committed, then failed
    # looking for the folder (InternalServiceException for a drop that was done).
    files = DataFiles(cat)
    home = f"{warehouse}/db.db/t"
    t = make(cat, "t", home, keys=["p"])
    put(Path(home) / "p=a")  # the table's folder is there (a missing one stops the lookup before)
    cat.create_partition(DatabaseName="db", TableName="t", PartitionInput={"Values": ["x" * 300]})
    files.truncate(t, [["x" * 300]])
    removal = files.plan_drop_partitions(t, [["x" * 300]])
    assert removal.trees == [f"{home}/p={'x' * 300}"]
    files.remove(removal)


def test_truncate_deletes_managed_files_and_refuses_external_and_shared_folders(
    cat: Catalog, warehouse: str
) -> None:
    files = DataFiles(cat)
    home = Path(f"{warehouse}/db.db/t")
    t = make(cat, "t", str(home))
    put(home)
    nested = put(home / "nested")  # another table's folder inside: not t's files
    make(cat, "nested", str(home / "nested"), managed=False)
    files.truncate(t, None)
    assert not (home / "part-0.parquet").exists() and nested.exists()

    ext = make(cat, "ext", str(home.parent / "ext"), managed=False)
    kept = put(home.parent / "ext")
    with pytest.raises(SparkRefusal, match="is external") as refused:
        files.truncate(ext, None)
    assert refused.value.error_class == "CANNOT_TRUNCATE_EXTERNAL_TABLE"
    assert kept.exists()

    twin = make(cat, "twin", str(home.parent / "twin"))
    make(cat, "reader", str(home.parent / "twin"), managed=False)
    shared = put(home.parent / "twin")
    with pytest.raises(InvalidInputException, match="db.reader also reads"):
        files.truncate(twin, None)
    assert shared.exists()


def test_rename_moves_a_managed_table_at_its_default_folder(cat: Catalog, warehouse: str) -> None:
    files = DataFiles(cat)
    t = make(cat, "t", f"{warehouse}/db.db/t")
    assert files.plan_rename(t, "db", "t2") == (f"{warehouse}/db.db/t", f"{warehouse}/db.db/t2")
    assert DataFiles.moved(f"file:{warehouse}/db.db/t/p=1", f"{warehouse}/db.db/t", "/new") == "/new/p=1"
    assert DataFiles.moved("/elsewhere/p=1", f"{warehouse}/db.db/t", "/new") == "/elsewhere/p=1"
    put(Path(f"{warehouse}/db.db/taken"))
    with pytest.raises(SparkRefusal, match="already exists") as refused:
        files.plan_rename(t, "db", "taken")
    assert refused.value.error_class == "LOCATION_ALREADY_EXISTS"
    assert files.plan_rename(make(cat, "custom", f"{warehouse}/db.db/custom-folder"), "db", "c2") is None
    assert files.plan_rename(make(cat, "ext", f"{warehouse}/db.db/ext", managed=False), "db", "e2") is None


def test_a_table_without_location_gets_one_folder_in_its_databases_named_as_the_catalog_names_it(
    cat: Catalog, warehouse: str
) -> None:
    files = DataFiles(cat)
    cat.create_database(DatabaseInput={"Name": "MixedDb"})
    assert files.default_location("MixedDb", "MixedCase") == f"{warehouse}/mixeddb.db/mixedcase"
    for name in ("a/b", ".", "..", "x/../../y"):
        with pytest.raises(InvalidInputException, match="cannot be the name of a folder"):
            files.default_location("db", name)
    # A database's folder is <name>.db: 254 bytes of name make a 257-byte folder name (ENAMETOOLONG).
    for database, why in (("é" * 127, "at most 255 bytes"), ("up/../../out", "holds '/'")):
        cat.create_database(DatabaseInput={"Name": database})
        with pytest.raises(InvalidInputException, match=why):
            files.default_location(database, "t")
    cat.create_database(DatabaseInput={"Name": "up/elsewhere", "LocationUri": f"{warehouse}/elsewhere"})
    assert files.default_location("up/elsewhere", "t") == f"{warehouse}/elsewhere/t"
    t = make(cat, "t", f"{warehouse}/db.db/t")
    with pytest.raises(InvalidInputException, match="cannot be the name of a folder"):
        files.plan_rename(t, "db", "../../out")
    # A table of such a name made through another client has no default folder to move from.
    odd = make(cat, "odd/name", f"{warehouse}/db.db/odd")
    assert files.plan_rename(odd, "db", "fine") is None


def test_a_managed_table_starts_in_an_empty_folder(cat: Catalog, warehouse: str) -> None:
    files = DataFiles(cat)
    files.check_new_managed_folder("db", "t", f"{warehouse}/db.db/t")  # missing: fine
    Path(f"{warehouse}/db.db/t/p=1").mkdir(parents=True)
    files.check_new_managed_folder("db", "t", f"{warehouse}/db.db/t")  # empty folders only: fine
    put(Path(f"{warehouse}/db.db/t/p=1"))
    with pytest.raises(SparkRefusal) as refused:
        files.check_new_managed_folder("db", "t", f"{warehouse}/db.db/t")
    assert refused.value.error_class == "LOCATION_ALREADY_EXISTS"


def test_a_killed_jobs_staging_folder_does_not_keep_a_new_table_out_of_its_folder(
    cat: Catalog, warehouse: str
) -> None:
    # A CTAS whose driver died while its query ran leaves only its staging folder, which no read sees.
    files = DataFiles(cat)
    put(Path(f"{warehouse}/db.db/t/.gluecat-staging-1234/p=1"))
    files.check_new_managed_folder("db", "t", f"{warehouse}/db.db/t")


def staged(files: DataFiles, t: dict[str, Any], fragments: dict[str, str]) -> str:
    staging = files.begin_write(t)
    for fragment, name in fragments.items():
        put(Path(staging) / fragment, name)
    return staging


def test_a_write_moves_its_files_into_place_and_an_overwrite_replaces_old_ones(
    cat: Catalog, warehouse: str
) -> None:
    files = DataFiles(cat)
    home = Path(f"{warehouse}/db.db/t")
    t = make(cat, "t", str(home), keys=["p"])
    first = staged(files, t, {"p=a": "part-1", "p=b": "part-2"})
    written = [{"fragment": "p=a", "values": ["a"]}, {"fragment": "p=b", "values": ["b"]}]
    files.commit_write(t, first, "APPEND", written, [])
    assert sorted(p.name for p in home.glob("p=*/*")) == ["part-1", "part-2"]
    assert not Path(first).exists()
    assert len(cat.get_partitions(DatabaseName="db", TableName="t")["Partitions"]) == 2

    second = staged(files, t, {"p=a": "part-3"})
    files.commit_write(t, second, "OVERWRITE_DYNAMIC", written[:1], [])
    assert sorted(p.name for p in home.glob("p=*/*")) == ["part-2", "part-3"]

    third = staged(files, t, {"p=c": "part-4"})
    files.commit_write(t, third, "TRUNCATE", [{"fragment": "p=c", "values": ["c"]}], [])
    assert sorted(p.name for p in home.glob("p=*/*")) == ["part-4"]
    values = [p["Values"] for p in cat.get_partitions(DatabaseName="db", TableName="t")["Partitions"]]
    assert values == [["c"]]


def test_an_overwrite_keeps_its_rows_when_two_partitions_name_one_folder_in_two_spellings(
    cat: Catalog, warehouse: str
) -> None:
    # Registered through the Glue API, b's Location is a's folder spelled as a URI: setting a's old files
    # aside, then b's, must not take the new rows placed in that folder meanwhile.
    files = DataFiles(cat)
    home = Path(f"{warehouse}/db.db/t")
    t = make(cat, "t", str(home), keys=["p"])
    put(home / "p=a", "old")
    for value, location in (("a", str(home / "p=a")), ("b", f"file://{home}/p=a/")):
        cat.create_partition(
            DatabaseName="db",
            TableName="t",
            PartitionInput={"Values": [value], "StorageDescriptor": {**PARQUET, "Location": location}},
        )
    job = staged(files, t, {"p=a": "new"})
    files.commit_write(t, job, "TRUNCATE", [{"fragment": "p=a", "values": ["a"]}], [])
    assert sorted(p.name for p in home.glob("p=a/*")) == ["new"]
    values = [p["Values"] for p in cat.get_partitions(DatabaseName="db", TableName="t")["Partitions"]]
    assert values == [["a"]]


def test_a_write_the_catalog_refuses_leaves_the_table_as_it_was(cat: Catalog, warehouse: str) -> None:
    # The partition index refuses a key value holding U+0001, so the write's one commit fails after
    # its files were moved into place: they stayed (rows of a failed job in partition a, files that
    # block a later write of the new partition), and an overwrite had deleted a's old rows already.
    files = DataFiles(cat)
    home = Path(f"{warehouse}/db.db/t")
    cat.create_table(
        DatabaseName="db",
        TableInput={
            "Name": "t",
            "TableType": "MANAGED_TABLE",
            "StorageDescriptor": {
                **PARQUET,
                "Columns": [{"Name": "v", "Type": "int"}],
                "Location": str(home),
            },
            "PartitionKeys": [{"Name": "p", "Type": "string"}],
        },
        PartitionIndexes=[{"IndexName": "by_p", "Keys": ["p"]}],
    )
    t = table(cat, "t")
    files.commit_write(
        t, staged(files, t, {"p=a": "part-old"}), "APPEND", [{"fragment": "p=a", "values": ["a"]}], []
    )
    written = [{"fragment": "p=a", "values": ["a"]}, {"fragment": "p=bad%01", "values": ["bad\x01"]}]
    for mode in ("APPEND", "OVERWRITE_DYNAMIC"):
        staging = staged(files, t, {"p=a": "part-new", "p=bad%01": "part-bad"})
        with pytest.raises(InvalidInputException, match="U\\+0001"):
            files.commit_write(t, staging, mode, written, [])
        assert sorted(str(p.relative_to(home)) for p in home.rglob("part-*")) == ["p=a/part-old"]
        assert not Path(staging).exists()
    assert [p["Values"] for p in cat.get_partitions(DatabaseName="db", TableName="t")["Partitions"]] == [
        ["a"]
    ]


def test_an_overwrite_of_a_folder_another_table_reads_is_refused_and_leaves_everything(
    cat: Catalog, warehouse: str
) -> None:
    files = DataFiles(cat)
    home = Path(f"{warehouse}/db.db/t")
    t = make(cat, "t", str(home))
    make(cat, "reader", str(home), managed=False)
    old = put(home)
    staging = staged(files, t, {"": "part-9"})
    with pytest.raises(InvalidInputException, match="db.reader also reads"):
        files.commit_write(t, staging, "TRUNCATE", [{"fragment": "", "values": []}], [])
    assert old.exists() and not (home / "part-9").exists() and not Path(staging).exists()


def test_abort_removes_only_staging_folders(cat: Catalog, warehouse: str) -> None:
    files = DataFiles(cat)
    t = make(cat, "t", f"{warehouse}/db.db/t")
    staging = staged(files, t, {"": "part-1"})
    files.abort_write(staging)
    assert not Path(staging).exists()
    with pytest.raises(InvalidInputException, match="not a gluecat staging folder"):
        files.abort_write(f"{warehouse}/db.db/t")


def test_no_spelling_of_another_tables_folder_makes_it_deletable(
    cat: Catalog, warehouse: str, tmp_path: Path
) -> None:
    """A managed table whose Location names another table's folder in another form (a doubled slash, a
    symbolic link) is that folder: it stays on DROP, and TRUNCATE of it is refused. A percent-escape in
    a file: URI is no other spelling: Spark (Hadoop) reads %6Frders as a folder of that name, and so
    does gluecat, so that it deletes nothing of orders either."""
    files = DataFiles(cat)
    home = Path(f"{warehouse}/db.db")
    victim = put(home / "orders")
    make(cat, "orders", str(home / "orders"), managed=False)
    (home / "link").mkdir(parents=True)
    (home / "link" / "to").symlink_to(home / "orders")
    cat.create_database(DatabaseInput={"Name": "slashes", "LocationUri": f"/{home}"})
    spellings = [
        ("db", f"file://{home}/%6Frders"),
        ("db", f"{home}/link/to"),
        ("slashes", f"/{home}/orders"),
    ]
    for i, (database, location) in enumerate(spellings):
        cat.create_table(
            DatabaseName=database,
            TableInput={
                "Name": f"alias{i}",
                "TableType": "MANAGED_TABLE",
                "StorageDescriptor": {**PARQUET, "Location": location},
            },
        )
        alias = cat.get_table(DatabaseName=database, Name=f"alias{i}")["Table"]
        plan = files.plan_drop_table(alias)
        files.remove(plan)
        assert victim.exists(), location
        if "%6F" in location:
            files.truncate(alias, None)  # its own folder, %6Frders
        else:
            with pytest.raises(InvalidInputException, match="db.orders also reads"):
                files.truncate(alias, None)
        assert victim.exists(), location
        cat.delete_table(DatabaseName=database, Name=f"alias{i}")


def test_truncate_or_overwrite_never_deletes_the_catalogs_own_files(cat: Catalog, warehouse: str) -> None:
    """A partition registered at a folder of the catalog's own files (ALTER TABLE ADD PARTITION ...
    LOCATION, or CreatePartition) cannot have them deleted by TRUNCATE or INSERT OVERWRITE."""
    files = DataFiles(cat)
    t = make(cat, "t", f"{warehouse}/db.db/t", keys=["p"])
    store = Path(warehouse) / "_gluecat"
    folders = sorted(
        {p.parent for p in store.rglob("*") if p.is_file() and not p.name.startswith((".", "_"))}
    )
    assert folders
    for i, folder in enumerate(folders):
        add_partition(cat, "t", f"x{i}", str(folder))
    before = sorted(p for p in store.rglob("*") if p.is_file())
    with pytest.raises(InvalidInputException, match="the catalog's own files"):
        files.truncate(t, [[f"x{i}"] for i in range(len(folders))])
    staging = staged(files, t, {"p=x0": "part-1"})
    with pytest.raises(InvalidInputException, match="the catalog's own files"):
        files.commit_write(t, staging, "OVERWRITE_DYNAMIC", [{"fragment": "p=x0", "values": ["x0"]}], [])
    assert all(p.exists() for p in before)
    assert len(cat.get_partitions(DatabaseName="db", TableName="t")["Partitions"]) == len(folders)


def test_an_overwrite_whose_catalog_commit_fails_puts_every_file_back(cat: Catalog, warehouse: str) -> None:
    files = DataFiles(cat)
    home = Path(f"{warehouse}/db.db/t")
    t = make(cat, "t", str(home), keys=["p"])
    for value in "ab":
        add_partition(cat, "t", value, str(home / f"p={value}"))
        put(home / f"p={value}", f"old-{value}")
    staging = staged(files, t, {"p=a": "new-a", "p=b": "new-b", "p=c": "new-c"})
    commit = cat.commit_partitions

    def dropped_meanwhile(**kwargs: Any) -> Any:
        Catalog(warehouse).delete_table(DatabaseName="db", Name="t")  # another client, while files moved
        return commit(**kwargs)

    cat.commit_partitions = dropped_meanwhile  # type: ignore[method-assign]
    written = [{"fragment": f"p={v}", "values": [v]} for v in "abc"]
    with pytest.raises(EntityNotFoundException):
        files.commit_write(t, staging, "OVERWRITE_DYNAMIC", written, [])
    assert sorted(str(p.relative_to(home)) for p in home.rglob("*") if p.is_file()) == [
        "p=a/old-a",
        "p=b/old-b",
    ]


# A write's commit in a process killed (os._exit) just before its move number KILL_AT, or at its catalog
# commit when it gets that far; the table and the job's staged files were made by the test.
_KILLED_COMMIT = """
import os, sys
import gluecat.data.files as data_files
from gluecat import Catalog

warehouse, staging, kill_at = sys.argv[1], sys.argv[2], int(sys.argv[3])
moves = 0
real_filesystem = data_files.filesystem


class Dying:
    def __init__(self, fs):
        self._fs = fs

    def __getattr__(self, name):
        return getattr(self._fs, name)

    def move(self, src, dst):
        global moves
        if moves == kill_at:
            os._exit(9)
        moves += 1
        self._fs.move(src, dst)


def filesystem(location):
    fs, path = real_filesystem(location)
    return Dying(fs), path


data_files.filesystem = filesystem
cat = Catalog(warehouse)
cat.commit_partitions = lambda **kwargs: os._exit(9)
table = cat.get_table(DatabaseName="db", Name="t")["Table"]
written = [{"fragment": f"p={v}", "values": [v]} for v in "abc"]
data_files.DataFiles(cat).commit_write(table, staging, "OVERWRITE_DYNAMIC", written, [])
"""


def test_a_write_killed_in_its_commit_leaves_no_partition_with_old_and_new_rows_nor_unregistered_rows(
    tmp_path: Path,
) -> None:
    old = {"a": {"old-1", "old-2"}, "b": {"old-3", "old-4"}}
    new = {"a": {"new-1", "new-2"}, "b": {"new-3"}, "c": {"new-4"}}
    moves = sum(map(len, old.values())) + sum(map(len, new.values()))
    for kill_at in range(moves + 1):
        warehouse = str(tmp_path / f"warehouse{kill_at}")
        cat = Catalog(warehouse)
        cat.create_database(DatabaseInput={"Name": "db"})
        home = Path(f"{warehouse}/db.db/t")
        t = make(cat, "t", str(home), keys=["p"])
        for value, names in old.items():
            add_partition(cat, "t", value, str(home / f"p={value}"))
            for name in names:
                put(home / f"p={value}", name)
        staging = DataFiles(cat).begin_write(t)
        for value, names in new.items():
            for name in names:
                put(Path(staging) / f"p={value}", name)
        child = subprocess.run(
            [sys.executable, "-c", _KILLED_COMMIT, warehouse, staging, str(kill_at)], capture_output=True
        )
        assert child.returncode == 9, child.stderr.decode()
        # c is new: its files come only after its catalog commit, where the process was killed at the latest
        assert not (home / "p=c").exists(), kill_at
        for value in "ab":
            there = {p.name for p in (home / f"p={value}").glob("*")}
            # all old rows, none (between the two renames of a partition's replacement), or all new ones
            assert there in (old[value], set(), new[value]), (kill_at, value, there)
        aside = {p.name for p in Path(staging).glob(".replaced/*/old-*")}
        in_place = {p.name for p in home.glob("p=*/old-*")}
        assert aside | in_place == set().union(*old.values()), (
            kill_at
        )  # no replaced file lost before the commit
