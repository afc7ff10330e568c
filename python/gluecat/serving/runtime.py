"""The serving process's runtime: which allocator Arrow uses, and how often the cyclic collector runs.

Both are set for ``gluecat serve`` alone, whose process is ours; a library must not change them in its
callers' processes. Figures in bench/RESULTS.md.
"""

from __future__ import annotations

import gc
import os

import pyarrow as pa

JEMALLOC_DECAY_MS = 1000
"""How long jemalloc keeps freed pages before handing them back. Arrow's default, 0, hands them back at
once, and each request's buffers were faulted in afresh: 16 clients of 100-partition batches had
408-434 requests a second answered with 0 against 447-469 with 1 s."""
YOUNG_THRESHOLD = 50_000
"""Container allocations between collections of the youngest generation (Python's default: 700)."""


def use_server_allocator() -> str:
    """Send this process's Arrow allocations to jemalloc (or the C library's allocator) unless the user
    chose a pool with ARROW_DEFAULT_MEMORY_POOL; returns the pool's name.

    pyarrow's default pool on Linux, mimalloc, hands freed pages back to the kernel after 10 ms. Where
    transparent huge pages are on, the next allocation there faults in and zeroes a 2 MB page: a
    100-partition BatchCreatePartition cost the server 0.4 to 0.5 ms of system CPU a call that way.
    jemalloc is told to keep freed pages for JEMALLOC_DECAY_MS.
    """
    if not os.environ.get("ARROW_DEFAULT_MEMORY_POOL"):
        try:
            pa.jemalloc_set_decay_ms(JEMALLOC_DECAY_MS)
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
