"""A ``gluecat.Catalog`` in a process of its own, driven from a test through a pipe: nothing is shared
with the test's own Catalogs but the warehouse's files (tests/catalog/test_catalog_processes.py).

``Remote(warehouse)`` starts the process; its methods are the Catalog's, answering what the Catalog
answers (its ClientErrors raised again here); ``Remote.lakeformation`` is a LakeFormation on that Catalog. ``Remote.run(name, ...)`` runs one of the few things a test
does to a Catalog besides its calls (a checkpoint, a segment merge).
"""

from __future__ import annotations

import multiprocessing
from multiprocessing.connection import Connection
from typing import Any

from botocore.exceptions import ClientError

_SPAWN = multiprocessing.get_context("spawn")  # no state of the test's process is inherited


def _serve(conn: Connection, warehouse: str, settings: dict[str, Any]) -> None:
    from gluecat import Catalog, LakeFormation
    from gluecat.catalog.compact import compact_table
    from gluecat.catalog.rows import latest, merging
    from gluecat.store import store

    for module, values in (("merging", merging), ("latest", latest), ("store", store)):
        for name, value in settings.get(module, {}).items():
            setattr(values, name, value)
    glue = Catalog(warehouse, fsync=False, background_merges=False)
    glue.store.checkpoint_interval = settings.get("checkpoint_interval", 100)
    services = {"glue": glue, "lakeformation": LakeFormation(glue)}
    extras = {
        "checkpoint": lambda: glue.store.checkpoint(),
        "merge": lambda db, name: glue._ctx.rows.merger.maybe_merge((db, name)),
        "compact": lambda db, name: compact_table(glue._ctx, db, name),
    }
    while True:
        request = conn.recv()
        if request is None:
            glue.close()
            glue._ctx.rows.stop()
            conn.send(("ok", None))
            return
        kind, name, args, kwargs = request
        try:
            fn = extras[name] if kind == "run" else getattr(services[kind], name)
            conn.send(("ok", fn(*args, **kwargs)))
        except ClientError as e:
            conn.send(("client_error", (e.response, e.operation_name)))
        except Exception as e:  # anything else fails the test, with its text
            conn.send(("error", f"{type(e).__name__}: {e}"))


class Remote:
    """A Catalog over ``warehouse`` in a child process (``settings``: module constants to set there)."""

    def __init__(self, warehouse: str, settings: dict[str, Any] | None = None) -> None:
        self.lakeformation = _Service(self, "lakeformation")
        """The child's ``gluecat.LakeFormation``, sharing its Catalog's store."""
        self._conn, child = _SPAWN.Pipe()
        self._process = _SPAWN.Process(target=_serve, args=(child, warehouse, settings or {}), daemon=True)
        self._process.start()
        child.close()

    def _ask(self, request: Any) -> Any:
        self._conn.send(request)
        status, value = self._conn.recv()
        if status == "client_error":
            raise ClientError(*value)
        if status == "error":
            raise AssertionError(f"the child process's Catalog failed: {value}")
        return value

    def run(self, name: str, *args: Any) -> Any:
        return self._ask(("run", name, args, {}))

    def close(self) -> None:
        if self._process.is_alive():
            self._ask(None)
        self._process.join(timeout=30)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return lambda **kwargs: self._ask(("glue", name, (), kwargs))


class _Service:
    def __init__(self, remote: Remote, service: str) -> None:
        self._remote, self._service = remote, service

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return lambda **kwargs: self._remote._ask((self._service, name, (), kwargs))
