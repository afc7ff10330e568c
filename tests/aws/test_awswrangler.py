"""awswrangler's catalog functions against gluecat's AWS endpoint (``wr.config.glue_endpoint_url``).

awswrangler caps pyarrow below the version gluecat is tested with, so it cannot share the test
environment: it runs in a virtual environment of its own (tests/clients.py), driven by a script whose
results come back as JSON.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.aws_wire import REGION, Served
from tests.clients import client_environment

pytestmark = pytest.mark.slow

SCRIPT = """
import json, sys
import boto3
import awswrangler as wr

url, key_id, secret, region = sys.argv[1:]
wr.config.glue_endpoint_url = url
session = boto3.Session(aws_access_key_id=key_id, aws_secret_access_key=secret, region_name=region)
out = {}
wr.catalog.create_database(name="lake", description="the lake", boto3_session=session)
wr.catalog.create_parquet_table(
    database="lake",
    table="orders",
    path="s3://bucket/orders/",
    columns_types={"id": "bigint", "amount": "double"},
    partitions_types={"dt": "string", "country": "string"},
    description="orders by day",
    parameters={"owner": "etl"},
    columns_comments={"amount": "in USD"},
    boto3_session=session,
)
wr.catalog.add_parquet_partitions(
    database="lake",
    table="orders",
    partitions_values={
        "s3://bucket/orders/dt=2024-01-01/country=US/": ["2024-01-01", "US"],
        "s3://bucket/orders/dt=2024-01-02/country=UK/": ["2024-01-02", "UK"],
    },
    boto3_session=session,
)
out["partitions"] = wr.catalog.get_partitions(database="lake", table="orders", boto3_session=session)
out["us"] = wr.catalog.get_parquet_partitions(
    database="lake", table="orders", expression="country = 'US'", boto3_session=session
)
out["tables"] = [
    (t["Name"], t.get("Description"), t["Parameters"].get("owner"))
    for t in wr.catalog.get_tables(database="lake", boto3_session=session)
]
out["types"] = wr.catalog.get_table_types(database="lake", table="orders", boto3_session=session)
out["dropped"] = wr.catalog.delete_table_if_exists(database="lake", table="orders", boto3_session=session)
out["dropped_again"] = wr.catalog.delete_table_if_exists(database="lake", table="orders", boto3_session=session)
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def wrangler() -> Path:
    return client_environment("awswrangler")


def test_awswranglers_catalog_functions(wrangler: Path, served: Served, tmp_path: Path) -> None:
    script = tmp_path / "wrangle.py"
    script.write_text(SCRIPT)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "WR_"))}
    done = subprocess.run(
        [
            str(wrangler),
            str(script),
            served.url,
            served.credentials.key_id,
            served.credentials.secret,
            REGION,
        ],
        capture_output=True,
        text=True,
        env={**env, "AWS_CA_BUNDLE": served.ca_bundle},
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["partitions"] == {
        "s3://bucket/orders/dt=2024-01-01/country=US/": ["2024-01-01", "US"],
        "s3://bucket/orders/dt=2024-01-02/country=UK/": ["2024-01-02", "UK"],
    }
    assert out["us"] == {"s3://bucket/orders/dt=2024-01-01/country=US/": ["2024-01-01", "US"]}
    assert out["tables"] == [["orders", "orders by day", "etl"]]
    assert out["types"] == {"id": "bigint", "amount": "double", "dt": "string", "country": "string"}
    assert (out["dropped"], out["dropped_again"]) == (True, False)
    # What awswrangler made is gluecat's: the database is there, the table it dropped is gone.
    assert served.catalog.get_database(Name="lake")["Database"]["Description"] == "the lake"
    assert served.catalog.get_tables(DatabaseName="lake")["TableList"] == []
