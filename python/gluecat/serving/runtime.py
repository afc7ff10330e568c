"""The serving process's runtime: which allocator Arrow uses, and how often the cyclic collector runs.

Both are set for ``gluecat serve`` alone, whose process is ours; a library must not change them in its
callers' processes. Figures in bench/RESULTS.md.
"""

from __future__ import annotations

import gc
import os

import pyarrow as pa

YOUNG_THRESHOLD = 50_000
"""Container allocations between collections of the youngest generation (Python's default: 700)."""


def use_server_allocator() -> str:
    """Send this process's Arrow allocations to jemalloc (or the C library's allocator) unless the user
    chose a pool with ARROW_DEFAULT_MEMORY_POOL; returns the pool's name.

    pyarrow's default pool on Linux, mimalloc, hands freed pages back to the kernel after 10 ms. Where
    transparent huge pages are on, the next allocation there faults in and zeroes a 2 MB page: a
    100-partition BatchCreatePartition cost the server 0.4 to 0.5 ms of system CPU a call that way.
    """
    if not os.environ.get("ARROW_DEFAULT_MEMORY_POOL"):
        try:
            pool = pa.jemalloc_memory_pool()
        except NotImplementedError:  # a pyarrow built without jemalloc
            pool = pa.system_memory_pool()
        pa.set_memory_pool(pool)
    return pa.default_memory_pool().backend_name


def collect_less_often() -> None:
    """Collect the youngest generation after 50,000 container allocations instead of 700.

    A decoded 100-partition request is a few thousand dicts and lists that live until its reply is
    written; at 700 the collector walked them several times a request and promoted them, to walk them
    again in the next generation (8% of the serving thread's samples). Nearly all of them are freed by
    reference counting; the few cycles wait a little longer.
    """
    _, middle, old = gc.get_threshold()
    gc.set_threshold(YOUNG_THRESHOLD, middle, old)
