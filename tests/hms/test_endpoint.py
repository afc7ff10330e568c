"""The nine Hive Metastore methods through real Thrift clients, over HTTP and HTTPS, in both protocols."""

from __future__ import annotations

from pathlib import Path

import pytest

from gluecat.hms.gen.hive_metastore import ttypes
from gluecat.hms.server import HiveMetastoreServer

from .conftest import client

PROTOCOLS = ["json", "binary"]


@pytest.fixture(
    params=[(p, tls) for p in PROTOCOLS for tls in (False, True)],
    ids=lambda x: f"{x[0]}-{'https' if x[1] else 'http'}",
)
def hms(
    request: pytest.FixtureRequest,
    http_server: HiveMetastoreServer,
    https_server: HiveMetastoreServer,
    certificate: tuple[Path, Path],
):
    protocol, tls = request.param
    c = client(https_server, protocol, cafile=certificate[0]) if tls else client(http_server, protocol)
    yield c
    c._iprot.trans.close()


def test_databases(hms) -> None:
    assert hms.get_all_databases() == ["crm", "sales"]
    assert hms.get_databases("SAL*") == ["sales"]
    assert hms.get_databases("crm|nope") == ["crm"]
    db = hms.get_database("sales")
    assert (db.name, db.description, db.locationUri) == ("sales", "sales data", "s3://lake/sales")
    assert hms.get_database("crm").parameters == {"owner": "crm-team"}
    with pytest.raises(ttypes.NoSuchObjectException, match="nope"):
        hms.get_database("nope")


def test_tables(hms) -> None:
    assert hms.get_all_tables("sales") == ["big_orders", "order_items", "orders"]
    assert hms.get_tables("sales", "order*") == ["order_items", "orders"]
    assert hms.get_tables("sales", "*ORDERS") == ["big_orders", "orders"]
    assert hms.get_tables_by_type("sales", "*", "VIRTUAL_VIEW") == ["big_orders"]
    assert hms.get_tables_by_type("sales", "*", "EXTERNAL_TABLE") == ["order_items", "orders"]
    assert hms.get_all_tables("nope") == []


@pytest.mark.parametrize("table_type", ["BOGUS", "external_table", "", None])
def test_get_tables_by_type_refuses_a_type_hive_does_not_have(hms, table_type: str | None) -> None:
    # Hive answers MetaException (TableType.valueOf fails), never an empty or a full list.
    for db in ("sales", "nope"):
        with pytest.raises(ttypes.MetaException, match="not one of Hive's table types"):
            hms.get_tables_by_type(db, "*", table_type)
    assert hms.get_tables_by_type("sales", "*", "INDEX_TABLE") == []  # a type Hive has


@pytest.mark.parametrize("name", ["", "x" * 256, "a\x01b"], ids=["empty", "too long", "control character"])
def test_a_name_nothing_can_have_is_not_found(hms, name: str) -> None:
    # As in Hive: NoSuchObjectException (or no tables), which existence checks catch, not MetaException.
    with pytest.raises(ttypes.NoSuchObjectException):
        hms.get_database(name)
    for db, table in ((name, "orders"), ("sales", name)):
        with pytest.raises(ttypes.NoSuchObjectException):
            hms.get_table(db, table)
        with pytest.raises(ttypes.NoSuchObjectException):
            hms.get_partitions(db, table, -1)
        with pytest.raises(ttypes.MetaException):
            hms.get_partition_names(db, table, -1)  # the IDL declares only MetaException
    assert hms.get_all_tables(name) == hms.get_tables(name, "*") == []
    assert hms.get_tables_by_type(name, "*", "EXTERNAL_TABLE") == []


def test_a_missing_name_is_a_meta_exception(hms) -> None:
    with pytest.raises(ttypes.MetaException):
        hms.get_database(None)
    with pytest.raises(ttypes.MetaException):
        hms.get_table("sales", None)
    with pytest.raises(ttypes.MetaException):
        hms.get_all_tables(None)


def test_an_empty_pattern_matches_no_name(hms) -> None:
    # As in Hive: only a missing pattern means all names; "" is not "*".
    assert hms.get_databases("") == []
    assert hms.get_tables("sales", "") == []
    assert hms.get_tables_by_type("sales", "", "EXTERNAL_TABLE") == []
    assert hms.get_tables("sales", " orders ") == ["orders"]  # the whole pattern is trimmed
    assert hms.get_tables("sales", "orders| big_orders") == ["orders"]  # its alternatives are not


