"""The Arrow allocator of the serving process.

pyarrow's default pool on Linux is mimalloc, which hands freed pages back to the kernel after 10 ms.
Where transparent huge pages are on, the next allocation there faults in and zeroes a 2 MB page: a
100-partition BatchCreatePartition cost the server 0.4 to 0.5 ms of system CPU a call that way
(bench/RESULTS.md). jemalloc keeps its pages longer; the C library's allocator is the fallback.
"""

from __future__ import annotations

import os

import pyarrow as pa


def use_server_allocator() -> str:
    """Send this process's Arrow allocations to jemalloc (or the C library's allocator) unless the user
    chose a pool with ARROW_DEFAULT_MEMORY_POOL; returns the pool's name."""
    if not os.environ.get("ARROW_DEFAULT_MEMORY_POOL"):
        try:
            pool = pa.jemalloc_memory_pool()
        except NotImplementedError:  # a pyarrow built without jemalloc
            pool = pa.system_memory_pool()
        pa.set_memory_pool(pool)
    return pa.default_memory_pool().backend_name
