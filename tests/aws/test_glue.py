"""The Glue API over HTTPS with boto3: values, errors and routing as AWS gives them."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError

from gluecat import Catalog
from gluecat.catalog.rows import merging
from gluecat.serving import users
from tests.aws_wire import REGION, Credentials, Served
from tests.int_partitions import add, live, make

from .conftest import glue_request, send, sign


def make_table(glue: Any, name: str = "t", **overrides: Any) -> None:
    glue.create_table(
        DatabaseName="db",
        TableInput={
            "Name": name,
            "StorageDescriptor": {
                "Columns": [{"Name": "id", "Type": "bigint"}, {"Name": "price", "Type": "decimal(10,2)"}],
                "Location": f"s3://lake/{name}/",
            },
            "PartitionKeys": [{"Name": "dt", "Type": "string"}],
            **overrides,
        },
    )


@pytest.fixture
def db(glue: Any) -> Any:
    glue.create_database(DatabaseInput={"Name": "db"})
    return glue


def test_timestamps_arrive_to_the_microsecond(db: Any, served: Served) -> None:
    make_table(db)
    db.batch_create_partition(
        DatabaseName="db", TableName="t", PartitionInputList=[{"Values": ["2024-01-01"]}]
    )
    wire = db.get_table(DatabaseName="db", Name="t")["Table"]
    local = served.catalog.get_table(DatabaseName="db", Name="t")["Table"]
    assert wire["CreateTime"] == local["CreateTime"] and wire["UpdateTime"] == local["UpdateTime"]
    assert local["CreateTime"].microsecond != 0  # or the comparison above proves little
    wire_partition = db.get_partitions(DatabaseName="db", TableName="t")["Partitions"][0]
    assert (
        wire_partition["CreationTime"]
        == served.catalog.get_partitions(DatabaseName="db", TableName="t")["Partitions"][0]["CreationTime"]
    )


def test_a_timestamp_in_a_request_is_the_callers_instant(db: Any) -> None:
    make_table(db)
    between = datetime.now(UTC)
    time.sleep(0.01)
    db.update_table(DatabaseName="db", TableInput={"Name": "t", "Description": "v2"})
    assert "Description" not in db.get_table(DatabaseName="db", Name="t", QueryAsOfTime=between)["Table"]
    assert db.get_table(DatabaseName="db", Name="t")["Table"]["Description"] == "v2"


def test_blob_members_travel_as_base64(db: Any, served: Served) -> None:
    make_table(db)
    stats = {
        "ColumnName": "price",
        "ColumnType": "decimal(10,2)",
        "AnalyzedTime": datetime(2024, 5, 1, 12, 0, 0, 250000, tzinfo=UTC),
        "StatisticsData": {
            "Type": "DECIMAL",
            "DecimalColumnStatisticsData": {
                "MinimumValue": {"UnscaledValue": (-5).to_bytes(2, "big", signed=True), "Scale": 2},
                "MaximumValue": {"UnscaledValue": (123456).to_bytes(3, "big", signed=True), "Scale": 2},
                "NumberOfNulls": 0,
                "NumberOfDistinctValues": 7,
            },
        },
    }
    assert (
        db.update_column_statistics_for_table(DatabaseName="db", TableName="t", ColumnStatisticsList=[stats])[
            "Errors"
        ]
        == []
    )
    got = db.get_column_statistics_for_table(DatabaseName="db", TableName="t", ColumnNames=["price"])
    assert got["ColumnStatisticsList"] == [stats]
    local = served.catalog.get_column_statistics_for_table(
        DatabaseName="db", TableName="t", ColumnNames=["price"]
    )
    assert local["ColumnStatisticsList"] == [stats]


@pytest.mark.parametrize("value", [float("inf"), float("-inf"), float("nan")])
def test_a_double_that_is_not_finite_is_read_as_botocore_sends_it(
    db: Any, served: Served, value: float
) -> None:
    """JSON has no NaN or infinities: botocore sends them as the strings "NaN", "Infinity" and
    "-Infinity", as AWS's JSON protocols define. The server reads them back as the doubles they are,
    so the API's own rule answers, as it does a Python caller."""
    make_table(db)
    stats = {
        "ColumnName": "id",
        "ColumnType": "double",
        "AnalyzedTime": datetime(2024, 5, 1, tzinfo=UTC),
        "StatisticsData": {
            "Type": "DOUBLE",
            "DoubleColumnStatisticsData": {
                "MaximumValue": value,
                "NumberOfNulls": 0,
                "NumberOfDistinctValues": 1,
            },
        },
    }
    field = "ColumnStatisticsList[0].StatisticsData.DoubleColumnStatisticsData.MaximumValue: must be a finite number"
    for client in (db, served.catalog):
        with pytest.raises(client.exceptions.InvalidInputException) as refused:
            client.update_column_statistics_for_table(
                DatabaseName="db", TableName="t", ColumnStatisticsList=[stats]
            )
        assert field in refused.value.response["Error"]["Message"]


