"""Access keys in the users file: secrets encrypted at rest, under a key kept in another file."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from gluecat.aws import keys, sigv4
from gluecat.serving import users
from gluecat.serving.users import UsersFileError

SCOPE = "20260101/us-east-1/glue/aws4_request"


def test_a_secret_is_kept_only_encrypted_and_the_key_file_is_private(tmp_path: Path) -> None:
    users_file = tmp_path / "users.json"
    key_id, secret = keys.add(users_file, "alice")
    assert key_id.startswith("GCAK") and len(key_id) == 20 and len(secret) == 40
    text = users_file.read_text()
    assert secret not in text and secret.encode().hex() not in text
    record = json.loads(text)["access_keys"][key_id]
    assert set(record) == {"user", "created", "nonce", "secret"} and record["user"] == "alice"
    key_file = keys.key_file_for(users_file)
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    assert keys.AccessKeys(users_file).signing_key(key_id, SCOPE) == sigv4.signing_key(
        secret, "20260101", "us-east-1", "glue"
    )


def test_without_the_key_file_no_secret_can_be_read(tmp_path: Path) -> None:
    users_file = tmp_path / "users.json"
    key_id, _ = keys.add(users_file, "alice")
    keys.key_file_for(users_file).rename(tmp_path / "elsewhere.key")
    assert keys.AccessKeys(users_file).signing_key(key_id, SCOPE) is None
    assert keys.AccessKeys(users_file, tmp_path / "elsewhere.key").signing_key(key_id, SCOPE) is not None


def test_a_record_moved_to_another_key_id_or_user_does_not_decrypt(tmp_path: Path) -> None:
    users_file = tmp_path / "users.json"
    alice, _ = keys.add(users_file, "alice")
    document = json.loads(users_file.read_text())
    document["access_keys"]["GCAKSTOLENSTOLEN0000"] = document["access_keys"][alice]
    document["access_keys"][alice] = {**document["access_keys"][alice], "user": "mallory"}
    users_file.write_text(json.dumps(document))
    store = keys.AccessKeys(users_file)
    assert store.signing_key("GCAKSTOLENSTOLEN0000", SCOPE) is None
    assert store.signing_key(alice, SCOPE) is None


def test_another_key_file_cannot_be_mixed_in(tmp_path: Path) -> None:
    users_file = tmp_path / "users.json"
    keys.add(users_file, "alice")
    (tmp_path / "other.key").write_text("ab" * 32)
    with pytest.raises(UsersFileError, match="does not decrypt"):
        keys.add(users_file, "bob", key_file=tmp_path / "other.key")
    with pytest.raises(UsersFileError, match="--key-file"):
        keys.add(users_file, "bob", key_file=tmp_path / "missing.key")
    assert [user for user in keys.listing(users_file)] == ["alice"]


def test_keys_and_passwords_share_the_file_without_losing_each_other(tmp_path: Path) -> None:
    users_file = tmp_path / "users.json"
    users.add(users_file, "alice", "pw", n=2**10)
    key_id, _ = keys.add(users_file, "alice")
    users.add(users_file, "bob", "pw", n=2**10)
    users.remove(users_file, "bob")
    assert set(users.load(users_file)) == {"alice"}
    assert keys.listing(users_file)["alice"][0][0] == key_id


def test_added_and_removed_keys_take_effect_without_a_restart(tmp_path: Path) -> None:
    users_file = tmp_path / "users.json"
    first, _ = keys.add(users_file, "alice")
    store = keys.AccessKeys(users_file)
    assert store.user(first) == "alice"
    second, _ = keys.add(users_file, "alice")
    assert store.user(second) == "alice"
    assert keys.remove(users_file, "alice", first) == 1
    assert store.user(first) is None and store.signing_key(first, SCOPE) is None
    assert keys.remove(users_file, "alice") == 1
    assert store.user(second) is None


def test_an_unreadable_users_file_keeps_the_keys_read_before(tmp_path: Path) -> None:
    users_file = tmp_path / "users.json"
    key_id, _ = keys.add(users_file, "alice")
    store = keys.AccessKeys(users_file)
    assert store.user(key_id) == "alice"
    users_file.write_text("{not json")
    assert store.user(key_id) == "alice"


@pytest.mark.parametrize("name", ["", "a b", "x" * 129, "é"])
def test_user_names_follow_the_users_files_rule(tmp_path: Path, name: str) -> None:
    with pytest.raises(UsersFileError, match="user name"):
        keys.add(tmp_path / "users.json", name)
