"""gluecat users and gluecat serve: the users file keeps hashes, never passwords; serve insists on TLS."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from gluecat.cli import main


def test_users_add_list_remove(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    users_file = tmp_path / "users.json"
    monkeypatch.setattr(sys, "stdin", io.StringIO("correct horse\n"))
    assert main(["users", "add", "alice", "--file", str(users_file), "--password-stdin"]) == 0
    assert "correct horse" not in users_file.read_text()
    assert set(json.loads(users_file.read_text())["users"]["alice"]) == {"salt", "hash", "n", "r", "p"}
    capsys.readouterr()
    assert main(["users", "list", "--file", str(users_file)]) == 0
    assert capsys.readouterr().out == "alice\n"
    assert main(["users", "remove", "alice", "--file", str(users_file)]) == 0
    assert main(["users", "remove", "alice", "--file", str(users_file)]) == 1
    assert main(["users", "add", "bob", "--file", str(users_file)]) == 2  # no --password-stdin


def test_serve_refuses_plain_http_unless_asked(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    users_file = tmp_path / "users.json"
    assert main(["serve", "--warehouse", str(tmp_path / "w"), "--users", str(users_file)]) == 2
    assert "--insecure-http" in capsys.readouterr().err


def test_serve_starts_and_warns_about_plain_http(tmp_path: Path) -> None:
    from gluecat.hms import users
    from gluecat.hms.reference import free_port

    users_file = tmp_path / "users.json"
    users.add(users_file, "alice", "pw", n=2**10)
    port = free_port()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "gluecat",
            "serve",
            "--warehouse",
            str(tmp_path / "w"),
            "--users",
            str(users_file),
            "--port",
            str(port),
            "--insecure-http",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = proc.stdout.readline() if proc.stdout else ""
        assert f"http://127.0.0.1:{port}/" in line
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=20)
    assert "WARNING: serving over plain HTTP" in err
