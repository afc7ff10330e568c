"""How gluecat reaches S3 for tables' files: Spark's S3A settings where the Spark application gave them,
else the AWS chain as botocore reads it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pyarrow.fs as pafs
import pytest

from gluecat import locations, s3_access
from gluecat.s3_access import S3Settings
from tests import s3_server


@pytest.fixture(autouse=True)
def no_aws_configuration(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """Nothing of the machine's own AWS configuration, and nothing remembered from another test."""
    import os

    for key in list(os.environ):
        if key.startswith("AWS_"):
            monkeypatch.delenv(key)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    s3_access.reset()
    yield
    s3_access.reset()


def test_spark_s3a_settings_come_first_and_a_bucket_can_have_its_own(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_ENDPOINT_URL_S3", "http://127.0.0.1:1")  # the AWS chain's: not used
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "chain-key")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "chain-secret")
    s3_access.use_hadoop_settings(
        {
            "fs.s3a.endpoint": "http://127.0.0.1:9000",
            "fs.s3a.path.style.access": "true",
            "fs.s3a.access.key": "spark-key",
            "fs.s3a.secret.key": "spark-secret",
            "fs.s3a.bucket.other.endpoint": "minio.internal:9100",
            "fs.s3a.bucket.other.connection.ssl.enabled": "false",
            "fs.s3a.bucket.other.endpoint.region": "eu-west-1",
            "fs.s3a.bucket.other.path.style.access": "false",
            "fs.s3a.multipart.size": "64M",  # not a setting of how the bucket is reached: ignored
        }
    )
    assert s3_access.settings("lake") == S3Settings(
        endpoint="127.0.0.1:9000",
        scheme="http",
        region="us-east-1",
        access_key="spark-key",
        secret_key="spark-secret",
    )
    # The bucket's own settings come before the global ones, which it takes where it has none (the keys).
    assert s3_access.settings("other") == S3Settings(
        endpoint="minio.internal:9100",
        scheme="http",
        region="eu-west-1",
        virtual_addressing=True,
        access_key="spark-key",
        secret_key="spark-secret",
    )


def test_spark_settings_without_keys_take_the_aws_chains_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "chain-key")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "chain-secret")
    monkeypatch.setenv("AWS_SESSION_TOKEN", "chain-token")
    s3_access.use_hadoop_settings({"endpoint": "s3.eu-west-1.amazonaws.com", "endpoint.region": "eu-west-1"})
    got = s3_access.settings("lake")
    # AWS's own endpoint is no endpoint of its own: the AWS SDK addresses the bucket as AWS does.
    assert (got.endpoint, got.region, got.virtual_addressing) == (None, "eu-west-1", False)
    assert (got.access_key, got.secret_key, got.session_token) == ("chain-key", "chain-secret", "chain-token")


def test_the_aws_chain_is_read_as_botocore_reads_it(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    config = tmp_path / "config"
    config.write_text(
        "[profile lake]\n"
        "region = eu-central-1\n"
        f"ca_bundle = {tmp_path / 'ca.pem'}\n"
        "services = local-s3\n"
        "s3 =\n"
        "  addressing_style = virtual\n"
        "[services local-s3]\n"
        "s3 =\n"
        "  endpoint_url = https://storage.internal:8443\n"
    )
    credentials = tmp_path / "credentials"
    credentials.write_text(
        "[lake]\naws_access_key_id = profile-key\naws_secret_access_key = profile-secret\n"
    )
    monkeypatch.setenv("AWS_CONFIG_FILE", str(config))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(credentials))
    monkeypatch.setenv("AWS_PROFILE", "lake")
    assert s3_access.settings("lake") == S3Settings(
        endpoint="storage.internal:8443",
        scheme="https",
        region="eu-central-1",
        virtual_addressing=True,
        access_key="profile-key",
        secret_key="profile-secret",
        ca_bundle=str(tmp_path / "ca.pem"),
    )
    # The environment's endpoint comes before the profile's, the S3 one before the global one.
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://global.internal")
    s3_access.reset()
    assert s3_access.settings("lake").endpoint == "global.internal"
    monkeypatch.setenv("AWS_ENDPOINT_URL_S3", "http://s3.internal:9000")
    s3_access.reset()
    assert (s3_access.settings("lake").endpoint, s3_access.settings("lake").scheme) == (
        "s3.internal:9000",
        "http",
    )


def test_settings_never_show_their_secrets() -> None:
    shown = repr(
        S3Settings(endpoint="e:1", access_key="the-key", secret_key="the-secret", session_token="tok")
    )
    assert "the-key" not in shown and "the-secret" not in shown and "tok" not in shown


@pytest.mark.slow
def test_a_local_s3_server_is_reached_with_either_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    with s3_server.moto_s3() as endpoint:
        s3 = s3_server.client(endpoint)
        s3.create_bucket(Bucket="lake-reach")
        s3.put_object(Bucket="lake-reach", Key="db/t/p=a b/part-0.parquet", Body=b"rows")

        def listed() -> list[str]:
            fs, path = locations.hadoop_filesystem("s3a://lake-reach/db/t")
            selector = pafs.FileSelector(path, recursive=True)
            return [i.path for i in fs.get_file_info(selector) if i.type == pafs.FileType.File]

        s3_access.use_hadoop_settings(
            {k.removeprefix("spark.hadoop."): v for k, v in s3_server.s3a_settings(endpoint).items()}
        )
        # The key is Spark's, taken as it is: a space, not a URI's escape.
        assert listed() == ["lake-reach/db/t/p=a b/part-0.parquet"]
        s3_access.reset()
        for key, value in s3_server.aws_environment(endpoint).items():
            monkeypatch.setenv(key, value)
        assert listed() == ["lake-reach/db/t/p=a b/part-0.parquet"]


def test_the_regions_of_a_bounded_number_of_buckets_are_remembered(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tables name any number of buckets over a server's life: their regions are remembered up to a bound."""
    asked: list[str] = []

    def resolve(bucket: str) -> str:
        asked.append(bucket)
        return "eu-west-1"

    monkeypatch.setattr(pafs, "resolve_s3_region", resolve)
    for i in range(3000):
        assert s3_access._bucket_region(f"bucket-{i}") == "eu-west-1"
    assert s3_access._bucket_region("bucket-2999") == "eu-west-1"
    assert len(asked) == 3000  # the newest is remembered
    assert s3_access._bucket_region.cache_info().currsize <= 1024
