"""Thrift over plain TCP (or TLS): TBinaryProtocol messages on an unframed socket, as stock Hive
Metastore clients send them, on serving/connections.py's event loop.

An unframed message carries no length: where it ends is known only by walking its structure. The
event loop does that as bytes arrive (``MessageScanner``, resumable, so a message arriving in many
pieces is walked once), refusing what TBinaryProtocol cannot be: an unknown type, a negative or
oversized length, a container deeper than ``MAX_DEPTH``, a message over ``Limits.max_body_bytes``.
Only a complete, well-formed message reaches a worker thread. The first byte of a message must come
within ``idle_timeout`` of the connection's start or last reply, the rest within ``request_timeout``;
a reply must be taken within ``request_timeout``. A refused message closes its connection, as a
Thrift server does (the stream cannot be resynchronised).

What a message means is the handler's business; nothing here knows Hive.
"""

from __future__ import annotations

import socket
import ssl
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NoReturn

from thrift.Thrift import TType

from gluecat.serving.connections import Channel, Connection, EventLoopServer, Limits, log

__all__ = ["FramingError", "Limits", "MessageScanner", "Session", "ThriftTcpServer"]

MAX_NAME_BYTES = 1024
"""A method name longer than this is refused (Hive's longest is under 60)."""
MAX_DEPTH = 64
"""Nested structs and containers at most."""

_VERSION_1 = 0x80010000
_STOP, _STRING, _STRUCT, _MAP = TType.STOP, TType.STRING, TType.STRUCT, TType.MAP
_FIXED = {TType.BOOL: 1, TType.BYTE: 1, TType.DOUBLE: 8, TType.I16: 2, TType.I32: 4, TType.I64: 8}
_TYPES = frozenset({*_FIXED, _STRING, _STRUCT, _MAP, TType.SET, TType.LIST})


class FramingError(ValueError):
    """Bytes that are not a TBinaryProtocol message (or one too large)."""


def _i32(buf: bytearray, at: int) -> int:
    return int.from_bytes(buf[at : at + 4], "big", signed=True)


class MessageScanner:
    """Finds where one TBinaryProtocol message ends in a growing buffer, checking its structure.

    ``scan(buf)`` returns the message's length once ``buf`` holds it whole, None while more is needed
    (call again with the buffer grown: the walk resumes where it stopped), and raises FramingError for
    bytes no TBinaryProtocol writer produces. Then ``reset()`` for the next message.

    >>> s = MessageScanner(1000)
    >>> msg = bytes.fromhex("80010001 00000001") + b"f" + bytes.fromhex("00000007 0b0001 00000002") + b"db" + b"\\x00"
    >>> s.scan(bytearray(msg[:10])) is None, s.scan(bytearray(msg)) == len(msg)
    (True, True)
    """

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self.reset()

    def reset(self) -> None:
        self.pos = 0
        # Frames: ["s"] a struct's fields; ["v", type] one value to read; ["c", type, left] a list's or
        # set's elements; ["m", key type, value type, left] a map's keys and values, alternating.
        self.stack: list[list[int | str]] | None = None

    def scan(self, buf: bytearray) -> int | None:
        n = len(buf)
        if self.stack is None and not self._header(buf, n):
            if n > self.max_bytes:
                self._too_large()
            return None
        stack = self.stack
        assert stack is not None
        pos = self.pos
        try:
            while stack:
                top = stack[-1]
                kind = top[0]
                if kind == "s":
                    if pos >= n:
                        return None
                    t = buf[pos]
                    if t == _STOP:
                        pos += 1
                        stack.pop()
                        continue
                    if t not in _TYPES:
                        raise FramingError(f"unknown field type {t} at byte {pos}")
                    if pos + 3 > n:
                        return None
                    pos += 3
                    stack.append(["v", t])
                    continue
                if kind == "c":
                    if top[2] == 0:
                        stack.pop()
                        continue
                    top[2] = int(top[2]) - 1
                    stack.append(["v", top[1]])
                    continue
                if kind == "m":
                    if top[3] == 0:
                        stack.pop()
                        continue
                    top[3] = int(top[3]) - 1
                    stack.append(["v", top[1] if int(top[3]) % 2 else top[2]])
                    continue
                # one value of type top[1]
                t = int(top[1])
                size = _FIXED.get(t)
                if size is not None:
                    if pos + size > n:
                        return None
                    pos += size
                    stack.pop()
                elif t == _STRING:
                    if pos + 4 > n:
                        return None
                    length = _i32(buf, pos)
                    if length < 0 or pos + 4 + length > self.max_bytes:
                        raise FramingError(f"a string of {length} bytes at byte {pos}")
                    if pos + 4 + length > n:
                        return None
                    pos += 4 + length
                    stack.pop()
                elif t == _STRUCT:
                    stack[-1] = ["s"]
                elif t == _MAP:
                    if pos + 6 > n:
                        return None
                    kt, vt, count = buf[pos], buf[pos + 1], _i32(buf, pos + 2)
                    if count and (kt not in _TYPES or vt not in _TYPES):
                        raise FramingError(f"a map of unknown types {kt}, {vt} at byte {pos}")
                    if count < 0 or pos + 6 + 2 * count > self.max_bytes:
                        raise FramingError(f"a map of {count} entries at byte {pos}")
                    pos += 6
                    stack[-1] = ["m", kt, vt, 2 * count]
                else:  # list or set
                    if pos + 5 > n:
                        return None
                    et, count = buf[pos], _i32(buf, pos + 1)
                    if count and et not in _TYPES:
                        raise FramingError(f"a list of unknown type {et} at byte {pos}")
                    if count < 0 or pos + 5 + count > self.max_bytes:
                        raise FramingError(f"a list of {count} elements at byte {pos}")
                    pos += 5
                    stack[-1] = ["c", et, count]
                if len(stack) > 2 * MAX_DEPTH:
                    raise FramingError(f"nested deeper than {MAX_DEPTH} levels")
            return pos
        finally:
            self.pos = pos
            if pos > self.max_bytes or (stack and n > self.max_bytes):
                self._too_large()

    def _header(self, buf: bytearray, n: int) -> bool:
        """Reads the message header (strict, or the old unversioned form); False if incomplete."""
        if n < 4:
            return False
        first = _i32(buf, 0)
        if first < 0:
            if first & 0xFFFF0000 != _VERSION_1:
                raise FramingError("not a TBinaryProtocol message (bad version)")
            if not 1 <= first & 0xFF <= 4:
                raise FramingError(f"unknown message type {first & 0xFF}")
            if n < 8:
                return False
            name_len, start = _i32(buf, 4), 8
            tail = 4  # seqid
        else:
            name_len, start = first, 4
            tail = 5  # type byte and seqid
        if not 0 <= name_len <= MAX_NAME_BYTES:
            raise FramingError(f"a method name of {name_len} bytes")
        if n < start + name_len + tail:
            return False
        self.pos = start + name_len + tail
        self.stack = [["s"]]
        return True

    def _too_large(self) -> NoReturn:
        raise FramingError(f"a message over {self.max_bytes} bytes")


