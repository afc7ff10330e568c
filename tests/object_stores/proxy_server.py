"""An HTTP/1.1 reverse proxy in front of an object store, run as a process of its own (see proxy.py).

    python3 tests/object_stores/proxy_server.py --upstream http://127.0.0.1:PORT [--style s3|azure|gcs]

It prints one JSON line, ``{"port": ..., "control_port": ...}``, once both ports listen. Requests to
``port`` are forwarded to the upstream server byte for byte: the request line, every header (Host
included, as Signature V4 signs it) and the body, streamed whatever their size; keep-alive connections
stay open as long as the client and the server keep them; a client's ``Expect: 100-continue`` waits for
the server's own 100, and a server's early reply (a 412 before the body) reaches the client. On the way
it

- counts each request by kind (get, head, list, put, conditional_put, delete, other), as it arrives;
- waits ``latency`` seconds before forwarding each request;
- applies the first fault rule a request matches: answer 500 InternalError or 503 SlowDown (ServerBusy
  on Azure) without forwarding, drop the connection before forwarding, drop it after forwarding (the
  request took effect, the client sees no reply), or delay the request (``phase`` before) or its reply
  (``phase`` after) by ``seconds``.

``control_port`` takes JSON: ``GET /counts``, ``POST /reset``, ``PUT /latency {"seconds": s}``,
``POST /rules {rule}`` (answers its id), ``GET /rules``, ``DELETE /rules``, ``GET /log``. A rule is
``{"action", "kinds": [...], "key": regex, "skip": n, "times": n, "probability": p, "seed": s,
"seconds": s, "phase": "before"|"after"}``: it matches a request of one of ``kinds`` (any when absent)
whose object key (a listing's prefix) ``key`` finds; past its first ``skip`` matches it fires on at
most ``times`` of them, each with ``probability``, drawn from a generator seeded with ``seed``.

Only the standard library is used, so it runs under any Python 3.11 without the test environment.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import random
import re
import socket
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Protocol
from urllib.parse import parse_qs, unquote, urlsplit

KINDS = ("get", "head", "list", "put", "conditional_put", "delete", "other")
ACTIONS = ("internal_error", "slow_down", "drop_before", "drop_after", "delay")
CONDITIONS = ("if-none-match", "if-match", "x-goog-if-generation-match", "x-goog-if-metageneration-match")
PIECE = 1 << 16
HEAD_LIMIT = 1 << 20
# An upstream connection idle for longer is not reused: a server may have closed it meanwhile, and a
# request whose body was already streamed could not be sent again.
IDLE_REUSE = 1.0
LOG_LIMIT = 100_000


class BadRequest(Exception):
    """The client sent something this proxy cannot frame."""


@dataclass
class Message:
    """A request or response head: the raw bytes, forwarded as they are, and what framing needs."""

    raw: bytes
    start: list[str]
    headers: dict[str, str]  # lower-case names; a repeated header's values joined by ", "

    @staticmethod
    def parse(raw: bytes) -> Message:
        lines = raw.decode("latin-1").split("\r\n")
        start = lines[0].split(" ", 2)
        if len(start) < 2:
            raise BadRequest(f"malformed start line {lines[0]!r}")
        headers: dict[str, str] = {}
        for line in lines[1:]:
            if not line:
                continue
            name, sep, value = line.partition(":")
            if not sep:
                raise BadRequest(f"malformed header line {line!r}")
            name = name.strip().lower()
            value = value.strip()
            headers[name] = f"{headers[name]}, {value}" if name in headers else value
        return Message(raw, start, headers)

    def tokens(self, name: str) -> set[str]:
        return {token.strip().lower() for token in self.headers.get(name, "").split(",") if token.strip()}


def classify(style: str, method: str, target: str, headers: dict[str, str]) -> tuple[str, str | None]:
    """The request's kind, and its object key (or a listing's prefix) where it has one."""
    url = urlsplit(target)
    query = parse_qs(url.query, keep_blank_values=True)
    conditional = any(name in headers for name in CONDITIONS) or any(
        name in query for name in ("ifGenerationMatch", "ifMetagenerationMatch")
    )
    path = url.path.lstrip("/")
    if style == "gcs" and (path.startswith(("storage/v1/", "upload/storage/v1/", "download/storage/v1/"))):
        return classify_gcs_json(method, path, query, conditional)
    if style == "azure":
        path = path.partition("/")[2]  # the account
    bucket, _, raw_key = path.partition("/")
    key = unquote(raw_key)
    prefix = query.get("prefix", [""])[0]
    if not bucket:
        return "other", None
    if not key:
        if style == "azure" and (method, query.get("comp")) in (("GET", ["list"]), ("POST", ["batch"])):
            # A batch is Azure's bulk delete, what obstore deletes with (S3's is POST ?delete).
            return ("list" if method == "GET" else "delete"), (prefix if method == "GET" else None)
        if style == "azure":
            return "other", None
        if method == "GET" and not set(query) - {
            "list-type",
            "prefix",
            "delimiter",
            "marker",
            "max-keys",
            "encoding-type",
            "start-after",
            "continuation-token",
            "fetch-owner",
            "startOffset",
            "start-offset",
        }:
            return "list", prefix
        if method == "POST" and "delete" in query:
            return "delete", None
        return "other", None
    if style == "azure":
        sub = query.get("comp", [None])[0]
        if method == "PUT" and sub in (None, "block", "blocklist"):
            return ("conditional_put" if conditional else "put"), key
        if sub is not None:
            return "other", key
    elif {"tagging", "acl", "retention", "legal-hold", "attributes", "torrent"} & set(query):
        return "other", key
    multipart = "uploadId" in query or "uploads" in query
    if method == "GET":
        return ("other" if multipart else "get"), key
    if method == "HEAD":
        return "head", key
    if method == "PUT":
        return ("conditional_put" if conditional else "put"), key
    if method == "DELETE":
        return ("other" if multipart else "delete"), key
    if method == "POST" and "uploadId" in query and conditional:
        return "conditional_put", key  # completing a multipart upload with a condition
    return "other", key


def classify_gcs_json(
    method: str, path: str, query: dict[str, list[str]], conditional: bool
) -> tuple[str, str | None]:
    parts = path.split("/")
    if parts[0] == "upload":
        if parts[3:] and parts[5:6] == ["o"] and method in ("POST", "PUT"):
            return ("conditional_put" if conditional else "put"), query.get("name", [None])[0]
        return "other", None
    if parts[0] == "download":
        return ("get" if method in ("GET", "HEAD") else "other"), unquote("/".join(parts[6:]))
    # storage/v1/b/{bucket}/o[/{object}]
    if parts[4:5] != ["o"]:
        return "other", None
    if len(parts) == 5 or parts[5:] == [""]:
        return ("list" if method == "GET" else "other"), query.get("prefix", [""])[0]
    key = unquote("/".join(parts[5:]))
    if method == "GET":
        return ("get" if query.get("alt") == ["media"] else "head"), key
    if method == "DELETE":
        return "delete", key
    return "other", key


@dataclass
class Rule:
    id: int
    action: str
    kinds: frozenset[str] | None
    key: re.Pattern[str] | None
    skip: int
    times: int | None
    probability: float
    seed: int
    seconds: float
    phase: str
    random: random.Random = field(repr=False)
    matched: int = 0
    fired: int = 0

    @staticmethod
    def from_json(id: int, spec: dict[str, Any]) -> Rule:
        action = spec.get("action")
        if action not in ACTIONS:
            raise ValueError(f"action must be one of {ACTIONS}, not {action!r}")
        kinds = spec.get("kinds")
        if kinds is not None and not set(kinds) <= set(KINDS):
            raise ValueError(f"kinds must be among {KINDS}, not {kinds!r}")
        phase = spec.get("phase", "before")
        if phase not in ("before", "after"):
            raise ValueError(f"phase must be 'before' or 'after', not {phase!r}")
        probability = float(spec.get("probability", 1.0))
        if not 0 <= probability <= 1:
            raise ValueError(f"probability must be within [0, 1], not {probability}")
        seed = int(spec.get("seed", 0))
        return Rule(
            id=id,
            action=action,
            kinds=None if kinds is None else frozenset(kinds),
            key=None if spec.get("key") is None else re.compile(spec["key"]),
            skip=int(spec.get("skip", 0)),
            times=None if spec.get("times") is None else int(spec["times"]),
            probability=probability,
            seed=seed,
            seconds=float(spec.get("seconds", 0.0)),
            phase=phase,
            random=random.Random(seed),
        )

    def fires(self, kind: str, key: str | None) -> bool:
        if self.kinds is not None and kind not in self.kinds:
            return False
        if self.key is not None and (key is None or not self.key.search(key)):
            return False
        self.matched += 1
        if self.matched <= self.skip or (self.times is not None and self.fired >= self.times):
            return False
        if self.probability < 1 and self.random.random() >= self.probability:
            return False
        self.fired += 1
        return True

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "action": self.action,
            "kinds": None if self.kinds is None else sorted(self.kinds),
            "key": None if self.key is None else self.key.pattern,
            "skip": self.skip,
            "times": self.times,
            "probability": self.probability,
            "seed": self.seed,
            "seconds": self.seconds,
            "phase": self.phase,
            "matched": self.matched,
            "fired": self.fired,
        }


ERRORS = {
    # style -> action -> (status line, content type, body)
    "s3": {
        "internal_error": (
            "500 Internal Server Error",
            "application/xml",
            "InternalError",
            "We encountered an internal error. Please try again.",
        ),
        "slow_down": ("503 Slow Down", "application/xml", "SlowDown", "Please reduce your request rate."),
    },
    "azure": {
        "internal_error": (
            "500 Internal Server Error",
            "application/xml",
            "InternalError",
            "The server encountered an internal error. Please retry the request.",
        ),
        "slow_down": (
            "503 Server Busy",
            "application/xml",
            "ServerBusy",
            "The server is currently unable to receive requests. Please retry your request.",
        ),
    },
    "gcs": {
        "internal_error": ("500 Internal Server Error", "application/json", "backendError", "Backend Error"),
        "slow_down": (
            "503 Service Unavailable",
            "application/json",
            "rateLimitExceeded",
            "The service is currently unavailable.",
        ),
    },
}


def error_reply(style: str, action: str, request_id: str, close: bool) -> bytes:
    status, content_type, code, message = ERRORS[style][action]
    if content_type == "application/json":
        number = int(status.split()[0])
        body = json.dumps(
            {"error": {"code": number, "message": message, "errors": [{"reason": code, "message": message}]}}
        )
    else:
        body = (
            '<?xml version="1.0" encoding="UTF-8"?>\n'
            f"<Error><Code>{code}</Code><Message>{message}</Message><RequestId>{request_id}</RequestId></Error>"
        )
    data = body.encode()
    head = [
        f"HTTP/1.1 {status}",
        f"Content-Type: {content_type}",
        f"Content-Length: {len(data)}",
        f"x-amz-request-id: {request_id}",
        f"x-ms-request-id: {request_id}",
        f"x-ms-error-code: {code}",
    ]
    if close:
        head.append("Connection: close")
    return ("\r\n".join(head) + "\r\n\r\n").encode() + data


class Source(Protocol):
    async def readuntil(self, separator: bytes) -> bytes: ...
    async def read(self, size: int) -> bytes: ...


class Destination(Protocol):
    def write(self, data: bytes) -> None: ...
    async def drain(self) -> None: ...


class Sink:
    """Where a body goes: a connection, until it fails, and from then on nowhere.

    A body is read to its end even when its reader can no longer take it, so that the connection it
    comes from stays usable, and a server that refused a request early (and closed) can still be
    heard: its reply is read after the request's body.
    """

    def __init__(self, writer: Destination | None) -> None:
        self.writer = writer
        self.broken = False

    def write(self, data: bytes) -> None:
        if self.writer is not None and not self.broken:
            self.writer.write(data)

    async def drain(self) -> None:
        if self.writer is not None and not self.broken:
            try:
                await self.writer.drain()
            except ConnectionError:
                self.broken = True


async def copy_exactly(reader: Source, sink: Sink, length: int) -> None:
    while length > 0:
        piece = await reader.read(min(PIECE, length))
        if not piece:
            raise asyncio.IncompleteReadError(b"", length)
        length -= len(piece)
        sink.write(piece)
        await sink.drain()


async def copy_chunked(reader: Source, sink: Sink) -> None:
    """Relays a chunked body as it is, chunk-size lines, extensions and trailers included."""
    while True:
        line = await reader.readuntil(b"\r\n")
        sink.write(line)
        size = int(line.split(b";", 1)[0].strip(), 16)
        if size == 0:
            while True:
                trailer = await reader.readuntil(b"\r\n")
                sink.write(trailer)
                if trailer == b"\r\n":
                    break
            await sink.drain()
            return
        await copy_exactly(reader, sink, size + 2)


async def copy_body(message: Message, reader: Source, sink: Sink) -> None:
    """Relays the body that follows a request's or a response's head."""
    if "chunked" in message.tokens("transfer-encoding"):
        await copy_chunked(reader, sink)
    elif "content-length" in message.headers:
        await copy_exactly(reader, sink, int(message.headers["content-length"]))


class Upstream:
    """A connection to the server, on a plain socket rather than an asyncio transport.

    A server that answers before it has read a whole request body (a 412 for a create of a name
    taken) and closes resets the connection; an asyncio transport that fails to send then stops
    reading, and the reply, though it arrived, is lost. On a socket the reply is still read after a
    failed send, as a client reading its own socket would read it.
    """

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.buffer = bytearray()
        self.pending = bytearray()
        self.ended = False
        self.idle_since = time.monotonic()

    @staticmethod
    async def open(host: str, port: int) -> Upstream:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setblocking(False)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            await asyncio.get_running_loop().sock_connect(sock, (host, port))
        except BaseException:
            sock.close()
            raise
        return Upstream(sock)

    def reusable(self) -> bool:
        """Still open, with nothing unasked for waiting, and not idle long enough to be closed by now."""
        if self.buffer or time.monotonic() - self.idle_since > IDLE_REUSE:
            return False
        try:
            self.sock.recv(1, socket.MSG_PEEK)  # the end, or data nobody asked for: not reusable
            return False
        except BlockingIOError:
            return True
        except OSError:
            return False

    async def fill(self) -> bool:
        if self.ended:
            return False
        try:
            data = await asyncio.get_running_loop().sock_recv(self.sock, PIECE)
        except ConnectionError:
            data = b""  # a reset after the reply: the reply was read first
        if not data:
            self.ended = True
            return False
        self.buffer += data
        return True

    async def readuntil(self, separator: bytes) -> bytes:
        while (end := self.buffer.find(separator)) < 0:
            if len(self.buffer) > HEAD_LIMIT:
                raise BadRequest("a reply head of more than a megabyte")
            if not await self.fill():
                raise asyncio.IncompleteReadError(bytes(self.buffer), None)
        end += len(separator)
        data = bytes(self.buffer[:end])
        del self.buffer[:end]
        return data

    async def read(self, size: int) -> bytes:
        if not self.buffer and not await self.fill():
            return b""
        data = bytes(self.buffer[:size])
        del self.buffer[:size]
        return data

    def write(self, data: bytes) -> None:
        self.pending += data

    async def drain(self) -> None:
        data, self.pending = bytes(self.pending), bytearray()
        await asyncio.get_running_loop().sock_sendall(self.sock, data)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)
        self.sock.close()


@dataclass
class Connection:
    """A client's connection and the upstream connection its requests go through, opened on demand."""

    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter
    current: Upstream | None = None

    async def upstream(self, host: str, port: int) -> Upstream:
        if self.current is not None and not self.current.reusable():
            self.drop_upstream()
        if self.current is None:
            self.current = await Upstream.open(host, port)
        return self.current

    def drop_upstream(self) -> None:
        if self.current is not None:
            self.current.close()
            self.current = None


