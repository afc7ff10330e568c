"""A catalog service for the Spark suite's remote catalog: `gluecat serve` in a process of its own on
127.0.0.1, and the AWS configuration files (a profile's credentials and region, the CA bundle) a Spark
catalog finds it by, as boto3 finds them."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from gluecat.hms.reference import free_port
from tests.certificates import make_certificate

PROFILE = "gluecat-test"


@dataclass
class Serving:
    url: str
    ca_bundle: Path
    environment: dict[str, str]
    """The variables that point botocore at this service's profile and certificate."""
    process: subprocess.Popen[str]

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.communicate()


def aws_files(folder: Path, profile: str, key_id: str, secret: str, ca_bundle: Path | None) -> dict[str, str]:
    """A credentials file and a config file holding ``profile``, and the environment naming them."""
    folder.mkdir(parents=True, exist_ok=True)
    credentials, config = folder / "credentials", folder / "config"
    credentials.write_text(f"[{profile}]\naws_access_key_id = {key_id}\naws_secret_access_key = {secret}\n")
    config.write_text(f"[profile {profile}]\nregion = us-east-1\n")
    env = {"AWS_SHARED_CREDENTIALS_FILE": str(credentials), "AWS_CONFIG_FILE": str(config)}
    # The bundle as the environment names it: it takes precedence over a profile's ca_bundle, and the
    # machine's own environment may name the system's.
    if ca_bundle is not None:
        env["AWS_CA_BUNDLE"] = str(ca_bundle)
    return env


def serve(warehouse: Path, folder: Path) -> Serving:
    """`gluecat serve` over ``warehouse`` with one access key, once it answers."""
    cert, key = make_certificate(folder / "tls")
    users_file = folder / "users.json"
    add = subprocess.run(
        [sys.executable, "-m", "gluecat", "users", "add", "alice", "--file", str(users_file), "--access-key"],
        capture_output=True,
        text=True,
        check=True,
    )
    key_id, secret = (line.split(" = ")[1] for line in add.stdout.splitlines())
    port = free_port()
    log = folder / "serve.log"
    with log.open("w") as out:
        process = subprocess.Popen(
            [
                *(sys.executable, "-m", "gluecat", "serve", "--warehouse", str(warehouse), "--create"),
                *("--users", str(users_file), "--port", str(port)),
                *("--tls-cert", str(cert), "--tls-key", str(key)),
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
            text=True,
        )
    deadline = time.monotonic() + 60
    while "with an access key" not in log.read_text():  # the banner's last part: it serves
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            raise AssertionError(f"gluecat serve did not start:\n{log.read_text()}")
        time.sleep(0.05)
    env = aws_files(folder / "aws", PROFILE, key_id, secret, cert)
    return Serving(f"https://127.0.0.1:{port}", cert, env, process)


@contextlib.contextmanager
def environment(values: dict[str, str]) -> Iterator[None]:
    """``values`` in os.environ while inside, as they were afterwards."""
    before = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in before.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
