"""The proxy passes requests through unchanged, counts them exactly, adds latency, and injects each fault
as configured, for boto3, obstore and Azure's own client."""

from __future__ import annotations

import contextlib
import hashlib
import http.client
import os
import random
import time
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import obstore
import pytest
from azure.core.exceptions import ClientAuthenticationError, HttpResponseError
from botocore.exceptions import ClientError, HTTPClientError
from obstore.exceptions import AlreadyExistsError

from tests.object_stores import servers
from tests.object_stores.proxy import Proxy, ProxyError

pytestmark = pytest.mark.slow

Proxied = Callable[..., tuple[Proxy, Any]]
NO_COUNTS = {"get": 0, "head": 0, "list": 0, "put": 0, "conditional_put": 0, "delete": 0, "other": 0}
ONE_TRY = {"retries": {"total_max_attempts": 1, "mode": "standard"}}
NO_RETRIES: dict[str, Any] = {"max_retries": 0}


def counts(**kinds: int) -> dict[str, int]:
    return NO_COUNTS | kinds


def exists(bucket: servers.S3Bucket, key: str) -> bool:
    try:
        bucket.client().head_object(Bucket=bucket.bucket, Key=key)
        return True
    except ClientError as error:
        assert error.response["Error"]["Code"] == "404"
        return False


def test_counts_are_exact_for_a_sequence_of_boto3_calls(
    s3_bucket: servers.S3Bucket, proxied: Proxied
) -> None:
    proxy, bucket = proxied(s3_bucket)
    client, name = bucket.client(), bucket.bucket
    client.put_object(Bucket=name, Key="a/1", Body=b"one")
    client.put_object(Bucket=name, Key="a/2", Body=b"two")
    with pytest.raises(ClientError):
        client.put_object(Bucket=name, Key="a/1", Body=b"again", IfNoneMatch="*")
    assert client.get_object(Bucket=name, Key="a/1")["Body"].read() == b"one"
    client.head_object(Bucket=name, Key="a/2")
    assert [item["Key"] for item in client.list_objects_v2(Bucket=name, Prefix="a/")["Contents"]] == [
        "a/1",
        "a/2",
    ]
    client.delete_object(Bucket=name, Key="a/1")
    client.delete_objects(Bucket=name, Delete={"Objects": [{"Key": "a/2"}]})
    client.get_bucket_location(Bucket=name)
    assert proxy.counts() == counts(put=2, conditional_put=1, get=1, head=1, list=1, delete=2, other=1)
    assert [(entry["kind"], entry["key"], entry["status"]) for entry in proxy.log()] == [
        ("put", "a/1", 200),
        ("put", "a/2", 200),
        ("conditional_put", "a/1", 412),
        ("get", "a/1", 200),
        ("head", "a/2", 200),
        ("list", "a/", 200),
        ("delete", "a/1", 204),
        ("delete", None, 200),
        ("other", None, 200),
    ]
    proxy.reset()
    assert proxy.counts() == NO_COUNTS and proxy.log() == []


def test_counts_are_exact_for_a_sequence_of_obstore_calls(
    s3_bucket: servers.S3Bucket, proxied: Proxied
) -> None:
    proxy, bucket = proxied(s3_bucket)
    store = bucket.store()
    obstore.put(store, "_log/1", b"one", mode="create")
    obstore.put(store, "_log/2", b"two", mode="create")
    with pytest.raises(AlreadyExistsError):
        obstore.put(store, "_log/2", b"again", mode="create")
    obstore.put(store, "data/1", b"data")
    assert bytes(obstore.get(store, "_log/1").bytes()) == b"one"
    assert obstore.head(store, "_log/2")["size"] == 3
    assert [meta["path"] for batch in obstore.list(store, "_log/", offset="_log/1") for meta in batch] == [
        "_log/2"
    ]
    obstore.delete(store, "data/1")
    assert proxy.counts() == counts(conditional_put=3, put=1, get=1, head=1, list=1, delete=1)


def test_counts_are_exact_for_azure_calls(azure_container: servers.AzureContainer, proxied: Proxied) -> None:
    proxy, container = proxied(azure_container)
    store = container.store()
    obstore.put(store, "_log/1", b"one", mode="create")
    with pytest.raises(AlreadyExistsError):
        obstore.put(store, "_log/1", b"again", mode="create")
    obstore.put(store, "data/1", b"data")
    assert bytes(obstore.get(store, "_log/1").bytes()) == b"one"
    obstore.head(store, "data/1")
    assert [meta["path"] for batch in obstore.list(store, "_log/") for meta in batch] == ["_log/1"]
    obstore.delete(store, "data/1")
    assert proxy.counts() == counts(conditional_put=2, put=1, get=1, head=1, list=1, delete=1)


