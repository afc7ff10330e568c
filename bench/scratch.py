"""Where a benchmark's warehouses go, and what file system that is: durable commits are timed, and
the system's temporary folder may be tmpfs (where fsync costs nothing) or, on a busy machine, the place
where files are created and deleted most (ext4 without a journal then searches past each recently
deleted inode to create a file)."""

from __future__ import annotations

import os


def file_system(path: str) -> str:
    """The type and device of the file system holding ``path`` (from /proc/mounts), or "unknown"."""
    try:
        with open("/proc/mounts") as f:
            mounts = [line.split()[:3] for line in f]
    except OSError:
        return "unknown"
    real = os.path.realpath(path)
    found = [m for m in mounts if real == m[1] or real.startswith(m[1].rstrip("/") + "/")]
    if not found:
        return "unknown"
    device, mount, kind = max(found, key=lambda m: len(m[1]))
    return f"{kind} on {device}, mounted at {mount}"
