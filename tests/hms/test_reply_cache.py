"""Encoded replies are reused only while the warehouse is unchanged; a commit anywhere is seen at once."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from gluecat import Catalog
from gluecat.hms.gen.hive_metastore import ttypes
from gluecat.hms.server import HiveMetastoreServer
from tests.hms.conftest import client, make_lake


@pytest.fixture
def server(tmp_path: Path, users_file: Path) -> Iterator[tuple[Catalog, HiveMetastoreServer]]:
    lake = make_lake(str(tmp_path / "wh"))
    srv = HiveMetastoreServer(lake, users_file).start()
    yield lake, srv
    srv.stop()


@pytest.fixture
def connect() -> Iterator[Callable[[HiveMetastoreServer, str], Any]]:
    made: list[Any] = []

    def make(srv: HiveMetastoreServer, protocol: str) -> Any:
        made.append(client(srv, protocol))
        return made[-1]

    yield make
    for c in made:
        c._iprot.trans.close()


@pytest.mark.parametrize("protocol", ["json", "binary"])
def test_a_change_between_two_identical_calls_is_seen(
    server: tuple[Catalog, HiveMetastoreServer], connect: Any, protocol: str
) -> None:
    lake, srv = server
    hms = connect(srv, protocol)
    first = hms.get_partitions("sales", "orders", -1)
    assert hms.get_partitions("sales", "orders", -1) == first  # served from the cache, same values
    assert hms.get_partition_names("sales", "orders", -1) == hms.get_partition_names("sales", "orders", -1)

    sd = lake.get_table(DatabaseName="sales", Name="orders")["Table"]["StorageDescriptor"]
    lake.create_partition(
        DatabaseName="sales",
        TableName="orders",
        PartitionInput={"Values": ["ZZ", "2030-01-01"], "StorageDescriptor": sd},
    )
    after = hms.get_partitions("sales", "orders", -1)
    assert len(after) == len(first) + 1
    assert ["ZZ", "2030-01-01"] in [p.values for p in after]
    assert "country=ZZ/dt=2030-01-01" in hms.get_partition_names("sales", "orders", -1)

    lake.update_table(
        DatabaseName="sales",
        TableInput={
            **{
                k: v
                for k, v in lake.get_table(DatabaseName="sales", Name="orders")["Table"].items()
                if k in ("Name", "StorageDescriptor", "PartitionKeys", "TableType", "Owner")
            },
            "Parameters": {"changed": "yes"},
        },
    )
    assert hms.get_table("sales", "orders").parameters["changed"] == "yes"


@pytest.mark.parametrize("protocol", ["json", "binary"])
def test_errors_are_never_cached(
    server: tuple[Catalog, HiveMetastoreServer], connect: Any, protocol: str
) -> None:
    lake, srv = server
    hms = connect(srv, protocol)
    for _ in range(2):
        with pytest.raises(ttypes.NoSuchObjectException):
            hms.get_table("sales", "later")
    lake.create_table(DatabaseName="sales", TableInput={"Name": "later"})
    assert hms.get_table("sales", "later").tableName == "later"
    for _ in range(2):
        with pytest.raises(ttypes.MetaException):
            hms.get_partition_names("sales", "nope", -1)


@pytest.mark.parametrize("protocol", ["json", "binary"])
def test_a_damaged_warehouse_is_the_servers_error_not_a_malformed_request(
    tmp_path: Path, users_file: Path, connect: Any, protocol: str
) -> None:
    """The cached calls answer a storage failure as the IDL declares (MetaException naming the damaged
    file), like every other call; it is not the client's malformed message (an HTTP 400)."""
    from gluecat.catalog.rows import merging

    warehouse = str(tmp_path / "wh")
    lake = make_lake(warehouse)
    sd = lake.get_table(DatabaseName="sales", Name="orders")["Table"]["StorageDescriptor"]
    lake.create_partition(
        DatabaseName="sales",
        TableName="orders",
        PartitionInput={"Values": ["ZZ", "2030-01-01"], "StorageDescriptor": sd},
    )
    assert merging.merge(lake.store, ("sales", "orders"), whole=True)  # the partitions in a data file
    (segment,) = lake.store.latest().table_segments(("sales", "orders"))
    data = bytearray(Path(warehouse, segment).read_bytes())
    data[len(data) // 2] ^= 0x01
    Path(warehouse, segment).write_bytes(data)

    srv = HiveMetastoreServer(Catalog(warehouse), users_file).start()  # a process that never read it
    try:
        hms = connect(srv, protocol)
        assert hms.get_table("sales", "orders").tableName == "orders"
        for call in (hms.get_partition_names, hms.get_partitions):
            with pytest.raises(ttypes.MetaException, match=segment.rsplit("/", 1)[-1]):
                call("sales", "orders", -1)
    finally:
        srv.stop()