def test_latency_is_added_to_every_request(moto_bucket: servers.S3Bucket, proxied: Proxied) -> None:
    proxy, bucket = proxied(moto_bucket, latency=0.25)
    store = bucket.store()
    started = time.monotonic()
    obstore.put(store, "k", b"v")
    obstore.head(store, "k")
    obstore.get(store, "k").bytes()
    assert time.monotonic() - started >= 0.75
    proxy.set_latency(0)
    started = time.monotonic()
    obstore.head(store, "k")
    assert time.monotonic() - started < 0.25
    assert proxy.counts() == counts(put=1, head=2, get=1)


def test_slow_down_and_internal_error_answer_without_forwarding(
    moto_bucket: servers.S3Bucket, proxied: Proxied
) -> None:
    proxy, bucket = proxied(moto_bucket)
    client = bucket.client(**ONE_TRY)
    slow_down = proxy.inject("slow_down", kinds=["put"], times=1)
    with pytest.raises(ClientError) as refused:
        client.put_object(Bucket=bucket.bucket, Key="k", Body=b"v")
    assert refused.value.response["Error"]["Code"] == "SlowDown"
    assert refused.value.response["ResponseMetadata"]["HTTPStatusCode"] == 503
    assert not exists(moto_bucket, "k")
    assert proxy.fired(slow_down) == 1
    proxy.clear_faults()
    internal = proxy.inject("internal_error", kinds=["get"], times=1)
    client.put_object(Bucket=bucket.bucket, Key="k", Body=b"v")
    with pytest.raises(ClientError) as failed:
        client.get_object(Bucket=bucket.bucket, Key="k")
    assert failed.value.response["Error"]["Code"] == "InternalError"
    assert failed.value.response["ResponseMetadata"]["HTTPStatusCode"] == 500
    assert client.get_object(Bucket=bucket.bucket, Key="k")["Body"].read() == b"v"
    assert proxy.counts() == counts(put=2, get=2)
    assert proxy.fired(internal) == 1


def test_a_client_retries_through_slow_downs(moto_bucket: servers.S3Bucket, proxied: Proxied) -> None:
    proxy, bucket = proxied(moto_bucket)
    rule = proxy.inject("slow_down", kinds=["conditional_put"], times=2)
    retries = {
        "max_retries": 3,
        "backoff": {"init_backoff": timedelta(milliseconds=10), "max_backoff": timedelta(milliseconds=50)},
    }
    obstore.put(bucket.store(retry_config=retries), "_log/1", b"one", mode="create")
    assert proxy.fired(rule) == 2
    assert proxy.counts() == counts(conditional_put=3)
    assert bytes(obstore.get(moto_bucket.store(), "_log/1").bytes()) == b"one"


def test_dropped_before_forwarding_the_request_never_happens(
    moto_bucket: servers.S3Bucket, proxied: Proxied
) -> None:
    proxy, bucket = proxied(moto_bucket)
    rule = proxy.inject("drop_before", kinds=["put"], times=1)
    with pytest.raises(HTTPClientError):
        bucket.client(**ONE_TRY).put_object(Bucket=bucket.bucket, Key="k", Body=b"v")
    assert proxy.fired(rule) == 1
    assert not exists(moto_bucket, "k")


def test_dropped_after_forwarding_the_request_took_effect_unseen(
    s3_bucket: servers.S3Bucket, proxied: Proxied
) -> None:
    proxy, bucket = proxied(s3_bucket)
    proxy.inject("drop_after", kinds=["put"], times=1)
    with pytest.raises(HTTPClientError):
        bucket.client(**ONE_TRY).put_object(Bucket=bucket.bucket, Key="k", Body=b"v")
    assert s3_bucket.client().get_object(Bucket=bucket.bucket, Key="k")["Body"].read() == b"v"


