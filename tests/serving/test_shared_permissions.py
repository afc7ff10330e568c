"""Permissions of a catalog that two `gluecat serve` processes share on one S3 warehouse, as behind a
load balancer: a grant or a revocation made through one server holds at the next request through the
other, its cached replies included."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import boto3
import pytest

from gluecat.aws import keys
from tests.aws_wire import make_credentials, sales_orders, serve_processes
from tests.object_stores.fixtures import use

from .permission_lake import IAM, principal

pytestmark = pytest.mark.slow

TABLE = {"Table": {"DatabaseName": "sales", "Name": "orders"}}


def test_a_grant_and_a_revocation_through_one_server_hold_at_the_next_request_through_the_other(
    moto_bucket: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    warehouse = use(monkeypatch, moto_bucket)
    lake = sales_orders(warehouse, f"{moto_bucket.url}/lake/orders")
    lake.create_partition(DatabaseName="sales", TableName="orders", PartitionInput={"Values": ["2024-01-01"]})
    lake.close()
    alice = make_credentials(tmp_path / "users")  # alice administers the data lake
    bob = keys.add(alice.users_file, "bob")

    def client(service: str, url: str, key: tuple[str, str]) -> Any:
        return boto3.client(
            service,
            endpoint_url=url,
            region_name="us-east-1",
            aws_access_key_id=key[0],
            aws_secret_access_key=key[1],
        )

    with serve_processes(warehouse, alice, 2, tmp_path, options=("--admin", "alice")) as (a, b):
        admin = client("lakeformation", a.url, (alice.key_id, alice.secret))
        glue = client("glue", b.url, bob)

        def reads() -> int:
            return len(glue.get_partitions(DatabaseName="sales", TableName="orders")["Partitions"])

        assert reads() == 1  # nobody has set permissions up: IAM_ALLOWED_PRINCIPALS holds ALL
        admin.revoke_permissions(Principal=IAM, Resource=TABLE, Permissions=["ALL"])
        with pytest.raises(
            glue.exceptions.AccessDeniedException, match="Required SELECT on table sales.orders"
        ):
            reads()
        admin.grant_permissions(Principal=principal("bob"), Resource=TABLE, Permissions=["SELECT"])
        assert reads() == 1 and reads() == 1  # the second from the reply cache
        admin.revoke_permissions(Principal=principal("bob"), Resource=TABLE, Permissions=["SELECT"])
        with pytest.raises(
            glue.exceptions.AccessDeniedException, match="Required SELECT on table sales.orders"
        ):
            reads()
