"""Thrift classes built from an IDL when it is loaded behave as the Thrift compiler's Python output."""

from __future__ import annotations

from pathlib import Path

import pytest
from thrift.protocol import TBinaryProtocol, TCompactProtocol, TJSONProtocol
from thrift.Thrift import TApplicationException
from thrift.transport import TTransport

from gluecat.hms import idl

BASE = """
namespace java org.example
// a service with nothing, as fb303's is to gluecat
service Base { void ping() }
"""

SHOP = """
include "base.thrift"
namespace py shop   # comments of three kinds
/* a block
   comment */
const string CURRENCY = "EUR"
const i32 LIMIT = 10
typedef map<string, string> Properties
enum Kind { BOOK, DISK = 5, TAPE }
struct Item {
    1: required string name,
    2: optional Kind kind = Kind.DISK;
    3: i16 count = -1
    4: list<Item> parts (java.annotation = "x"),
    5: Properties properties,
    6: set<i64> ids,
    7: binary blob,
    9: double price = 1.5,
    10: bool sold = false
} (annotated = "yes")
union Choice { 1: string text, 2: i32 number }
struct Trip { 1: string from, 2: string to }  // a Python keyword as a field name
exception NotFound { 1: string message }
service Shop extends base.Base {
    Item get(1: string name, 2: i16 max = LIMIT) throws (1: NotFound missing),
    oneway void forget(1: string name);
    list<Item> all()
}
"""


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> idl.Loaded:
    folder = tmp_path_factory.mktemp("idl")
    (folder / "base.thrift").write_text(BASE)
    (folder / "shop.thrift").write_text(SHOP)
    return idl.load(folder / "shop.thrift")


def test_constants_enums_and_defaults(shop: idl.Loaded) -> None:
    t = shop.ttypes
    assert (shop.constants.CURRENCY, shop.constants.LIMIT) == ("EUR", 10)
    assert (t.Kind.BOOK, t.Kind.DISK, t.Kind.TAPE) == (0, 5, 6)
    assert t.Kind._VALUES_TO_NAMES[6] == "TAPE"
    item = t.Item("pen")
    assert (item.name, item.kind, item.count, item.price, item.sold, item.parts) == (
        "pen",
        5,
        -1,
        1.5,
        False,
        None,
    )
    assert shop.services["Shop"].get_args().max == 10
    assert getattr(t.Trip(**{"from": "a", "to": "b"}), "from") == "a"
    with pytest.raises(TypeError):
        t.Item(colour="red")


@pytest.mark.parametrize(
    "protocol",
    [
        TJSONProtocol.TJSONProtocol,
        TBinaryProtocol.TBinaryProtocol,
        TBinaryProtocol.TBinaryProtocolAccelerated,
        TCompactProtocol.TCompactProtocol,
    ],
    ids=["json", "binary", "binary (C)", "compact"],
)
def test_structs_round_trip_through_every_protocol(shop: idl.Loaded, protocol: type) -> None:
    t = shop.ttypes
    item = t.Item(
        name="pen",
        kind=t.Kind.TAPE,
        parts=[t.Item(name="cap", properties={"colour": "blue"})],
        properties={"a": "b"},
        ids={1, 2**40},
        blob=b"\x00\xff",
        price=2.25,
        sold=True,
    )
    out = TTransport.TMemoryBuffer()
    item.write(protocol(out))
    again = t.Item()
    again.read(protocol(TTransport.TMemoryBuffer(out.getvalue())))
    assert again == item
    assert again != t.Item(name="pen")


def test_a_client_and_a_processor_talk(shop: idl.Loaded) -> None:
    service, t = shop.services["Shop"], shop.ttypes

    class Handler:
        def __init__(self) -> None:
            self.forgotten: list[str] = []

        def get(self, name: str, max: int) -> object:
            if name == "nope":
                raise t.NotFound(message=f"no {name}")
            if name == "boom":
                raise RuntimeError("a bug")
            return t.Item(name=name, count=max)

        def forget(self, name: str) -> None:
            self.forgotten.append(name)

    handler = Handler()
    processor = service.Processor(handler)

    class Loopback(TTransport.TTransportBase):
        """Each flush hands the written call to the processor and keeps its reply to read."""

        def __init__(self) -> None:
            self.written = b""
            self.reply = TTransport.TMemoryBuffer()

        def write(self, data: bytes) -> None:
            self.written += data

        def read(self, n: int) -> bytes:
            return self.reply.read(n)

        def flush(self) -> None:
            request = TJSONProtocol.TJSONProtocol(TTransport.TMemoryBuffer(self.written))
            self.written, self.reply = b"", TTransport.TMemoryBuffer()
            processor.process(request, TJSONProtocol.TJSONProtocol(self.reply))
            self.reply = TTransport.TMemoryBuffer(self.reply.getvalue())

    client = service.Client(TJSONProtocol.TJSONProtocol(Loopback()))
    assert client.get("pen", 3) == t.Item(name="pen", count=3)
    with pytest.raises(t.NotFound, match="no nope"):
        client.get("nope", 1)
    with pytest.raises(TApplicationException) as error:
        client.get("boom", 1)
    assert error.value.type == TApplicationException.INTERNAL_ERROR
    assert client.forget("pen") is None  # oneway: nothing is read back
    assert handler.forgotten == ["pen"]
    with pytest.raises(TApplicationException) as error:
        client.ping()  # declared by the service it extends, not implemented by the handler
    assert error.value.type == TApplicationException.INTERNAL_ERROR


def test_the_hive_metastore_idl_loads_with_the_compilers_names() -> None:
    from gluecat.hms.gen.hive_metastore import ThriftHiveMetastore, constants, ttypes

    assert constants.DDL_TIME == "transient_lastDdlTime"
    assert ttypes.Table().temporary is False
    assert ThriftHiveMetastore.get_partition_names_args().max_parts == -1
    assert ThriftHiveMetastore.get_table_result.thrift_spec[2][3][0] is ttypes.NoSuchObjectException
    assert hasattr(ThriftHiveMetastore.Client, "get_all_functions")
    assert isinstance(ttypes.MetaException(message="x"), Exception)


def test_an_idl_this_parser_does_not_know_is_refused(tmp_path: Path) -> None:
    (tmp_path / "bad.thrift").write_text("struct A { 1: i32 x } stray")
    with pytest.raises(idl.IdlError, match="stray"):
        idl.load(tmp_path / "bad.thrift")
