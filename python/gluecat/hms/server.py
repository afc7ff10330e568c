"""The Hive Metastore's HTTP(S) route (Thrift calls POSTed with Basic authentication), and
``HiveMetastoreServer``, a server of that route alone.

The connections, TLS, deadlines and limits are serving/http.py's; the Thrift calls are
hms/thrift_endpoint.py's. ``gluecat serve`` puts this route beside the AWS APIs' and the TCP endpoint
(gluecat/server.py).
"""

from __future__ import annotations

import socket
import threading
import time
from pathlib import Path
from typing import Any

from gluecat.hms import replies
from gluecat.hms.thrift_endpoint import BINARY_TYPE, JSON_TYPE, ThriftEndpoint
from gluecat.serving import tls as tls_settings
from gluecat.serving.basic_auth import Authenticator
from gluecat.serving.http import HttpServer, Limits, Request
from gluecat.serving.permissions import Authorizer
from gluecat.serving.router import Denied, Route, Router

__all__ = ["BINARY_TYPE", "JSON_TYPE", "MAX_BODY", "HiveMetastoreServer", "Limits", "hms_route"]

MAX_BODY = Limits().max_body_bytes


def hms_route(endpoint: ThriftEndpoint, auth: Authenticator, path: str) -> Route:
    """Thrift calls POSTed to ``path``, from users Basic authentication accepts."""

    def authenticate(request: Request) -> str | Denied:
        return auth.verdict(request.headers.get("Authorization"), request.client[0])

    return Route(
        matches=lambda request: request.path == path,
        authenticate=authenticate,
        handle=endpoint,
        challenge={"WWW-Authenticate": 'Basic realm="gluecat"'},
    )


class HiveMetastoreServer:
    """A running HTTP(S) endpoint of the Hive Metastore route, and of ``routes`` before it when given;
    ``port`` is the bound port (useful with port 0)."""

    def __init__(
        self,
        catalog: Any,
        users_file: str | Path,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        path: str = "/",
        tls_cert: str | None = None,
        tls_key: str | None = None,
        reply_cache_bytes: int = replies.MAX_BYTES,
        limits: Limits | None = None,
        routes: list[Route] | None = None,
        authorizer: Authorizer | None = None,
    ) -> None:
        self.auth = Authenticator(Path(users_file))
        self.authorizer = authorizer if authorizer is not None else Authorizer(catalog)
        self.endpoint = ThriftEndpoint(catalog, reply_cache_bytes, self.authorizer)
        self.processor = self.endpoint.processor
        router = Router([*(routes or []), hms_route(self.endpoint, self.auth, path)], self._refused)
        context = tls_settings.server_context(tls_cert, tls_key) if tls_cert is not None else None
        sock = socket.create_server((host, port), backlog=1024)
        self.http = HttpServer(sock, router, limits, context, early=router.early)
        self.tls = context is not None
        self.host = host
        self.port = int(sock.getsockname()[1])
        self.path = path
        self._thread: threading.Thread | None = None

    def _refused(self, request: Request, denied: Denied) -> None:
        """A request whose credentials were refused: a line of the audit log."""
        self.authorizer.record(
            protocol="hive",
            operation=None,
            user=None,
            source=request.client[0],
            decision=None,
            outcome="Unauthenticated",
            started=time.monotonic(),
            reason=denied.reason,
        )

    @property
    def url(self) -> str:
        return f"{'https' if self.tls else 'http'}://{self.host}:{self.port}{self.path}"

    def serve_forever(self) -> None:
        self.http.serve_forever()

    def start(self) -> HiveMetastoreServer:
        self._thread = threading.Thread(target=self.serve_forever, name="gluecat-hms", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self.http.stop()
        if self._thread is not None:
            self._thread.join(timeout=5)
