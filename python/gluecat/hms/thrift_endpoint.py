"""The Hive Metastore's Thrift calls as HTTP requests: a body in, a reply body out.

The Thrift protocol is chosen by Content-Type: ``application/vnd.apache.thrift.json`` for TJSONProtocol
(the protocol document's format) and ``application/x-thrift`` for TBinaryProtocol (what Hive 4, Trino
and Presto send over HTTP). A body is decoded in time and memory proportional to its length: it is
read from a buffer that refuses to be read past its end, and no string or container may declare
more elements than the body has bytes.
"""

from __future__ import annotations

import functools
import logging
from contextvars import ContextVar
from typing import Any, ClassVar

from thrift.protocol import TBinaryProtocol, TJSONProtocol
from thrift.protocol.TProtocol import TProtocolException
from thrift.Thrift import TApplicationException, TMessageType, TType
from thrift.transport import TTransport

from gluecat.errors import GlueError
from gluecat.hms import replies
from gluecat.hms.gen.hive_metastore import ThriftHiveMetastore, ttypes
from gluecat.hms.guard import Guarded
from gluecat.hms.handler import Handler
from gluecat.serving.http import Request, Response
from gluecat.serving.permissions import Authorizer, Decision

log = logging.getLogger("gluecat.hms")

JSON_TYPE = "application/vnd.apache.thrift.json"
BINARY_TYPE = "application/x-thrift"

SERVED = (
    # The nine of the protocol document.
    "get_all_databases",
    "get_databases",
    "get_database",
    "get_all_tables",
    "get_tables",
    "get_table",
    "get_tables_by_type",
    "get_partition_names",
    "get_partitions",
    # The other reads stock clients make (Spark's Hive support, Hive, Trino).
    "get_partitions_by_filter",
    "get_partitions_ps",
    "get_partitions_ps_with_auth",
    "get_partitions_with_auth",
    "get_partition_names_ps",
    "get_partition",
    "get_partition_with_auth",
    "get_partition_by_name",
    "get_partitions_by_names",
    "get_table_objects_by_name",
    "get_table_objects_by_name_req",
    "get_functions",
    "get_all_functions",
    # Their writes (hms/writes.py).
    "create_database",
    "alter_database",
    "drop_database",
    "create_table",
    "create_table_with_environment_context",
    "alter_table",
    "alter_table_with_environment_context",
    "alter_table_with_cascade",
    "drop_table",
    "drop_table_with_environment_context",
    "add_partition",
    "add_partition_with_environment_context",
    "add_partitions",
    "add_partitions_req",
    "alter_partition",
    "alter_partition_with_environment_context",
    "alter_partitions",
    "alter_partitions_with_environment_context",
    "rename_partition",
    "drop_partition",
    "drop_partition_with_environment_context",
    "drop_partition_by_name",
    "drop_partition_by_name_with_environment_context",
    # Identity, and fb303's calls.
    "set_ugi",
    "shutdown",
    "getStatus",
    "getName",
    "getVersion",
)

# The calls whose replies are cached, with their argument fields in the handler's parameter order.
CACHED = {
    "get_partitions": ("db_name", "tbl_name", "max_parts"),
    "get_partition_names": ("db_name", "tbl_name", "max_parts"),
    "get_table": ("dbname", "tbl_name"),
}


def _table_version(catalog: Any, database: Any, table: Any) -> int:
    """What a cached reply about one table is labelled with: its table's version, which every change of
    the table (and nothing else) moves on; -1 (never served from the cache) for names no table can have."""
    try:
        return int(catalog.table_version(DatabaseName=database, TableName=table))
    except GlueError:
        return -1


class Body(TTransport.TMemoryBuffer):
    """A request body that raises at its end instead of answering empty reads.

    TMemoryBuffer answers b"" past its end, and TJSONProtocol's number reader takes b"" for a digit:
    the 2-byte body ``[1`` used to spin until the 16 MB string limit, 6 s and 137 MB later.
    """

    def read(self, sz: int) -> bytes:
        data: bytes = super().read(sz)
        if len(data) < sz:
            raise TTransport.TTransportException(
                TTransport.TTransportException.END_OF_FILE, "the body ends inside a Thrift message"
            )
        return data


