"""The users file of ``gluecat serve``: user names with salted scrypt hashes, never passwords.

The file is JSON: {"format": 1, "users": {"alice": {"salt": hex, "hash": hex, "n": 16384, "r": 8,
"p": 1}}}. It is rewritten atomically (a temporary file renamed over it).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import os
import secrets
import threading
from pathlib import Path
from typing import Any

SCRYPT_N, SCRYPT_R, SCRYPT_P = 2**14, 8, 1
log = logging.getLogger("gluecat.serve")
NAME_CHARACTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-@")


class UsersFileError(Exception):
    """The users file is unreadable, or a user name is not acceptable."""


def _hash(password: str, salt: bytes, n: int, r: int, p: int) -> bytes:
    return hashlib.scrypt(password.encode(), salt=salt, n=n, r=r, p=p, maxmem=2**27, dklen=32)


def load_document(path: str | Path) -> dict[str, Any]:
    """The whole file: its users, and the members other parts keep there (the AWS endpoint's
    access keys)."""
    try:
        data = json.loads(Path(path).read_text())
    except FileNotFoundError:
        return {"format": 1, "users": {}}
    except (OSError, ValueError) as e:
        raise UsersFileError(f"{path}: not a gluecat users file ({e})") from e
    if not isinstance(data, dict) or data.get("format") != 1 or not isinstance(data.get("users"), dict):
        raise UsersFileError(f"{path}: not a gluecat users file (format 1)")
    for name, entry in data["users"].items():
        try:
            bytes.fromhex(entry["salt"]), bytes.fromhex(entry["hash"])
            if not all(isinstance(entry[k], int) and entry[k] > 0 for k in ("n", "r", "p")):
                raise ValueError("n, r and p must be positive integers")
        except (KeyError, TypeError, ValueError) as e:
            raise UsersFileError(f"{path}: user {name!r} has no valid salted hash ({e})") from e
    return data


def save_document(path: str | Path, document: dict[str, Any]) -> None:
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}")
    tmp.write_text(json.dumps(document, indent=1, sort_keys=True))
    os.chmod(tmp, 0o600)
    os.replace(tmp, path)


def load(path: str | Path) -> dict[str, dict[str, Any]]:
    return dict(load_document(path)["users"])


def save(path: str | Path, users: dict[str, dict[str, Any]]) -> None:
    save_document(path, {**load_document(path), "users": users})


def check(name: str, password: str) -> None:
    """Refuse a user name or password that ``add`` would refuse, before anything is written."""
    if not name or not set(name) <= NAME_CHARACTERS or len(name) > 128:
        raise UsersFileError(f"user name {name!r}: use 1-128 letters, digits, '.', '_', '-' or '@'")
    if not password:
        raise UsersFileError("the password is empty")
    if "\x00" in password:
        # scrypt keys HMAC with the password, and HMAC pads a short key with NULs: "pw" and "pw\0"
        # would hash alike. No password has a NUL, so every password is compared by its exact bytes.
        raise UsersFileError("the password contains a NUL character")


def add(path: str | Path, name: str, password: str, *, n: int = SCRYPT_N) -> None:
    check(name, password)
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


class Verifier:
    """Checks user names and passwords against a users file, re-read as soon as it changes.

    A change is seen by the file's inode, size and modification time (``users add`` and ``remove``
    replace the file, so its inode changes), checked with one stat per call. A file that cannot be read
    once the server has started does not lock everyone out: the last good users stay in force and the
    failure is logged as an error until the file is good again.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._signature: tuple[int, int, int] | None = None
        self._users: dict[str, dict[str, Any]] | None = None
        self._lock = threading.Lock()

    def _stat(self) -> tuple[int, int, int]:
        try:
            st = self.path.stat()
        except FileNotFoundError:
            return (0, 0, 0)
        return (st.st_ino, st.st_size, st.st_mtime_ns)

    def users(self) -> dict[str, dict[str, Any]]:
        signature = self._stat()
        with self._lock:
            if self._users is not None and signature == self._signature:
                return self._users
            self._signature = signature
            try:
                if signature == (0, 0, 0) and self._users is not None:
                    raise UsersFileError(f"{self.path}: the users file is missing")
                self._users = load(self.path)
            except UsersFileError as e:
                if self._users is None:
                    raise
                log.error("%s; keeping the %d users read before", e, len(self._users))
            return self._users

    def entry(self, name: str) -> dict[str, Any] | None:
        return self.users().get(name)

    def verify(self, name: str, password: str) -> bool:
        """Constant-time in the password; an unknown user costs the same hash as a known one."""
        entry = self.users().get(name)
        known = entry is not None and "\x00" not in password
        entry = entry or _DUMMY
        digest = _hash(
            password, bytes.fromhex(entry["salt"]), int(entry["n"]), int(entry["r"]), int(entry["p"])
        )
        return hmac.compare_digest(digest, bytes.fromhex(entry["hash"])) and known
