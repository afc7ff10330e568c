"""A local S3 server for tests: moto's server mode on 127.0.0.1 and a free port, started and stopped by the
test that needs it, and the settings that reach it (path-style requests over http, keys of its own)."""

from __future__ import annotations

import logging
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import boto3

ACCESS_KEY = "gluecat-test-access-key"
SECRET_KEY = "gluecat-test-secret-key"
REGION = "us-east-1"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@contextmanager
def moto_s3() -> Iterator[str]:
    """moto's S3 server in a thread of this process, for the duration; yields its endpoint URL."""
    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # a line per request otherwise
    port = _free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.stop()


def client(endpoint: str) -> Any:
    """A boto3 S3 client of the server: how a test puts and lists objects behind gluecat's back."""
    return boto3.client(
        "s3",
        endpoint_url=endpoint,
        region_name=REGION,
        aws_access_key_id=ACCESS_KEY,
        aws_secret_access_key=SECRET_KEY,
    )


def keys(s3: Any, bucket: str, prefix: str = "") -> list[str]:
    """Every key under ``prefix``, folder markers (keys ending in '/') among them."""
    pages = s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix)
    return sorted(o["Key"] for page in pages for o in page.get("Contents", []))


def aws_environment(endpoint: str) -> dict[str, str]:
    """The AWS chain's settings (as boto3 and the AWS CLI read them) for the server."""
    return {
        "AWS_ENDPOINT_URL_S3": endpoint,
        "AWS_ACCESS_KEY_ID": ACCESS_KEY,
        "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
        "AWS_REGION": REGION,
    }


def s3a_settings(endpoint: str) -> dict[str, str]:
    """Spark's S3A settings for the server, as ``spark.hadoop.*`` settings of a Spark application."""
    return {
        "spark.hadoop.fs.s3a.endpoint": endpoint,
        "spark.hadoop.fs.s3a.endpoint.region": REGION,
        "spark.hadoop.fs.s3a.path.style.access": "true",
        "spark.hadoop.fs.s3a.access.key": ACCESS_KEY,
        "spark.hadoop.fs.s3a.secret.key": SECRET_KEY,
    }
