"""The commit primitive on a local disk: a whole file appears under a free name, or nothing does."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from gluecat.store import fs as fsmod
from gluecat.store.filesystems import open_fs
from gluecat.store.fs import WarehouseFS


@pytest.fixture(params=["unnamed file", "temporary name"])
def local(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> WarehouseFS:
    """Both ways of publishing: an unnamed (O_TMPFILE) file linked to its name, and, where the system
    has no such files, a temporary file linked to it."""
    if request.param == "temporary name":
        monkeypatch.setattr(fsmod, "_proc", (os.getpid(), None))
    elif fsmod._proc_fds() is None:
        pytest.skip("no O_TMPFILE or /proc here")
    (tmp_path / "log").mkdir()
    return open_fs(str(tmp_path), fsync=True)


def test_publish_creates_the_whole_file_and_nothing_else(local: WarehouseFS) -> None:
    assert local.publish("log/1.json", b'{"version":1}')
    assert local.read_bytes("log/1.json") == b'{"version":1}'
    assert local.list_names("log") == ["1.json"]  # no temporary file left behind


def test_publish_under_a_taken_name_changes_nothing(local: WarehouseFS) -> None:
    assert local.publish("log/1.json", b"first")
    assert not local.publish("log/1.json", b"second")
    assert local.read_bytes("log/1.json") == b"first"
    assert local.list_names("log") == ["1.json"]


def test_a_forked_child_publishes_through_its_own_descriptors(tmp_path: Path) -> None:
    """The handle on /proc/self/fd names the descriptors of the process that opened it: a child
    that used its parent's would link whatever file the parent holds under that number."""
    if fsmod._proc_fds() is None:
        pytest.skip("no O_TMPFILE or /proc here")
    (tmp_path / "log").mkdir()
    local = open_fs(str(tmp_path), fsync=False)
    assert local.publish("log/1.json", b"parent")
    held = os.open(str(tmp_path / "log" / "1.json"), os.O_RDONLY)  # a descriptor the child inherits
    try:
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child reports through its exit code
            ok = local.publish("log/2.json", b"child") and local.read_bytes("log/2.json") == b"child"
            os._exit(0 if ok else 1)
        _, status = os.waitpid(pid, 0)
    finally:
        os.close(held)
    assert os.waitstatus_to_exitcode(status) == 0
    assert local.read_bytes("log/1.json") == b"parent"
    assert sorted(local.list_names("log")) == ["1.json", "2.json"]


def synced(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The paths os.fsync is called on from now on (folders end in "/")."""
    calls: list[str] = []
    real = os.fsync

    def record(fd: int) -> None:
        path = os.readlink(f"/proc/self/fd/{fd}")
        calls.append(path + "/" if os.path.isdir(path) else path)
        real(fd)

    monkeypatch.setattr(os, "fsync", record)
    return calls


def test_with_fsync_a_published_name_is_on_disk_before_publish_returns(
    local: WarehouseFS, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Syncing a file does not sync its name: the folder holding the new entry is synced after the link."""
    calls = synced(monkeypatch)
    assert local.publish("log/1.json", b"x")
    assert calls[-1] == local.full("log") + "/"
    assert len(calls) == 2  # the content, then the name


def test_without_fsync_nothing_is_synced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "log").mkdir()
    local = open_fs(str(tmp_path), fsync=False)
    calls = synced(monkeypatch)
    assert local.publish("log/1.json", b"x")
    local.sync_folder("log")
    assert calls == []


def open_descriptors() -> int:
    return len(os.listdir("/proc/self/fd"))


def test_a_process_that_commits_to_many_tables_keeps_no_descriptor_for_each(tmp_path: Path) -> None:
    """The lock file a log's writers take turns on is open while this process uses it, then closed: a
    server or a test run that commits to thousands of tables once held one each, and past 1,024
    descriptors select() fails (Py4J's callback server stopped, and Spark waited on it for ever)."""
    if not os.path.isdir("/proc/self/fd"):
        pytest.skip("no /proc here")
    from gluecat import Catalog

    glue = Catalog(str(tmp_path / "wh"))
    glue.create_database(DatabaseInput={"Name": "db"})
    before = open_descriptors()
    for i in range(40):
        glue.create_table(
            DatabaseName="db",
            TableInput={"Name": f"t{i}", "PartitionKeys": [{"Name": "k", "Type": "string"}]},
        )
        glue.create_partition(DatabaseName="db", TableName=f"t{i}", PartitionInput={"Values": ["a"]})
    assert open_descriptors() - before < 10


def test_threads_of_one_process_share_a_turn_and_its_descriptor(tmp_path: Path) -> None:
    """One descriptor a lock file while any thread of the process is in its turn (a second open file
    would exclude the process's own threads from each other); closed when the last leaves."""
    local = open_fs(str(tmp_path), fsync=False)
    local.mkdirs("log")
    with local.queued("log") as first, local.queued("log") as second:  # not blocked: the same open file
        assert first and second
        held = [p for p in os.listdir("/proc/self/fd") if "publish.lock" in _target(p)]
        assert len(held) == 1
    assert [p for p in os.listdir("/proc/self/fd") if "publish.lock" in _target(p)] == []


def _target(fd: str) -> str:
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return ""


def test_a_write_that_fails_leaves_no_temporary_file_behind(
    local: WarehouseFS, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A full disk or a failed sync fails the publish or replace, and takes its temporary file with it: a
    server that meets such failures for a while must not fill the folder with files nobody deletes."""
    local.publish("log/1.json", b"first")

    def full_disk(f: object, data: bytes) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(local, "_write", full_disk)
    for _ in range(3):
        with pytest.raises(OSError):
            local.publish("log/2.json", b"x")
        with pytest.raises(OSError):
            local.replace("log/1.json", b"second")
    assert local.list_names("log") == ["1.json"]
    assert local.read_bytes("log/1.json") == b"first"
