"""The catalog's background threads (merges, refolds, the transactions' janitor, Spark jobs' heartbeat),
let end before the interpreter finalises.

Finalisation ends a daemon thread that takes the interpreter lock back by unwinding it; one cut off
inside pyarrow's C++ aborts the process ("FATAL: exception not rethrown"), after a job that did all its
work. So the exit stops each thread's owner and waits for it. Owners are found through their threads,
not through the engine that made them: a job that let go of its catalog exits with the engine
collected and its last merge still running.
"""

from __future__ import annotations

import atexit
import threading
import weakref
from typing import Protocol


class Owner(Protocol):
    def stop(self) -> None:
        """End the thread's work (none starts after) and wait for it."""


# Weak: an owner stays while something holds it, its running thread included (the thread's target is
# the owner's bound method).
_OWNERS: weakref.WeakSet[Owner] = weakref.WeakSet()
_LOCK = threading.Lock()


def stop_at_exit(owner: Owner) -> None:
    """Stop ``owner`` at the interpreter's exit, if it is still there."""
    with _LOCK:
        _OWNERS.add(owner)


@atexit.register
def _stop_all() -> None:
    # Until none is new: an owner's last work may start another's (a merge's commit, a refold), and a
    # daemon thread (a server's loop) may still be calling the catalog.
    stopped: weakref.WeakSet[Owner] = weakref.WeakSet()
    while True:
        with _LOCK:
            owners = [owner for owner in _OWNERS if owner not in stopped]
        if not owners:
            return
        for owner in owners:
            owner.stop()
            stopped.add(owner)