def test_get_table_maps_the_glue_table(hms) -> None:
    t = hms.get_table("sales", "orders")
    assert (t.tableName, t.dbName, t.owner, t.tableType) == ("orders", "sales", "etl", "EXTERNAL_TABLE")
    assert t.parameters == {"classification": "parquet", "EXTERNAL": "TRUE"}
    # Glue's "Country", lower-cased as Hive stores names (and as the partition names spell it).
    assert [(k.name, k.type) for k in t.partitionKeys] == [("country", "string"), ("dt", "string")]
    assert all(n.startswith("country=") for n in hms.get_partition_names("sales", "orders", -1))
    assert [(c.name, c.type, c.comment) for c in t.sd.cols] == [
        ("id", "bigint", None),
        ("amount", "double", "USD"),
    ]
    assert t.sd.location == "s3://lake/sales/orders"
    assert t.sd.serdeInfo.serializationLib == "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe"
    assert t.createTime > 1_600_000_000
    governed = hms.get_table("sales", "order_items")
    assert (governed.tableType, governed.parameters["glue.table_type"]) == ("EXTERNAL_TABLE", "GOVERNED")
    with pytest.raises(ttypes.NoSuchObjectException):
        hms.get_table("sales", "nope")


def test_partitions_and_their_hive_names(hms) -> None:
    names = hms.get_partition_names("sales", "orders", -1)
    assert sorted(names) == sorted(
        f"country={c}/dt={d}" for c in ("US", "UK", "a%2Fb%3Dc") for d in ("2024-01-01", "2024-01-02")
    )
    assert len(hms.get_partition_names("sales", "orders", 2)) == 2
    parts = hms.get_partitions("sales", "orders", -1)
    assert sorted(tuple(p.values) for p in parts) == sorted(
        (c, d) for c in ("US", "UK", "a/b=c") for d in ("2024-01-01", "2024-01-02")
    )
    us = next(p for p in parts if p.values == ["US", "2024-01-01"])
    assert (us.dbName, us.tableName, us.sd.location) == (
        "sales",
        "orders",
        "s3://lake/sales/orders/US/2024-01-01",
    )
    assert [c.name for c in us.sd.cols] == ["id", "amount"]  # the table's columns when the partition has none
    assert len(hms.get_partitions("sales", "orders", 3)) == 3
    with pytest.raises(ttypes.NoSuchObjectException):
        hms.get_partitions("sales", "nope", -1)
    with pytest.raises(ttypes.MetaException):
        hms.get_partition_names("sales", "nope", -1)


def test_an_unknown_method_is_a_thrift_application_exception(hms) -> None:
    from thrift.Thrift import TApplicationException

    with pytest.raises(TApplicationException) as err:
        hms.get_current_notificationEventId()
    assert err.value.type == TApplicationException.UNKNOWN_METHOD


def test_partitions_come_in_hive_name_order_and_max_parts_keeps_the_first(
    users_file: Path, tmp_path: Path
) -> None:
    # Hive lists partition names and partitions ORDER BY PART_NAME, the escaped name: '$' (kept as
    # is, 0x24) sorts before '#' (escaped %23), 'Z' before 'a/b' (a%2Fb) and 'a/b' before 'a0'.
    from gluecat import Catalog
    from gluecat.hms.server import HiveMetastoreServer

    glue = Catalog(str(tmp_path / "warehouse"))
    glue.create_database(DatabaseInput={"Name": "db"})
    glue.create_table(
        DatabaseName="db",
        TableInput={"Name": "t", "PartitionKeys": [{"Name": "K", "Type": "string"}], "StorageDescriptor": {}},
    )
    values = ["a0", "#", "a/b", "Z", "$", "!x", "~"]
    glue.batch_create_partition(
        DatabaseName="db", TableName="t", PartitionInputList=[{"Values": [v]} for v in values]
    )
    in_hive_order = ["k=!x", "k=$", "k=%23", "k=Z", "k=a%2Fb", "k=a0", "k=~"]
    by_name = dict(zip(["!x", "$", "#", "Z", "a/b", "a0", "~"], in_hive_order, strict=True))
    server = HiveMetastoreServer(glue, users_file).start()
    try:
        for protocol in PROTOCOLS:
            c = client(server, protocol)
            assert c.get_partition_names("db", "t", -1) == in_hive_order
            assert [by_name[p.values[0]] for p in c.get_partitions("db", "t", -1)] == in_hive_order
            for n in (1, 3, 7, 8):
                assert c.get_partition_names("db", "t", n) == in_hive_order[:n]
                assert [by_name[p.values[0]] for p in c.get_partitions("db", "t", n)] == in_hive_order[:n]
            c._iprot.trans.close()
    finally:
        server.stop()


