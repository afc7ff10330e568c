"""Permissions as users meet them: ``gluecat serve --admin ... --audit-log ...`` run as a command, the AWS
CLI's ``lakeformation`` commands against it, a revocation that holds at the next request (cached
replies included), and the Hive Metastore over HTTPS with Basic authentication naming the caller."""

from __future__ import annotations

import base64
import json
import os
import ssl
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from thrift.protocol import TJSONProtocol
from thrift.Thrift import TApplicationException
from thrift.transport import THttpClient

from gluecat import Catalog
from gluecat.aws import keys
from gluecat.hms.gen.hive_metastore import ThriftHiveMetastore, ttypes
from gluecat.hms.reference import free_port
from tests.certificates import make_certificate

from .permission_lake import PASSWORD, PermissionLake, arn, principal

pytestmark = pytest.mark.slow


@pytest.fixture
def lake(tmp_path: Path) -> Iterator[PermissionLake]:
    served = PermissionLake(tmp_path / "lake", audit=True)
    yield served
    served.stop()


def test_a_revocation_holds_at_the_next_request_cached_replies_included(lake: PermissionLake) -> None:
    lake.make_table("sales", "orders")
    lake.grant("bob", "SELECT", ("table", "sales", "orders"))
    glue, hive = lake.client("bob"), lake.hive("bob")
    for _ in range(2):  # the second is answered from the reply caches
        assert len(glue.get_partitions(DatabaseName="sales", TableName="orders")["Partitions"]) == 1
        assert len(hive.get_partitions("sales", "orders", -1)) == 1
    lake.lf.revoke_permissions(
        Principal=principal("bob"),
        Resource={"Table": {"DatabaseName": "sales", "Name": "orders"}},
        Permissions=["SELECT"],
    )
    with pytest.raises(glue.exceptions.AccessDeniedException, match="Required SELECT on table sales.orders"):
        glue.get_partitions(DatabaseName="sales", TableName="orders")
    with pytest.raises(ttypes.MetaException, match="Required SELECT on table sales.orders"):
        hive.get_partitions("sales", "orders", -1)
    # What a caller may see of a table is part of what its cached replies are kept by.
    lake.lf.grant_permissions(
        Principal=principal("bob"),
        Resource={"TableWithColumns": {"DatabaseName": "sales", "Name": "orders", "ColumnNames": ["id"]}},
        Permissions=["SELECT"],
    )
    for _ in range(2):
        assert [
            c["Name"]
            for c in glue.get_table(DatabaseName="sales", Name="orders")["Table"]["StorageDescriptor"][
                "Columns"
            ]
        ] == ["id"]
        assert [c.name for c in hive.get_table("sales", "orders").sd.cols] == ["id"]
    lake.grant("carol", "SELECT", ("table", "sales", "orders"))
    assert [
        c["Name"]
        for c in lake.client("carol").get_table(DatabaseName="sales", Name="orders")["Table"][
            "StorageDescriptor"
        ]["Columns"]
    ] == ["id", "secret"]
    assert [c.name for c in lake.hive("carol").get_table("sales", "orders").sd.cols] == ["id", "secret"]


def test_hive_over_https_acts_for_the_basic_user(lake: PermissionLake) -> None:
    lake.make_table("sales", "orders")
    lake.grant("bob", "DESCRIBE", ("table", "sales", "orders"))
    transports: list[Any] = []

    def client(user: str) -> Any:
        transport = THttpClient.THttpClient(
            f"{lake.url}/", ssl_context=ssl.create_default_context(cafile=str(lake.cert))
        )
        token = base64.b64encode(f"{user}:{PASSWORD}".encode()).decode()
        transport.setCustomHeaders(
            {"Authorization": f"Basic {token}", "Content-Type": "application/vnd.apache.thrift.json"}
        )
        transports.append(transport)
        return ThriftHiveMetastore.Client(TJSONProtocol.TJSONProtocol(transport))

    try:
        _hive_over_https(lake, client("bob"), client("carol"))
    finally:
        for transport in transports:
            transport.close()


