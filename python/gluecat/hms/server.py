"""``gluecat serve``: Hive Metastore Thrift calls over HTTP(S) POST with Basic authentication.

The Thrift protocol is chosen by Content-Type: ``application/vnd.apache.thrift.json`` for TJSONProtocol
(the protocol document's format) and ``application/x-thrift`` for TBinaryProtocol (what Hive 4, Trino
and Presto send over HTTP). Each request is served on its own thread with socket timeouts and a body
size limit, so a slow or broken client cannot stall the others.
"""

from __future__ import annotations

import base64
import binascii
import functools
import hashlib
import hmac
import logging
import secrets
import ssl
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from thrift.protocol import TBinaryProtocol, TJSONProtocol
from thrift.Thrift import TMessageType
from thrift.transport import TTransport

from gluecat.hms import replies
from gluecat.hms.gen.hive_metastore import ThriftHiveMetastore, ttypes
from gluecat.hms.handler import Handler
from gluecat.hms.users import Verifier

log = logging.getLogger("gluecat.hms")

JSON_TYPE = "application/vnd.apache.thrift.json"
BINARY_TYPE = "application/x-thrift"
MAX_BODY = 16 * 1024 * 1024
SOCKET_TIMEOUT = 30.0
CACHE_SECONDS = 300.0
FAILURES_BEFORE_LOCKOUT = 20
LOCKOUT_SECONDS = 60.0


class Authenticator:
    """Basic credentials checked against the users file.

    A credential that verified is remembered (as a keyed hash, never in clear) for a few minutes, so a
    client does not pay a slow password hash per request. After repeated failures from one address,
    further unknown credentials from it are refused without hashing for a while: a flood of bad
    attempts cannot take the CPU from good clients, whose remembered credentials still pass.
    """

    def __init__(self, users_file: Path) -> None:
        self.verifier = Verifier(users_file)
        self._key = secrets.token_bytes(32)
        self._good: dict[bytes, tuple[str, float]] = {}
        self._failures: dict[str, list[float]] = {}
        self._lock = threading.Lock()

    def check(self, header: str | None, address: str) -> str | None:
        """The authenticated user name, or None."""
        if not header or not header.startswith("Basic "):
            return None
        token = hmac.new(self._key, header.encode(), hashlib.sha256).digest()
        now = time.monotonic()
        with self._lock:
            known = self._good.get(token)
            if known is not None and known[1] > now and self.verifier.users().get(known[0]) is not None:
                return known[0]
            recent = [t for t in self._failures.get(address, []) if t > now - LOCKOUT_SECONDS]
            self._failures[address] = recent
            if len(recent) >= FAILURES_BEFORE_LOCKOUT:
                log.warning("refused a credential from %s: too many failed attempts", address)
                return None
        try:
            user, _, password = base64.b64decode(header[6:], validate=True).decode().partition(":")
        except (binascii.Error, UnicodeDecodeError, ValueError):
            user, password = "", ""
        ok = bool(user) and self.verifier.verify(user, password)
        with self._lock:
            if ok:
                self._good[token] = (user, now + CACHE_SECONDS)
                return user
            self._failures.setdefault(address, []).append(now)
        log.warning("failed authentication for user %r from %s", user, address)
        return None


SERVED = (
    "get_all_databases",
    "get_databases",
    "get_database",
    "get_all_tables",
    "get_tables",
    "get_table",
    "get_tables_by_type",
    "get_partition_names",
    "get_partitions",
)


# The calls whose replies are cached, with their argument fields in the handler's parameter order.
CACHED = {
    "get_partitions": ("db_name", "tbl_name", "max_parts"),
    "get_partition_names": ("db_name", "tbl_name", "max_parts"),
    "get_table": ("dbname", "tbl_name"),
}


class _Processor(ThriftHiveMetastore.Processor):
    """The generated processor, answering UNKNOWN_METHOD for every method gluecat does not serve.

    get_partitions, get_partition_names and get_table replies are cached, encoded, while the warehouse
    version stays the same (hms/replies.py); their errors take the generated path.
    """

    def __init__(self, handler: Handler, reply_cache_bytes: int = replies.MAX_BYTES) -> None:
        super().__init__(handler)
        self._processMap = {name: self._processMap[name] for name in SERVED}
        if reply_cache_bytes > 0:
            for name, fields in CACHED.items():
                self._processMap[name] = functools.partial(_Processor._cached, name=name, fields=fields)
        self.replies = replies.ReplyCache(reply_cache_bytes)

    def _cached(self, seqid: int, iprot: Any, oprot: Any, *, name: str, fields: tuple[str, ...]) -> None:
        args = getattr(ThriftHiveMetastore, f"{name}_args")()
        args.read(iprot)
        iprot.readMessageEnd()
        key = tuple(getattr(args, f) for f in fields)
        version = self._handler.catalog.warehouse_version()
        result_type = getattr(ThriftHiveMetastore, f"{name}_result")

        def compute() -> Any:
            return result_type(success=getattr(self._handler, name)(*key))

        try:
            replies.answer(self.replies, version, name, key, seqid, oprot, compute)
        except (ttypes.NoSuchObjectException, ttypes.MetaException) as e:
            # Answered as the IDL declares it: the result field whose type is the exception's.
            result = result_type()
            for spec in result_type.thrift_spec:
                if spec is not None and spec[3] is not None and spec[3][0] is type(e):
                    setattr(result, spec[2], e)
                    break
            else:
                raise
            oprot.writeMessageBegin(name, TMessageType.REPLY, seqid)
            result.write(oprot)
            oprot.writeMessageEnd()
            oprot.trans.flush()


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128

    def __init__(
        self, address: tuple[str, int], catalog: Any, users_file: Path, path: str, reply_cache_bytes: int
    ) -> None:
        self.processor = _Processor(Handler(catalog), reply_cache_bytes)
        self.auth = Authenticator(users_file)
        self.thrift_path = path
        super().__init__(address, _RequestHandler)