@dataclass
class Session:
    """One client connection as the handler sees it; ``state`` is the protocol's own (e.g. who the
    caller said it is), kept for the connection's life."""

    peer: tuple[str, int]
    tls: bool
    state: Any = None


MessageHandler = Callable[[Session, bytes], bytes | None]
"""One complete message in, its reply out (None: a oneway message, answered with nothing). Raising
FramingError closes the connection."""


class ThriftTcpServer(EventLoopServer):
    """Serves ``handler`` on a bound listening socket until ``stop()``."""

    def __init__(
        self,
        sock: socket.socket,
        handler: MessageHandler,
        limits: Limits | None = None,
        tls: ssl.SSLContext | None = None,
    ) -> None:
        super().__init__(sock, limits, tls)
        self.handler = handler

    async def _one_request(self, conn: Connection, channel: Channel, peer: tuple[str, int]) -> bool:
        limits = self.limits
        if conn.state is None:
            conn.state = (Session(peer, self.tls is not None), MessageScanner(limits.max_body_bytes))
        session, scanner = conn.state
        scanner.reset()
        try:
            with conn.deadline(limits.idle_timeout):
                while not channel.buffer:
                    await channel.fill()
            with conn.deadline(limits.request_timeout):
                while True:
                    length = scanner.scan(channel.buffer)
                    if length is not None:
                        break
                    held = len(channel.buffer)
                    if self._buffered + held > limits.max_buffered_bytes:
                        log.warning("closing a connection from %s: too many messages in memory", peer[0])
                        return False
                    self._buffered += held
                    try:
                        await channel.fill()
                    finally:
                        self._buffered -= held
        except FramingError as e:
            log.info("closing a connection from %s: %s", peer[0], e)
            return False
        message = bytes(channel.buffer[:length])
        del channel.buffer[:length]
        conn.busy = True
        try:
            reply = await channel.loop.run_in_executor(self._pool, self._handle, session, message)
        except FramingError as e:
            log.info("closing a connection from %s: %s", peer[0], e)
            return False
        if reply is None:
            return True
        with conn.deadline(limits.request_timeout):
            await channel.send(reply)
        return True

    def _handle(self, session: Session, message: bytes) -> bytes | None:
        try:
            return self.handler(session, message)
        except FramingError:
            raise
        except Exception:
            log.exception("a Thrift message from %s failed", session.peer[0])
            raise FramingError("the server failed") from None
