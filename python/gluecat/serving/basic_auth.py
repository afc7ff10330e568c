"""HTTP Basic authentication against the users file of ``gluecat serve``."""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import logging
import secrets
import threading
import time
from pathlib import Path

from gluecat.serving.router import Denied
from gluecat.serving.users import Verifier

log = logging.getLogger("gluecat.serve")

CACHE_SECONDS = 300.0
FAILURES_BEFORE_LOCKOUT = 20
LOCKOUT_SECONDS = 60.0
MAX_TRACKED_ADDRESSES = 10_000

# What a refused request's reply says. A wrong password and an unknown user are said alike (and cost the
# same hash), so that the reply does not tell which user names exist.
NO_CREDENTIALS = Denied("authentication needed: HTTP Basic, with a user name and password of the users file")
NOT_BASIC = Denied("the Authorization header is not Basic: this endpoint takes HTTP Basic authentication")
MALFORMED = Denied("the Basic credentials are not user-name:password in base64")
WRONG = Denied("the user name or password is wrong")
LOCKED_OUT = Denied("too many failed attempts from this address: try again in a minute")


class Authenticator:
    """Basic credentials checked against the users file.

    A credential that verified is remembered (as a keyed hash, never in clear) for a few minutes, so a
    client does not pay a slow password hash per request; it is remembered with the user's salted hash,
    so it stops working the moment that user's password changes or the user is removed. After repeated
    failures from one address, further unknown credentials from it are refused without hashing for a
    while: a flood of bad attempts cannot take the CPU from good clients, whose remembered credentials
    still pass.
    """

    def __init__(self, users_file: Path) -> None:
        self.verifier = Verifier(users_file)
        self._key = secrets.token_bytes(32)
        self._good: dict[bytes, tuple[str, float, str]] = {}
        self._failures: dict[str, list[float]] = {}
        self._lock = threading.Lock()

    def check(self, header: str | None, address: str) -> str | None:
        """The authenticated user name, or None."""
        verdict = self.verdict(header, address)
        return verdict if isinstance(verdict, str) else None

    def verdict(self, header: str | None, address: str) -> str | Denied:
        """The authenticated user name, or why the credentials are refused."""
        # The scheme is a case-insensitive token (RFC 7235, 2.1; RFC 2617 for the document's Basic):
        # "basic" and "BASIC" are Basic too, followed by one or more spaces and the credentials.
        if not header:
            return NO_CREDENTIALS
        scheme, _, credentials = header.partition(" ")
        if scheme.lower() != "basic":
            return NOT_BASIC
        credentials = credentials.lstrip(" ")
        token = hmac.new(self._key, header.encode(), hashlib.sha256).digest()
        now = time.monotonic()
        with self._lock:
            known = self._good.get(token)
        if known is not None:
            user, expires, stored_hash = known
            entry = self.verifier.entry(user)
            if expires > now and entry is not None and entry["hash"] == stored_hash:
                return user
            with self._lock:
                self._good.pop(token, None)
        with self._lock:
            recent = [t for t in self._failures.pop(address, []) if t > now - LOCKOUT_SECONDS]
            if recent:
                self._failures[address] = recent
            if len(recent) >= FAILURES_BEFORE_LOCKOUT:
                log.warning("refused a credential from %s: too many failed attempts", address)
                return LOCKED_OUT
        refusal = WRONG
        try:
            user, _, password = base64.b64decode(credentials, validate=True).decode().partition(":")
        except (binascii.Error, UnicodeDecodeError, ValueError):
            user, password, refusal = "", "", MALFORMED
        entry = self.verifier.entry(user) if user else None
        ok = bool(user) and self.verifier.verify(user, password)
        with self._lock:
            if ok and entry is not None:
                if len(self._good) > 100_000:  # a bound, however many clients come and go
                    self._good.clear()
                self._good[token] = (user, now + CACHE_SECONDS, entry["hash"])
                return user
            self._failures.setdefault(address, []).append(now)
            if len(self._failures) > MAX_TRACKED_ADDRESSES:
                self._forget_failures(now)
        log.warning("failed authentication for user %r from %s", user, address)
        return refusal

    def _forget_failures(self, now: float) -> None:
        """Keeps the failures remembered within a bound, however many addresses fail: those outside the
        lockout window go, then the addresses that failed first (called with the lock held)."""
        for address in [a for a, times in self._failures.items() if times[-1] <= now - LOCKOUT_SECONDS]:
            del self._failures[address]
        while len(self._failures) > MAX_TRACKED_ADDRESSES // 2:
            del self._failures[next(iter(self._failures))]
