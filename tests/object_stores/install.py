"""Installs the object-store servers that do not come from PyPI into ``.object-stores/`` of the checkout.

Run ``python3 tests/object_stores/install.py`` (``.ci/run`` does, before pytest): it installs every server
not already there at its pinned version, side by side, and prints what it did and how long each took.
Installed servers are found again in well under a second, so it is cheap to run every time. Only the
standard library is used, so any Python 3.11 runs it before the virtual environment exists.

- versitygw (Apache-2.0): a real S3 server, a gateway from S3 to a POSIX folder; ``go install``.
- fake-gcs-server (BSD-2-Clause): a GCS emulator; ``go install``.
- Azurite (MIT): Microsoft's Azure Storage emulator; ``npm install``.

Each is installed into ``.object-stores/<name>/`` and marked installed by a file naming its version,
written last, so that a failed or interrupted install is never mistaken for an installed one.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HOME = ROOT / ".object-stores"
COMMAND = "python3 tests/object_stores/install.py"


@dataclass(frozen=True)
class Server:
    name: str
    registry: str  # "go" or "npm"
    package: str  # what `go install` or `npm install` is given, without the version
    version: str
    executable: str  # relative to the server's folder

    @property
    def folder(self) -> Path:
        return HOME / self.name

    @property
    def path(self) -> Path:
        return self.folder / self.executable

    @property
    def stamp(self) -> Path:
        return self.folder / "INSTALLED"

    @property
    def spec(self) -> str:
        return f"{self.package}@{self.version}"

    def installed(self) -> bool:
        try:
            return self.stamp.read_text().strip() == self.spec and self.path.is_file()
        except FileNotFoundError:
            return False

    def command(self) -> list[str]:
        if self.registry == "go":
            return ["go", "install", self.spec]
        # --prefer-offline: what npm's cache holds is not asked for again (half the time once cached).
        return [
            "npm",
            "install",
            "--prefer-offline",
            "--no-audit",
            "--no-fund",
            "--loglevel=error",
            "--prefix",
            ".",
            self.spec,
        ]

    def environment(self) -> dict[str, str]:
        env = dict(os.environ)
        if self.registry == "go":
            env["GOBIN"] = str(self.folder / "bin")
            env.setdefault("GOFLAGS", "-buildvcs=false")
        return env


SERVERS = {
    server.name: server
    for server in (
        # Versions as served by the Go module proxy and the npm registry in November 2026.
        Server("versitygw", "go", "github.com/versity/versitygw/cmd/versitygw", "v1.8.0", "bin/versitygw"),
        Server(
            "fake-gcs-server", "go", "github.com/fsouza/fake-gcs-server", "v1.56.1", "bin/fake-gcs-server"
        ),
        Server("azurite", "npm", "azurite", "3.37.0", "node_modules/.bin/azurite-blob"),
    )
}


def executable(name: str) -> Path | None:
    """The installed server's program, or None when it is not installed at its pinned version."""
    server = SERVERS[name]
    return server.path if server.installed() else None


def not_installed(name: str) -> str:
    """What a test that needs the server says when it is not installed."""
    server = SERVERS[name]
    return (
        f"{name} {server.version} is not installed in {server.folder}: run `{COMMAND}` from the checkout "
        f"(it runs `{' '.join(server.command())}`; needs `{server.registry}` on PATH and its registry). "
        f"CI runs it from .ci/run."
    )


def install(names: list[str], timeout: float = 1200) -> dict[str, tuple[bool, float, str]]:
    """Installs the servers named that are not installed, all at once; by name: (ok, seconds, output)."""
    results: dict[str, tuple[bool, float, str]] = {}
    running: dict[str, tuple[subprocess.Popen[bytes], float]] = {}
    for name in names:
        server = SERVERS[name]
        if server.installed():
            results[name] = (True, 0.0, "already installed")
            continue
        if shutil.which(server.registry) is None:
            results[name] = (False, 0.0, f"`{server.registry}` is not on PATH")
            continue
        shutil.rmtree(server.folder, ignore_errors=True)
        server.folder.mkdir(parents=True)
        log = (server.folder / "install.log").open("wb")
        process = subprocess.Popen(
            server.command(),
            cwd=server.folder,
            env=server.environment(),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group: stop() ends the compilers `go` starts too
        )
        log.close()
        running[name] = (process, time.monotonic())
    deadline = time.monotonic() + timeout
    try:
        wait(running, results, deadline, timeout)
    finally:
        for process, _ in running.values():  # stopped early (SIGTERM from .ci/run, ^C): end the builds
            stop(process)
    return results


def wait(
    running: dict[str, tuple[subprocess.Popen[bytes], float]],
    results: dict[str, tuple[bool, float, str]],
    deadline: float,
    timeout: float,
) -> None:
    while running:
        time.sleep(0.1)
        for name, (process, started) in list(running.items()):
            code = process.poll()
            if code is None and time.monotonic() < deadline:
                continue
            if code is None:
                stop(process)
            del running[name]
            results[name] = finish(SERVERS[name], code, time.monotonic() - started, timeout)


def stop(process: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()


def finish(server: Server, code: int | None, seconds: float, timeout: float) -> tuple[bool, float, str]:
    output = (server.folder / "install.log").read_text(errors="replace")
    ok = code == 0 and server.path.is_file()
    if ok:
        server.stamp.write_text(server.spec + "\n")
    elif code is None:
        output += f"\n(stopped after {timeout:.0f} s)"
    return ok, seconds, output


def main() -> int:
    signal.signal(signal.SIGTERM, lambda number, frame: sys.exit(128 + number))
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("names", nargs="*", help=f"servers to install: {', '.join(SERVERS)} (default: all)")
    args = parser.parse_args()
    unknown = set(args.names) - set(SERVERS)
    if unknown:
        parser.error(f"no such server: {', '.join(sorted(unknown))}")
    started = time.monotonic()
    results = install(args.names or list(SERVERS))
    failed = 0
    for name, (ok, seconds, output) in results.items():
        spec = SERVERS[name].spec
        if not ok:
            failed += 1
            tail = "\n    ".join(output.strip().splitlines()[-15:])
            print(
                f"object stores: {name} ({spec}) FAILED after {seconds:.0f} s:\n    {tail}", file=sys.stderr
            )
        elif output == "already installed":
            print(f"object stores: {name} ({spec}) already installed")
        else:
            print(f"object stores: {name} ({spec}) installed in {seconds:.0f} s")
    print(f"object stores: done in {time.monotonic() - started:.1f} s, {failed} failed, in {HOME}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