class Processor(ThriftHiveMetastore.Processor):
    """The generated processor, answering UNKNOWN_METHOD for every method gluecat does not serve.

    get_partitions, get_partition_names and get_table replies are cached, encoded, while the warehouse
    version stays the same (hms/replies.py); their errors take the generated path.
    """

    _processMap: dict[str, Any]

    def __init__(
        self,
        handler: Handler | Guarded,
        reply_cache_bytes: int = replies.MAX_BYTES,
        cache: replies.ReplyCache | None = None,
        require_principal: bool = False,
    ) -> None:
        super().__init__(handler)
        self._processMap = {name: self._processMap[name] for name in SERVED}
        if reply_cache_bytes > 0:
            for name, fields in CACHED.items():
                self._processMap[name] = functools.partial(Processor._cached, name=name, fields=fields)
        self.replies = cache if cache is not None else replies.ReplyCache(reply_cache_bytes)
        self.require_principal = require_principal
        """Refuse every call but set_ugi until set_ugi has named a caller."""

    def process(self, iprot: Any, oprot: Any) -> bool | None:
        name, kind, seqid = iprot.readMessageBegin()
        if name not in self._processMap:
            log.info("answered UNKNOWN_METHOD to a call of %s", name[:100])
            iprot.skip(TType.STRUCT)
            iprot.readMessageEnd()
            error = TApplicationException(TApplicationException.UNKNOWN_METHOD, f"Unknown function {name}")
            _write(oprot, name, TMessageType.EXCEPTION, seqid, error)
            if isinstance(self._handler, Guarded):
                self._handler.note(name, "UnknownMethod", "gluecat does not serve this call")
            return None
        if self.require_principal and self._handler.principal is None and name != "set_ugi":
            iprot.skip(TType.STRUCT)
            iprot.readMessageEnd()
            refusal = "call set_ugi with a user of the server first (it requires known users)"
            if kind != TMessageType.ONEWAY:
                _answer_error(oprot, name, seqid, ttypes.MetaException(message=refusal))
            if isinstance(self._handler, Guarded):
                self._handler.note(name, "MetaException", refusal)
            return None
        self._processMap[name](self, seqid, iprot, oprot)
        return True

    def _cached(self, seqid: int, iprot: Any, oprot: Any, *, name: str, fields: tuple[str, ...]) -> None:
        args = getattr(ThriftHiveMetastore, f"{name}_args")()
        args.read(iprot)
        iprot.readMessageEnd()
        key = tuple(getattr(args, f) for f in fields)
        result_type = getattr(ThriftHiveMetastore, f"{name}_result")
        handler = self._handler
        inner = handler._handler if isinstance(handler, Guarded) else handler

        def reply(decision: Decision | None) -> None:
            # Decided before the cache is looked at (a revocation holds for cached replies too), and
            # kept by what the caller may see of the table.
            scope = (
                None
                if decision is None
                else decision.view.columns_key(str(key[0]).lower(), str(key[1]).lower())
            )
            version = _table_version(inner.catalog, key[0], key[1])

            def compute() -> Any:
                return result_type(success=getattr(inner, name)(*key))

            replies.answer(self.replies, version, name, (key, scope), seqid, oprot, compute)

        try:
            if isinstance(handler, Guarded):
                handler.run(name, key, reply)
            else:
                reply(None)
        except (ttypes.NoSuchObjectException, ttypes.MetaException) as e:
            _answer_error(oprot, name, seqid, e)
        except Exception:
            # The server's own failure, answered as the generated processor answers it for the other
            # calls: not to be taken for a malformed request (which is what escapes process()).
            log.exception("%s failed", name)
            error = TApplicationException(TApplicationException.INTERNAL_ERROR, "Internal error")
            _write(oprot, name, TMessageType.EXCEPTION, seqid, error)


def _write(oprot: Any, name: str, kind: int, seqid: int, body: Any) -> None:
    oprot.writeMessageBegin(name, kind, seqid)
    body.write(oprot)
    oprot.writeMessageEnd()
    oprot.trans.flush()


def _answer_error(oprot: Any, name: str, seqid: int, error: Exception) -> None:
    """Answers ``error`` as the IDL declares it: in the result field whose type is the error's (or,
    where the call declares none of its type, as a TApplicationException)."""
    result_type = getattr(ThriftHiveMetastore, f"{name}_result")
    result = result_type()
    for spec in result_type.thrift_spec:
        if spec is not None and spec[3] is not None and spec[3][0] is type(error):
            setattr(result, spec[2], error)
            _write(oprot, name, TMessageType.REPLY, seqid, result)
            return
    failure = TApplicationException(TApplicationException.UNKNOWN, str(getattr(error, "message", error)))
    _write(oprot, name, TMessageType.EXCEPTION, seqid, failure)


def _invalid(what: str) -> TProtocolException:
    return TProtocolException(TProtocolException.INVALID_DATA, what)