def test_external_tables_say_so_in_both_of_hives_records(users_file: Path, tmp_path: Path) -> None:
    # Glue holds TableType and the EXTERNAL parameter apart, and they can disagree (a Spark ALTER TABLE SET
    # TBLPROPERTIES ('EXTERNAL'='TRUE'), Hive's way to make a table external; a hand-made EXTERNAL=FALSE).
    # gluecat's Spark catalog treats each such table as external and never deletes its data; Hive clients
    # read the type (Spark's Hive client) or the parameter (Hive's DROP TABLE), so both must say external.
    from gluecat import Catalog
    from gluecat.api.table_kinds import is_external

    glue = Catalog(str(tmp_path / "warehouse"))
    glue.create_database(DatabaseInput={"Name": "db"})
    shapes = {
        "marked": ("MANAGED_TABLE", {"EXTERNAL": "TRUE"}, "EXTERNAL_TABLE"),
        "marked_lower": ("MANAGED_TABLE", {"EXTERNAL": "true"}, "EXTERNAL_TABLE"),
        "crawled": ("EXTERNAL_TABLE", {}, "EXTERNAL_TABLE"),
        "contradicted": ("EXTERNAL_TABLE", {"EXTERNAL": "FALSE"}, "EXTERNAL_TABLE"),
        "managed": ("MANAGED_TABLE", {}, "MANAGED_TABLE"),
        "unmarked": ("MANAGED_TABLE", {"EXTERNAL": "FALSE"}, "MANAGED_TABLE"),
    }
    for name, (table_type, params, _) in shapes.items():
        glue.create_table(
            DatabaseName="db",
            TableInput={"Name": name, "TableType": table_type, "Parameters": params, "StorageDescriptor": {}},
        )
    server = HiveMetastoreServer(glue, users_file).start()
    try:
        c = client(server, "binary")
        for name, (_, _, hive_type) in shapes.items():
            t = c.get_table("db", name)
            assert t.tableType == hive_type, name
            external = is_external(glue.get_table(DatabaseName="db", Name=name)["Table"])
            assert (t.tableType == "EXTERNAL_TABLE") == external, name
            assert (t.parameters.get("EXTERNAL") == "TRUE") == external, name
        assert c.get_tables_by_type("db", "*", "EXTERNAL_TABLE") == [
            "contradicted",
            "crawled",
            "marked",
            "marked_lower",
        ]
        assert c.get_tables_by_type("db", "*", "MANAGED_TABLE") == ["managed", "unmarked"]
        c._iprot.trans.close()
    finally:
        server.stop()


def test_a_partition_without_its_own_descriptor_is_shown_as_spark_reads_it(
    users_file: Path, tmp_path: Path
) -> None:
    # Glue takes partitions with Values only, or a Location only. gluecat's Spark catalog reads them with
    # the table's format and SerDe, at the Hive path under the table's location; Hive clients used to get
    # an empty SerDe and no location for them.
    import json

    from gluecat import Catalog
    from gluecat.spark.backend import Backend

    glue = Catalog(str(tmp_path / "warehouse"))
    glue.create_database(DatabaseInput={"Name": "db"})
    serde = {"SerializationLibrary": "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe"}
    glue.create_table(
        DatabaseName="db",
        TableInput={
            "Name": "t",
            "PartitionKeys": [{"Name": "K", "Type": "string"}],
            "StorageDescriptor": {
                "Columns": [{"Name": "a", "Type": "int"}],
                "Location": "s3://lake/t/",
                "InputFormat": "org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat",
                "OutputFormat": "org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat",
                "SerdeInfo": serde,
            },
        },
    )
    glue.batch_create_partition(
        DatabaseName="db",
        TableName="t",
        PartitionInputList=[
            {"Values": ["a/b"]},
            {"Values": ["x"], "StorageDescriptor": {"Location": "s3://elsewhere/x"}},
        ],
    )
    spark_reads = json.loads(
        Backend(glue).call("list_partitions", json.dumps({"database": "db", "name": "t"}))
    )
    folders = dict(zip(spark_reads["ok"]["values"][0], spark_reads["ok"]["locations"], strict=True))
    assert folders == {"a/b": "s3://lake/t/k=a%2Fb", "x": "s3://elsewhere/x"}
    server = HiveMetastoreServer(glue, users_file).start()
    try:
        c = client(server, "binary")
        for p in c.get_partitions("db", "t", -1):
            assert p.sd.location == folders[p.values[0]]
            assert p.sd.serdeInfo.serializationLib == serde["SerializationLibrary"]
            assert p.sd.inputFormat == "org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat"
            assert [c.name for c in p.sd.cols] == ["a"]
        c._iprot.trans.close()
    finally:
        server.stop()