class _RequestHandler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"
    timeout = SOCKET_TIMEOUT

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("%s " + format, self.address_string(), *args)

    def _reply(
        self,
        status: int,
        body: bytes = b"",
        content_type: str = "text/plain",
        extra: dict[str, str] | None = None,
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        self._reply(405, b"POST Thrift messages to this endpoint\n", extra={"Allow": "POST"})

    def do_POST(self) -> None:
        if self.path.split("?", 1)[0] != self.server.thrift_path:
            self._reply(404, b"not found\n")
            return
        if self.server.auth.check(self.headers.get("Authorization"), self.client_address[0]) is None:
            self.close_connection = True
            self._reply(401, extra={"WWW-Authenticate": 'Basic realm="gluecat"'})
            return
        try:
            length = int(self.headers.get("Content-Length", ""))
        except ValueError:
            self._reply(411, b"a Content-Length is required\n")
            return
        if length < 0 or length > MAX_BODY:
            self.close_connection = True
            self._reply(413, f"the body may be at most {MAX_BODY} bytes\n".encode())
            return
        body = self.rfile.read(length)
        types = [
            t.split(";", 1)[0].strip().lower() for t in self.headers.get_all("Content-Type") or [BINARY_TYPE]
        ]
        # Stock Thrift HTTP clients always send application/x-thrift, adding any type of their own as a
        # second header; a JSON message also always starts with '[', which no binary message does.
        json_body = JSON_TYPE in types or (BINARY_TYPE in types and body[:1] == b"[")
        content_type = JSON_TYPE if json_body else types[-1]
        factory: Any
        if content_type == JSON_TYPE:
            factory = TJSONProtocol.TJSONProtocolFactory()
        elif content_type in (BINARY_TYPE, "application/octet-stream"):
            # The C-accelerated codec (3x faster on partition lists), with limits that stop a forged
            # length from allocating more than the body could hold.
            factory = TBinaryProtocol.TBinaryProtocolAcceleratedFactory(
                string_length_limit=MAX_BODY, container_length_limit=MAX_BODY
            )
        else:
            self._reply(415, f"use Content-Type {JSON_TYPE} or {BINARY_TYPE}\n".encode())
            return
        out = TTransport.TMemoryBuffer()
        try:
            self.server.processor.process(
                factory.getProtocol(TTransport.TMemoryBuffer(body)), factory.getProtocol(out)
            )
        except Exception as e:
            # The generated processor turns a handler's failure into a Thrift error reply itself, so
            # what escapes it is the decoding of the client's bytes (the C codec raises OverflowError,
            # MemoryError, ... on forged lengths): the request's fault, answered with 400.
            self._reply(400, f"malformed Thrift message: {type(e).__name__}: {e}\n".encode()[:2000])
            return
        self._reply(200, out.getvalue(), content_type=content_type)


class HiveMetastoreServer:
    """A running endpoint; ``port`` is the bound port (useful with port 0)."""

    def __init__(
        self,
        catalog: Any,
        users_file: str | Path,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        path: str = "/",
        tls_cert: str | None = None,
        tls_key: str | None = None,
        reply_cache_bytes: int = replies.MAX_BYTES,
    ) -> None:
        self.httpd = _Server((host, port), catalog, Path(users_file), path, reply_cache_bytes)
        self.tls = tls_cert is not None
        if tls_cert is not None:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.minimum_version = ssl.TLSVersion.TLSv1_2
            context.load_cert_chain(tls_cert, tls_key)
            self.httpd.socket = context.wrap_socket(self.httpd.socket, server_side=True)
        self.host = host
        self.port = int(self.httpd.server_address[1])
        self.path = path
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"{'https' if self.tls else 'http'}://{self.host}:{self.port}{self.path}"

    def serve_forever(self) -> None:
        self.httpd.serve_forever(poll_interval=0.2)

    def start(self) -> HiveMetastoreServer:
        self._thread = threading.Thread(target=self.serve_forever, name="gluecat-hms", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