def test_a_retried_create_after_a_dropped_reply_finds_its_own_object(
    s3_bucket: servers.S3Bucket, proxied: Proxied
) -> None:
    """The case a commit must recognise: obstore retries the create whose reply was lost, and the retry is
    refused because the first attempt took effect."""
    proxy, bucket = proxied(s3_bucket)
    proxy.inject("drop_after", kinds=["conditional_put"], times=1)
    retries = {"max_retries": 2, "backoff": {"init_backoff": timedelta(milliseconds=10)}}
    with pytest.raises(AlreadyExistsError):
        obstore.put(bucket.store(retry_config=retries), "_log/1", b"mine", mode="create")
    assert proxy.counts() == counts(conditional_put=2)
    assert bytes(obstore.get(s3_bucket.store(), "_log/1").bytes()) == b"mine"


def test_a_reply_delayed_past_the_client_timeout_comes_after_the_request_took_effect(
    moto_bucket: servers.S3Bucket, proxied: Proxied
) -> None:
    proxy, bucket = proxied(moto_bucket)
    proxy.inject("delay", kinds=["put"], seconds=2, phase="after", times=1)
    with pytest.raises(HTTPClientError):
        bucket.client(read_timeout=0.5, **ONE_TRY).put_object(Bucket=bucket.bucket, Key="k", Body=b"v")
    assert exists(moto_bucket, "k")


def test_a_request_delayed_past_the_client_timeout_takes_effect_later(
    moto_bucket: servers.S3Bucket, proxied: Proxied
) -> None:
    proxy, bucket = proxied(moto_bucket)
    proxy.inject("delay", kinds=["put"], seconds=1.5, phase="before", times=1)
    store = bucket.store(retry_config=NO_RETRIES, client_options={"timeout": timedelta(seconds=0.3)})
    with pytest.raises(Exception, match="(?i)timed? ?out"):
        obstore.put(store, "k", b"late")
    assert not exists(moto_bucket, "k")
    deadline = time.monotonic() + 10
    while not exists(moto_bucket, "k"):
        assert time.monotonic() < deadline, "the delayed request never arrived"
        time.sleep(0.1)


def test_rules_match_by_key_pattern_and_a_listing_by_its_prefix(
    moto_bucket: servers.S3Bucket, proxied: Proxied
) -> None:
    proxy, bucket = proxied(moto_bucket)
    rule = proxy.inject("internal_error", key=r"^_log/")
    store = bucket.store(retry_config=NO_RETRIES)
    obstore.put(store, "data/1", b"v")
    with pytest.raises(Exception, match="500"):
        obstore.put(store, "_log/1", b"v")
    with pytest.raises(Exception, match="500"):
        obstore.list(store, "_log/").collect()
    assert obstore.list(store, "data/").collect()[0]["path"] == "data/1"
    assert proxy.fired(rule) == 2


def test_a_rule_skips_then_fires_on_the_next_n_matches(
    moto_bucket: servers.S3Bucket, proxied: Proxied
) -> None:
    proxy, bucket = proxied(moto_bucket)
    store = bucket.store(retry_config=NO_RETRIES)
    obstore.put(store, "k", b"v")
    rule = proxy.inject("internal_error", kinds=["head"], skip=1, times=2)
    outcomes = []
    for _ in range(5):
        try:
            obstore.head(store, "k")
            outcomes.append("ok")
        except Exception:
            outcomes.append("failed")
    assert outcomes == ["ok", "failed", "failed", "ok", "ok"]
    (state,) = proxy.rules()
    assert (state["id"], state["matched"], state["fired"]) == (rule, 5, 2)


def test_a_rule_with_a_probability_fires_as_its_seed_draws(
    moto_bucket: servers.S3Bucket, proxied: Proxied
) -> None:
    proxy, bucket = proxied(moto_bucket)
    store = bucket.store(retry_config=NO_RETRIES)
    obstore.put(store, "k", b"v")
    proxy.reset()
    proxy.inject("slow_down", kinds=["head"], probability=0.3, seed=41)
    for _ in range(40):
        with contextlib.suppress(Exception):
            obstore.head(store, "k")
    draws = random.Random(41)
    expected = [draws.random() < 0.3 for _ in range(40)]
    assert [entry["fault"] == "slow_down" for entry in proxy.log()] == expected
    assert 0 < sum(expected) < 40


