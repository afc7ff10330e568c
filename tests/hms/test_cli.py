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
    assert capsys.readouterr().out == f"user alice removed from {users_file}\n"
    assert main(["users", "remove", "alice", "--file", str(users_file)]) == 1
    assert capsys.readouterr().err == f"gluecat users remove: no user alice in {users_file}\n"
    assert main(["users", "list", "--file", str(users_file)]) == 0
    out = capsys.readouterr()
    assert (out.out, out.err) == ("", f"gluecat users list: {users_file} has no users\n")
    assert main(["users", "add", "bob", "--file", str(users_file)]) == 2  # no --password-stdin


@pytest.mark.parametrize("command", ["list", "remove alice"])
def test_a_users_file_that_is_not_there_is_said_to_be_missing(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A mistyped --file is not an empty list of users (nor a user not found)."""
    missing = tmp_path / "nosuch.json"
    assert main(["users", *command.split(), "--file", str(missing)]) == 1
    out = capsys.readouterr()
    assert out.out == ""
    assert out.err == (
        f"gluecat users {command.split()[0]}: {missing}: no such users file ('gluecat users add' makes one)\n"
    )
    assert not missing.exists()


def test_a_password_is_refused_as_an_argument_and_said_why(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--password secret` was taken for an abbreviation of --password-stdin (which then waited for the
    password on standard input); it is refused, saying how to give a password."""
    users_file = tmp_path / "users.json"
    for option in (["--password", "secret"], ["--password=secret"], ["--password-std"]):
        with pytest.raises(SystemExit) as exit:
            main(["users", "add", "alice", "--file", str(users_file), *option])
        assert exit.value.code == 2
        err = capsys.readouterr().err
        assert "secret" not in err
        if option != ["--password-std"]:
            assert "a password is never an argument" in err and "--password-stdin" in err
    assert not users_file.exists()


def test_serve_refuses_plain_http_unless_asked(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    users_file = tmp_path / "users.json"
    assert main(["serve", "--warehouse", str(tmp_path / "w"), "--users", str(users_file)]) == 2
    assert "--insecure-http" in capsys.readouterr().err


def test_serve_refuses_a_warehouse_that_is_not_there_unless_asked_to_create_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every other command refuses a mistyped warehouse path; serve made (and served) an empty one."""
    from gluecat.serving import users

    users_file = tmp_path / "users.json"
    users.add(users_file, "alice", "pw", n=2**10)
    (tmp_path / "other-tool").mkdir()
    for path, problem in (
        (tmp_path / "typo", "no such warehouse (give its path with --warehouse, or pass --create"),
        (tmp_path / "other-tool", "not a gluecat warehouse (it has no _gluecat/log folder); pass --create"),
    ):
        assert main(["serve", "-w", str(path), "--users", str(users_file), "--insecure-http"]) == 1
        err = capsys.readouterr().err
        assert err.startswith(f"gluecat: {path}: ") and problem in err and len(err.splitlines()) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["other-tool", "users.json"]
    assert list((tmp_path / "other-tool").iterdir()) == []


def test_serve_starts_and_warns_about_plain_http(tmp_path: Path) -> None:
    from gluecat.hms.reference import free_port
    from gluecat.serving import users

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
            "--create",
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
    assert f"gluecat serve: made a new, empty warehouse at {tmp_path / 'w'} (--create)" in err
    assert (tmp_path / "w" / "_gluecat" / "log").is_dir()


def test_users_add_refused_for_its_key_file_changes_no_password(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """--password-stdin with --access-key is one command: a key file that is refused leaves the old
    password (and keys) in place, as does a refused password with an access key asked for."""
    users_file = tmp_path / "users.json"
    monkeypatch.setattr(sys, "stdin", io.StringIO("old password\n"))
    assert main(["users", "add", "alice", "--file", str(users_file), "--password-stdin", "--access-key"]) == 0
    before = users_file.read_text()
    bad_key = tmp_path / "bad.key"
    bad_key.write_text("not a key")
    monkeypatch.setattr(sys, "stdin", io.StringIO("new password\n"))
    args = ["users", "add", "alice", "--file", str(users_file), "--password-stdin", "--access-key"]
    assert main([*args, "--key-file", str(bad_key)]) == 2
    assert "not a gluecat key file" in capsys.readouterr().err
    monkeypatch.setattr(sys, "stdin", io.StringIO("\n"))
    assert main(args) == 2
    assert "the password is empty" in capsys.readouterr().err
    assert users_file.read_text() == before


@pytest.mark.parametrize(
    "command",
    [
        ["users", "list", "--file"],
        ["users", "remove", "alice", "--file"],
        ["serve", "--insecure-http", "--users"],
    ],
)
def test_a_users_file_that_is_not_one_is_a_one_line_error(
    command: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    users_file = tmp_path / "users.json"
    users_file.write_text("{not json")
    assert (
        main([*command, str(users_file), *(["-w", str(tmp_path / "w")] if command[0] == "serve" else [])])
        == 2
    )
    err = capsys.readouterr().err
    assert "not a gluecat users file" in err and len(err.splitlines()) == 1
    assert users_file.read_text() == "{not json"
    assert not (tmp_path / "w").exists()


def test_serve_names_a_certificate_it_cannot_use_and_opens_no_warehouse(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from gluecat.serving import users

    users_file = tmp_path / "users.json"
    users.add(users_file, "alice", "pw", n=2**10)
    not_pem = tmp_path / "cert.pem"
    not_pem.write_text("not a certificate")
    for cert in (tmp_path / "missing.pem", not_pem):
        args = ["serve", "-w", str(tmp_path / "w"), "--users", str(users_file)]
        assert main([*args, "--tls-cert", str(cert), "--tls-key", str(cert)]) == 1
        err = capsys.readouterr().err
        assert err.startswith(f"gluecat serve: the TLS certificate {cert}") and len(err.splitlines()) == 1
    assert not (tmp_path / "w").exists()


@pytest.mark.parametrize(
    "option",
    [
        ["--port", "99999"],
        ["--port", "-1"],
        ["--workers", "0"],
        ["--max-connections", "0"],
        ["--reply-cache-mb", "-1"],
        ["--max-body-mb", "0"],
        ["--max-body-mb", "nan"],
        ["--idle-timeout", "0"],
        ["--request-timeout", "inf"],
        ["--handshake-timeout", "-5"],
    ],
)
def test_serve_refuses_an_option_value_it_cannot_serve_with(
    option: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before, these were tracebacks from socket.bind or the thread pool (or a server that never
    answered), after the warehouse had been made."""
    from gluecat.serving import users

    users_file = tmp_path / "users.json"
    users.add(users_file, "alice", "pw", n=2**10)
    args = ["serve", "-w", str(tmp_path / "w"), "--users", str(users_file), "--insecure-http", *option]
    with pytest.raises(SystemExit) as exit:
        main(args)
    assert exit.value.code == 2
    assert f"argument {option[0]}: {option[1]!r} is not" in capsys.readouterr().err
    assert not (tmp_path / "w").exists()
