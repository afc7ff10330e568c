"""The users file of ``gluecat serve``: user names with salted scrypt hashes, never passwords.

The file is JSON: {"format": 1, "users": {"alice": {"salt": hex, "hash": hex, "n": 16384, "r": 8,
"p": 1}}}. It is rewritten atomically (a temporary file renamed over it).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SCRYPT_N, SCRYPT_R, SCRYPT_P = 2**14, 8, 1
_NAME_OK = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-@")


class UsersFileError(Exception):
    """The users file is unreadable, or a user name is not acceptable."""


def _hash(password: str, salt: bytes, n: int, r: int, p: int) -> bytes:
    return hashlib.scrypt(password.encode(), salt=salt, n=n, r=r, p=p, maxmem=2**27, dklen=32)


def load(path: str | Path) -> dict[str, dict[str, Any]]:
    try:
        data = json.loads(Path(path).read_text())
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as e:
        raise UsersFileError(f"{path}: not a gluecat users file ({e})") from e
    if not isinstance(data, dict) or data.get("format") != 1 or not isinstance(data.get("users"), dict):
        raise UsersFileError(f"{path}: not a gluecat users file (format 1)")
    return dict(data["users"])


def save(path: str | Path, users: dict[str, dict[str, Any]]) -> None:
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}")
    tmp.write_text(json.dumps({"format": 1, "users": users}, indent=1, sort_keys=True))
    os.chmod(tmp, 0o600)
    os.replace(tmp, path)


def add(path: str | Path, name: str, password: str, *, n: int = SCRYPT_N) -> None:
    if not name or not set(name) <= _NAME_OK or len(name) > 128:
        raise UsersFileError(f"user name {name!r}: use 1-128 letters, digits, '.', '_', '-' or '@'")
    if not password:
        raise UsersFileError("the password is empty")
    users = load(path)
    salt = secrets.token_bytes(16)
    users[name] = {
        "salt": salt.hex(),
        "hash": _hash(password, salt, n, SCRYPT_R, SCRYPT_P).hex(),
        "n": n,
        "r": SCRYPT_R,
        "p": SCRYPT_P,
    }
    save(path, users)


def remove(path: str | Path, name: str) -> bool:
    users = load(path)
    if name not in users:
        return False
    del users[name]
    save(path, users)
    return True


_DUMMY: dict[str, Any] = {"salt": "00" * 16, "hash": "00" * 32, "n": SCRYPT_N, "r": SCRYPT_R, "p": SCRYPT_P}


@dataclass
class Verifier:
    """Checks user names and passwords against a users file (re-read when it changes)."""

    path: Path
    _mtime: float = -1.0
    _users: dict[str, dict[str, Any]] | None = None

    def users(self) -> dict[str, dict[str, Any]]:
        try:
            mtime = self.path.stat().st_mtime
        except FileNotFoundError:
            mtime = 0.0
        if self._users is None or mtime != self._mtime:
            self._users, self._mtime = load(self.path), mtime
        return self._users

    def verify(self, name: str, password: str) -> bool:
        """Constant-time in the password; an unknown user costs the same hash as a known one."""
        entry = self.users().get(name)
        known = entry is not None
        entry = entry or _DUMMY
        digest = _hash(
            password, bytes.fromhex(entry["salt"]), int(entry["n"]), int(entry["r"]), int(entry["p"])
        )
        return hmac.compare_digest(digest, bytes.fromhex(entry["hash"])) and known
