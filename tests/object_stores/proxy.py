"""A counting, slowing, failing proxy in front of an object store, and the test's handle on it.

    with start_proxy(bucket.endpoint, style="s3", latency=0.02) as proxy:
        slow = bucket.through(proxy.endpoint)
        ... requests to slow ...
        proxy.counts()                 # {"get": 3, "head": 0, "list": 1, "put": 2, "conditional_put": 1, ...}
        proxy.reset()
        rule = proxy.inject("slow_down", kinds=["conditional_put"], times=2)
        proxy.fired(rule)              # how often the rule fired so far

The proxy (proxy_server.py) is a process of its own, so that it never competes with the code under test
for the interpreter lock: a benchmark measures the store, not the proxy.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

from tests.object_stores.servers import ended_with_this_process

SERVER = Path(__file__).with_name("proxy_server.py")
Kind = Literal["get", "head", "list", "put", "conditional_put", "delete", "other"]
Action = Literal["internal_error", "slow_down", "drop_before", "drop_after", "delay"]
Style = Literal["s3", "azure", "gcs"]


class ProxyError(RuntimeError):
    """The proxy refused a control request (an unknown action, a malformed rule); says why."""


class Proxy:
    def __init__(self, endpoint: str, control: str, pid: int) -> None:
        self.endpoint = endpoint
        self.control = control
        self.pid = pid  # for a benchmark that reports the proxy's own CPU time

    def call(self, method: str, path: str, body: Any = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.control + path, data=data, method=method)
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return json.loads(response.read())
        except urllib.error.HTTPError as error:
            with error:
                raise ProxyError(f"{method} {path}: {error.read().decode(errors='replace')}") from None

    def counts(self) -> dict[str, int]:
        """Requests received by kind since the start or the last reset, faulted ones included."""
        return dict(self.call("GET", "/counts")["counts"])

    def total(self) -> int:
        return sum(self.counts().values())

    def connections(self) -> int:
        """Client connections accepted since the start or the last reset."""
        return int(self.call("GET", "/counts")["connections"])

    def log(self) -> list[dict[str, Any]]:
        """Each request since the last reset: kind, method, target, key, status and fault."""
        return list(self.call("GET", "/log"))

    def reset(self) -> None:
        """Zeroes the counts and the log (the fault rules stay)."""
        self.call("POST", "/reset")

    def set_latency(self, seconds: float) -> None:
        self.call("PUT", "/latency", {"seconds": seconds})

    def inject(
        self,
        action: Action,
        *,
        kinds: list[Kind] | None = None,
        key: str | None = None,
        skip: int = 0,
        times: int | None = None,
        probability: float = 1.0,
        seed: int = 0,
        seconds: float = 0.0,
        phase: Literal["before", "after"] = "before",
    ) -> int:
        """Adds a fault rule, tried after the ones before it; its id.

        It matches requests of ``kinds`` (any kind when None) whose key (a listing's prefix) the
        regular expression ``key`` finds; past the first ``skip`` matches, it fires on at most
        ``times`` (no limit when None), each with ``probability`` drawn from ``random.Random(seed)``.
        ``seconds`` and ``phase`` are a delay's: before forwarding the request, or after, holding the
        reply.
        """
        spec = {
            "action": action,
            "kinds": kinds,
            "key": key,
            "skip": skip,
            "times": times,
            "probability": probability,
            "seed": seed,
            "seconds": seconds,
            "phase": phase,
        }
        return int(self.call("POST", "/rules", spec)["id"])

    def rules(self) -> list[dict[str, Any]]:
        return list(self.call("GET", "/rules"))

    def fired(self, rule: int) -> int:
        return next(int(r["fired"]) for r in self.rules() if r["id"] == rule)

    def clear_faults(self) -> None:
        self.call("DELETE", "/rules")


@contextlib.contextmanager
def start_proxy(upstream: str, style: Style = "s3", latency: float = 0.0) -> Iterator[Proxy]:
    """A proxy to ``upstream`` (http://host:port; a path is ignored) until the block ends."""
    scheme, _, rest = upstream.partition("://")
    origin = f"{scheme}://{rest.split('/', 1)[0]}"
    command = [sys.executable, str(SERVER), "--upstream", origin, "--style", style, "--latency", str(latency)]
    child = subprocess.Popen(
        ended_with_this_process(command),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        assert child.stdout is not None
        line = child.stdout.readline()
        if not line:
            raise RuntimeError(f"the proxy exited with {child.wait()} before it listened")
        ports = json.loads(line)
        yield Proxy(
            f"http://127.0.0.1:{ports['port']}", f"http://127.0.0.1:{ports['control_port']}", child.pid
        )
    finally:
        child.terminate()
        try:
            child.wait(timeout=10)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
        if child.stdout is not None:
            child.stdout.close()