def _hive_over_https(lake: PermissionLake, bob: Any, carol: Any) -> None:
    assert bob.get_all_databases() == ["sales"] and carol.get_all_databases() == []
    assert bob.get_table("sales", "orders").tableName == "orders"
    with pytest.raises(ttypes.NoSuchObjectException, match="Table orders not found."):
        carol.get_table("sales", "orders")
    # set_ugi names no one over HTTP: the caller is who Basic authentication says
    carol.set_ugi("bob", [])
    assert carol.get_all_databases() == []
    with pytest.raises(ttypes.MetaException, match="Required DROP on table sales.orders"):
        bob.drop_table("sales", "orders", False)
    with pytest.raises(TApplicationException):
        bob.get_config_value("hive.metastore.x", "")  # a call gluecat does not serve: refused, and noted
    lake.audit.flush()  # type: ignore[union-attr]
    lines = [json.loads(line) for line in (lake.root / "audit.jsonl").read_text().splitlines()]
    dropped = [line for line in lines if line["operation"] == "drop_table"]
    assert dropped == [
        {
            "time": dropped[0]["time"],
            "source": "127.0.0.1",
            "principal": arn("bob"),
            "protocol": "hive",
            "operation": "drop_table",
            "resource": "table sales.orders",
            "decision": "denied",
            "reason": "Insufficient Lake Formation permission(s): Required DROP on table sales.orders",
            "outcome": "MetaException",
            "ms": dropped[0]["ms"],
            "transport": "http",
        }
    ]
    unknown = [line for line in lines if line["operation"] == "get_config_value"]
    assert [(u["decision"], u["outcome"]) for u in unknown] == [("denied", "UnknownMethod")]


def test_a_table_made_in_a_transaction_is_its_makers_within_it(lake: PermissionLake) -> None:
    """Its grants are staged with it: they count in the transaction's own requests, for no one else,
    and hold for everyone once it commits."""
    lake.glue.create_database(DatabaseInput={"Name": "gov"})
    lake.grant("bob", "CREATE_TABLE", ("database", "gov"))
    glue, lf = lake.client("bob"), lake.client("bob", "lakeformation")
    tx = lf.start_transaction()["TransactionId"]
    glue.create_table(
        DatabaseName="gov",
        TableInput={
            "Name": "g",
            "TableType": "GOVERNED",
            "StorageDescriptor": {"Location": "s3://lake/gov/g"},
        },
        TransactionId=tx,
    )
    lf.update_table_objects(
        DatabaseName="gov",
        TableName="g",
        TransactionId=tx,
        WriteOperations=[{"AddObject": {"Uri": "s3://lake/gov/g/f", "ETag": "e", "Size": 1}}],
    )
    assert glue.get_table(DatabaseName="gov", Name="g", TransactionId=tx)["Table"]["Name"] == "g"
    with pytest.raises(glue.exceptions.EntityNotFoundException):
        glue.get_table(DatabaseName="gov", Name="g")  # outside the transaction there is no such table yet
    with pytest.raises(glue.exceptions.AccessDeniedException):
        lake.client("carol").get_table(DatabaseName="gov", Name="g", TransactionId=tx)
    lf.commit_transaction(TransactionId=tx)
    got = lf.get_table_objects(DatabaseName="gov", TableName="g")["Objects"]
    assert [o["Objects"][0]["Uri"] for o in got] == ["s3://lake/gov/g/f"]


