"""``gluecat serve --audit-log FILE``: one JSON line per request, written by a thread of its own.

A request encodes its line (orjson, a few microseconds) and queues it; the writer wakes every
``flush_seconds`` (or sooner, when many lines wait) and appends what has queued with one write and one
fdatasync. The writer does next to no Python work, so it seldom holds the interpreter's lock: when it
encoded the lines itself, each of its batches took the lock from the request threads for milliseconds
at a time, and a cached GetTable's CPU rose by half (bench/RESULTS.md). When the file would pass ``max_bytes`` it is renamed FILE.1 (FILE.1 becoming
FILE.2, and so on; the oldest beyond ``backups`` deleted) and a new FILE begun. If the disk cannot keep
up and ``max_pending`` entries wait, requests wait for the writer rather than go unrecorded.

An entry holds who asked (principal, source address, access key id), what (protocol, operation,
resource), the decision and why, and the outcome (ok, or the error code). Never a request's body, a
password, a secret or a signature: the entries are built from names only (gluecat/serving/permissions.py
and the front ends).
"""

from __future__ import annotations

import collections
import logging
import os
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

log = logging.getLogger("gluecat.serve")

MAX_BYTES = 100 * 1024 * 1024
BACKUPS = 5
FLUSH_SECONDS = 0.2
BATCH = 1000
"""Entries waiting that wake the writer before its interval is up."""
MAX_PENDING = 100_000


class AuditLog:
    def __init__(
        self,
        path: str | Path,
        *,
        max_bytes: int = MAX_BYTES,
        backups: int = BACKUPS,
        flush_seconds: float = FLUSH_SECONDS,
        max_pending: int = MAX_PENDING,
    ) -> None:
        if max_bytes < 1:
            raise ValueError(f"max_bytes must be positive, not {max_bytes}")
        self.path = Path(path)
        self.max_bytes = max_bytes
        self.backups = max(0, backups)
        self.flush_seconds = flush_seconds
        self.max_pending = max_pending
        self._pending: collections.deque[bytes] = collections.deque()
        self._wake = threading.Event()
        self._room = threading.Condition()
        self._written = threading.Condition()
        self._taken = 0
        """Entries taken from the queue and written (for flush)."""
        self._queued = 0
        self._count = threading.Lock()
        self._closed = False
        self._fd = self._open()
        self._size = os.fstat(self._fd).st_size
        self._thread = threading.Thread(target=self._run, name="gluecat-audit", daemon=True)
        self._thread.start()

    def _open(self) -> int:
        return os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)

    # -- requests --------------------------------------------------------------------------------

    def record(self, entry: dict[str, Any]) -> None:
        """Queue one request's entry, as a JSON line whose time is now."""
        if self._closed:
            return
        line = _line(entry, time.time())
        if len(self._pending) >= self.max_pending:
            with self._room:
                self._wake.set()
                while len(self._pending) >= self.max_pending and not self._closed:
                    self._room.wait(1.0)
        with self._count:
            self._pending.append(line)
            self._queued += 1
        if len(self._pending) >= BATCH:
            self._wake.set()

    def flush(self, timeout: float = 10.0) -> None:
        """Wait until every entry queued so far is written."""
        target = self._queued
        self._wake.set()
        with self._written:
            self._written.wait_for(lambda: self._taken >= target or self._closed, timeout)

    def close(self) -> None:
        """Write what is queued and stop the writer."""
        if self._closed:
            return
        self.flush()
        self._closed = True
        self._wake.set()
        self._thread.join(timeout=10)
        os.close(self._fd)

    # -- the writer --------------------------------------------------------------------------------

    def _run(self) -> None:
        while not self._closed:
            self._wake.wait(self.flush_seconds)
            self._wake.clear()
            self._drain()
        while self._pending:
            self._drain()

    def _drain(self) -> None:
        """Write the lines queued when it starts, in one batch (those queued meanwhile wait for the next:
        draining until the queue is empty would write a batch of a line or two after every request of a
        busy server, a write and an fdatasync each)."""
        count = len(self._pending)
        if not count:
            return
        batch = [self._pending.popleft() for _ in range(count)]
        with self._room:
            self._room.notify_all()
        try:
            self._write(batch)
        except OSError as e:
            log.error("the audit log %s could not be written (%s): %d entries lost", self.path, e, len(batch))
        with self._written:
            self._taken += len(batch)
            self._written.notify_all()

    def _write(self, lines: list[bytes]) -> None:
        """Append the lines, starting a new file whenever the next line would take this one past
        ``max_bytes``; one write and one fdatasync per file."""
        chunk: list[bytes] = []
        size = self._size
        for line in lines:
            if size and size + len(line) > self.max_bytes:
                self._append(b"".join(chunk))
                self._rotate()
                chunk, size = [], 0
            chunk.append(line)
            size += len(line)
        self._append(b"".join(chunk))

    def _append(self, data: bytes) -> None:
        if not data:
            return
        view = memoryview(data)
        while view:
            view = view[os.write(self._fd, view) :]
        os.fdatasync(self._fd)
        self._size += len(data)

    def _rotate(self) -> None:
        os.close(self._fd)
        if self.backups == 0:
            self.path.unlink(missing_ok=True)
        else:
            for i in range(self.backups - 1, 0, -1):
                older = self.path.with_name(f"{self.path.name}.{i}")
                if older.exists():
                    os.replace(older, self.path.with_name(f"{self.path.name}.{i + 1}"))
            os.replace(self.path, self.path.with_name(f"{self.path.name}.1"))
        self._fd = self._open()
        self._size = 0


_second: list[Any] = [0, ""]


def _line(entry: dict[str, Any], now: float) -> bytes:
    """The entry as a JSON line, its time first (ISO 8601, milliseconds, UTC)."""
    second = int(now)
    if _second[0] != second:  # formatted once a second
        _second[:] = [second, datetime.fromtimestamp(second, UTC).strftime("%Y-%m-%dT%H:%M:%S")]
    stamp = f"{_second[1]}.{int((now - second) * 1000):03d}+00:00"
    return orjson.dumps({"time": stamp, **entry}, default=str) + b"\n"
