"""What each object-store server does with the requests a commit log needs: put-if-absent, listing after a
key, and the environment a client reads. These are the facts the store's tests stand on."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import obstore
import pytest
from azure.core.exceptions import ResourceExistsError
from botocore.exceptions import ClientError
from obstore.exceptions import AlreadyExistsError, GenericError

from gluecat.store import object_store
from tests.object_stores import install, servers

pytestmark = pytest.mark.slow


def read(store: Any, path: str) -> bytes:
    return bytes(obstore.get(store, path).bytes())


def listed(store: Any, prefix: str, offset: str | None = None) -> list[str]:
    return [meta["path"] for batch in obstore.list(store, prefix, offset=offset) for meta in batch]


@pytest.fixture(params=["moto", "versitygw", "azurite"])
def writable(request: pytest.FixtureRequest) -> servers.S3Bucket | servers.AzureContainer:
    """A fresh bucket on each server obstore can write to."""
    if request.param == "azurite":
        container: servers.AzureContainer = request.getfixturevalue("azure_container")
        return container
    fixture = "moto_bucket" if request.param == "moto" else "versitygw_bucket"
    bucket: servers.S3Bucket = request.getfixturevalue(fixture)
    return bucket


def test_obstore_create_refuses_a_second_create_and_keeps_the_first(writable: Any) -> None:
    store = writable.store()
    obstore.put(store, "_log/00000001.json", b"first", mode="create")
    with pytest.raises(AlreadyExistsError):
        obstore.put(store, "_log/00000001.json", b"second", mode="create")
    assert read(store, "_log/00000001.json") == b"first"


def test_racing_creates_of_one_name_have_exactly_one_winner(writable: Any) -> None:
    store = writable.store()
    start = threading.Barrier(8)
    outcomes: dict[int, str] = {}

    def create(writer: int) -> None:
        start.wait()
        try:
            obstore.put(store, "_log/00000002.json", f"writer {writer}".encode(), mode="create")
            outcomes[writer] = "won"
        except AlreadyExistsError:
            outcomes[writer] = "lost"

    threads = [threading.Thread(target=create, args=(writer,)) for writer in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    winners = [writer for writer, outcome in outcomes.items() if outcome == "won"]
    assert len(outcomes) == 8 and len(winners) == 1, outcomes
    assert read(store, "_log/00000002.json") == f"writer {winners[0]}".encode()


def test_list_with_offset_returns_only_the_keys_after_it(writable: Any) -> None:
    store = writable.store()
    for name in ("00000001", "00000002", "00000003", "00000010"):
        obstore.put(store, f"_log/{name}.json", b"x")
    obstore.put(store, "_logs_elsewhere", b"x")
    assert listed(store, "_log/", offset="_log/00000002.json") == ["_log/00000003.json", "_log/00000010.json"]
    assert listed(store, "_log/", offset="_log/00000010.json") == []


def test_boto3_if_none_match_refuses_an_existing_key_and_keeps_it(s3_bucket: servers.S3Bucket) -> None:
    client = s3_bucket.client()
    client.put_object(Bucket=s3_bucket.bucket, Key="_log/1", Body=b"first", IfNoneMatch="*")
    with pytest.raises(ClientError) as refused:
        client.put_object(Bucket=s3_bucket.bucket, Key="_log/1", Body=b"second", IfNoneMatch="*")
    assert refused.value.response["Error"]["Code"] == "PreconditionFailed"
    assert refused.value.response["ResponseMetadata"]["HTTPStatusCode"] == 412
    assert client.get_object(Bucket=s3_bucket.bucket, Key="_log/1")["Body"].read() == b"first"


def test_azure_sdk_upload_without_overwrite_refuses_an_existing_blob(
    azure_container: servers.AzureContainer,
) -> None:
    client = azure_container.client()
    client.upload_blob("_log/1", b"first")  # overwrite=False sends If-None-Match: *
    with pytest.raises(ResourceExistsError):
        client.upload_blob("_log/1", b"second")
    assert client.download_blob("_log/1").readall() == b"first"


def test_fake_gcs_server_refuses_if_generation_match_zero_on_an_existing_object(
    gcs_bucket: servers.GCSBucket,
) -> None:
    assert gcs_bucket.upload("_log/1", b"first", if_generation_match=0) == 200
    assert gcs_bucket.upload("_log/1", b"second", if_generation_match=0) == 412
    assert read(gcs_bucket.store(), "_log/1") == b"first"


def test_fake_gcs_server_has_no_xml_api_upload_so_obstore_cannot_write(gcs_bucket: servers.GCSBucket) -> None:
    """fake-gcs-server answers uploads of GCS's JSON API only; obstore uploads through the XML API
    (fsouza/fake-gcs-server#331). A writing test of gs:// therefore cannot run on it; reads can."""
    store = gcs_bucket.store(retry_config={"max_retries": 0})
    for mode in ("create", "overwrite"):
        with pytest.raises(GenericError, match="invalid uploadType"):
            obstore.put(store, "_log/1", b"x", mode=mode)


def test_fake_gcs_server_ignores_a_listing_offset(gcs_bucket: servers.GCSBucket) -> None:
    """obstore sends GCS's start-after; fake-gcs-server lists from the first key regardless."""
    for name in ("1", "2", "3"):
        assert gcs_bucket.upload(f"_log/{name}", b"x") == 200
    assert listed(gcs_bucket.store(), "_log/", offset="_log/2") == ["_log/1", "_log/2", "_log/3"]


def test_each_bucket_is_reached_from_its_environment_alone(
    s3_bucket: servers.S3Bucket, azure_container: servers.AzureContainer, monkeypatch: pytest.MonkeyPatch
) -> None:
    import boto3
    from obstore.store import AzureStore, S3Store

    for name, value in (s3_bucket.env | azure_container.env).items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    obstore.put(S3Store(s3_bucket.bucket), "from-env", b"s3")
    assert boto3.client("s3").get_object(Bucket=s3_bucket.bucket, Key="from-env")["Body"].read() == b"s3"
    obstore.put(AzureStore(azure_container.container), "from-env", b"azure")
    assert azure_container.client().download_blob("from-env").readall() == b"azure"


def test_a_gcs_bucket_is_read_through_its_environment_alone(
    gcs_bucket: servers.GCSBucket, monkeypatch: pytest.MonkeyPatch
) -> None:
    from obstore.store import GCSStore

    for name, value in gcs_bucket.env.items():
        monkeypatch.setenv(name, value)
    assert gcs_bucket.upload("from-env", b"gcs") == 200
    assert read(GCSStore(gcs_bucket.bucket), "from-env") == b"gcs"


def test_moto_in_a_thread_serves_the_same_conditional_put() -> None:
    with servers.moto_s3(thread=True) as server:
        store = server.new_bucket().store()
        obstore.put(store, "k", b"first", mode="create")
        with pytest.raises(AlreadyExistsError):
            obstore.put(store, "k", b"second", mode="create")


def test_a_server_that_is_not_installed_is_installed_by_the_first_test_that_needs_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(install, "HOME", tmp_path / "object-stores")
    monkeypatch.setattr(servers, "_install_tried", set())
    with servers.versitygw() as server:
        store = server.new_bucket().store()
        obstore.put(store, "k", b"first", mode="create")
    assert install.executable("versitygw") == tmp_path / "object-stores" / "versitygw" / "bin" / "versitygw"


def test_a_server_that_cannot_be_installed_says_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(install, "HOME", tmp_path / "object-stores")
    monkeypatch.setattr(servers, "_install_tried", set())
    monkeypatch.setenv("PATH", str(tmp_path))  # no go here
    with (
        pytest.raises(
            servers.ServerNotInstalled,
            match=r"python3 tests/object_stores/install\.py(.|\n)*`go` is not on PATH",
        ),
        servers.versitygw(),
    ):
        pass


def test_a_gcs_emulator_named_by_storage_emulator_host_alone_is_written_without_a_token(
    gcs_bucket: servers.GCSBucket, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Google's clients need only STORAGE_EMULATOR_HOST; so does gluecat. object_store would ask the
    cloud's metadata server for a token before each write (apache/arrow-rs-object-store#520)."""
    monkeypatch.setenv("STORAGE_EMULATOR_HOST", gcs_bucket.endpoint)
    for name in ("GOOGLE_SERVICE_ACCOUNT", "GOOGLE_APPLICATION_CREDENTIALS", "GOOGLE_SERVICE_ACCOUNT_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(object_store, "_RETRIES", {"max_retries": 0})
    fs = object_store.ObjectStoreFS.at(f"gs://{gcs_bucket.bucket}/warehouse")
    with pytest.raises(OSError, match="invalid uploadType"):  # the emulator's answer: no token asked
        fs.publish("_log/1", b"x")
    assert gcs_bucket.upload("warehouse/_log/2", b"y") == 200
    assert fs.read_bytes("_log/2") == b"y"
