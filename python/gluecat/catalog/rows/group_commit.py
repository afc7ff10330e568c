"""Group commit: concurrent writes to one table that arrive while a commit is in flight share the next.

A commit costs a log entry (with fsync, a disk flush), a segment and a share of the merges, whatever
its size, and the commits of one process run one at a time. So a writer that finds another's commit
in flight queues its request; when that commit ends, the oldest waiting writer commits every request
queued by then (up to ``MAX_GROUP_PARTITIONS``), in arrival order, as if they had run one after
another: each gets its own result or error. A writer alone commits at once.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from gluecat.errors import GlueError
from gluecat.store.snapshot import Key

MAX_GROUP_PARTITIONS = 1000
"""A group stops growing at this many partitions (its segment still fits in its log entry)."""

R = TypeVar("R")


@dataclass(eq=False)
class Request(Generic[R]):
    """One caller's write: what it asks for, and, once its group has committed, its outcome."""

    parts: list[dict[str, Any]]
    collect_errors: bool
    result: R | None = None
    error: BaseException | None = None
    done: bool = False


@dataclass(eq=False)
class _Queue:
    cond: threading.Condition = field(default_factory=threading.Condition)
    waiting: list[Request[Any]] = field(default_factory=list)
    busy: bool = False
    users: int = 0
    """Callers of ``submit`` holding this queue (counted under GroupCommit._lock): the last one out
    removes it, so that a server does not keep a queue for every table it ever wrote to."""


def _take(waiting: list[Request[Any]]) -> list[Request[Any]]:
    """The oldest requests, up to MAX_GROUP_PARTITIONS partitions (at least one request)."""
    n, size = 1, len(waiting[0].parts)
    while n < len(waiting) and size + len(waiting[n].parts) <= MAX_GROUP_PARTITIONS:
        size += len(waiting[n].parts)
        n += 1
    group = waiting[:n]
    del waiting[:n]
    return group


class GroupCommit:
    """One store's queues of writes waiting to commit, by row set."""

    def __init__(self) -> None:
        self._queues: dict[Key, _Queue] = {}
        self._lock = threading.Lock()

    def _queue(self, key: Key) -> _Queue:
        with self._lock:
            queue = self._queues.setdefault(key, _Queue())
            queue.users += 1
            return queue

    def _release(self, key: Key, queue: _Queue) -> None:
        with self._lock:
            queue.users -= 1
            if queue.users == 0 and self._queues.get(key) is queue:
                del self._queues[key]

    def submit(self, key: Key, request: Request[R], commit: Callable[[list[Request[Any]]], None]) -> R:
        """Commit ``request`` alone or with others queued for the same table; returns its result or raises
        its error. ``commit`` commits a group and sets each request's result or error; an exception it
        raises is every request's error."""
        queue = self._queue(key)
        try:
            return self._submit(queue, request, commit)
        finally:
            self._release(key, queue)

    def _submit(self, queue: _Queue, request: Request[R], commit: Callable[[list[Request[Any]]], None]) -> R:
        with queue.cond:
            queue.waiting.append(request)
            while not request.done and (queue.busy or queue.waiting[0] is not request):
                queue.cond.wait()
            group: list[Request[Any]] = []
            if not request.done:
                group = _take(queue.waiting)  # this request is the oldest: its writer commits the group
                queue.busy = True
        if group:
            try:
                commit(group)
            except BaseException as e:
                for r in group:
                    r.result, r.error = None, e
            finally:
                with queue.cond:
                    for r in group:
                        r.done = True
                    queue.busy = False
                    queue.cond.notify_all()
        if request.error is not None:
            raise _own(request.error, any(r is request for r in group))
        return request.result  # type: ignore[return-value]


def _own(error: BaseException, committed_it: bool) -> BaseException:
    """The error to raise in a caller: a GlueError shared by a group is copied for each of the others,
    which name their own operation in it."""
    if committed_it or not isinstance(error, GlueError):
        return error
    copy = type(error)(error.message)
    copy.__cause__ = error.__cause__
    return copy
