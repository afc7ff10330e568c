"""The Hive Metastore's calls, each decided first by the caller's Lake Formation permissions
(gluecat/serving/permissions.py) and run as that caller, and refused as a Hive Metastore with
authorization refuses.

A real metastore authorizes a call in a pre-event listener, whose refusal the metastore answers as a
MetaException carrying the authorizer's message (HiveMetaStore.firePreEvent); and, with a filter hook,
it leaves out of listings what the caller may not see and answers a read of such a table or database as
not found (NoSuchObjectException, FilterUtils.filterTableIfEnabled). So here: a call refused for want of
DESCRIBE on what it reads (get_table, get_database) is answered as for a table or database that does not
exist, and any other refusal is a MetaException saying which permission on what is missing.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from typing import Any, TypeVar

from gluecat.catalog import access
from gluecat.catalog.context import missing_database, missing_table
from gluecat.catalog.grants import DATABASE_RES
from gluecat.errors import EntityNotFoundException
from gluecat.hms.gen.hive_metastore import ttypes
from gluecat.hms.handler import Handler
from gluecat.hms.writes import hive_error
from gluecat.serving.permissions import Authorizer, Decision

T = TypeVar("T")

Caller = Callable[[], tuple[str | None, str | None]]
"""Who is calling now: (gluecat user name or None, client address)."""


class Guarded:
    """A Handler whose served calls are decided by ``authorizer`` for ``caller()`` before they run;
    everything else of the Handler (its principal, its catalog) reads through."""

    def __init__(self, handler: Handler, authorizer: Authorizer, caller: Caller, transport: str) -> None:
        self._handler = handler
        self.authorizer = authorizer
        self._caller = caller
        self.transport = transport

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._handler, name)
        if name.startswith("_") or not callable(attr):
            return attr
        return functools.partial(self._call, name, attr)

    def _call(self, name: str, method: Callable[..., T], *args: Any) -> T:
        return self.run(name, args, lambda decision: method(*args))

    def run(self, name: str, args: tuple[Any, ...], body: Callable[[Decision], T]) -> T:
        """``body(decision)`` as the caller, if the call is allowed; the refusal as Hive's exception if
        not. One line of the audit log either way."""
        started = time.monotonic()
        user, source = self._caller()
        decision = self.authorizer.decide(user, "hive", name, args)
        outcome = "ok"
        try:
            if not decision.allowed:
                raise _refusal(name, decision, args)
            with access.acting(decision.view):
                return body(decision)
        except Exception as e:
            outcome = type(e).__name__
            raise
        finally:
            self.authorizer.record(
                protocol="hive",
                operation=name,
                user=user,
                source=source,
                decision=decision,
                outcome=outcome,
                started=started,
                transport=self.transport,
            )

    def note(self, name: str, outcome: str, reason: str) -> None:
        """A line of the audit log for a call refused before it reached the handler."""
        user, source = self._caller()
        self.authorizer.record(
            protocol="hive",
            operation=name[:100],
            user=user,
            source=source,
            decision=None,
            outcome=outcome,
            started=time.monotonic(),
            verdict="denied",
            reason=reason,
            transport=self.transport,
        )


def _refusal(name: str, decision: Decision, args: tuple[Any, ...]) -> Exception:
    if decision.hidden:
        database = str(args[0]).lower() if args else ""
        if decision.resource.startswith(DATABASE_RES) or len(args) < 2:
            message = missing_database(database)
        else:
            message = missing_table(database, str(args[1]).lower())
        return hive_error(name, EntityNotFoundException(message))
    return ttypes.MetaException(message=decision.reason)
