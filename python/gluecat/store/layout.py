"""Where things live under a warehouse root, and the format version. docs/storage.md describes it."""

from __future__ import annotations

import re

FORMAT_VERSION = 3
"""The storage format this code writes; a warehouse written by a newer format is refused, not guessed."""

ROOT = "_gluecat"
LOG_DIR = f"{ROOT}/log"
DATA_DIR = f"{ROOT}/data"
CHECKPOINT_DIR = f"{ROOT}/checkpoints"

_LOG_NAME = re.compile(r"^(\d{20})\.json$")
_CHECKPOINT_NAME = re.compile(r"^(\d{20})\.parquet$")


def log_path(version: int) -> str:
    return f"{LOG_DIR}/{version:020d}.json"


def checkpoint_path(version: int) -> str:
    return f"{CHECKPOINT_DIR}/{version:020d}.parquet"


def inline_segment_path(version: int, n: int) -> str:
    """The name of the n-th segment carried inside log entry ``version``."""
    return f"{log_path(version)}#{n}"


def inline_segment_entry(path: str) -> str | None:
    """The log entry that carries a segment, or None for a segment in a file of its own."""
    name, found, _ = path.partition("#")
    return name if found else None


def parse_log_name(name: str) -> int | None:
    m = _LOG_NAME.match(name)
    return int(m.group(1)) if m else None


def parse_checkpoint_name(name: str) -> int | None:
    m = _CHECKPOINT_NAME.match(name)
    return int(m.group(1)) if m else None


def is_temporary(name: str) -> bool:
    """Files a writer was still preparing when it stopped: never part of the state."""
    return name.startswith(".tmp-")