class Proxy:
    def __init__(self, host: str, port: int, style: str, latency: float) -> None:
        self.host = host
        self.port = port
        self.style = style
        self.latency = latency
        self.counts = dict.fromkeys(KINDS, 0)
        self.connections = 0
        self.rules: list[Rule] = []
        self.next_rule = 1
        self.log: list[dict[str, Any]] = []
        self.requests = 0

    def reset(self) -> None:
        self.counts = dict.fromkeys(KINDS, 0)
        self.connections = 0
        self.log = []

    # The proxied port.

    async def serve_client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        connection = Connection(reader, writer)
        ending = "keep"
        try:
            while ending == "keep":
                try:
                    raw = await reader.readuntil(b"\r\n\r\n")
                except (asyncio.IncompleteReadError, ConnectionError):
                    ending = "close"
                    break
                ending = await self.serve_request(Message.parse(raw), connection)
        except (
            ConnectionError,
            asyncio.IncompleteReadError,
            asyncio.LimitOverrunError,
            BadRequest,
            ValueError,
        ):
            ending = "drop"
        except asyncio.CancelledError:
            # The proxy is stopping in the middle of a request (a client that exited mid-body): end
            # quietly, since Python 3.11's stream callback logs a cancelled handler as an error.
            ending = "drop"
        finally:
            connection.drop_upstream()
            if ending == "drop":
                writer.transport.abort()
            else:
                writer.close()
                with contextlib.suppress(ConnectionError):
                    await writer.wait_closed()

    async def serve_request(self, request: Message, connection: Connection) -> str:
        """Serves one request: 'keep' the client's connection for the next, 'close' it, or 'drop' it."""
        reader, writer = connection.reader, connection.writer
        method, target = request.start[0], request.start[1]
        kind, key = classify(self.style, method, target, request.headers)
        self.counts[kind] += 1
        self.requests += 1
        request_id = f"gluecat-proxy-{self.requests}"
        entry: dict[str, Any] = {
            "kind": kind,
            "method": method,
            "target": target,
            "key": key,
            "status": None,
            "fault": None,
        }
        if len(self.log) < LOG_LIMIT:
            self.log.append(entry)
        rule = next((rule for rule in self.rules if rule.fires(kind, key)), None)
        action = None if rule is None else rule.action
        entry["fault"] = action
        client_closes = "close" in request.tokens("connection") or request.start[2:] == ["HTTP/1.0"]
        expects = "100-continue" in request.tokens("expect")
        if self.latency:
            await asyncio.sleep(self.latency)
        if action == "drop_before":
            return "drop"
        if action in ("internal_error", "slow_down"):
            assert action is not None
            # A client that waits for 100 Continue sends no body: the connection ends with the reply.
            if not expects:
                await copy_body(request, reader, Sink(None))
            writer.write(error_reply(self.style, action, request_id, close=expects or client_closes))
            await writer.drain()
            entry["status"] = int(ERRORS[self.style][action][0].split()[0])
            return "close" if expects or client_closes else "keep"
        if rule is not None and action == "delay" and rule.phase == "before":
            await asyncio.sleep(rule.seconds)
        try:
            upstream = await connection.upstream(self.host, self.port)
        except OSError as error:
            return await self.bad_gateway(request, connection, entry, error)
        # The body streams to the server while its reply is awaited: a server may answer before it has
        # read the whole body (a 412 for a create of a name taken), and then stop reading it; and a
        # client that expects 100 Continue sends its body once the server's 100 is passed on, or never.
        sent = Sink(upstream)
        sent.write(request.raw)
        await sent.drain()
        pump = asyncio.ensure_future(copy_body(request, reader, sent))
        replying = asyncio.ensure_future(self.read_response(upstream, writer if expects else None))
        try:
            await asyncio.wait({pump, replying}, return_when=asyncio.FIRST_COMPLETED)
            if pump.done():
                pump.result()  # the client failed in the middle of its body
        except BaseException:
            replying.cancel()
            raise
        try:
            response = await replying
        except (ConnectionError, asyncio.IncompleteReadError, BadRequest) as error:
            connection.drop_upstream()  # unblocks the pump, which reads the client's body to its end
            if action == "drop_after":
                pump.cancel()
                return "drop"
            await pump
            return await self.bad_gateway(None, connection, entry, error)
        answered_early = not pump.done()
        if answered_early and expects:
            pump.cancel()  # the client may never send the body: the connection ends with the reply
            client_closes = True
        elif answered_early:
            sent.broken = True  # the rest of the body goes nowhere: the server has answered
        entry["status"] = int(response.start[1])
        bodyless = method == "HEAD" or response.start[1] in ("204", "304")
        framed = "chunked" in response.tokens("transfer-encoding") or "content-length" in response.headers
        upstream_closes = (
            answered_early or "close" in response.tokens("connection") or not (bodyless or framed)
        )
        if action == "drop_after":
            await self.relay_response_body(response, bodyless, framed, upstream, Sink(None))
            connection.drop_upstream()
            pump.cancel()
            return "drop"
        if rule is not None and action == "delay" and rule.phase == "after":
            await asyncio.sleep(rule.seconds)
        received = Sink(writer)
        received.write(response.raw)
        await self.relay_response_body(response, bodyless, framed, upstream, received)
        await received.drain()
        if upstream_closes:
            connection.drop_upstream()
        else:
            upstream.idle_since = time.monotonic()
        if not pump.cancelled():
            await pump
        if received.broken:
            return "drop"
        return "close" if client_closes or upstream_closes else "keep"

    @staticmethod
    async def bad_gateway(
        request: Message | None, connection: Connection, entry: dict[str, Any], error: BaseException
    ) -> str:
        """Answers 502 when the server cannot be reached or fails (after the request's body, if unread)."""
        if request is not None:
            await copy_body(request, connection.reader, Sink(None))
        body = f"gluecat proxy: the upstream server failed: {error!r}".encode()
        connection.writer.write(
            b"HTTP/1.1 502 Bad Gateway\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s"
            % (len(body), body)
        )
        await Sink(connection.writer).drain()
        entry["status"] = 502
        return "close"

    @staticmethod
    async def read_response(reader: Source, client: asyncio.StreamWriter | None) -> Message:
        """The server's final reply; its first 100 Continue is passed on to a ``client`` that expects one."""
        while True:
            response = Message.parse(await reader.readuntil(b"\r\n\r\n"))
            if response.start[1] == "100" and client is not None:
                client.write(response.raw)
                await client.drain()
                client = None
            elif not response.start[1].startswith("1"):
                return response

    @staticmethod
    async def relay_response_body(
        response: Message, bodyless: bool, framed: bool, reader: Source, sink: Sink
    ) -> None:
        if bodyless:
            return
        if not framed:  # delimited by the end of the connection
            while piece := await reader.read(PIECE):
                sink.write(piece)
                await sink.drain()
            return
        await copy_body(response, reader, sink)

    # The control port.

    async def serve_control(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            request = Message.parse(await reader.readuntil(b"\r\n\r\n"))
            body = await reader.readexactly(int(request.headers.get("content-length", "0")))
            status, answer = self.control(
                request.start[0], request.start[1], json.loads(body) if body else None
            )
        except Exception as error:  # any mistake of the test is answered, not fatal to the proxy
            status, answer = 400, {"error": repr(error)}
        data = json.dumps(answer).encode()
        writer.write(
            b"HTTP/1.1 %d -\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s"
            % (status, len(data), data)
        )
        await writer.drain()
        writer.close()

    def control(self, method: str, path: str, body: Any) -> tuple[int, Any]:
        if (method, path) == ("GET", "/counts"):
            return 200, {"counts": self.counts, "connections": self.connections}
        if (method, path) == ("POST", "/reset"):
            self.reset()
            return 200, {}
        if (method, path) == ("PUT", "/latency"):
            seconds = float(body["seconds"])
            if seconds < 0:
                raise ValueError("latency must not be negative")
            self.latency = seconds
            return 200, {}
        if (method, path) == ("POST", "/rules"):
            rule = Rule.from_json(self.next_rule, body)
            self.next_rule += 1
            self.rules.append(rule)
            return 200, {"id": rule.id}
        if (method, path) == ("GET", "/rules"):
            return 200, [rule.to_json() for rule in self.rules]
        if (method, path) == ("DELETE", "/rules"):
            self.rules = []
            return 200, {}
        if (method, path) == ("GET", "/log"):
            return 200, self.log
        return 404, {"error": f"no {method} {path}"}


async def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--upstream", required=True, help="http://host:port of the object store")
    parser.add_argument(
        "--style", choices=("s3", "azure", "gcs"), default="s3", help="how request kinds are told apart"
    )
    parser.add_argument(
        "--latency", type=float, default=0.0, help="seconds added before forwarding each request"
    )
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--control-port", type=int, default=0)
    args = parser.parse_args()
    upstream = urlsplit(args.upstream)
    if upstream.scheme != "http" or upstream.hostname is None or upstream.port is None:
        parser.error("--upstream must be http://host:port")
    proxy = Proxy(upstream.hostname, upstream.port, args.style, args.latency)
    proxied = await asyncio.start_server(proxy.serve_client, "127.0.0.1", args.port, limit=HEAD_LIMIT)
    control = await asyncio.start_server(
        proxy.serve_control, "127.0.0.1", args.control_port, limit=HEAD_LIMIT
    )
    ports = {"port": proxied.sockets[0].getsockname()[1], "control_port": control.sockets[0].getsockname()[1]}
    print(json.dumps(ports), flush=True)
    async with proxied, control:
        await asyncio.gather(proxied.serve_forever(), control.serve_forever())


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        sys.exit(0)