def test_errors_are_the_client_exception_classes_with_aws_status(db: Any) -> None:
    with pytest.raises(db.exceptions.EntityNotFoundException, match="Database nope not found") as missing:
        db.get_database(Name="nope")
    assert missing.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400
    assert missing.value.operation_name == "GetDatabase"
    with pytest.raises(db.exceptions.AlreadyExistsException):
        db.create_database(DatabaseInput={"Name": "DB"})
    make_table(db)
    db.update_table(DatabaseName="db", TableInput={"Name": "t", "Description": "a"}, VersionId="1")
    with pytest.raises(db.exceptions.ConcurrentModificationException, match="VersionId"):
        db.update_table(DatabaseName="db", TableInput={"Name": "t", "Description": "b"}, VersionId="1")


def test_every_reply_carries_the_servers_date_as_aws_replies_do(db: Any, served: Served) -> None:
    """AWS answers with a Date header (RFC 9110 asks it of a server with a clock); SDKs read it to
    correct a skewed client clock after a "Signature expired" refusal (AWS SDK for Java 2, Go 2,
    JavaScript 3) and botocore to bound a retry's ttl."""
    before = datetime.now(UTC).replace(microsecond=0)
    reply = db.get_databases()["ResponseMetadata"]["HTTPHeaders"]
    with pytest.raises(db.exceptions.EntityNotFoundException) as missing:
        db.get_database(Name="nope")
    error = missing.value.response["ResponseMetadata"]["HTTPHeaders"]
    request = glue_request(served, "GetDatabases")
    sign(request, served.credentials.key_id, served.credentials.secret, at=before - timedelta(minutes=20))
    status, skewed, body = send(served, request)
    assert (status, body["__type"]) == (400, "InvalidSignatureException")
    assert "Signature expired" in body["message"]
    after = datetime.now(UTC)
    for headers in (reply, error, skewed):
        date = parsedate_to_datetime(headers["date"])
        assert headers["date"].endswith(" GMT") and before <= date <= after


def test_members_of_the_wrong_type_are_named_by_the_apis_validation(served: Served) -> None:
    glue = served.client(parameter_validation=False)
    with pytest.raises(glue.exceptions.InvalidInputException, match="MaxResults"):
        glue.get_databases(MaxResults="ten")
    # botocore cannot send a timestamp that is not one; a request of another client can
    request = glue_request(
        served, "GetTable", {"DatabaseName": "db", "Name": "t", "QueryAsOfTime": "yesterday"}
    )
    sign(request, served.credentials.key_id, served.credentials.secret)
    status, _, body = send(served, request)
    assert (status, body["__type"]) == (400, "InvalidInputException")
    assert "QueryAsOfTime" in body["Message"]


def test_an_operation_gluecat_does_not_serve_is_unknown(glue: Any) -> None:
    with pytest.raises(ClientError) as err:
        glue.start_crawler(Name="c")
    assert err.value.response["Error"]["Code"] == "UnknownOperationException"
    assert "StartCrawler" in err.value.response["Error"]["Message"]


@pytest.mark.parametrize("target", ["AWSGlue.NoSuchOperation", "AmazonS3.GetObject"])
def test_an_unknown_target_is_unknown(served: Served, target: str) -> None:
    request = glue_request(served, "GetDatabases")
    request.headers.replace_header("X-Amz-Target", target)
    sign(request, served.credentials.key_id, served.credentials.secret)
    status, _, body = send(served, request)
    assert (status, body["__type"]) == (400, "UnknownOperationException")


@pytest.mark.parametrize("body", [b"{", b"[1, 2]", b'"text"', b"[" * 100_000])
def test_a_body_that_is_not_a_json_object_is_a_serialization_error(served: Served, body: bytes) -> None:
    request = glue_request(served, "GetDatabases", body)
    sign(request, served.credentials.key_id, served.credentials.secret)
    status, _, reply = send(served, request)
    assert (status, reply["__type"]) == (400, "SerializationException")


