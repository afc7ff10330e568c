"""Connections that no client can stall: one event loop does all the waiting, a pool of threads does
the work. Every protocol served (serving/http.py, serving/tcp.py) shares this.

The event loop (one thread, epoll) accepts connections, runs their TLS handshakes, and reads each
request without blocking, under deadlines; only a complete request reaches a worker thread, and its
reply is written back by the loop, again under a deadline. An idle or slow connection therefore costs
a socket and a few kilobytes, never a thread or CPU time, and cannot delay anyone else. The number of
connections is bounded (by ``Limits.max_connections`` and the process's file-descriptor limit): at the
bound, the connection idle the longest is closed to make room for a new one, and an accept() that
fails for want of file descriptors does the same.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import logging
import resource
import socket
import ssl
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

log = logging.getLogger("gluecat.serve")

# Descriptors kept back from connections for the catalog's own files, the log and the workers.
RESERVED_FDS = 64
# Descriptors freed for requests' own work when accept() finds none left.
FDS_KEPT_ON_EMFILE = 16
_OUT_OF_DESCRIPTORS = {errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM}


@dataclass(frozen=True)
class Limits:
    """What one server allows; every wait has a deadline and every buffer a bound."""

    max_connections: int = 1024
    """Open connections at most (also kept below the process's file-descriptor limit)."""
    workers: int = 16
    """Threads that run complete requests."""
    max_head_bytes: int = 64 * 1024
    """A request line and its headers (431 beyond)."""
    max_body_bytes: int = 16 * 1024 * 1024
    """One request body (413 beyond, refused before it is read)."""
    max_buffered_bytes: int = 256 * 1024 * 1024
    """Request bodies held in memory at once, over all connections (503 beyond)."""
    handshake_timeout: float = 10.0
    """Seconds for a TLS handshake."""
    idle_timeout: float = 30.0
    """Seconds for a request's head to arrive whole, counted from the connection's start or its last reply."""
    request_timeout: float = 30.0
    """Seconds for a request's body to arrive, and again for its reply to be taken."""

    def connection_bound(self) -> int:
        soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
        if soft == resource.RLIM_INFINITY:
            return self.max_connections
        return max(1, min(self.max_connections, soft - RESERVED_FDS))


class Connection:
    """One client connection's bookkeeping: whether it is working on a request, and since when idle."""

    def __init__(self, started: float, channel: Channel) -> None:
        self.idle_since = started
        self.busy = False
        self.task: asyncio.Task[None] | None = None
        self.channel = channel
        self.state: Any = None
        """What the protocol keeps for the connection (e.g. who the caller said it is)."""
        self._deadline: asyncio.TimerHandle | None = None

    def deadline(self, seconds: float) -> Connection:
        """``with conn.deadline(s):`` cancels the connection's task if the block is still waiting after
        ``s`` seconds; the connection is then closed, as for every missed deadline of a request.

        asyncio.timeout does the same, but looks up the running loop and task on each use (each
        lookup a getpid() system call), three times a request: 3-4% of the serving thread's time
        under 16 clients of 100-partition batches.
        """
        task = self.task
        assert task is not None
        loop = self.channel.loop
        self._deadline = loop.call_at(loop.time() + seconds, task.cancel)
        return self

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: object) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None