class StrictJSONProtocol(TJSONProtocol.TJSONProtocol):
    """TJSONProtocol that refuses what its JSON can say but its Thrift types cannot hold.

    JSON numbers have no width: the stock reader takes {"i16":100000} as max_parts 100000 and echoes a
    seqid of 2^40 that no client can read back (Java's reader would wrap both silently). A string
    that ends inside a surrogate pair ("sales\\ud800") lost the half pair and read as "sales". Each is
    a protocol error here, so the request is refused rather than answered for other arguments.
    """

    _BITS: ClassVar[dict[str, int]] = {"byte": 8, "i16": 16, "i32": 32, "i64": 64}
    _dangling_surrogate = False

    def _ranged(self, kind: str, value: int) -> int:
        bits = self._BITS[kind]
        if not -(2 ** (bits - 1)) <= value < 2 ** (bits - 1):
            raise _invalid(f"{value} is out of range for an {kind}")
        return value

    def readMessageBegin(self) -> tuple[str, int, int]:
        name, kind, seqid = super().readMessageBegin()
        return name, self._ranged("byte", kind), self._ranged("i32", seqid)

    def readByte(self) -> int:
        return self._ranged("byte", super().readByte())

    def readI16(self) -> int:
        return self._ranged("i16", super().readI16())

    def readI32(self) -> int:
        return self._ranged("i32", super().readI32())

    def readI64(self) -> int:
        return self._ranged("i64", super().readI64())

    def _isHighSurrogate(self, codeunit: int) -> bool:
        high: bool = super()._isHighSurrogate(codeunit)
        if high:
            self._dangling_surrogate = True
        return high

    def _toChar(self, high: int, low: int | None = None) -> str:
        if low:
            self._dangling_surrogate = False
        return str(super()._toChar(high, low))

    def readJSONString(self, skipContext: bool) -> str:
        self._dangling_surrogate = False
        text: str = super().readJSONString(skipContext)
        if self._dangling_surrogate:
            raise _invalid("a string ends inside a surrogate pair")
        return text


class StrictJSONProtocolFactory(TJSONProtocol.TJSONProtocolFactory):
    def getProtocol(self, trans: Any) -> StrictJSONProtocol:
        return StrictJSONProtocol(trans, string_length_limit=self.string_length_limit)


def _protocol_factory(content_type: str, body: bytes) -> Any:
    if content_type == JSON_TYPE:
        return StrictJSONProtocolFactory()
    # The C-accelerated codec (3x faster on partition lists). No string or container can be longer
    # than the body (an element takes at least a byte), so a forged length allocates nothing.
    return TBinaryProtocol.TBinaryProtocolAcceleratedFactory(
        string_length_limit=len(body), container_length_limit=len(body)
    )


_http_caller: ContextVar[tuple[str | None, str | None]] = ContextVar(
    "gluecat_hms_caller", default=(None, None)
)


class ThriftEndpoint:
    """Answers a POSTed Thrift message with the reply message, each call decided by ``authorizer`` (one
    over ``catalog`` when not given) for the user Basic authentication checked."""

    def __init__(
        self, catalog: Any, reply_cache_bytes: int = replies.MAX_BYTES, authorizer: Authorizer | None = None
    ) -> None:
        # Over HTTP each request carries its caller (Basic authentication): set_ugi names no one.
        self.authorizer = authorizer if authorizer is not None else Authorizer(catalog)
        handler = Guarded(
            Handler(catalog, set_ugi_names_caller=False), self.authorizer, _http_caller.get, "http"
        )
        self.processor = Processor(handler, reply_cache_bytes)

    def __call__(self, request: Request, user: str) -> Response:
        if request.method != "POST":
            return Response(405, b"POST Thrift messages to this endpoint\n", headers={"Allow": "POST"})
        body = request.body
        types = [t.split(";", 1)[0].strip().lower() for t in request.headers.get_all("Content-Type")]
        types = types or [BINARY_TYPE]
        # Stock Thrift HTTP clients always send application/x-thrift, adding any type of their own as a
        # second header; a JSON message also always starts with '[', which no binary message does.
        json_body = JSON_TYPE in types or (BINARY_TYPE in types and body[:1] == b"[")
        content_type = JSON_TYPE if json_body else types[-1]
        if content_type not in (JSON_TYPE, BINARY_TYPE, "application/octet-stream"):
            return Response(415, f"use Content-Type {JSON_TYPE} or {BINARY_TYPE}\n".encode())
        token = _http_caller.set((user, request.client[0]))
        try:
            return self.answer(body, content_type)
        finally:
            _http_caller.reset(token)

    def answer(self, body: bytes, content_type: str) -> Response:
        factory = _protocol_factory(content_type, body)
        out = TTransport.TMemoryBuffer()
        try:
            self.processor.process(factory.getProtocol(Body(body)), factory.getProtocol(out))
        except Exception as e:
            # The processor turns a handler's failure into a Thrift error reply itself, so what
            # escapes it is the decoding of the client's bytes: the request's fault, answered with 400.
            return Response(400, f"malformed Thrift message: {type(e).__name__}: {e}\n".encode()[:2000])
        return Response(200, out.getvalue(), content_type=content_type)
