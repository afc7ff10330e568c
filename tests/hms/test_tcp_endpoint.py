"""The Hive Metastore over binary Thrift on TCP, as stock clients speak it: the Apache thrift library's
TSocket and TBinaryProtocol, and hmsclient. The write calls change the catalog every door sees."""

from __future__ import annotations

import socket
import ssl
import struct
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from thrift.protocol import TBinaryProtocol
from thrift.Thrift import TApplicationException
from thrift.transport import TSocket, TTransport

from gluecat import Catalog
from gluecat.hms.gen.hive_metastore import ThriftHiveMetastore, ttypes
from gluecat.server import Server

from .conftest import make_lake

pytestmark = pytest.mark.slow


@pytest.fixture
def glue(tmp_path: Path) -> Catalog:
    return make_lake(str(tmp_path / "warehouse"))


@pytest.fixture
def server(glue: Catalog, users_file: Path) -> Iterator[Server]:
    s = Server(glue, users_file, thrift_port=0).start()
    yield s
    s.stop()


def tcp_client(port: int, tls_context: ssl.SSLContext | None = None) -> Any:
    if tls_context is not None:
        from thrift.transport import TSSLSocket

        sock: Any = TSSLSocket.TSSLSocket("127.0.0.1", port, ssl_context=tls_context)
    else:
        sock = TSocket.TSocket("127.0.0.1", port)
    sock.setTimeout(10_000)
    transport = TTransport.TBufferedTransport(sock)
    transport.open()
    return ThriftHiveMetastore.Client(TBinaryProtocol.TBinaryProtocol(transport))


@pytest.fixture
def hms(server: Server) -> Iterator[Any]:
    assert server.thrift_port is not None
    c = tcp_client(server.thrift_port)
    yield c
    c._iprot.trans.close()


def sd(location: str | None, cols: list[tuple[str, str]]) -> Any:
    return ttypes.StorageDescriptor(
        cols=[ttypes.FieldSchema(name=n, type=t) for n, t in cols],
        location=location,
        inputFormat="org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat",
        outputFormat="org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat",
        serdeInfo=ttypes.SerDeInfo(
            serializationLib="org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe", parameters={}
        ),
        parameters={},
    )


def test_reads_answer_as_over_http(hms: Any) -> None:
    assert hms.set_ugi("alice", ["staff"]) == ["staff"]
    assert sorted(hms.get_all_databases()) == ["crm", "sales"]
    assert hms.get_table("sales", "orders").partitionKeys[0].name == "country"
    with pytest.raises(ttypes.NoSuchObjectException):
        hms.get_table("sales", "nope")
    assert len(hms.get_partitions("sales", "orders", -1)) == 6


@pytest.mark.parametrize(
    ("spark_filter", "expected"),
    [
        ('country = "US" and dt = "2024-01-01"', [("US", "2024-01-01")]),
        ('(country) in ("US", "UK")', [(c, d) for c in ("UK", "US") for d in ("2024-01-01", "2024-01-02")]),
        (
            '(country = "US" or dt = "2024-01-02")',
            [("UK", "2024-01-02"), ("US", "2024-01-01"), ("US", "2024-01-02"), ("a/b=c", "2024-01-02")],
        ),
        ('dt > "2024-01-01" and country != "US"', [("UK", "2024-01-02"), ("a/b=c", "2024-01-02")]),
        ('country like "U.*"', [(c, d) for c in ("UK", "US") for d in ("2024-01-01", "2024-01-02")]),
        ("", [(c, d) for c in ("UK", "US", "a/b=c") for d in ("2024-01-01", "2024-01-02")]),
    ],
)
def test_spark_filter_strings_select_the_partitions_glue_expressions_do(
    hms: Any, spark_filter: str, expected: list[tuple[str, str]]
) -> None:
    got = hms.get_partitions_by_filter("sales", "orders", spark_filter, -1)
    assert sorted(tuple(p.values) for p in got) == sorted(expected)


def test_an_unparseable_filter_is_a_meta_exception_and_the_connection_goes_on(hms: Any) -> None:
    for bad in ('country = "US" and', "dt matches 'x'", 'country like "U[KS]"'):
        with pytest.raises(ttypes.MetaException):
            hms.get_partitions_by_filter("sales", "orders", bad, -1)
    assert hms.get_database("sales").name == "sales"


def test_an_unknown_method_is_unknown_method_and_the_connection_goes_on(hms: Any) -> None:
    with pytest.raises(TApplicationException) as e:
        hms.get_current_notificationEventId()
    assert e.value.type == TApplicationException.UNKNOWN_METHOD
    assert hms.get_database("sales").name == "sales"


def test_shutdown_is_oneway_and_does_not_stop_the_server(server: Server, hms: Any) -> None:
    hms.shutdown()
    assert hms.get_database("sales").name == "sales"
    assert server.thrift_port is not None
    other = tcp_client(server.thrift_port)
    assert other.get_database("crm").name == "crm"
    other._iprot.trans.close()


