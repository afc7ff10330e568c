"""Access keys of the AWS endpoint, kept in the users file with their secrets encrypted at rest.

Signature Version 4 is an HMAC keyed by the secret itself, so a server must be able to recover the
secret: it cannot keep only a hash of it, as it does of passwords. Nor can it keep derived signing keys
instead, since the first derivation step mixes in the request's date. So each secret is encrypted with
AES-256-GCM under a key that lives in a separate file (by default the users file's name plus ``.key``,
mode 0600), with the key id and user name as associated data: a copy of the users file alone, a backup
say, reveals no secret, and a record moved to another key id or user no longer decrypts. Keep the key
file somewhere the users file does not travel (``--key-file``).

The users file's member ``access_keys``: {"<key id>": {"user": name, "created": ISO time,
"nonce": hex, "secret": hex}}.
"""

from __future__ import annotations

import logging
import os
import secrets
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from gluecat.aws import sigv4
from gluecat.serving import users
from gluecat.serving.users import UsersFileError

log = logging.getLogger("gluecat.aws")

KEY_ID_PREFIX = "GCAK"
_KEY_ID_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
_MAX_SIGNING_KEYS = 4096


def key_file_for(users_file: str | Path) -> Path:
    """Where the encryption key lives unless told otherwise: beside the users file."""
    return Path(f"{users_file}.key")


def _read_key(path: Path) -> bytes | None:
    try:
        text = path.read_text().strip()
    except FileNotFoundError:
        return None
    try:
        key = bytes.fromhex(text)
    except ValueError:
        key = b""
    if len(key) != 32:
        raise UsersFileError(f"{path}: not a gluecat key file (64 hexadecimal digits)")
    return key


def _create_key(path: Path) -> bytes:
    key = AESGCM.generate_key(bit_length=256)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(key.hex() + "\n")
    return key


def _aad(key_id: str, user: str) -> bytes:
    return f"{key_id}\n{user}".encode()


def _decrypt(key: bytes, key_id: str, record: dict[str, Any]) -> str:
    return (
        AESGCM(key)
        .decrypt(
            bytes.fromhex(record["nonce"]), bytes.fromhex(record["secret"]), _aad(key_id, record["user"])
        )
        .decode()
    )


def _records(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    records = document.get("access_keys", {})
    if not isinstance(records, dict):
        raise UsersFileError("the users file's access_keys member is not an object")
    return dict(records)


def add(users_file: str | Path, user: str, *, key_file: str | Path | None = None) -> tuple[str, str]:
    """A new access key for ``user``: (key id, secret). The secret is shown to the caller only now."""
    if not user or not set(user) <= users.NAME_CHARACTERS or len(user) > 128:
        raise UsersFileError(f"user name {user!r}: use 1-128 letters, digits, '.', '_', '-' or '@'")
    key_path = Path(key_file) if key_file is not None else key_file_for(users_file)
    document = users.load_document(users_file)
    records = _records(document)
    key = _read_key(key_path)
    if key is None:
        if records:
            raise UsersFileError(
                f"{users_file} holds access keys encrypted with a key file that is not at {key_path}; "
                "give its path with --key-file"
            )
        key = _create_key(key_path)
    elif records:
        some_id, some = next(iter(records.items()))
        try:
            _decrypt(key, some_id, some)
        except (InvalidTag, KeyError, ValueError) as e:
            raise UsersFileError(
                f"{key_path} does not decrypt the access keys already in {users_file}; "
                "give the key file they were made with (--key-file)"
            ) from e
    key_id = KEY_ID_PREFIX + "".join(secrets.choice(_KEY_ID_ALPHABET) for _ in range(16))
    secret = secrets.token_urlsafe(30)  # 40 characters, as AWS's secrets are
    nonce = secrets.token_bytes(12)
    records[key_id] = {
        "user": user,
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "nonce": nonce.hex(),
        "secret": AESGCM(key).encrypt(nonce, secret.encode(), _aad(key_id, user)).hex(),
    }
    users.save_document(users_file, {**document, "access_keys": records})
    return key_id, secret


def remove(users_file: str | Path, user: str, key_id: str | None = None) -> int:
    """Delete the user's access keys (or only ``key_id``); the number deleted."""
    document = users.load_document(users_file)
    records = _records(document)
    doomed = [k for k, r in records.items() if r.get("user") == user and key_id in (None, k)]
    if doomed:
        for k in doomed:
            del records[k]
        users.save_document(users_file, {**document, "access_keys": records})
    return len(doomed)


def listing(users_file: str | Path) -> dict[str, list[tuple[str, str]]]:
    """Each user's access keys: (key id, creation time)."""
    out: dict[str, list[tuple[str, str]]] = {}
    for key_id, record in sorted(_records(users.load_document(users_file)).items()):
        out.setdefault(str(record.get("user")), []).append((key_id, str(record.get("created", ""))))
    return out


class AccessKeys:
    """The server's view of the access keys: secrets decrypted in memory, by key id.

    The users file is re-read when it changes (its size, modification time or inode), so a key added
    or removed with ``gluecat users`` takes effect at the next request, without a restart. A file that
    has become unreadable keeps the last good keys, loudly.
    """

    def __init__(self, users_file: str | Path, key_file: str | Path | None = None) -> None:
        self.users_file = Path(users_file)
        self.key_file = Path(key_file) if key_file is not None else key_file_for(users_file)
        self._stamp: tuple[int, int, int] | None = None
        self._secrets: dict[str, tuple[str, str]] = {}
        self._signing: dict[tuple[str, str], bytes] = {}
        self._lock = threading.Lock()

    def user(self, key_id: str) -> str | None:
        """The user an access key belongs to."""
        entry = self._current().get(key_id)
        return entry[0] if entry else None

    def signing_key(self, key_id: str, scope: str) -> bytes | None:
        """The SigV4 signing key of ``key_id`` for a credential scope date/region/service/aws4_request."""
        known = self._current().get(key_id)
        if known is None:
            return None
        cached = self._signing.get((key_id, scope))
        if cached is None:
            date, region, service, _ = scope.split("/")
            cached = sigv4.signing_key(known[1], date, region, service)
            with self._lock:
                if len(self._signing) >= _MAX_SIGNING_KEYS:
                    self._signing.clear()
                self._signing[(key_id, scope)] = cached
        return cached

    def _current(self) -> dict[str, tuple[str, str]]:
        try:
            st = self.users_file.stat()
            stamp = (st.st_mtime_ns, st.st_size, st.st_ino)
        except FileNotFoundError:
            stamp = (0, 0, 0)
        if stamp != self._stamp:
            with self._lock:
                if stamp != self._stamp:
                    self._reload(stamp)
        return self._secrets

    def _reload(self, stamp: tuple[int, int, int]) -> None:
        try:
            records = _records(users.load_document(self.users_file))
            key = _read_key(self.key_file) if records else None
        except UsersFileError as e:
            log.error("keeping the access keys read before: %s", e)
            self._stamp = stamp
            return
        loaded: dict[str, tuple[str, str]] = {}
        if records and key is None:
            log.error("%s holds access keys but the key file %s is missing", self.users_file, self.key_file)
        for key_id, record in records.items():
            if key is None:
                break
            try:
                loaded[key_id] = (str(record["user"]), _decrypt(key, key_id, record))
            except (InvalidTag, KeyError, ValueError, TypeError):
                log.error(
                    "access key %s in %s does not decrypt with %s", key_id, self.users_file, self.key_file
                )
        self._secrets = loaded
        self._signing = {}
        self._stamp = stamp
