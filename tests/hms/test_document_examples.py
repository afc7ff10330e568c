"""The protocol document's example bodies, decoded and re-encoded by gluecat's Thrift stubs.

Where the document is right, the re-encoding is byte for byte the example (the document prints
some with spaces after commas and colons; TJSONProtocol writes none, so spaces outside strings are
removed first). Where the document is in error (listed in docs/hms.md), the corrected body is used and
the correction is spelled out here.
"""

from __future__ import annotations

import re

import pytest
from thrift.protocol import TJSONProtocol
from thrift.Thrift import TMessageType
from thrift.transport import TTransport

from gluecat.hms.gen.hive_metastore import ThriftHiveMetastore

# Bodies exactly as printed in the document (3.1.5.x), spaces outside strings removed.
EXACT = [
    '[1,"get_all_databases",1,1,{}]',
    '[1,"get_databases",1,1,{"1":{"str":"default*"}}]',
    '[1,"get_database",1,1,{"1":{"str":"default"}}]',
    '[1,"get_all_tables",1,1,{"1":{"str":"default"}}]',
    '[1,"get_all_tables",2,1,{"0":{"lst":["str",0]}}]',
    '[1,"get_tables",2,1,{"0":{"lst":["str",0]}}]',
    '[1,"get_table",1,1,{"1":{"str":"hmshttpstestdatabase"},"2":{"str":"test_table"}}]',
    '[1,"get_tables_by_type",1,1,{"1":{"str":"hmshttpstestdatabase"},"2":{"str":".*"},"3":{"str":"MANAGED_TABLE"}}]',
    '[1,"get_partition_names",1,1,{"1":{"str":"hmshttpstestdatabase"},"2":{"str":"test_table"},"3":{"i16":10}}]',
    '[1,"get_partitions",1,1,{"1":{"str":"hmshttpstestdatabase"},"2":{"str":"test_table"},"3":{"i16":10}}]',
]

# (as printed, corrected): "1st" for "lst", a list written as {"str",n,...} instead of ["str",n,...],
# a map written {"str","str",0,{}} instead of ["str","str",0,{}], brackets out of order, a missing "]".
CORRECTED = [
    (
        '[1,"get_all_databases",2,1,{"0":{"1st":["str",2,"default","hmshttptestdatabase"]}}]',
        '[1,"get_all_databases",2,1,{"0":{"lst":["str",2,"default","hmshttptestdatabase"]}}]',
    ),
    (
        '[1,"get_databases",2,1,{"0":{"1st":[{"str",1,"default"}]}}]',
        '[1,"get_databases",2,1,{"0":{"lst":["str",1,"default"]}}]',
    ),
    (
        '[1,"get_database",2,1,{"0":{"rec":{"1":{"str":"default"},"2":{"str":"Default Hive database"},'
        '"3":{"str":"hdfs://nmnode-0-0.nmnode-0-svc:9000/user/hive/warehouse"},"4":{"map":{"str","str",0,{}}},'
        '"6":{"str":"public"},"7":{"i32":2}}}}]',
        '[1,"get_database",2,1,{"0":{"rec":{"1":{"str":"default"},"2":{"str":"Default Hive database"},'
        '"3":{"str":"hdfs://nmnode-0-0.nmnode-0-svc:9000/user/hive/warehouse"},"4":{"map":["str","str",0,{}]},'
        '"6":{"str":"public"},"7":{"i32":2}}}}]',
    ),
    (
        '[1,"get_tables",1,1,{"1":{"str":"default"},"2":{"str":"*"}]}',
        '[1,"get_tables",1,1,{"1":{"str":"default"},"2":{"str":"*"}}]',
    ),
    (
        '[1,"get_tables_by_type",2,1,{"0":{"1st":[{"str",1,"test_table"}]}}',
        '[1,"get_tables_by_type",2,1,{"0":{"lst":["str",1,"test_table"]}}]',
    ),
    (
        '[1,"get_partition_names",2,1,{"0":{"lst":[{"str",2,"hair_color=black","hair_color=brown"}]}}',
        '[1,"get_partition_names",2,1,{"0":{"lst":["str",2,"hair_color=black","hair_color=brown"]}}]',
    ),
]


def round_trip(body: str) -> str:
    """Decode a message with the generated args/result struct of its method, and encode it again."""
    iprot = TJSONProtocol.TJSONProtocol(TTransport.TMemoryBuffer(body.encode()))
    name, kind, seqid = iprot.readMessageBegin()
    suffix = "_args" if kind == TMessageType.CALL else "_result"
    struct = getattr(ThriftHiveMetastore, name + suffix)()
    struct.read(iprot)
    iprot.readMessageEnd()
    out = TTransport.TMemoryBuffer()
    oprot = TJSONProtocol.TJSONProtocol(out)
    oprot.writeMessageBegin(name, kind, seqid)
    struct.write(oprot)
    oprot.writeMessageEnd()
    return out.getvalue().decode()


@pytest.mark.parametrize(
    "body", EXACT, ids=lambda b: re.findall(r'"(\w+)",(\d)', b)[0][0] + "/" + b.split(",")[2]
)
def test_the_documents_bodies_round_trip_byte_for_byte(body: str) -> None:
    assert round_trip(body) == body


@pytest.mark.parametrize(("printed", "corrected"), CORRECTED, ids=lambda b: b[:30])
def test_the_documents_erroneous_bodies_round_trip_once_corrected(printed: str, corrected: str) -> None:
    assert printed != corrected
    assert round_trip(corrected) == corrected
