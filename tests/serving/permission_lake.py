"""``gluecat serve`` over a warehouse whose Lake Formation defaults are closed, with real clients of it:
boto3 (Glue and Lake Formation over HTTPS) and the Apache thrift library (Hive over TCP, with set_ugi
naming the caller). alice administers the data lake; the other users hold nothing until a test grants
it to them (as the warehouse's owner, in process)."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import boto3
from botocore.config import Config
from thrift.protocol import TBinaryProtocol
from thrift.transport import TSocket, TTransport

from gluecat import Catalog, LakeFormation
from gluecat.api import extensions
from gluecat.aws import keys
from gluecat.aws.endpoint import AwsEndpoint
from gluecat.catalog import grants
from gluecat.hms.gen.hive_metastore import ThriftHiveMetastore
from gluecat.server import Server
from gluecat.serving import users
from gluecat.serving.audit import AuditLog
from gluecat.serving.permissions import Authorizer
from gluecat.store.snapshot import Key
from tests.certificates import make_certificate

REGION = "us-east-1"
CATALOG_ID = "000000000000"
IAM = {"DataLakePrincipalIdentifier": "IAM_ALLOWED_PRINCIPALS"}
PASSWORD = "a password of theirs"
_session = boto3.session.Session()


def arn(user: str) -> str:
    return grants.user_arn(CATALOG_ID, user)


def principal(user: str) -> dict[str, str]:
    return {"DataLakePrincipalIdentifier": arn(user)}


def resource(key: Key) -> dict[str, Any]:
    """A permission index's resource key as a request's Resource."""
    if key[0] == "catalog":
        return {"Catalog": {}}
    if key[0] == "database":
        return {"Database": {"Name": key[1]}}
    if key[0] == "tables":
        return {"Table": {"DatabaseName": key[1], "TableWildcard": {}}}
    if key[0] == "table":
        return {"Table": {"DatabaseName": key[1], "Name": key[2]}}
    return {"DataLocation": {"ResourceArn": key[1]}}


class PermissionLake:
    USERS = ("alice", "granted", "denied", "carol", "bob")

    def __init__(self, root: Path, *, audit: bool = False) -> None:
        root.mkdir(parents=True, exist_ok=True)
        self.root = root
        self.cert, key = make_certificate(root / "tls")
        self.users_file = root / "users.json"
        self.keys: dict[str, tuple[str, str]] = {}
        for name in self.USERS:
            self.keys[name] = keys.add(self.users_file, name)
            users.add(self.users_file, name, PASSWORD, n=2**10)
        self.glue = Catalog(str(root / "warehouse"))
        self.lf = LakeFormation(self.glue)
        grants.add_admins(self.glue._ctx, ["alice"])
        self.lf.put_data_lake_settings(
            DataLakeSettings={
                "DataLakeAdmins": [principal("alice")],
                "CreateDatabaseDefaultPermissions": [],
                "CreateTableDefaultPermissions": [],
            }
        )
        self.lf.revoke_permissions(Principal=IAM, Resource={"Catalog": {}}, Permissions=["CREATE_DATABASE"])
        self.audit = AuditLog(root / "audit.jsonl", flush_seconds=0.05) if audit else None
        self.authorizer = Authorizer(self.glue, audit=self.audit)
        endpoint = AwsEndpoint(
            self.glue,
            keys.AccessKeys(self.users_file),
            region=REGION,
            lake_formation=self.lf,
            authorizer=self.authorizer,
        )
        self.server = Server(
            self.glue,
            self.users_file,
            tls_cert=str(self.cert),
            tls_key=str(key),
            aws=endpoint,
            authorizer=self.authorizer,
            thrift_port=0,
        ).start()
        self.url = f"https://127.0.0.1:{self.server.http.port}"
        self._clients: dict[tuple[str, str], Any] = {}
        self._hive: list[Any] = []
        self._names = itertools.count()
        self.tx = ""
        """A transaction a test started, for the requests it makes in it."""

    def name(self, prefix: str = "c") -> str:
        """A database name no test has used."""
        return f"{prefix}{next(self._names)}"

    def client(self, user: str, service: str = "glue") -> Any:
        """A boto3 client of ``service`` signing as ``user`` (``gluecat``: gluecat's own operations, as the
        Spark plugin sends them)."""
        found = self._clients.get((user, service))
        if found is None:
            key_id, secret = self.keys[user]
            session = _session
            if service == extensions.SERVICE:
                session = boto3.session.Session()
                models = extensions.write_client_model(self.root / "botocore-models")
                session._session.get_component("data_loader").search_paths.append(str(models))
            found = self._clients[(user, service)] = session.client(
                service,
                endpoint_url=self.url,
                region_name=REGION,
                aws_access_key_id=key_id,
                aws_secret_access_key=secret,
                verify=str(self.cert),
                config=Config(retries={"max_attempts": 1}),
            )
        return found

    def hive(self, user: str | None) -> Any:
        """A new Hive Metastore client over TCP whose set_ugi names ``user`` (None: no set_ugi)."""
        assert self.server.thrift_port is not None
        sock = TSocket.TSocket("127.0.0.1", self.server.thrift_port)
        sock.setTimeout(10_000)
        transport = TTransport.TBufferedTransport(sock)
        transport.open()
        client = ThriftHiveMetastore.Client(TBinaryProtocol.TBinaryProtocol(transport))
        if user is not None:
            client.set_ugi(user, [])
        self._hive.append(transport)
        return client

    def grant(self, user: str, permission: str, key: Key, *, grantable: bool = False) -> None:
        self.lf.grant_permissions(
            Principal=principal(user) if user != "IAM_ALLOWED_PRINCIPALS" else IAM,
            Resource=resource(key),
            Permissions=[permission],
            PermissionsWithGrantOption=[permission] if grantable else [],
        )

    def make_table(self, database: str, table: str = "t", **extra: Any) -> None:
        """A database (if new) with a table of two data columns and a partition key, and one partition."""
        try:
            self.glue.get_database(Name=database)
        except self.glue.exceptions.EntityNotFoundException:
            self.glue.create_database(DatabaseInput={"Name": database})
        self.glue.create_table(
            DatabaseName=database,
            TableInput={
                "Name": table,
                "TableType": "EXTERNAL_TABLE",
                "Parameters": {"EXTERNAL": "TRUE"},
                "StorageDescriptor": {
                    "Columns": [{"Name": "id", "Type": "int"}, {"Name": "secret", "Type": "string"}],
                    "Location": f"s3://lake/{database}/{table}",
                },
                "PartitionKeys": [{"Name": "dt", "Type": "string"}],
                **extra,
            },
        )
        self.glue.create_partition(
            DatabaseName=database,
            TableName=table,
            PartitionInput={
                "Values": ["a"],
                "StorageDescriptor": {
                    "Columns": [{"Name": "id", "Type": "int"}, {"Name": "secret", "Type": "string"}],
                    "Location": f"s3://lake/{database}/{table}/dt=a",
                },
            },
        )

    def stop(self) -> None:
        for transport in self._hive:
            transport.close()
        self.server.stop()
