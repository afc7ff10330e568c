"""The audit log's file: one JSON line per entry, in the order recorded, written by its own thread and
rotated by size. (What a served request's entry holds: tests/serving/test_permission_clients.py.)"""

from __future__ import annotations

import json
import threading
from pathlib import Path

from gluecat.serving.audit import AuditLog


def _lines(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def test_entries_are_json_lines_in_the_order_recorded_from_every_thread(tmp_path: Path) -> None:
    log = AuditLog(tmp_path / "audit.jsonl", flush_seconds=0.01)

    def record(thread: int) -> None:
        for i in range(500):
            log.record({"operation": "GetTable", "thread": thread, "i": i})

    threads = [threading.Thread(target=record, args=(t,)) for t in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    log.close()
    lines = _lines(tmp_path / "audit.jsonl")
    assert len(lines) == 2000
    assert list(lines[0]) == ["time", "operation", "thread", "i"]
    assert str(lines[0]["time"]).endswith("+00:00")
    for thread in range(4):
        assert [line["i"] for line in lines if line["thread"] == thread] == list(range(500))
    log.record({"after": "close"})  # dropped, not an error


def test_the_file_is_rotated_by_size_keeping_its_backups(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    log = AuditLog(path, max_bytes=4096, backups=2, flush_seconds=0.01)
    for i in range(400):
        log.record({"i": i, "pad": "x" * 40})
        if i % 50 == 49:
            log.flush()
    log.close()
    files = [path, path.with_name("audit.jsonl.1"), path.with_name("audit.jsonl.2")]
    assert not path.with_name("audit.jsonl.3").exists()
    assert all(f.stat().st_size <= 4096 for f in files)
    kept = [line["i"] for f in reversed(files) for line in _lines(f)]
    # The newest entries, in order, the oldest beyond two backups gone.
    assert kept == list(range(400 - len(kept), 400))
    assert len(kept) > 50
