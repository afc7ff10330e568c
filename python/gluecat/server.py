"""``gluecat serve``'s servers put together: the Hive Metastore's and the AWS APIs' routes on one
HTTP(S) port, and the Hive Metastore's binary Thrift on a TCP port, all over one catalog.

The protocol front ends (hms/, aws/) sit side by side on serving/ and know nothing of each other; this
module, above them, is the one place that composes them.
"""

from __future__ import annotations

import socket
import threading
from pathlib import Path
from typing import Any

from gluecat.hms import replies
from gluecat.hms.server import HiveMetastoreServer
from gluecat.hms.tcp_endpoint import TcpEndpoint
from gluecat.serving import tls as tls_settings
from gluecat.serving import users
from gluecat.serving.connections import Limits
from gluecat.serving.permissions import Authorizer
from gluecat.serving.tcp import ThriftTcpServer

THRIFT_IDLE_TIMEOUT = 600.0
"""Seconds a Thrift connection may wait between calls. Hive clients hold one connection for a whole
session and call now and then (Hive's own client gives up on a silent server after 600 s); an idle
connection costs a socket, and at the connection bound the longest-idle one is closed first."""


def default_thrift_limits(http: Limits) -> Limits:
    """The TCP endpoint's limits: the HTTP endpoint's, but with Hive's idle wait between calls."""
    fields = {name: getattr(http, name) for name in http.__dataclass_fields__}
    fields["idle_timeout"] = max(http.idle_timeout, THRIFT_IDLE_TIMEOUT)
    return Limits(**fields)


class Server:
    """A running ``gluecat serve``: ``http`` (a HiveMetastoreServer with the AWS route when ``aws`` is
    given) and, with ``thrift_port``, ``thrift`` (binary Thrift over TCP, TLS with ``thrift_tls``).

    Every endpoint decides its requests with one ``authorizer`` (the AWS endpoint given is expected to
    have been made with it too; one over ``catalog`` when not given), which keeps the audit log."""

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
        aws: Any = None,
        thrift_port: int | None = None,
        thrift_host: str = "127.0.0.1",
        thrift_tls: bool = False,
        thrift_limits: Limits | None = None,
        thrift_require_known_users: bool = False,
        authorizer: Authorizer | None = None,
    ) -> None:
        self.authorizer = authorizer if authorizer is not None else Authorizer(catalog)
        routes = []
        if aws is not None:
            from gluecat.aws.route import aws_route

            routes.append(aws_route(aws))
        self.http = HiveMetastoreServer(
            catalog,
            users_file,
            host=host,
            port=port,
            path=path,
            tls_cert=tls_cert,
            tls_key=tls_key,
            reply_cache_bytes=reply_cache_bytes,
            limits=limits,
            routes=routes,
            authorizer=self.authorizer,
        )
        self.thrift: ThriftTcpServer | None = None
        self.thrift_endpoint: TcpEndpoint | None = None
        self.thrift_host = thrift_host
        self.thrift_port: int | None = None
        self.thrift_tls = thrift_tls
        self._threads: list[threading.Thread] = []
        if thrift_port is None:
            return
        users_path = Path(users_file)
        known = (lambda name: name in users.load(users_path)) if thrift_require_known_users else None
        self.thrift_endpoint = TcpEndpoint(
            catalog, reply_cache_bytes, known_user=known, authorizer=self.authorizer
        )
        if thrift_tls and tls_cert is None:
            raise ValueError("thrift_tls needs tls_cert and tls_key")
        context = tls_settings.server_context(tls_cert, tls_key) if thrift_tls and tls_cert else None
        sock = socket.create_server((thrift_host, thrift_port), backlog=1024)
        self.thrift = ThriftTcpServer(
            sock, self.thrift_endpoint, thrift_limits or default_thrift_limits(limits or Limits()), context
        )
        self.thrift_port = int(sock.getsockname()[1])

    @property
    def thrift_uri(self) -> str | None:
        return None if self.thrift_port is None else f"thrift://{self.thrift_host}:{self.thrift_port}"

    def serve_forever(self) -> None:
        """Serves the TCP endpoint in a thread of its own and the HTTP one in this thread."""
        if self.thrift is not None:
            thread = threading.Thread(target=self.thrift.serve_forever, name="gluecat-thrift", daemon=True)
            thread.start()
            self._threads.append(thread)
        self.http.serve_forever()

    def start(self) -> Server:
        thread = threading.Thread(target=self.serve_forever, name="gluecat-serve", daemon=True)
        thread.start()
        self._threads.append(thread)
        return self

    def stop(self) -> None:
        if self.thrift is not None:
            self.thrift.stop()
        self.http.stop()
        for thread in self._threads:
            thread.join(timeout=5)
        if self.authorizer.audit is not None:
            self.authorizer.audit.close()
