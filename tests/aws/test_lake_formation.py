"""Lake Formation's REST-JSON API: routes, values and errors by botocore's lakeformation model.

These tests register a small client of their own, which answers operations gluecat.LakeFormation does
not have (query planning, blobs): the wire is what is tested here, against boto3's real lakeformation
client. gluecat.LakeFormation itself is run over the wire by tests/api/test_lake_formation.py.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from gluecat import Catalog
from gluecat.errors import AccessDeniedException, TransactionCanceledException
from tests.aws_wire import REGION, Credentials, Served

from .conftest import send, sign

STARTED = datetime(2026, 1, 2, 3, 4, 5, 678000, tzinfo=UTC)


class RecordingLakeFormation:
    """Answers a few operations in boto3's lakeformation shapes and keeps what it was asked."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def start_transaction(self, **kwargs: Any) -> dict[str, Any]:
        self.calls.append(("start_transaction", kwargs))
        return {"TransactionId": "tx-1", "ResponseMetadata": {"HTTPStatusCode": 200}}

    def describe_transaction(self, **kwargs: Any) -> dict[str, Any]:
        self.calls.append(("describe_transaction", kwargs))
        return {
            "TransactionDescription": {
                "TransactionId": kwargs["TransactionId"],
                "TransactionStatus": "ACTIVE",
                "TransactionStartTime": STARTED,
            }
        }

    def start_query_planning(self, **kwargs: Any) -> dict[str, Any]:
        self.calls.append(("start_query_planning", kwargs))
        return {"QueryId": "q-1"}

    def commit_transaction(self, **kwargs: Any) -> dict[str, Any]:
        raise TransactionCanceledException(f"Transaction {kwargs['TransactionId']} was canceled")

    def cancel_transaction(self, **kwargs: Any) -> dict[str, Any]:
        raise AccessDeniedException("no")

    def get_query_statistics(self, **kwargs: Any) -> dict[str, Any]:
        return {"QuerySubmissionTime": STARTED}  # one of the model's ISO 8601 timestamps

    def get_work_unit_results(self, **kwargs: Any) -> dict[str, Any]:
        return {"ResultStream": b"\x00arrow bytes\xff"}


@pytest.fixture
def lake_formation() -> RecordingLakeFormation:
    return RecordingLakeFormation()


@pytest.fixture
def lf_served(
    warehouse: str,
    credentials: Credentials,
    certificate: tuple[Path, Path],
    lake_formation: RecordingLakeFormation,
) -> Iterator[Served]:
    server = Served(Catalog(warehouse), credentials, certificate, lake_formation=lake_formation)
    yield server
    server.stop()


def test_requests_reach_the_registered_client_with_boto3_values(
    lf_served: Served, lake_formation: RecordingLakeFormation
) -> None:
    # The query planning operations name a host prefix (query-, data-), which an endpoint by address
    # cannot take.
    lf = lf_served.client("lakeformation", inject_host_prefix=False)
    assert lf.start_transaction(TransactionType="READ_ONLY")["TransactionId"] == "tx-1"
    described = lf.describe_transaction(TransactionId="tx-1")["TransactionDescription"]
    assert described["TransactionStartTime"] == STARTED
    as_of = datetime(2025, 12, 31, 23, 59, 59, 500000, tzinfo=UTC)
    assert (
        lf.start_query_planning(
            QueryPlanningContext={"DatabaseName": "db", "QueryAsOfTime": as_of}, QueryString="q"
        )["QueryId"]
        == "q-1"
    )
    assert lake_formation.calls == [
        ("start_transaction", {"TransactionType": "READ_ONLY"}),
        ("describe_transaction", {"TransactionId": "tx-1"}),
        (
            "start_query_planning",
            {"QueryPlanningContext": {"DatabaseName": "db", "QueryAsOfTime": as_of}, "QueryString": "q"},
        ),
    ]
    assert lf.get_query_statistics(QueryId="0" * 36)["QuerySubmissionTime"] == STARTED


def test_errors_carry_the_models_status_and_the_error_type_header(lf_served: Served) -> None:
    lf = lf_served.client("lakeformation")
    with pytest.raises(lf.exceptions.TransactionCanceledException, match="tx-1 was canceled") as canceled:
        lf.commit_transaction(TransactionId="tx-1")
    response = canceled.value.response
    assert response["ResponseMetadata"]["HTTPStatusCode"] == 400
    assert response["ResponseMetadata"]["HTTPHeaders"]["x-amzn-errortype"] == "TransactionCanceledException"
    with pytest.raises(lf.exceptions.AccessDeniedException) as denied:
        lf.cancel_transaction(TransactionId="tx-1")
    assert denied.value.response["ResponseMetadata"]["HTTPStatusCode"] == 403  # the model's httpStatusCode


def test_a_blob_payload_is_the_reply_body(lf_served: Served) -> None:
    lf = lf_served.client("lakeformation", inject_host_prefix=False)
    out = lf.get_work_unit_results(QueryId="0" * 36, WorkUnitId=0, WorkUnitToken="t")
    assert out["ResultStream"].read() == b"\x00arrow bytes\xff"


def test_operations_the_client_lacks_are_unknown(lf_served: Served) -> None:
    lf = lf_served.client("lakeformation")
    with pytest.raises(lf.exceptions.ClientError) as err:
        lf.list_transactions()
    assert err.value.response["Error"]["Code"] == "UnknownOperationException"


def test_without_a_client_every_operation_is_unknown(served: Served) -> None:
    lf = served.client("lakeformation")
    with pytest.raises(lf.exceptions.ClientError) as err:
        lf.start_transaction()
    assert err.value.response["Error"]["Code"] == "UnknownOperationException"


def test_lake_formation_requests_are_signed_for_lakeformation(lf_served: Served) -> None:
    from botocore.awsrequest import AWSRequest

    request = AWSRequest(method="POST", url=lf_served.url + "/StartTransaction", data=b"{}")
    sign(request, lf_served.credentials.key_id, lf_served.credentials.secret, service="glue")
    status, headers, body = send(lf_served, request)
    assert (status, headers["x-amzn-errortype"]) == (400, "InvalidSignatureException")
    assert body["message"] == "Credential should be scoped to correct service: 'lakeformation'."

    unsigned = AWSRequest(method="POST", url=lf_served.url + "/StartTransaction", data=b"{}")
    assert send(lf_served, unsigned)[1]["x-amzn-errortype"] == "MissingAuthenticationTokenException"


def test_a_path_that_is_no_operation_is_not_found(lf_served: Served) -> None:
    from botocore.awsrequest import AWSRequest

    request = AWSRequest(method="POST", url=lf_served.url + "/NoSuchOperation", data=b"{}")
    sign(
        request,
        lf_served.credentials.key_id,
        lf_served.credentials.secret,
        service="lakeformation",
        region=REGION,
    )
    status, headers, _ = send(lf_served, request)
    assert (status, headers["x-amzn-errortype"]) == (404, "UnknownOperationException")


def test_a_body_over_the_limit_is_refused_in_the_rest_json_way(
    warehouse: str, credentials: Credentials, certificate: tuple[Path, Path]
) -> None:
    from botocore.awsrequest import AWSRequest

    served = Served(Catalog(warehouse), credentials, certificate, max_body=100)
    try:
        request = AWSRequest(
            method="POST", url=served.url + "/StartTransaction", data=b"{" + b" " * 200 + b"}"
        )
        status, headers, body = send(served, request)
        assert (status, headers["x-amzn-errortype"]) == (413, "RequestEntityTooLargeException")
        assert body["message"] == "Request must be smaller than 101 bytes."
    finally:
        served.stop()