def test_the_hive_metastore_protocol_is_served_on_the_same_port(served: Served, glue: Any) -> None:
    import base64
    import ssl

    from thrift.protocol import TJSONProtocol
    from thrift.transport import THttpClient

    from gluecat.hms.gen.hive_metastore import ThriftHiveMetastore

    users.add(served.credentials.users_file, "bob", "bobs password", n=2**10)
    glue.create_database(DatabaseInput={"Name": "db"})
    transport = THttpClient.THttpClient(
        served.url + "/", ssl_context=ssl.create_default_context(cafile=served.ca_bundle)
    )
    transport.setCustomHeaders(
        {
            "Authorization": "Basic " + base64.b64encode(b"bob:bobs password").decode(),
            "Content-Type": "application/vnd.apache.thrift.json",
        }
    )
    try:
        assert ThriftHiveMetastore.Client(TJSONProtocol.TJSONProtocol(transport)).get_all_databases() == [
            "db"
        ]
    finally:
        transport.close()
        users.remove(served.credentials.users_file, "bob")


def test_replies_kept_for_planners_never_outlive_a_commit(db: Any, served: Served, warehouse: str) -> None:
    """Read replies are reused while the warehouse is unchanged; a commit from anywhere (here another
    Catalog on the warehouse, as another process) makes them misses, and errors are never kept."""
    from gluecat import Catalog

    make_table(db)
    db.batch_create_partition(DatabaseName="db", TableName="t", PartitionInputList=[{"Values": ["a"]}])
    first = db.get_partitions(DatabaseName="db", TableName="t")["Partitions"]
    assert db.get_partitions(DatabaseName="db", TableName="t")["Partitions"] == first
    assert served.endpoint.replies is not None and served.endpoint.replies.get(
        # keyed by what the caller may see too: here (no permissions set up) everyone sees all
        ("GetPartitions", b'{"DatabaseName": "db", "TableName": "t"}', None),
        served.catalog.table_version("db", "t"),
    )
    with pytest.raises(db.exceptions.EntityNotFoundException):
        db.get_table(DatabaseName="db", Name="later")

    other = Catalog(warehouse)
    other.create_partition(DatabaseName="db", TableName="t", PartitionInput={"Values": ["b"]})
    other.create_table(DatabaseName="db", TableInput={"Name": "later"})
    assert [p["Values"] for p in db.get_partitions(DatabaseName="db", TableName="t")["Partitions"]] == [
        ["a"],
        ["b"],
    ]
    assert db.get_table(DatabaseName="db", Name="later")["Table"]["Name"] == "later"


def test_a_write_that_landed_is_answered_as_done_when_the_merge_after_it_fails(
    warehouse: str, credentials: Credentials, certificate: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A writer that merges its table's segments after its commit (here without the merge thread)
    must answer its landed write as done even if the merge fails: an error, a 500, makes boto3 retry
    with its default retries, and the retry of an applied CreatePartition is AlreadyExistsException."""
    monkeypatch.setattr(merging, "MIN_MERGE_ROWS", 0)  # one-row writes make a run worth merging
    served = Served(make(Catalog(warehouse, background_merges=False)), credentials, certificate)
    try:
        glue = boto3.client(
            "glue",
            endpoint_url=served.url,
            region_name=REGION,
            aws_access_key_id=credentials.key_id,
            aws_secret_access_key=credentials.secret,
            verify=served.ca_bundle,
        )
        for k in range(7):
            add(served.catalog, k)
        # A file where the data folder should be: the merge's segment cannot be written. The write
        # itself travels in its log entry, as small writes do, and lands.
        data = Path(warehouse) / "_gluecat" / "data"
        data.rename(data.with_name("data.aside"))
        data.write_bytes(b"")
        response = glue.create_partition(DatabaseName="db", TableName="t", PartitionInput={"Values": ["7"]})
        assert response["ResponseMetadata"]["RetryAttempts"] == 0
        data.unlink()
        data.with_name("data.aside").rename(data)
        assert live(served.catalog) == list(range(8))
    finally:
        served.stop()


def test_a_kept_reply_counts_the_request_it_is_keyed_by(db: Any, served: Served) -> None:
    """Replies are keyed by their requests' bodies: a request's bytes count against the replies' bound
    as the reply's do, or distinct large requests with small replies would be kept past it."""
    make_table(db)
    replies = served.endpoint.replies
    assert replies is not None
    db.get_partitions(DatabaseName="db", TableName="t", Expression="dt = '" + "x" * 2000 + "'")
    ((key, (_, body, cost)),) = [(k, e) for k, e in replies._entries.items() if k[0] == "GetPartitions"]
    assert cost >= len(key[1]) + len(body) > 2000
