"""How the proxy tells request kinds apart, for requests no test sends through a client (test_proxy.py counts
the ones clients send)."""

from __future__ import annotations

import pytest

from tests.object_stores.proxy_server import Rule, classify

IF_NONE_MATCH = {"if-none-match": "*"}


@pytest.mark.parametrize(
    ("style", "method", "target", "headers", "kind", "key"),
    [
        ("s3", "GET", "/", {}, "other", None),  # ListBuckets
        ("s3", "PUT", "/b", {}, "other", None),  # CreateBucket
        ("s3", "GET", "/b?list-type=2&prefix=_log%2F&start-after=_log%2F1", {}, "list", "_log/"),
        ("s3", "GET", "/b?location", {}, "other", None),
        ("s3", "POST", "/b?delete", {}, "delete", None),
        ("s3", "GET", "/b/a%20b/c", {}, "get", "a b/c"),
        ("s3", "GET", "/b/k?uploadId=1", {}, "other", "k"),  # ListParts
        ("s3", "PUT", "/b/k?partNumber=1&uploadId=1", {}, "put", "k"),
        ("s3", "POST", "/b/k?uploads", {}, "other", "k"),
        ("s3", "POST", "/b/k?uploadId=1", IF_NONE_MATCH, "conditional_put", "k"),
        ("s3", "PUT", "/b/k", {"if-match": '"etag"'}, "conditional_put", "k"),
        ("s3", "PUT", "/b/k?tagging", {}, "other", "k"),
        ("s3", "DELETE", "/b/k?uploadId=1", {}, "other", "k"),
        ("azure", "GET", "/acct/c?restype=container&comp=list&prefix=p", {}, "list", "p"),
        ("azure", "PUT", "/acct/c?restype=container", {}, "other", None),
        ("azure", "PUT", "/acct/c/k?comp=block&blockid=AA", {}, "put", "k"),
        ("azure", "PUT", "/acct/c/k?comp=blocklist", IF_NONE_MATCH, "conditional_put", "k"),
        ("azure", "PUT", "/acct/c/k?comp=metadata", {}, "other", "k"),
        ("azure", "HEAD", "/acct/c/k", {}, "head", "k"),
        ("gcs", "GET", "/b?list-type=2&prefix=p", {}, "list", "p"),
        ("gcs", "PUT", "/b/k", {"x-goog-if-generation-match": "0"}, "conditional_put", "k"),
        (
            "gcs",
            "POST",
            "/upload/storage/v1/b/b/o?uploadType=media&name=a%2Fk&ifGenerationMatch=0",
            {},
            "conditional_put",
            "a/k",
        ),
        ("gcs", "POST", "/upload/storage/v1/b/b/o?uploadType=media&name=k", {}, "put", "k"),
        ("gcs", "GET", "/storage/v1/b/b/o?prefix=p", {}, "list", "p"),
        ("gcs", "GET", "/storage/v1/b/b/o/a%2Fk?alt=media", {}, "get", "a/k"),
        ("gcs", "GET", "/storage/v1/b/b/o/a%2Fk", {}, "head", "a/k"),
        ("gcs", "DELETE", "/storage/v1/b/b/o/k", {}, "delete", "k"),
        ("gcs", "GET", "/download/storage/v1/b/b/o/k?alt=media", {}, "get", "k"),
        ("gcs", "POST", "/storage/v1/b?project=p", {}, "other", None),
    ],
)
def test_each_request_has_its_kind_and_key(
    style: str, method: str, target: str, headers: dict[str, str], kind: str, key: str | None
) -> None:
    assert classify(style, method, target, headers) == (kind, key)


def test_a_rule_refuses_what_it_cannot_do() -> None:
    for spec, message in [
        ({"action": "explode"}, "action must be one of"),
        ({"action": "delay", "kinds": ["post"]}, "kinds must be among"),
        ({"action": "delay", "phase": "during"}, "phase must be"),
        ({"action": "slow_down", "probability": 2}, "probability must be within"),
    ]:
        with pytest.raises(ValueError, match=message):
            Rule.from_json(1, spec)
