"""The commands a user types: an access key from `gluecat users`, then `gluecat serve`, whose printed
configuration lines are pasted as they are into an AWS config file and an environment for boto3 and
the AWS CLI (`aws glue ...`, the awscli package, run as its own process)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import boto3
import pytest

from gluecat import Catalog
from gluecat.cli import main
from gluecat.hms.reference import free_port
from tests.certificates import make_certificate


def test_users_add_access_key_prints_a_credentials_profile_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    users_file = tmp_path / "users.json"
    assert main(["users", "add", "alice", "--file", str(users_file), "--access-key"]) == 0
    out = capsys.readouterr()
    first, second = out.out.splitlines()
    assert first.startswith("aws_access_key_id = GCAK")
    assert second.startswith("aws_secret_access_key = ")
    key_id, secret = first.split(" = ")[1], second.split(" = ")[1]
    assert secret not in users_file.read_text()
    assert "shown only now" in out.err

    assert main(["users", "list", "--file", str(users_file)]) == 0
    assert capsys.readouterr().out == "alice\n"
    assert main(["users", "list", "--file", str(users_file), "--access-keys"]) == 0
    assert key_id in capsys.readouterr().out
    assert main(["users", "remove", "alice", "--file", str(users_file), "--access-key", "GCAKNOTHERE"]) == 1
    assert main(["users", "remove", "alice", "--file", str(users_file), "--access-key", key_id]) == 0
    assert capsys.readouterr().out == f"access key {key_id} of alice removed from {users_file}\n"
    assert main(["users", "remove", "alice", "--file", str(users_file)]) == 1
    assert main(["users", "add", "alice", "--file", str(users_file), "--access-key"]) == 0
    capsys.readouterr()
    assert main(["users", "remove", "alice", "--file", str(users_file)]) == 0
    assert capsys.readouterr().out == f"user alice and its 1 access key removed from {users_file}\n"


@dataclass
class Serving:
    banner: list[str]
    key_id: str
    secret: str
    cert: Path
    port: int


def _read_banner(proc: subprocess.Popen[str]) -> list[str]:
    assert proc.stdout is not None
    lines = []
    while True:
        line = proc.stdout.readline()
        assert line, "gluecat serve stopped before printing its configuration"
        lines.append(line.rstrip("\n"))
        if line.startswith("with an access key"):
            return lines


@pytest.fixture(scope="module")
def serving(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Serving]:
    folder = tmp_path_factory.mktemp("serve")
    cert, key = make_certificate(folder / "tls")
    users_file = folder / "users.json"
    add = subprocess.run(
        [sys.executable, "-m", "gluecat", "users", "add", "alice", "--file", str(users_file), "--access-key"],
        capture_output=True,
        text=True,
        check=True,
    )
    key_id, secret = (line.split(" = ")[1] for line in add.stdout.splitlines())
    warehouse = str(folder / "warehouse")
    glue = Catalog(warehouse)
    glue.create_database(DatabaseInput={"Name": "db"})
    glue.create_table(
        DatabaseName="db", TableInput={"Name": "orders", "Parameters": {"classification": "parquet"}}
    )
    port = free_port()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "gluecat",
            "serve",
            "--warehouse",
            warehouse,
            "--users",
            str(users_file),
            "--port",
            str(port),
            "--tls-cert",
            str(cert),
            "--tls-key",
            str(key),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        yield Serving(_read_banner(proc), key_id, secret, cert, port)
    finally:
        proc.terminate()
        proc.communicate(timeout=20)


def _section(banner: list[str], start: str, end: str) -> list[str]:
    i = banner.index(start)
    j = banner.index(end)
    return [line for line in banner[i + 1 : j] if line]


def test_serve_prints_the_endpoint_and_the_lines_to_paste(serving: Serving) -> None:
    url = f"https://127.0.0.1:{serving.port}"
    assert serving.banner[0].startswith(f"gluecat Hive Metastore endpoint on {url}/")
    assert serving.banner[1] == f"AWS Glue and Lake Formation endpoint on {url} (region us-east-1)."
    assert f"export AWS_ENDPOINT_URL_GLUE={url}" in serving.banner
    assert f"export AWS_CA_BUNDLE={serving.cert}" in serving.banner


def _profile(serving: Serving, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> boto3.session.Session:
    """A boto3 session of the printed profile, pasted into a config file, and the access key."""
    config = tmp_path / "config"
    config.write_text(
        "\n".join(
            _section(serving.banner, "For boto3 and the AWS CLI, in ~/.aws/config:", "or in the environment:")
        )
        + "\n"
    )
    credentials = tmp_path / "credentials"
    credentials.write_text(
        f"[gluecat]\naws_access_key_id = {serving.key_id}\naws_secret_access_key = {serving.secret}\n"
    )
    for name in list(os.environ):
        if name.startswith("AWS_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(config))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(credentials))
    return boto3.session.Session(profile_name="gluecat")


def test_boto3_with_the_printed_profile(
    serving: Serving, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    glue = _profile(serving, tmp_path, monkeypatch).client("glue")
    assert [t["Name"] for t in glue.get_tables(DatabaseName="db")["TableList"]] == ["orders"]


def test_serve_answers_lake_formation_with_gluecats_transactions(
    serving: Serving, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    session = _profile(serving, tmp_path, monkeypatch)
    lf, glue = session.client("lakeformation"), session.client("glue")
    tx = lf.start_transaction()["TransactionId"]
    glue.create_table(
        DatabaseName="db", TableInput={"Name": "staged", "TableType": "GOVERNED"}, TransactionId=tx
    )
    assert glue.get_table(DatabaseName="db", Name="staged", TransactionId=tx)["Table"]["Name"] == "staged"
    assert [t["Name"] for t in glue.get_tables(DatabaseName="db")["TableList"]] == ["orders"]
    assert (
        lf.describe_transaction(TransactionId=tx)["TransactionDescription"]["TransactionStatus"] == "ACTIVE"
    )
    lf.cancel_transaction(TransactionId=tx)
    assert lf.list_transactions(StatusFilter="ABORTED")["Transactions"][0]["TransactionId"] == tx


def _aws_cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    return subprocess.run(
        [sys.executable, "-m", "awscli", *args],
        capture_output=True,
        text=True,
        env={**clean, **env},
        timeout=120,
    )


def test_the_aws_cli_with_endpoint_url_and_ca_bundle(serving: Serving) -> None:
    keys = {"AWS_ACCESS_KEY_ID": serving.key_id, "AWS_SECRET_ACCESS_KEY": serving.secret}
    done = _aws_cli(
        "glue",
        "get-tables",
        "--database-name",
        "db",
        "--endpoint-url",
        f"https://127.0.0.1:{serving.port}",
        "--ca-bundle",
        str(serving.cert),
        "--region",
        "us-east-1",
        env=keys,
    )
    assert done.returncode == 0, done.stderr
    assert [t["Name"] for t in json.loads(done.stdout)["TableList"]] == ["orders"]

    missing = _aws_cli(
        "glue",
        "get-table",
        "--database-name",
        "db",
        "--name",
        "nope",
        "--endpoint-url",
        f"https://127.0.0.1:{serving.port}",
        "--ca-bundle",
        str(serving.cert),
        "--region",
        "us-east-1",
        env=keys,
    )
    assert missing.returncode != 0
    assert "An error occurred (EntityNotFoundException) when calling the GetTable operation" in missing.stderr


def test_the_aws_cli_with_the_printed_environment(serving: Serving) -> None:
    exports = _section(serving.banner, "or in the environment:", serving.banner[-1])
    env = dict(line.removeprefix("export ").split("=", 1) for line in exports)
    env.update({"AWS_ACCESS_KEY_ID": serving.key_id, "AWS_SECRET_ACCESS_KEY": serving.secret})
    done = _aws_cli("glue", "get-databases", env=env)
    assert done.returncode == 0, done.stderr
    assert [d["Name"] for d in json.loads(done.stdout)["DatabaseList"]] == ["db"]
    wrong = _aws_cli("glue", "get-databases", env={**env, "AWS_SECRET_ACCESS_KEY": "wrong"})
    assert wrong.returncode != 0 and "InvalidSignatureException" in wrong.stderr
