"""Encoded replies of the metastore's read calls, reused while the warehouse has not changed.

Many clients planning queries over the same table ask for the same partition list; encoding a thousand
Thrift partitions costs far more than sending them. A reply is keyed by call, arguments and protocol and
labelled with the warehouse version read *before* it was computed, so it is only ever served while that
version is still the latest: any commit anywhere makes every cached reply a miss.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any

from thrift.Thrift import TMessageType
from thrift.transport import TTransport

MAX_BYTES = 256 * 1024 * 1024


class ReplyCache:
    """Least-recently-used encoded reply bodies, at most ``max_bytes`` in all."""

    def __init__(self, max_bytes: int = MAX_BYTES) -> None:
        self.max_bytes = max_bytes
        self._entries: OrderedDict[Hashable, tuple[int, bytes]] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def get(self, key: Hashable, version: int) -> bytes | None:
        with self._lock:
            entry = self._entries.get(key)
            if entry is None or entry[0] != version:
                return None
            self._entries.move_to_end(key)
            return entry[1]

    def put(self, key: Hashable, version: int, body: bytes) -> None:
        if len(body) > self.max_bytes // 4:
            return  # one huge reply must not push out everything else
        with self._lock:
            old = self._entries.pop(key, None)
            if old is not None:
                self._bytes -= len(old[1])
            self._entries[key] = (version, body)
            self._bytes += len(body)
            while self._bytes > self.max_bytes:
                _, (_, evicted) = self._entries.popitem(last=False)
                self._bytes -= len(evicted)


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