def test_writes_change_the_catalog_every_door_sees(hms: Any, glue: Catalog, tmp_path: Path) -> None:
    root = tmp_path / "data"
    hms.create_database(
        ttypes.Database(name="shop", description="d", locationUri=f"file:{root}/shop.db", parameters={})
    )
    with pytest.raises(ttypes.AlreadyExistsException):
        hms.create_database(ttypes.Database(name="shop", parameters={}))
    table = ttypes.Table(
        tableName="Events",
        dbName="shop",
        owner="alice",
        sd=sd(None, [("id", "bigint")]),
        partitionKeys=[ttypes.FieldSchema(name="DS", type="string")],
        parameters={"spark.sql.sources.schema": "{}"},
        tableType="MANAGED_TABLE",
    )
    hms.create_table_with_environment_context(table, None)
    with pytest.raises(ttypes.AlreadyExistsException):
        hms.create_table_with_environment_context(table, None)
    made = glue.get_table(DatabaseName="shop", Name="events")["Table"]
    # No location sent (CREATE TABLE ... USING parquet): the table's folder in its database's.
    assert made["StorageDescriptor"]["Location"] == f"file:{root}/shop.db/events"
    assert made["Parameters"]["spark.sql.sources.schema"] == "{}"
    assert (root / "shop.db" / "events").is_dir()

    parts = [
        ttypes.Partition(
            values=[d], dbName="shop", tableName="events", sd=sd(None, [("id", "bigint")]), parameters={}
        )
        for d in ("a", "b", "c")
    ]
    got = hms.add_partitions_req(
        ttypes.AddPartitionsRequest(
            dbName="shop", tblName="events", parts=parts, ifNotExists=False, needResult=True
        )
    )
    assert [p.sd.location for p in got.partitions] == [f"file:{root}/shop.db/events/ds={d}" for d in "abc"]
    with pytest.raises(ttypes.AlreadyExistsException):
        hms.add_partitions_req(
            ttypes.AddPartitionsRequest(
                dbName="shop", tblName="events", parts=parts[:1], ifNotExists=False, needResult=True
            )
        )
    again = hms.add_partitions_req(
        ttypes.AddPartitionsRequest(
            dbName="shop", tblName="events", parts=parts, ifNotExists=True, needResult=True
        )
    )
    assert again.partitions == []
    assert sorted(
        p["Values"][0] for p in glue.get_partitions(DatabaseName="shop", TableName="events")["Partitions"]
    ) == ["a", "b", "c"]

    renamed = hms.get_partition("shop", "events", ["a"])
    renamed.values = ["z"]
    hms.rename_partition("shop", "events", ["a"], renamed)
    assert [p.values for p in hms.get_partitions_ps_with_auth("shop", "events", ["z"], -1, "alice", [])] == [
        ["z"]
    ]
    assert (root / "shop.db" / "events" / "ds=z").is_dir()

    changed = hms.get_partition_with_auth("shop", "events", ["b"], "alice", [])
    changed.parameters = {"numRows": "7"}
    hms.alter_partitions("shop", "events", [changed])
    assert glue.get_partition(DatabaseName="shop", TableName="events", PartitionValues=["b"])["Partition"][
        "Parameters"
    ] == {"numRows": "7"}
    missing = hms.get_partition("shop", "events", ["b"])
    missing.values = ["nope"]
    with pytest.raises(ttypes.InvalidOperationException):
        hms.alter_partitions("shop", "events", [missing])

    assert hms.drop_partition_with_environment_context("shop", "events", ["c"], True, None)
    assert not (root / "shop.db" / "events" / "ds=c").exists()
    with pytest.raises(ttypes.NoSuchObjectException):
        hms.drop_partition_with_environment_context("shop", "events", ["c"], True, None)

    t = hms.get_table("shop", "events")
    t.tableName = "events2"
    hms.alter_table_with_environment_context("shop", "events", t, None)
    assert (root / "shop.db" / "events2" / "ds=z").is_dir() and not (root / "shop.db" / "events").exists()
    assert hms.get_partition("shop", "events2", ["z"]).sd.location == f"file:{root}/shop.db/events2/ds=z"
    with pytest.raises(ttypes.InvalidOperationException):
        hms.alter_table_with_environment_context("shop", "events", t, None)

    with pytest.raises(ttypes.InvalidOperationException):
        hms.drop_database("shop", True, False)  # not empty
    hms.drop_table_with_environment_context("shop", "events2", True, None)
    assert not (root / "shop.db" / "events2").exists()
    with pytest.raises(ttypes.NoSuchObjectException):
        hms.drop_table_with_environment_context("shop", "events2", True, None)
    hms.drop_database("shop", True, False)
    with pytest.raises(ttypes.NoSuchObjectException):
        hms.drop_database("shop", True, True)


