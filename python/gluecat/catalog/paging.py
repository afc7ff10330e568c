"""Opaque, tamper-evident continuation tokens.

A token says where a listing stopped (the last key returned) and for which query; it is signed with the
warehouse's secret so that a forged, altered or foreign token is refused with InvalidInputException
rather than crashing or silently listing something else. Resuming after a key, not an offset, keeps
paging exact while other writers add or remove entries. A listing of a table's (or a database's) entries
names the table's CreateTime in its query, so that a token of a table since dropped and made again under
its name is refused, not read as a place in the new table's listing (a page silently missing its rows).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from typing import Any

from gluecat.errors import InvalidInputException


def query_digest(*parts: Any) -> str:
    return hashlib.sha256(json.dumps(parts, default=str, sort_keys=True).encode()).hexdigest()[:16]


def make_token(secret: bytes, query: str, position: Any) -> str:
    body = json.dumps({"q": query, "p": position}, separators=(",", ":")).encode()
    mac = hmac.new(secret, body, hashlib.sha256).digest()[:16]
    return base64.urlsafe_b64encode(mac + body).decode().rstrip("=")


def read_token(secret: bytes, query: str, token: str | None, field: str = "NextToken") -> Any:
    """The position a token encodes, or None for no token; InvalidInputException if it is not ours."""
    if token is None or token == "":
        return None
    if not isinstance(token, str):
        raise InvalidInputException(f"{field}: must be a string")
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
    except (ValueError, TypeError) as e:
        raise InvalidInputException(f"{field}: not a continuation token of this catalog") from e
    mac, body = raw[:16], raw[16:]
    if len(mac) < 16 or not hmac.compare_digest(mac, hmac.new(secret, body, hashlib.sha256).digest()[:16]):
        raise InvalidInputException(f"{field}: not a continuation token of this catalog")
    decoded = json.loads(body)
    if decoded.get("q") != query:
        raise InvalidInputException(
            f"{field}: the token was issued for a different request (or a table or database since dropped "
            "and made again under its name)"
        )
    return decoded.get("p")