def _aws(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    return subprocess.run(
        [sys.executable, "-m", "awscli", *args, "--output", "json"],
        capture_output=True,
        text=True,
        env={**clean, **env},
        timeout=120,
    )


def test_gluecat_serve_with_an_admin_and_the_aws_clis_lakeformation_commands(tmp_path: Path) -> None:
    cert, key = make_certificate(tmp_path / "tls")
    users_file = tmp_path / "users.json"
    secrets = {name: keys.add(users_file, name) for name in ("alice", "bob")}
    glue = Catalog(str(tmp_path / "warehouse"))
    glue.create_database(DatabaseInput={"Name": "sales"})
    glue.create_table(DatabaseName="sales", TableInput={"Name": "orders"})
    port = free_port()
    audit = tmp_path / "audit.jsonl"
    command = [sys.executable, "-m", "gluecat", "serve", "--warehouse", str(tmp_path / "warehouse")]
    command += [
        "--users",
        str(users_file),
        "--port",
        str(port),
        "--tls-cert",
        str(cert),
        "--tls-key",
        str(key),
    ]
    command += ["--admin", "alice", "--audit-log", str(audit)]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert proc.stdout is not None
        while "the audit log is" not in proc.stdout.readline():
            pass

        def env(user: str) -> dict[str, str]:
            return {
                "AWS_ACCESS_KEY_ID": secrets[user][0],
                "AWS_SECRET_ACCESS_KEY": secrets[user][1],
                "AWS_ENDPOINT_URL": f"https://127.0.0.1:{port}",
                "AWS_CA_BUNDLE": str(cert),
                "AWS_DEFAULT_REGION": "us-east-1",
            }

        settings = json.loads(_aws("lakeformation", "get-data-lake-settings", env=env("bob")).stdout)
        assert settings["DataLakeSettings"]["DataLakeAdmins"] == [
            {"DataLakePrincipalIdentifier": arn("alice")}
        ]
        table = '{"Table": {"DatabaseName": "sales", "Name": "orders"}}'
        revoked = _aws(
            "lakeformation", "revoke-permissions", "--principal", "DataLakePrincipalIdentifier=IAM_ALLOWED_PRINCIPALS",
            "--permissions", "ALL", "--resource", table, env=env("alice"),
        )  # fmt: skip
        assert revoked.returncode == 0, revoked.stderr
        denied = _aws("glue", "get-table", "--database-name", "sales", "--name", "orders", env=env("bob"))
        assert denied.returncode != 0
        assert (
            "AccessDeniedException" in denied.stderr
            and "Required DESCRIBE on table sales.orders" in denied.stderr
        )
        refused = _aws(
            "lakeformation", "grant-permissions", "--principal", f"DataLakePrincipalIdentifier={arn('bob')}",
            "--permissions", "SELECT", "--resource", table, env=env("bob"),
        )  # fmt: skip
        assert "AccessDeniedException" in refused.stderr
        granted = _aws(
            "lakeformation", "grant-permissions", "--principal", f"DataLakePrincipalIdentifier={arn('bob')}",
            "--permissions", "SELECT", "--resource", table, env=env("alice"),
        )  # fmt: skip
        assert granted.returncode == 0, granted.stderr
        listed = json.loads(
            _aws("lakeformation", "list-permissions", "--resource", table, env=env("alice")).stdout
        )["PrincipalResourcePermissions"]
        assert [(r["Principal"]["DataLakePrincipalIdentifier"], r["Permissions"]) for r in listed] == [
            (arn("bob"), ["SELECT"])
        ]
        got = json.loads(
            _aws("glue", "get-table", "--database-name", "sales", "--name", "orders", env=env("bob")).stdout
        )
        assert got["Table"]["Name"] == "orders"
    finally:
        proc.terminate()
        proc.communicate(timeout=20)
    text = audit.read_text()
    lines = [json.loads(line) for line in text.splitlines()]
    assert [(line["principal"], line["operation"], line["decision"], line["outcome"]) for line in lines] == [
        (arn("bob"), "GetDataLakeSettings", "allowed", "ok"),
        (arn("alice"), "RevokePermissions", "allowed", "ok"),
        (arn("bob"), "GetTable", "denied", "AccessDeniedException"),
        (arn("bob"), "GrantPermissions", "denied", "AccessDeniedException"),
        (arn("alice"), "GrantPermissions", "allowed", "ok"),
        (arn("alice"), "ListPermissions", "allowed", "ok"),
        (arn("bob"), "GetTable", "allowed", "ok"),
    ]
    for _, secret in secrets.values():  # key ids are names; secrets and signatures never appear
        assert secret not in text
    assert "Signature" not in text and "AWS4-HMAC" not in text
