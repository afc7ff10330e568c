"""The Hive Metastore's Thrift calls as stock clients send them: TBinaryProtocol messages on a TCP
connection (serving/tcp.py delivers each one whole), answered by the same handler and reply cache as
the HTTP endpoint.

Each connection has its own handler, holding who the caller is: the user name its set_ugi call sent,
unverified (Hive without Kerberos trusts it the same way). With ``known_user``, set_ugi refuses a
name that is not one of the server's users, and every other call waits for a set_ugi that succeeded.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from thrift.protocol import TBinaryProtocol
from thrift.transport import TTransport

from gluecat.hms import replies
from gluecat.hms.guard import Guarded
from gluecat.hms.handler import Handler
from gluecat.hms.thrift_endpoint import Body, Processor
from gluecat.serving.permissions import Authorizer
from gluecat.serving.tcp import FramingError, Session


class TcpEndpoint:
    """serving/tcp.py's message handler: one message in, its reply out (None for a oneway call). Each
    call is decided by ``authorizer`` (one over ``catalog`` when not given) for the connection's set_ugi
    user (before any set_ugi: nobody in particular, who holds IAM_ALLOWED_PRINCIPALS' grants alone)."""

    def __init__(
        self,
        catalog: Any,
        reply_cache_bytes: int = replies.MAX_BYTES,
        known_user: Callable[[str], bool] | None = None,
        authorizer: Authorizer | None = None,
    ) -> None:
        self.catalog = catalog
        self.authorizer = authorizer if authorizer is not None else Authorizer(catalog)
        self.reply_cache_bytes = reply_cache_bytes
        self.cache = replies.ReplyCache(reply_cache_bytes)
        self.known_user = known_user

    def processor(self, session: Session) -> Processor:
        if session.state is None:
            handler = Handler(self.catalog, known_user=self.known_user)
            address = session.peer[0]
            guarded = Guarded(handler, self.authorizer, lambda: (handler.principal, address), "tcp")
            session.state = Processor(
                guarded, self.reply_cache_bytes, self.cache, require_principal=self.known_user is not None
            )
        processor: Processor = session.state
        return processor

    @staticmethod
    def principal(session: Session) -> str | None:
        """Who the connection's caller said it is (set_ugi), for the permission checks."""
        return None if session.state is None else session.state._handler.principal

    def __call__(self, session: Session, message: bytes) -> bytes | None:
        # The C codec; no string or container can be longer than the message (serving/tcp.py checked
        # its structure already), so a forged length allocates nothing.
        factory = TBinaryProtocol.TBinaryProtocolAcceleratedFactory(
            string_length_limit=len(message), container_length_limit=len(message)
        )
        out = TTransport.TMemoryBuffer()
        try:
            self.processor(session).process(factory.getProtocol(Body(message)), factory.getProtocol(out))
        except Exception as e:
            # The processor answers a handler's failure itself: what escapes is the decoding of the
            # client's bytes, after which the stream cannot be trusted.
            raise FramingError(f"malformed Thrift message: {type(e).__name__}: {e}") from e
        reply = out.getvalue()
        return reply or None
