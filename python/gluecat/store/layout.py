"""Where things live under a warehouse root, and the format version. docs/storage.md describes it."""

from __future__ import annotations

import re

FORMAT_VERSION = 6
"""The storage format this code writes; a warehouse written by a newer format is refused, not guessed."""

ROOT = "_gluecat"
LOG_DIR = f"{ROOT}/log"
DATA_DIR = f"{ROOT}/data"
CHECKPOINT_DIR = f"{ROOT}/checkpoints"
TABLES_DIR = f"{ROOT}/tables"
JOURNAL_DIR = f"{ROOT}/transactions"
JOURNAL_LOCK = f"{JOURNAL_DIR}/lock"
JOURNAL_LOG_DIR = f"{JOURNAL_DIR}/log"
"""An object store's journal: one object a record batch (a store without appends or locks)."""

_LOG_NAME = re.compile(r"^(\d{20})\.json$")
_TABLE_BASE = re.compile(rf"^{ROOT}/tables/[0-9a-f]{{32}}$")
_CHECKPOINT_NAME = re.compile(r"^(\d{20})(?:\.([0-9a-f]{32}))?\.parquet$")
_JOURNAL_NAME = re.compile(r"^journal-(\d{20})\.jsonl$")
_DATA_NAME = re.compile(r"^[0-9A-Za-z_-]+(?:\.([0-9a-f]{32}))?\.(?:records|partitions)\.parquet$")


class LogLayout:
    """Where one log's files are: the root log's under ``_gluecat/``, a table's under
    ``_gluecat/tables/<name>/`` (placement.log_name). Data files of every log share ``_gluecat/data``."""

    __slots__ = ("base", "checkpoint_dir", "log_dir")

    def __init__(self, base: str = ROOT) -> None:
        self.base = base
        self.log_dir = f"{base}/log"
        self.checkpoint_dir = f"{base}/checkpoints"

    def __repr__(self) -> str:
        return f"LogLayout({self.base!r})"

    def log_path(self, version: int) -> str:
        return f"{self.log_dir}/{version:020d}.json"

    def checkpoint_path(self, version: int, checksum: str | None = None) -> str:
        if checksum is None:
            return f"{self.checkpoint_dir}/{version:020d}.parquet"
        return f"{self.checkpoint_dir}/{version:020d}.{checksum}.parquet"

    @property
    def note_path(self) -> str:
        """Where a writer that lost a race to the log leaves a note that it waits (gluecat/store/turns.py):
        new content each time, read by the writers that keep winning; no part of the log's content."""
        return f"{self.base}/waiting"

    def inline_segment_path(self, version: int, n: int) -> str:
        return f"{self.log_path(version)}#{n}"

    def parse_log_path(self, path: str) -> int | None:
        folder, _, base = path.rpartition("/")
        return parse_log_name(base) if folder == self.log_dir else None


ROOT_LOG = LogLayout(ROOT)


def table_log(name: str) -> LogLayout:
    """A table's log, by the folder name placement.log_name gives it."""
    return LogLayout(f"{TABLES_DIR}/{name}")


def layout_of(path: str) -> LogLayout | None:
    """The log a log entry's (or checkpoint's) path is in."""
    folder = path.rpartition("/")[0]
    base, _, leaf = folder.rpartition("/")
    if leaf not in ("log", "checkpoints"):
        return None
    if base == ROOT:
        return ROOT_LOG
    return LogLayout(base) if _TABLE_BASE.match(base) else None


def log_path(version: int) -> str:
    return f"{LOG_DIR}/{version:020d}.json"


def checkpoint_path(version: int, checksum: str | None = None) -> str:
    """A checkpoint's name: its version and (from format 4) the checksum of its content."""
    if checksum is None:
        return f"{CHECKPOINT_DIR}/{version:020d}.parquet"
    return f"{CHECKPOINT_DIR}/{version:020d}.{checksum}.parquet"


def data_path(stem: str, checksum: str, kind: str) -> str:
    """A data file's name: a stem nobody else uses, the checksum of its content, its kind (``records``
    or ``partitions``). Whoever names the file records its checksum with it."""
    return f"{DATA_DIR}/{stem}.{checksum}.{kind}.parquet"


def name_checksum(path: str) -> str | None:
    """The checksum a data file's or checkpoint's name carries (None for names of older formats)."""
    base = path.rsplit("/", 1)[-1]
    m = _DATA_NAME.match(base)
    if m is not None:
        return m.group(1)
    m = _CHECKPOINT_NAME.match(base)
    return m.group(2) if m is not None else None


def is_data_path(path: str) -> bool:
    folder, _, base = path.rpartition("/")
    return folder == DATA_DIR and _DATA_NAME.match(base) is not None


def inline_segment_path(version: int, n: int) -> str:
    """The name of the n-th segment carried inside log entry ``version``."""
    return f"{log_path(version)}#{n}"


def inline_segment_entry(path: str) -> str | None:
    """The log entry that carries a segment, or None for a segment in a file of its own."""
    name, found, _ = path.partition("#")
    return name if found else None


def journal_path(generation: int) -> str:
    """The transaction journal's file of one generation (a rewrite makes the next)."""
    return f"{JOURNAL_DIR}/journal-{generation:020d}.jsonl"


def parse_journal_name(name: str) -> int | None:
    m = _JOURNAL_NAME.match(name)
    return int(m.group(1)) if m else None


def parse_log_name(name: str) -> int | None:
    m = _LOG_NAME.match(name)
    return int(m.group(1)) if m else None


def newest_log_version(names: list[str]) -> int:
    """The highest version among a log folder's names, or -1. Entry names are fixed-width, so the
    greatest name is the newest: string comparisons instead of a regular expression for each of what
    may be millions of names (an expiry never frees one)."""
    newest = max(
        (n for n in names if len(n) == 25 and n.endswith(".json") and n[:20].isascii() and n[:20].isdigit()),
        default=None,
    )
    return -1 if newest is None else int(newest[:20])


def parse_log_path(path: str) -> int | None:
    """The version of a log entry's path, in any log."""
    layout = layout_of(path)
    return None if layout is None else layout.parse_log_path(path)


def parse_checkpoint_name(name: str) -> tuple[int, str | None] | None:
    """A checkpoint file name's version and checksum (None before format 4), or None if it is none."""
    m = _CHECKPOINT_NAME.match(name)
    return (int(m.group(1)), m.group(2)) if m else None


def is_temporary(name: str) -> bool:
    """Files a writer was still preparing when it stopped: never part of the state."""
    return name.startswith(".tmp-")
