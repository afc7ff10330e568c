"""Holding off Python's cyclic garbage collector while a call builds many short-lived objects.

CPython starts a collection every 700 net container allocations, and a full one (every few dozen
collections, once enough objects have survived two) walks every tracked object of the process. A page of
a thousand partitions allocates some 3,000 containers: its build ran several collections, each walking
the page built so far, and in a process that had just created a million partitions the full ones came
to a sixth of the time of reading all pages of a query. What these calls build holds no reference
cycles, so reference counting frees all of it and those passes found nothing to collect. (Mercurial's
``util.nogc`` does the same around building large containers.)

The collector is off only while at least one thread is inside ``gc_paused`` and only if it was on when
the first of them entered: a program that turned it off itself keeps it off. (One that turns it off
while a pause is under way finds it on again when the pause ends: the two cannot be told apart.)
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_inside = 0  # threads inside gc_paused
_resume = False  # whether the last one out turns the collector back on


@contextmanager
def gc_paused() -> Iterator[None]:
    """Run the block with the cyclic collector off (reference counting still frees objects)."""
    global _inside, _resume
    with _lock:
        if _inside == 0:
            _resume = gc.isenabled()
            gc.disable()
        _inside += 1
    try:
        yield
    finally:
        with _lock:
            _inside -= 1
            if _inside == 0 and _resume:
                gc.enable()
