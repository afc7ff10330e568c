"""The Hive Metastore's read replies, encoded once and reused from serving's reply cache while the
warehouse has not changed (serving/replies.py says when a cached reply is served)."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any

from thrift.Thrift import TMessageType
from thrift.transport import TTransport

from gluecat.serving.replies import MAX_BYTES, ReplyCache

__all__ = ["MAX_BYTES", "ReplyCache", "answer"]


def answer(
    cache: ReplyCache,
    version: int,
    name: str,
    key: Hashable,
    seqid: int,
    oprot: Any,
    compute: Callable[[], Any],
) -> None:
    """Writes the reply to ``oprot``: from the cache, or computed (a successful result is then cached).

    ``compute`` returns the generated ``*_result`` struct, or raises to let the caller answer the error.
    The cached part is everything after the message header, encoded with the reply's own protocol class,
    so only the header (which carries the client's seqid) is written afresh.
    """
    full_key = (name, key, type(oprot).__name__)
    body = cache.get(full_key, version)
    if body is None:
        result = compute()
        header = TTransport.TMemoryBuffer()
        hprot = type(oprot)(header)
        hprot.writeMessageBegin(name, TMessageType.REPLY, 0)
        whole = TTransport.TMemoryBuffer()
        wprot = type(oprot)(whole)
        wprot.writeMessageBegin(name, TMessageType.REPLY, 0)
        result.write(wprot)
        wprot.writeMessageEnd()
        body = whole.getvalue()[len(header.getvalue()) :]
        cache.put(full_key, version, body)
    oprot.writeMessageBegin(name, TMessageType.REPLY, seqid)
    oprot.trans.write(body)  # the rest of the message, already encoded (message end included)
    oprot.trans.flush()
