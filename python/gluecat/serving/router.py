"""Routes requests to handlers by path (or anything else in the request), each with its own
authentication, so that several protocols can share one server and its limits."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from gluecat.serving.http import Request, Response


@dataclass(frozen=True)
class Denied:
    """A request that was not authenticated, and why: the body of its 401 reply, so that a client (curl)
    shows the reason. It says what failed, never whether a user exists."""

    reason: str


@dataclass(frozen=True)
class Route:
    matches: Callable[[Request], bool]
    """Whether this route takes the request (the first route that does, does)."""
    authenticate: Callable[[Request], str | Denied]
    """The authenticated principal, or why not (answered with 401, ``challenge`` and the reason)."""
    handle: Callable[[Request, str], Response]
    """The reply to an authenticated request."""
    challenge: dict[str, str] = field(default_factory=dict)
    """Headers of a 401 reply, e.g. WWW-Authenticate."""
    refuse_early: Callable[[Request], Response | None] | None = None
    """A reply to a request judged by its head alone, before its body is read (the request's body is
    empty then): a protocol's own limits, answered in its own error format. None to go on."""


class Router:
    """The server's handler: the first matching route's authentication, then its handler. ``refused``
    is told of each request whose authentication failed (for the audit log)."""

    def __init__(self, routes: list[Route], refused: Callable[[Request, Denied], None] | None = None) -> None:
        self.routes = routes
        self.refused = refused

    def early(self, request: Request) -> Response | None:
        """The matching route's refusal of a request from its head, if it has one."""
        for route in self.routes:
            if route.matches(request):
                return route.refuse_early(request) if route.refuse_early is not None else None
        return None

    def __call__(self, request: Request) -> Response:
        for route in self.routes:
            if route.matches(request):
                principal = route.authenticate(request)
                if isinstance(principal, Denied):
                    if self.refused is not None:
                        self.refused(request, principal)
                    body = f"{principal.reason}\n".encode()
                    return Response(401, body, "text/plain; charset=utf-8", dict(route.challenge), close=True)
                return route.handle(request, principal)
        return Response(404, b"not found\n")
