"""An HTTP/1.1 server on serving/connections.py's event loop: request heads and bodies read under
deadlines and bounds, complete requests handed to a worker thread.

What a request means is the handler's business (a ``Router``, serving/router.py); nothing here knows
Thrift or any other protocol.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import socket
import ssl
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from email.utils import formatdate
from http import HTTPStatus

from gluecat.serving.connections import Channel, Connection, EventLoopServer, Limits, log

__all__ = ["BadRequest", "Headers", "HttpServer", "Limits", "Request", "Response", "parse_head"]

_DECIMAL = re.compile(r"-?[0-9]+")  # a negative length is read, to be refused as too large (413)


class Headers:
    """Header fields in the order received; names compare without case."""

    def __init__(self, fields: list[tuple[str, str]]) -> None:
        self.fields = fields

    def get(self, name: str, default: str | None = None) -> str | None:
        name = name.lower()
        for k, v in self.fields:
            if k.lower() == name:
                return v
        return default

    def get_all(self, name: str) -> list[str]:
        name = name.lower()
        return [v for k, v in self.fields if k.lower() == name]


@dataclass
class Request:
    method: str
    target: str
    headers: Headers
    body: bytes
    client: tuple[str, int]

    @property
    def path(self) -> str:
        return self.target.split("?", 1)[0]


@dataclass
class Response:
    status: int
    body: bytes = b""
    content_type: str = "text/plain"
    headers: dict[str, str] = field(default_factory=dict)
    close: bool = False
    """Close the connection after this reply (the client's next request starts a new one)."""

    def encode(self, keep_alive: bool) -> bytes:
        try:
            reason = HTTPStatus(self.status).phrase
        except ValueError:
            reason = ""
        lines = [
            f"HTTP/1.1 {self.status} {reason}",
            # RFC 9110 asks a server with a clock for it; AWS sends it, and SDKs correct a client's
            # skewed clock by it.
            f"Date: {http_date()}",
            f"Content-Type: {self.content_type}",
            f"Content-Length: {len(self.body)}",
            *(f"{k}: {v}" for k, v in self.headers.items()),
        ]
        if not keep_alive:
            lines.append("Connection: close")
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + self.body


_date: tuple[int, str] = (0, "")


def http_date() -> str:
    """Now as a Date header's IMF-fixdate ("Fri, 27 Nov 2026 09:25:59 GMT"), formatted once a second."""
    global _date
    second = int(time.time())
    if _date[0] != second:
        _date = (second, formatdate(second, usegmt=True))
    return _date[1]


Handler = Callable[[Request], Response]


class BadRequest(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def parse_head(head: bytes) -> tuple[str, str, str, Headers]:
    """The request line and header fields of a head that ends with an empty line."""
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ")
    if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
        raise BadRequest(400, "not an HTTP/1.x request line")
    fields = []
    for line in lines[1:]:
        if not line:
            continue
        name, colon, value = line.partition(":")
        if not colon or not name or name != name.strip() or line[0] in " \t":
            raise BadRequest(400, f"malformed header line {line[:80]!r}")
        fields.append((name, value.strip()))
    if len(fields) > 100:
        raise BadRequest(431, "more than 100 header fields")
    return parts[0], parts[1], parts[2], Headers(fields)


class HttpServer(EventLoopServer):
    """Serves ``handler`` on a bound listening socket until ``stop()``."""

    def __init__(
        self,
        sock: socket.socket,
        handler: Handler,
        limits: Limits | None = None,
        tls: ssl.SSLContext | None = None,
        early: Callable[[Request], Response | None] | None = None,
    ) -> None:
        super().__init__(sock, limits, tls)
        self.handler = handler
        self.early = early

    async def _one_request(self, conn: Connection, channel: Channel, peer: tuple[str, int]) -> bool:
        """Reads, serves and answers one request; False when the connection is to be closed."""
        limits = self.limits
        with conn.deadline(limits.idle_timeout):
            head = await channel.read_head(limits.max_head_bytes)
        if head is None:
            return await self._refuse(channel, 431, "the request head is too large")
        try:
            method, target, version, headers = parse_head(head)
        except BadRequest as e:
            return await self._refuse(channel, e.status, str(e))
        if self.early is not None:
            # A route may refuse a request from its head alone (its own limits, in its own format);
            # the body is then never read.
            refusal = self.early(Request(method, target, headers, b"", peer))
            if refusal is not None:
                return await self._refuse_with(channel, refusal)
        if headers.get("Transfer-Encoding") is not None:
            return await self._refuse(channel, 411, "send the body with a Content-Length, not chunked")
        lengths = headers.get_all("Content-Length")
        if not lengths and method in ("POST", "PUT"):
            return await self._refuse(channel, 411, "a Content-Length is required")
        # Digits only (a sign aside), one value however often repeated (RFC 9112, 6.3): a length read one
        # way here and another by a proxy in front would let a body pass as a request of its own.
        if len(set(lengths)) > 1 or not all(_DECIMAL.fullmatch(v) for v in lengths):
            return await self._refuse(channel, 400, "Content-Length is not one number")
        length = int(lengths[0]) if lengths else 0
        if length < 0 or length > limits.max_body_bytes:
            return await self._refuse(channel, 413, f"the body may be at most {limits.max_body_bytes} bytes")
        if self._buffered + length > limits.max_buffered_bytes:
            return await self._refuse(channel, 503, "too many request bodies in memory; retry", retry=True)
        connection = (headers.get("Connection") or "").lower()
        keep_alive = "close" not in connection and (version != "HTTP/1.0" or "keep-alive" in connection)
        self._buffered += length
        try:
            with conn.deadline(limits.request_timeout):
                if length and (headers.get("Expect") or "").lower() == "100-continue":
                    await channel.send(b"HTTP/1.1 100 Continue\r\n\r\n")
                body = await channel.read_exactly(length)
            conn.busy = True
            request = Request(method, target, headers, body, peer)
            del body
            response = await channel.loop.run_in_executor(self._pool, self._handle, request)
        finally:
            self._buffered -= length
        keep_alive = keep_alive and not response.close
        with conn.deadline(limits.request_timeout):
            await channel.send(response.encode(keep_alive))
        return keep_alive

    def _handle(self, request: Request) -> Response:
        try:
            return self.handler(request)
        except Exception:
            log.exception("%s %s from %s failed", request.method, request.path, request.client[0])
            return Response(500, b"internal error\n", close=True)

    async def _refuse(self, channel: Channel, status: int, message: str, retry: bool = False) -> bool:
        """Answers a request that will not be read, and closes its connection."""
        extra = {"Retry-After": "1"} if retry else {}
        return await self._refuse_with(channel, Response(status, f"{message}\n".encode(), headers=extra))

    async def _refuse_with(self, channel: Channel, response: Response) -> bool:
        async with asyncio.timeout(self.limits.request_timeout):
            await channel.send(response.encode(keep_alive=False))
        # Closing with unread bytes would reset the connection and could destroy the reply before
        # the client reads it: discard what it still sends, for a moment, first.
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(1.0):
                await channel.discard(1024 * 1024)
        return False
