"""``gluecat serve``: Hive Metastore Thrift calls over HTTP(S) POST with Basic authentication, and on
the same port, when given one, the AWS Glue and Lake Formation APIs.

The connections, TLS, deadlines and limits are serving/http.py's; the Thrift calls are
hms/thrift_endpoint.py's, the AWS ones gluecat/aws's; this module puts them together as routes.
"""

from __future__ import annotations

import socket
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gluecat.hms import replies
from gluecat.hms.thrift_endpoint import BINARY_TYPE, JSON_TYPE, ThriftEndpoint
from gluecat.serving import tls as tls_settings
from gluecat.serving.basic_auth import Authenticator
from gluecat.serving.http import HttpServer, Limits, Request
from gluecat.serving.router import Denied, Route, Router

if TYPE_CHECKING:
    from gluecat.aws.endpoint import AwsEndpoint

__all__ = ["BINARY_TYPE", "JSON_TYPE", "MAX_BODY", "HiveMetastoreServer", "Limits"]

MAX_BODY = Limits().max_body_bytes


class HiveMetastoreServer:
    """A running endpoint; ``port`` is the bound port (useful with port 0). Given ``aws``, the same
    port also answers the AWS Glue and Lake Formation APIs (the requests ``aws.accepts``)."""

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
        aws: AwsEndpoint | None = None,
    ) -> None:
        self.auth = Authenticator(Path(users_file))
        self.endpoint = ThriftEndpoint(catalog, reply_cache_bytes)
        self.processor = self.endpoint.processor
        route = Route(
            matches=lambda request: request.path == path,
            authenticate=self._authenticate,
            handle=self.endpoint,
            challenge={"WWW-Authenticate": 'Basic realm="gluecat"'},
        )
        routes = [route]
        if aws is not None:
            from gluecat.aws.route import aws_route

            routes.insert(0, aws_route(aws))
        router = Router(routes)
        context = tls_settings.server_context(tls_cert, tls_key) if tls_cert is not None else None
        sock = socket.create_server((host, port), backlog=1024)
        self.http = HttpServer(sock, router, limits, context, early=router.early)
        self.tls = context is not None
        self.host = host
        self.port = int(sock.getsockname()[1])
        self.path = path
        self._thread: threading.Thread | None = None

    def _authenticate(self, request: Request) -> str | Denied:
        return self.auth.verdict(request.headers.get("Authorization"), request.client[0])

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