class EventLoopServer:
    """Serves connections accepted on a bound listening socket until ``stop()``; a subclass's
    ``_one_request`` reads, serves and answers one request of its protocol."""

    def __init__(
        self,
        sock: socket.socket,
        limits: Limits | None = None,
        tls: ssl.SSLContext | None = None,
    ) -> None:
        self.sock = sock
        self.limits = limits or Limits()
        self.tls = tls
        self.max_connections = self.limits.connection_bound()
        self._connections: dict[Connection, None] = {}  # insertion-ordered: oldest first
        self._buffered = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._pool = ThreadPoolExecutor(max_workers=self.limits.workers, thread_name_prefix="gluecat-serve")
        self._stopped = threading.Event()
        self._starting = threading.Lock()
        """Held while the loop is made, so that a stop() meanwhile either finds it or prevents it."""
        self._done = threading.Event()
        self._accepting = False
        self.shed = 0
        """Connections closed to make room for new ones (for tests and logs)."""

    @property
    def open_connections(self) -> int:
        return len(self._connections)

    # -- running ---------------------------------------------------------------------------------

    def serve_forever(self) -> None:
        """Runs the event loop in this thread until ``stop()``."""
        with self._starting:
            # A stop() before this point has closed the socket, or is about to: serve nothing.
            if self._stopped.is_set():
                return
            loop = asyncio.new_event_loop()
            self._loop = loop
        loop.set_exception_handler(self._loop_exception)
        try:
            self.sock.setblocking(False)
            self._resume_accepting()
            if not self._stopped.is_set():
                loop.run_forever()
        finally:
            self._close_everything(loop)
            self._done.set()

    def stop(self) -> None:
        with self._starting:
            self._stopped.set()
            loop = self._loop
        if loop is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
                loop.call_soon_threadsafe(loop.stop)
            self._done.wait(timeout=10)
        self._pool.shutdown(wait=False, cancel_futures=True)
        self.sock.close()

    def _close_everything(self, loop: asyncio.AbstractEventLoop) -> None:
        self._pause_accepting()
        connections = list(self._connections)
        for conn in connections:
            if conn.task is not None:
                conn.task.cancel()
        tasks = [c.task for c in connections if c.task is not None]
        if tasks:
            loop.run_until_complete(asyncio.gather(*tasks, return_exceptions=True))
        for conn in connections:  # those whose task was cancelled before it started
            conn.channel.sock.close()
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.close()

    def _loop_exception(self, loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        # Broken and aborted connections are the clients' business, not errors of the server.
        if isinstance(context.get("exception"), (OSError, asyncio.CancelledError)):
            log.debug("connection: %s", context.get("message"))
        else:
            loop.default_exception_handler(context)

    # -- accepting -------------------------------------------------------------------------------

    def _resume_accepting(self) -> None:
        if not self._accepting and not self._stopped.is_set() and self._loop is not None:
            self._loop.add_reader(self.sock.fileno(), self._accept)
            self._accepting = True

    def _pause_accepting(self) -> None:
        if self._accepting and self._loop is not None:
            self._loop.remove_reader(self.sock.fileno())
            self._accepting = False

    def _accept(self) -> None:
        assert self._loop is not None
        for _ in range(64):  # then let the connections already open have their turn
            try:
                client, address = self.sock.accept()
            except (BlockingIOError, InterruptedError):
                return
            except ConnectionAbortedError:
                continue
            except OSError as e:
                if e.errno not in _OUT_OF_DESCRIPTORS:
                    raise
                # Out of file descriptors: lower the bound to leave some for the requests' own work,
                # and close the longest-idle connections down to it; with none to close, wait a moment
                # (the kernel's backlog keeps the clients) rather than spin.
                bound = max(1, len(self._connections) - FDS_KEPT_ON_EMFILE)
                if bound < self.max_connections:
                    log.warning(
                        "accept(): %s with %d connections open; serving at most %d from now on",
                        e.strerror,
                        len(self._connections),
                        bound,
                    )
                    self.max_connections = bound
                shed = False
                while len(self._connections) >= self.max_connections and self._shed_one():
                    shed = True
                if not shed:
                    self._pause_accepting()
                    self._loop.call_later(0.25, self._resume_accepting)
                    return
                continue
            if len(self._connections) >= self.max_connections and not self._shed_one():
                client.close()  # every connection is working on a request: refuse this one
                continue
            client.setblocking(False)
            with contextlib.suppress(OSError):
                client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            conn = Connection(self._loop.time(), Channel(client, self._loop))
            self._connections[conn] = None
            conn.task = self._loop.create_task(self._serve(conn, address))

    def _shed_one(self) -> bool:
        """Closes the connection idle the longest (the order of the table is the order of idling)."""
        for conn in self._connections:
            if not conn.busy:
                del self._connections[conn]
                self.shed += 1
                conn.channel.close()
                if conn.task is not None:
                    conn.task.cancel()
                return True
        return False

    def _mark_idle(self, conn: Connection) -> None:
        assert self._loop is not None
        conn.busy = False
        conn.idle_since = self._loop.time()
        if conn in self._connections:  # to the end: the table stays ordered by idle time
            del self._connections[conn]
            self._connections[conn] = None

    # -- one connection --------------------------------------------------------------------------

    async def _serve(self, conn: Connection, address: Any) -> None:
        limits = self.limits
        channel = conn.channel
        try:
            if self.tls is not None:
                async with asyncio.timeout(limits.handshake_timeout):
                    # Nothing is set up for TLS until the client sends something: a connection that
                    # stays silent costs its socket alone.
                    await channel.wait(writable=False)
                    await channel.start_tls(self.tls)
            peer = (str(address[0]), int(address[1]))
            while await self._one_request(conn, channel, peer):
                self._mark_idle(conn)
        except (OSError, EOFError, TimeoutError, ssl.SSLError, ValueError):
            pass  # the client went away, sent no TLS, or took too long: its connection is closed below
        except asyncio.CancelledError:
            pass  # shed to make room, or the server is stopping
        except Exception:
            log.exception("connection from %s failed", address[0] if address else "?")
        finally:
            self._connections.pop(conn, None)
            channel.close()

    async def _one_request(self, conn: Connection, channel: Channel, peer: tuple[str, int]) -> bool:
        """Reads, serves and answers one request; False when the connection is to be closed."""
        raise NotImplementedError


class Channel:
    """A non-blocking socket (plain or TLS) read and written from the event loop, with a read buffer."""

    def __init__(self, sock: socket.socket, loop: asyncio.AbstractEventLoop) -> None:
        self.sock: socket.socket = sock
        self.loop = loop
        self.buffer = bytearray()
        self.closed = False

    async def wait(self, writable: bool) -> None:
        if self.closed:
            raise EOFError
        loop = self.loop
        ready = loop.create_future()
        fd = self.sock.fileno()

        def wake() -> None:
            if not ready.done():
                ready.set_result(None)

        if writable:
            loop.add_writer(fd, wake)
        else:
            loop.add_reader(fd, wake)
        try:
            await ready
        finally:
            # Once closed, the descriptor's number may already be another connection's.
            if not self.closed:
                if writable:
                    loop.remove_writer(fd)
                else:
                    loop.remove_reader(fd)

    async def start_tls(self, context: ssl.SSLContext) -> None:
        tls = context.wrap_socket(self.sock, server_side=True, do_handshake_on_connect=False)
        self.sock = tls
        while True:
            try:
                tls.do_handshake()
                return
            except ssl.SSLWantReadError:
                await self.wait(writable=False)
            except ssl.SSLWantWriteError:
                await self.wait(writable=True)

    async def fill(self) -> None:
        """Reads what has arrived (waiting for something) into the buffer; EOFError at the end."""
        while True:
            try:
                data = self.sock.recv(65536)
            except (BlockingIOError, InterruptedError, ssl.SSLWantReadError):
                await self.wait(writable=False)
                continue
            except ssl.SSLWantWriteError:
                await self.wait(writable=True)
                continue
            if not data:
                raise EOFError
            self.buffer += data
            if isinstance(self.sock, ssl.SSLSocket):
                # Bytes OpenSSL has already decrypted wake no selector: take them now.
                while self.sock.pending():
                    self.buffer += self.sock.recv(self.sock.pending())
            return

    async def read_head(self, limit: int) -> bytes | None:
        """Up to and including the empty line that ends a request head; None past ``limit`` bytes."""
        searched = 0
        while True:
            end = self.buffer.find(b"\r\n\r\n", max(0, searched - 3))
            if end >= 0:
                if end + 4 > limit:
                    return None
                head = bytes(self.buffer[: end + 4])
                del self.buffer[: end + 4]
                return head
            if len(self.buffer) > limit:
                return None
            searched = len(self.buffer)
            await self.fill()

    async def read_exactly(self, n: int) -> bytes:
        while len(self.buffer) < n:
            await self.fill()
        data = bytes(self.buffer[:n])
        del self.buffer[:n]
        return data

    async def discard(self, at_most: int) -> None:
        while at_most > 0:
            self.buffer.clear()
            await self.fill()
            at_most -= len(self.buffer)

    async def send(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            try:
                view = view[self.sock.send(view) :]
            except (BlockingIOError, InterruptedError, ssl.SSLWantWriteError):
                await self.wait(writable=True)
            except ssl.SSLWantReadError:
                await self.wait(writable=False)

    def close(self) -> None:
        """Closes the socket now (freeing its descriptor), even while a coroutine waits on it."""
        if not self.closed:
            with contextlib.suppress(ValueError, OSError):
                fd = self.sock.fileno()
                self.loop.remove_reader(fd)
                self.loop.remove_writer(fd)
            self.closed = True
            self.sock.close()