def test_the_connection_principal_is_the_set_ugi_user(server: Server, hms: Any) -> None:
    assert server.thrift is not None and server.thrift_endpoint is not None
    hms.set_ugi("bob", [])
    hms.get_all_databases()
    sessions = [c.state[0] for c in server.thrift._connections]
    assert [server.thrift_endpoint.principal(s) for s in sessions] == ["bob"]


def test_require_known_users_refuses_unknown_set_ugi_names(glue: Catalog, users_file: Path) -> None:
    s = Server(glue, users_file, thrift_port=0, thrift_require_known_users=True).start()
    try:
        assert s.thrift_port is not None
        c = tcp_client(s.thrift_port)
        with pytest.raises(ttypes.MetaException):
            c.get_all_databases()  # before any set_ugi
        with pytest.raises(ttypes.MetaException):
            c.set_ugi("mallory", [])
        with pytest.raises(ttypes.MetaException):
            c.get_all_databases()
        assert c.set_ugi("alice", []) == []
        assert sorted(c.get_all_databases()) == ["crm", "sales"]
        c._iprot.trans.close()
    finally:
        s.stop()


def test_tls_on_the_tcp_port(glue: Catalog, users_file: Path, certificate: tuple[Path, Path]) -> None:
    cert, key = certificate
    s = Server(glue, users_file, tls_cert=str(cert), tls_key=str(key), thrift_port=0, thrift_tls=True).start()
    try:
        assert s.thrift_port is not None
        c = tcp_client(s.thrift_port, ssl.create_default_context(cafile=str(cert)))
        assert sorted(c.get_all_databases()) == ["crm", "sales"]
        c._iprot.trans.close()
        plain = socket.create_connection(("127.0.0.1", s.thrift_port), timeout=5)
        plain.sendall(struct.pack(">iI", -2147418111, 17) + b"get_all_databases" + b"\0\0\0\1\0")
        try:
            answer = plain.recv(100)
        except ConnectionResetError:
            answer = b""
        assert answer == b""  # plain Thrift on a TLS port: closed, no answer
        plain.close()
    finally:
        s.stop()


def test_hmsclient_over_tcp(server: Server) -> None:
    from hmsclient import hmsclient

    assert server.thrift_port is not None
    with hmsclient.HMSClient(host="127.0.0.1", port=server.thrift_port) as client:
        assert sorted(client.get_all_databases()) == ["crm", "sales"]
        table = client.get_table("sales", "orders")
        assert table.tableName == "orders"
        parts = client.get_partitions_by_filter("sales", "orders", 'country = "UK"', -1)
        assert sorted(p.values[1] for p in parts) == ["2024-01-01", "2024-01-02"]
        client.create_database(hmsclient.Database(name="viahms", parameters={}))
    assert server.http.endpoint.processor._handler.get_database("viahms").name == "viahms"


def test_batches_past_glues_page_limits(hms: Any, glue: Catalog, tmp_path: Path) -> None:
    """BatchGetPartition takes 1,000 keys and BatchUpdatePartition 100 entries; Hive calls take any number."""
    hms.create_database(ttypes.Database(name="big", locationUri=f"file:{tmp_path}/big.db", parameters={}))
    table = ttypes.Table(
        tableName="t",
        dbName="big",
        sd=sd(None, [("id", "bigint")]),
        partitionKeys=[ttypes.FieldSchema(name="n", type="string")],
        parameters={},
        tableType="EXTERNAL_TABLE",
    )
    hms.create_table(table)
    parts = [
        ttypes.Partition(
            values=[f"{i:04d}"],
            dbName="big",
            tableName="t",
            sd=sd(f"s3://b/{i}", [("id", "bigint")]),
            parameters={},
        )
        for i in range(1200)
    ]
    request = ttypes.AddPartitionsRequest(
        dbName="big", tblName="t", parts=parts[:600], ifNotExists=False, needResult=False
    )
    assert hms.add_partitions_req(request).partitions is None
    request = ttypes.AddPartitionsRequest(
        dbName="big", tblName="t", parts=parts, ifNotExists=True, needResult=True
    )
    assert [p.values for p in hms.add_partitions_req(request).partitions] == [p.values for p in parts[600:]]
    got = hms.get_partitions_by_names("big", "t", [f"n={i:04d}" for i in range(0, 1200, 1)])
    assert len(got) == 1200
    for p in got[:150]:
        p.parameters = {"seen": "yes"}
    hms.alter_partitions("big", "t", got[:150])
    seen = glue.get_partitions(DatabaseName="big", TableName="t", Expression="n < '0150'")["Partitions"]
    assert len(seen) == 150 and all(p["Parameters"] == {"seen": "yes"} for p in seen)
