"""Passwords are compared by their exact bytes, changes take effect at once, and TLS is AEAD only."""

from __future__ import annotations

import contextlib
import json
import ssl
import warnings
from collections.abc import Callable
from pathlib import Path

import pytest

from gluecat.hms.server import HiveMetastoreServer
from gluecat.serving import basic_auth, tls, users

from .server_support import (
    PASSWORD,
    basic,
    certificate,
    connect,
    get_table,
    https,
    lake,
    message,
    post,
    users_file,
)

__all__ = ["certificate", "https", "lake", "users_file"]  # fixtures

CALL = message("get_table", dbname="sales", tbl_name="orders")


def status(server: HiveMetastoreServer, cafile: Path, password: str, user: str = "alice") -> int:
    return post(server, CALL, cafile=cafile, authorization=basic(user, password))[0]


def test_a_changed_password_stops_working_at_once(
    https: HiveMetastoreServer, users_file: Path, certificate: tuple[Path, Path]
) -> None:
    cafile = certificate[0]
    assert status(https, cafile, PASSWORD) == 200  # now remembered
    users.add(users_file, "alice", "a new password", n=2**10)
    assert status(https, cafile, PASSWORD) == 401
    assert status(https, cafile, "a new password") == 200


def test_a_removed_user_stops_working_at_once(
    https: HiveMetastoreServer, users_file: Path, certificate: tuple[Path, Path]
) -> None:
    users.add(users_file, "bob", "bobs password", n=2**10)
    assert status(https, certificate[0], "bobs password", "bob") == 200
    users.remove(users_file, "bob")
    assert status(https, certificate[0], "bobs password", "bob") == 401
    assert status(https, certificate[0], PASSWORD) == 200


@pytest.mark.parametrize(
    "damage",
    [
        lambda path: path.write_text("{not json"),
        lambda path: path.write_text(json.dumps({"format": 1, "users": {"alice": {"salt": "zz"}}})),
        lambda path: path.write_bytes(b""),
        lambda path: path.unlink(),
    ],
    ids=["not JSON", "no hash", "empty", "deleted"],
)
def test_a_damaged_users_file_keeps_the_last_good_users(
    https: HiveMetastoreServer,
    users_file: Path,
    certificate: tuple[Path, Path],
    caplog: pytest.LogCaptureFixture,
    damage: Callable[[Path], object],
) -> None:
    users.add(users_file, "carol", "carols password", n=2**10)
    assert status(https, certificate[0], PASSWORD) == 200  # remembered
    with caplog.at_level("ERROR", logger="gluecat.hms"):
        damage(users_file)
        assert status(https, certificate[0], PASSWORD) == 200
        assert status(https, certificate[0], "carols password", "carol") == 200  # verified afresh
        assert status(https, certificate[0], "wrong", "carol") == 401
    assert "keeping the 2 users read before" in caplog.text
    users_file.unlink(missing_ok=True)
    users.add(users_file, "alice", "repaired", n=2**10)  # a good file again: it is read
    assert status(https, certificate[0], "repaired") == 200
    assert status(https, certificate[0], "carols password", "carol") == 401


@pytest.mark.parametrize("suffix", ["\x00", "\x00\x00", "\x00x"])
def test_a_password_with_nul_characters_is_not_the_password_without_them(
    https: HiveMetastoreServer, certificate: tuple[Path, Path], suffix: str
) -> None:
    # scrypt keys HMAC with the password, and HMAC pads short keys with NULs: "pw" and "pw\0" hashed alike.
    assert status(https, certificate[0], PASSWORD + suffix) == 401
    assert status(https, certificate[0], PASSWORD) == 200


def test_a_password_with_a_nul_cannot_be_set(tmp_path: Path) -> None:
    with pytest.raises(users.UsersFileError, match="NUL"):
        users.add(tmp_path / "u.json", "dave", "pw\x00", n=2**10)


def test_tls_1_2_offers_only_aead_suites() -> None:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.set_ciphers(tls.TLS12_CIPHERS)
    suites = context.get_ciphers()
    assert suites and all(s["aead"] for s in suites), [s["name"] for s in suites if not s["aead"]]


@pytest.mark.parametrize(
    ("version", "ciphers"),
    [
        (ssl.TLSVersion.TLSv1_2, "ECDHE-ECDSA-AES128-SHA256:ECDHE-ECDSA-AES256-SHA:ECDHE-ECDSA-AES128-SHA"),
        (ssl.TLSVersion.TLSv1_1, "DEFAULT:@SECLEVEL=0"),
    ],
    ids=["TLS 1.2 with CBC suites only", "TLS 1.1"],
)
def test_a_client_without_aead_or_tls_1_2_cannot_connect(
    https: HiveMetastoreServer, certificate: tuple[Path, Path], version: ssl.TLSVersion, ciphers: str
) -> None:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.load_verify_locations(str(certificate[0]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # TLS 1.1 is, which is the point
        context.minimum_version = ssl.TLSVersion.MINIMUM_SUPPORTED
        context.maximum_version = version
    with contextlib.suppress(ssl.SSLError):  # an OpenSSL without even these suites: refused all the more
        context.set_ciphers(ciphers)
    with pytest.raises((ssl.SSLError, ConnectionError)):
        context.wrap_socket(connect(https), server_hostname="127.0.0.1").close()
    assert get_table(https, certificate[0]).tableName == "orders"
    assert context.maximum_version == version


def test_failed_attempts_from_ever_new_addresses_are_remembered_within_a_bound(
    users_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each address's recent failures are kept for the lockout; a flood from ever new addresses (an
    IPv6 prefix has billions) must not grow them without end, and an address that only succeeded or
    whose failures are old keeps nothing."""
    clock = [1000.0]
    monkeypatch.setattr(basic_auth.time, "monotonic", lambda: clock[0])
    auth = basic_auth.Authenticator(users_file)
    garbage = "Basic !!!"  # refused without hashing: the cheapest flood
    for i in range(basic_auth.MAX_TRACKED_ADDRESSES * 3):
        assert auth.check(garbage, f"2001:db8::{i:x}") is None
        if i % 1000 == 999:
            clock[0] += 1.0
    assert len(auth._failures) <= basic_auth.MAX_TRACKED_ADDRESSES
    assert auth.check(basic("alice", PASSWORD), "192.0.2.1") == "alice"
    assert "192.0.2.1" not in auth._failures
    clock[0] += basic_auth.LOCKOUT_SECONDS + 1
    uncached = "basic" + basic("alice", PASSWORD)[len("Basic") :]  # another header: checked again
    assert auth.check(uncached, "2001:db8::1") == "alice"
    assert "2001:db8::1" not in auth._failures