def test_large_bodies_pass_through_unchanged(s3_bucket: servers.S3Bucket, proxied: Proxied) -> None:
    proxy, bucket = proxied(s3_bucket)
    data = os.urandom(24 << 20)
    digest = hashlib.sha256(data).digest()
    client = bucket.client()
    client.put_object(Bucket=bucket.bucket, Key="boto3", Body=data)
    assert (
        hashlib.sha256(client.get_object(Bucket=bucket.bucket, Key="boto3")["Body"].read()).digest() == digest
    )
    store = bucket.store()
    obstore.put(store, "obstore", data, use_multipart=True, chunk_size=5 << 20)
    assert hashlib.sha256(bytes(obstore.get(store, "obstore").bytes())).digest() == digest
    assert proxy.counts()["put"] >= 1 + 5  # boto3's object, then obstore's five parts
    # A large create of a name taken is answered with the server's refusal, however early it comes.
    with pytest.raises(ClientError) as refused:
        client.put_object(Bucket=bucket.bucket, Key="boto3", Body=data, IfNoneMatch="*")
    assert refused.value.response["Error"]["Code"] == "PreconditionFailed"
    with pytest.raises(AlreadyExistsError):
        obstore.put(store, "boto3", data[: 4 << 20], mode="create")


def test_a_chunked_request_body_passes_through(gcs_bucket: servers.GCSBucket, proxied: Proxied) -> None:
    proxy, bucket = proxied(gcs_bucket)
    pieces = [os.urandom(100_000) for _ in range(7)]
    connection = http.client.HTTPConnection("127.0.0.1", int(proxy.endpoint.rsplit(":", 1)[1]), timeout=30)
    connection.request(
        "POST",
        f"/upload/storage/v1/b/{bucket.bucket}/o?uploadType=media&name=chunked&ifGenerationMatch=0",
        body=iter(pieces),
        headers={"Content-Type": "application/octet-stream"},
        encode_chunked=True,
    )
    assert connection.getresponse().status == 200
    connection.close()
    assert bytes(obstore.get(bucket.store(), "chunked").bytes()) == b"".join(pieces)
    assert proxy.counts() == counts(conditional_put=1, get=1)


def test_a_keep_alive_connection_carries_every_request(
    versitygw_bucket: servers.S3Bucket, proxied: Proxied
) -> None:
    proxy, bucket = proxied(versitygw_bucket)
    client = bucket.client(max_pool_connections=1)
    client.put_object(Bucket=bucket.bucket, Key="k", Body=b"v")
    for _ in range(20):
        client.head_object(Bucket=bucket.bucket, Key="k")
    assert proxy.connections() == 1
    assert proxy.counts() == counts(put=1, head=20)


def test_signed_requests_still_verify_through_the_proxy(
    versitygw_bucket: servers.S3Bucket, azure_container: servers.AzureContainer, proxied: Proxied
) -> None:
    """versitygw checks Signature V4 and Azurite checks Shared Key: a right key passes the proxy, a
    wrong one is refused by the server behind it, so the proxy changed nothing that is signed."""
    _, s3 = proxied(versitygw_bucket)
    s3.client().put_object(Bucket=s3.bucket, Key="signed", Body=b"v")
    obstore.put(s3.store(), "signed-obstore", b"v", mode="create")
    wrong = servers.S3Bucket(s3.server, s3.endpoint, s3.bucket, secret_access_key="not-the-secret")
    with pytest.raises(ClientError) as refused:
        wrong.client().get_object(Bucket=s3.bucket, Key="signed")
    assert refused.value.response["Error"]["Code"] == "SignatureDoesNotMatch"
    _, azure = proxied(azure_container)
    azure.client().upload_blob("signed", b"v")
    obstore.put(azure.store(), "signed-obstore", b"v", mode="create")
    other_key = "b3RoZXIga2V5IG9mIGEgcmlnaHQgbGVuZ3RoIGZvciBhIHNoYXJlZCBrZXk="
    wrong_azure = servers.AzureContainer(azure.server, azure.endpoint, azure.container, key=other_key)
    with pytest.raises((ClientAuthenticationError, HttpResponseError)) as refused_azure:
        wrong_azure.client().download_blob("signed").readall()
    assert refused_azure.value.status_code == 403


def test_the_control_port_refuses_a_rule_it_does_not_know(
    moto_bucket: servers.S3Bucket, proxied: Proxied
) -> None:
    proxy, _ = proxied(moto_bucket)
    with pytest.raises(ProxyError, match="action must be one of"):
        proxy.inject("explode")  # type: ignore[arg-type]
    assert proxy.rules() == []
