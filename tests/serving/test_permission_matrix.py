"""Every operation of each protocol ``gluecat serve`` speaks, by a caller without the permission its rule
names (refused, nothing changed) and by one with exactly that permission (served), through real clients:
boto3 for Glue and Lake Formation, the Apache thrift library over TCP (set_ugi naming the caller) for
the Hive Metastore.

What each caller is granted is read off the one table of rules (gluecat.serving.permissions.RULES) for
the request the case makes, so the matrix follows the table; and the cases must name exactly the
operations the table has, so that an operation added to either, and not to the other, fails here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from botocore import xform_name
from botocore.exceptions import ClientError

from gluecat import Catalog, LakeFormation
from gluecat.api import extensions
from gluecat.api.service import operations
from gluecat.catalog import access
from gluecat.errors import AccessDeniedException
from gluecat.hms import mapping
from gluecat.hms.gen.hive_metastore import ttypes
from gluecat.hms.thrift_endpoint import SERVED
from gluecat.serving import permissions
from gluecat.serving.permissions import RULES, Need, Rule

from .permission_lake import IAM, PermissionLake, arn, principal

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def lake(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PermissionLake]:
    served = PermissionLake(tmp_path_factory.mktemp("matrix"))
    yield served
    served.stop()


@dataclass
class Case:
    """An operation's request (AWS parameters, or a Thrift call's arguments) on database ``db`` (made
    fresh with table t and partition ['a']), and, for a listing, whether an answer shows the case's
    database or table."""

    request: Callable[[PermissionLake, str], Any]
    prepare: Callable[[PermissionLake, str], None] = lambda lake, db: None
    shows: Callable[[Any, str], bool] | None = None


def _table_input(name: str = "t", **extra: Any) -> dict[str, Any]:
    return {
        "Name": name,
        "StorageDescriptor": {
            "Columns": [{"Name": "id", "Type": "int"}],
            "Location": f"s3://lake/new/{name}",
        },
        "PartitionKeys": [{"Name": "dt", "Type": "string"}],
        **extra,
    }


def _part(values: list[str], db: str) -> dict[str, Any]:
    return {"Values": values, "StorageDescriptor": {"Location": f"s3://lake/{db}/t/dt={values[0]}"}}


def _stats() -> list[dict[str, Any]]:
    return [
        {
            "ColumnName": "id",
            "ColumnType": "int",
            "AnalyzedTime": 0,
            "StatisticsData": {
                "Type": "LONG",
                "LongColumnStatisticsData": {"NumberOfNulls": 0, "NumberOfDistinctValues": 1},
            },
        }
    ]


def _arn(db: str, table: str | None = None) -> str:
    return f"arn:aws:glue:us-east-1:000000000000:{'table' if table else 'database'}/{db}{'/' + table if table else ''}"


def _tx(lake: PermissionLake, db: str) -> None:
    lake.tx = lake.lf.start_transaction()["TransactionId"]


def _governed(lake: PermissionLake, db: str) -> None:
    lake.glue.create_table(DatabaseName=db, TableInput={**_table_input("g"), "TableType": "GOVERNED"})
    _tx(lake, db)


def _as_read(lake: PermissionLake, db: str) -> dict[str, Any]:
    """The table's identity as GetTable returned it (what the Spark plugin sends)."""
    table = lake.glue.get_table(DatabaseName=db, Name="t")["Table"]
    return {k: table[k] for k in ("DatabaseName", "Name", "VersionId", "CreateTime")}


def _carol_selects(lake: PermissionLake, db: str) -> None:
    lake.grant("carol", "SELECT", ("table", db, "t"))


def _grant_entry(db: str, i: str = "1") -> dict[str, Any]:
    return {
        "Id": i,
        "Principal": principal("carol"),
        "Resource": {"Table": {"DatabaseName": db, "Name": "t"}},
        "Permissions": ["SELECT"],
    }


def _names(listing: Any, key: str) -> list[str]:
    return [d["Name"] for d in listing[key]]


GLUE: dict[str, Case] = {
    "CreateDatabase": Case(lambda lake, db: {"DatabaseInput": {"Name": db + "new"}}),
    "GetDatabase": Case(lambda lake, db: {"Name": db}),
    "GetDatabases": Case(lambda lake, db: {}, shows=lambda out, db: db in _names(out, "DatabaseList")),
    "UpdateDatabase": Case(lambda lake, db: {"Name": db, "DatabaseInput": {"Name": db, "Description": "d"}}),
    "DeleteDatabase": Case(lambda lake, db: {"Name": db}),
    "CreateTable": Case(lambda lake, db: {"DatabaseName": db, "TableInput": _table_input("t2")}),
    "GetTable": Case(lambda lake, db: {"DatabaseName": db, "Name": "t"}),
    "GetTables": Case(
        lambda lake, db: {"DatabaseName": db}, shows=lambda out, db: "t" in _names(out, "TableList")
    ),
    "SearchTables": Case(
        lambda lake, db: {"SearchText": db}, shows=lambda out, db: "t" in _names(out, "TableList")
    ),
    "UpdateTable": Case(
        lambda lake, db: {"DatabaseName": db, "TableInput": _table_input("t", Description="d")}
    ),
    "DeleteTable": Case(lambda lake, db: {"DatabaseName": db, "Name": "t"}),
    "BatchDeleteTable": Case(lambda lake, db: {"DatabaseName": db, "TablesToDelete": ["t"]}),
    "GetTableVersion": Case(lambda lake, db: {"DatabaseName": db, "TableName": "t"}),
    "GetTableVersions": Case(lambda lake, db: {"DatabaseName": db, "TableName": "t"}),
    "DeleteTableVersion": Case(
        lambda lake, db: {"DatabaseName": db, "TableName": "t", "VersionId": "1"},
        prepare=lambda lake, db: lake.glue.update_table(DatabaseName=db, TableInput=_table_input("t")),
    ),
    "BatchDeleteTableVersion": Case(
        lambda lake, db: {"DatabaseName": db, "TableName": "t", "VersionIds": ["1"]},
        prepare=lambda lake, db: lake.glue.update_table(DatabaseName=db, TableInput=_table_input("t")),
    ),
    "CreatePartition": Case(
        lambda lake, db: {"DatabaseName": db, "TableName": "t", "PartitionInput": _part(["b"], db)}
    ),
    "BatchCreatePartition": Case(
        lambda lake, db: {"DatabaseName": db, "TableName": "t", "PartitionInputList": [_part(["b"], db)]}
    ),
    "GetPartition": Case(lambda lake, db: {"DatabaseName": db, "TableName": "t", "PartitionValues": ["a"]}),
    "GetPartitions": Case(lambda lake, db: {"DatabaseName": db, "TableName": "t"}),
    "BatchGetPartition": Case(
        lambda lake, db: {"DatabaseName": db, "TableName": "t", "PartitionsToGet": [{"Values": ["a"]}]}
    ),
    "UpdatePartition": Case(
        lambda lake, db: {
            "DatabaseName": db,
            "TableName": "t",
            "PartitionValueList": ["a"],
            "PartitionInput": _part(["a"], db),
        }
    ),
    "BatchUpdatePartition": Case(
        lambda lake, db: {
            "DatabaseName": db,
            "TableName": "t",
            "Entries": [{"PartitionValueList": ["a"], "PartitionInput": _part(["a"], db)}],
        }
    ),
    "DeletePartition": Case(
        lambda lake, db: {"DatabaseName": db, "TableName": "t", "PartitionValues": ["a"]}
    ),
    "BatchDeletePartition": Case(
        lambda lake, db: {"DatabaseName": db, "TableName": "t", "PartitionsToDelete": [{"Values": ["a"]}]}
    ),
    "GetColumnStatisticsForTable": Case(
        lambda lake, db: {"DatabaseName": db, "TableName": "t", "ColumnNames": ["id"]}
    ),
    "UpdateColumnStatisticsForTable": Case(
        lambda lake, db: {"DatabaseName": db, "TableName": "t", "ColumnStatisticsList": _stats()}
    ),
    "DeleteColumnStatisticsForTable": Case(
        lambda lake, db: {"DatabaseName": db, "TableName": "t", "ColumnName": "id"},
        prepare=lambda lake, db: lake.glue.update_column_statistics_for_table(
            DatabaseName=db, TableName="t", ColumnStatisticsList=_stats()
        ),
    ),
    "GetColumnStatisticsForPartition": Case(
        lambda lake, db: {
            "DatabaseName": db,
            "TableName": "t",
            "PartitionValues": ["a"],
            "ColumnNames": ["id"],
        }
    ),
    "UpdateColumnStatisticsForPartition": Case(
        lambda lake, db: {
            "DatabaseName": db,
            "TableName": "t",
            "PartitionValues": ["a"],
            "ColumnStatisticsList": _stats(),
        }
    ),
    "DeleteColumnStatisticsForPartition": Case(
        lambda lake, db: {"DatabaseName": db, "TableName": "t", "PartitionValues": ["a"], "ColumnName": "id"},
        prepare=lambda lake, db: lake.glue.update_column_statistics_for_partition(
            DatabaseName=db, TableName="t", PartitionValues=["a"], ColumnStatisticsList=_stats()
        ),
    ),
    "CreatePartitionIndex": Case(
        lambda lake, db: {
            "DatabaseName": db,
            "TableName": "t",
            "PartitionIndex": {"IndexName": "i", "Keys": ["dt"]},
        }
    ),
    "DeletePartitionIndex": Case(
        lambda lake, db: {"DatabaseName": db, "TableName": "t", "IndexName": "i"},
        prepare=lambda lake, db: lake.glue.create_partition_index(
            DatabaseName=db, TableName="t", PartitionIndex={"IndexName": "i", "Keys": ["dt"]}
        ),
    ),
    "GetPartitionIndexes": Case(lambda lake, db: {"DatabaseName": db, "TableName": "t"}),
    "TagResource": Case(lambda lake, db: {"ResourceArn": _arn(db, "t"), "TagsToAdd": {"k": "v"}}),
    "UntagResource": Case(lambda lake, db: {"ResourceArn": _arn(db, "t"), "TagsToRemove": ["k"]}),
    "GetTags": Case(lambda lake, db: {"ResourceArn": _arn(db)}),
    # gluecat's own operations (the Spark plugin's), over the wire as it sends them
    "GetGluecatInfo": Case(lambda lake, db: {}),
    "UpdateTableAsRead": Case(
        lambda lake, db: {"Table": _as_read(lake, db), "TableInput": _table_input("t")}
    ),
    "DeleteTableAsRead": Case(lambda lake, db: {"Table": _as_read(lake, db)}),
    "RenameTable": Case(
        lambda lake, db: {
            "Table": _as_read(lake, db),
            "NewDatabaseName": db,
            "TableInput": _table_input("moved"),
        }
    ),
    "ExplainPartitions": Case(
        lambda lake, db: {"DatabaseName": db, "TableName": "t", "Expression": "dt = 'a'"}
    ),
    "GetPartitionsArrow": Case(lambda lake, db: {"DatabaseName": db, "TableName": "t"}),
    "CommitPartitions": Case(
        lambda lake, db: {"DatabaseName": db, "TableName": "t", "Add": [_part(["b"], db)], "Drop": [["a"]]}
    ),
}

LAKE_FORMATION: dict[str, Case] = {
    "StartTransaction": Case(lambda lake, db: {}),
    "CommitTransaction": Case(lambda lake, db: {"TransactionId": lake.tx}, prepare=_tx),
    "CancelTransaction": Case(lambda lake, db: {"TransactionId": lake.tx}, prepare=_tx),
    "ExtendTransaction": Case(lambda lake, db: {"TransactionId": lake.tx}, prepare=_tx),
    "DescribeTransaction": Case(lambda lake, db: {"TransactionId": lake.tx}, prepare=_tx),
    "ListTransactions": Case(lambda lake, db: {}),
    "GetTableObjects": Case(lambda lake, db: {"DatabaseName": db, "TableName": "g"}, prepare=_governed),
    "UpdateTableObjects": Case(
        lambda lake, db: {
            "DatabaseName": db,
            "TableName": "g",
            "TransactionId": lake.tx,
            "WriteOperations": [
                {"AddObject": {"Uri": "s3://lake/new/g/f1", "ETag": "e", "Size": 1, "PartitionValues": ["a"]}}
            ],
        },
        prepare=_governed,
    ),
    "DeleteObjectsOnCancel": Case(
        lambda lake, db: {
            "DatabaseName": db,
            "TableName": "g",
            "TransactionId": lake.tx,
            "Objects": [{"Uri": "s3://lake/new/g/f1"}],
        },
        prepare=_governed,
    ),
    "GrantPermissions": Case(lambda lake, db: {k: v for k, v in _grant_entry(db).items() if k != "Id"}),
    "RevokePermissions": Case(
        lambda lake, db: {k: v for k, v in _grant_entry(db).items() if k != "Id"}, prepare=_carol_selects
    ),
    "BatchGrantPermissions": Case(lambda lake, db: {"Entries": [_grant_entry(db)]}),
    "BatchRevokePermissions": Case(lambda lake, db: {"Entries": [_grant_entry(db)]}, prepare=_carol_selects),
    "ListPermissions": Case(
        lambda lake, db: {"Resource": {"Table": {"DatabaseName": db, "Name": "t"}}},
        prepare=_carol_selects,
        shows=lambda out, db: bool(out["PrincipalResourcePermissions"]),
    ),
    "GetEffectivePermissionsForPath": Case(
        lambda lake, db: {"ResourceArn": f"arn:aws:s3:::lake/{db}"},
        prepare=_carol_selects,
        shows=lambda out, db: bool(out["Permissions"]),
    ),
    "GetDataLakeSettings": Case(lambda lake, db: {}),
    "PutDataLakeSettings": Case(
        lambda lake, db: {"DataLakeSettings": lake.lf.get_data_lake_settings()["DataLakeSettings"]}
    ),
    "RegisterResource": Case(lambda lake, db: {"ResourceArn": f"arn:aws:s3:::lake/{db}"}),
    "DeregisterResource": Case(
        lambda lake, db: {"ResourceArn": f"arn:aws:s3:::lake/{db}"},
        prepare=lambda lake, db: lake.lf.register_resource(ResourceArn=f"arn:aws:s3:::lake/{db}"),
    ),
    "DescribeResource": Case(
        lambda lake, db: {"ResourceArn": f"arn:aws:s3:::lake/{db}"},
        prepare=lambda lake, db: lake.lf.register_resource(ResourceArn=f"arn:aws:s3:::lake/{db}"),
    ),
    "ListResources": Case(lambda lake, db: {}),
    "StartTransactionAtVersion": Case(lambda lake, db: {"WarehouseVersion": lake.glue.warehouse_version()}),
    "GetTableObjectsArrow": Case(lambda lake, db: {"DatabaseName": db, "TableName": "g"}, prepare=_governed),
}


def _ttable(lake: PermissionLake, db: str, **change: Any) -> Any:
    table = mapping.table(lake.glue.get_table(DatabaseName=db, Name="t")["Table"])
    for k, v in change.items():
        setattr(table, k, v)
    return table


def _new_ttable(db: str) -> Any:
    return ttypes.Table(
        dbName=db,
        tableName="t2",
        tableType="EXTERNAL_TABLE",
        parameters={"EXTERNAL": "TRUE"},
        partitionKeys=[],
        sd=ttypes.StorageDescriptor(
            cols=[ttypes.FieldSchema("id", "int")],
            location="s3://lake/new/t2",
            serdeInfo=ttypes.SerDeInfo(parameters={}),
            parameters={},
        ),
    )


def _tpart(db: str, value: str) -> Any:
    return ttypes.Partition(
        dbName=db,
        tableName="t",
        values=[value],
        sd=ttypes.StorageDescriptor(
            cols=[ttypes.FieldSchema("id", "int")],
            location=f"s3://lake/{db}/t/dt={value}",
            serdeInfo=ttypes.SerDeInfo(parameters={}),
            parameters={},
        ),
        parameters={},
    )


HIVE: dict[str, Case] = {
    "get_all_databases": Case(lambda lake, db: (), shows=lambda out, db: db in out),
    "get_databases": Case(lambda lake, db: ("*",), shows=lambda out, db: db in out),
    "get_database": Case(lambda lake, db: (db,)),
    "get_all_tables": Case(lambda lake, db: (db,), shows=lambda out, db: "t" in out),
    "get_tables": Case(lambda lake, db: (db, "*"), shows=lambda out, db: "t" in out),
    "get_tables_by_type": Case(
        lambda lake, db: (db, "*", "EXTERNAL_TABLE"), shows=lambda out, db: "t" in out
    ),
    "get_table": Case(lambda lake, db: (db, "t")),
    "get_table_objects_by_name": Case(lambda lake, db: (db, ["t"]), shows=lambda out, db: bool(out)),
    "get_table_objects_by_name_req": Case(
        lambda lake, db: (ttypes.GetTablesRequest(dbName=db, tblNames=["t"]),),
        shows=lambda out, db: bool(out.tables),
    ),
    "get_partition_names": Case(lambda lake, db: (db, "t", -1)),
    "get_partitions": Case(lambda lake, db: (db, "t", -1)),
    "get_partitions_by_filter": Case(lambda lake, db: (db, "t", "dt = 'a'", -1)),
    "get_partitions_ps": Case(lambda lake, db: (db, "t", ["a"], -1)),
    "get_partitions_ps_with_auth": Case(lambda lake, db: (db, "t", ["a"], -1, "u", [])),
    "get_partitions_with_auth": Case(lambda lake, db: (db, "t", -1, "u", [])),
    "get_partition_names_ps": Case(lambda lake, db: (db, "t", ["a"], -1)),
    "get_partition": Case(lambda lake, db: (db, "t", ["a"])),
    "get_partition_with_auth": Case(lambda lake, db: (db, "t", ["a"], "u", [])),
    "get_partition_by_name": Case(lambda lake, db: (db, "t", "dt=a")),
    "get_partitions_by_names": Case(lambda lake, db: (db, "t", ["dt=a"])),
    "get_functions": Case(lambda lake, db: (db, "*")),
    "get_all_functions": Case(lambda lake, db: ()),
    "create_database": Case(
        lambda lake, db: (ttypes.Database(name=db + "new", locationUri=f"s3://lake/{db}new"),)
    ),
    "alter_database": Case(lambda lake, db: (db, ttypes.Database(name=db, description="d"))),
    "drop_database": Case(lambda lake, db: (db, False, True)),
    "create_table": Case(lambda lake, db: (_new_ttable(db),)),
    "create_table_with_environment_context": Case(
        lambda lake, db: (_new_ttable(db), ttypes.EnvironmentContext())
    ),
    "alter_table": Case(
        lambda lake, db: (db, "t", _ttable(lake, db, parameters={"EXTERNAL": "TRUE", "k": "v"}))
    ),
    "alter_table_with_environment_context": Case(
        lambda lake, db: (db, "t", _ttable(lake, db, parameters={"EXTERNAL": "TRUE", "k": "v"}), None)
    ),
    "alter_table_with_cascade": Case(
        lambda lake, db: (db, "t", _ttable(lake, db, tableName="renamed"), False)
    ),
    "drop_table": Case(lambda lake, db: (db, "t", False)),
    "drop_table_with_environment_context": Case(lambda lake, db: (db, "t", False, None)),
    "add_partition": Case(lambda lake, db: (_tpart(db, "b"),)),
    "add_partition_with_environment_context": Case(lambda lake, db: (_tpart(db, "b"), None)),
    "add_partitions": Case(lambda lake, db: ([_tpart(db, "b")],)),
    "add_partitions_req": Case(
        lambda lake, db: (
            ttypes.AddPartitionsRequest(
                dbName=db, tblName="t", parts=[_tpart(db, "b")], ifNotExists=False, needResult=True
            ),
        )
    ),
    "alter_partition": Case(lambda lake, db: (db, "t", _tpart(db, "a"))),
    "alter_partition_with_environment_context": Case(lambda lake, db: (db, "t", _tpart(db, "a"), None)),
    "alter_partitions": Case(lambda lake, db: (db, "t", [_tpart(db, "a")])),
    "alter_partitions_with_environment_context": Case(lambda lake, db: (db, "t", [_tpart(db, "a")], None)),
    "rename_partition": Case(lambda lake, db: (db, "t", ["a"], _tpart(db, "z"))),
    "drop_partition": Case(lambda lake, db: (db, "t", ["a"], False)),
    "drop_partition_with_environment_context": Case(lambda lake, db: (db, "t", ["a"], False, None)),
    "drop_partition_by_name": Case(lambda lake, db: (db, "t", "dt=a", False)),
    "drop_partition_by_name_with_environment_context": Case(lambda lake, db: (db, "t", "dt=a", False, None)),
    "set_ugi": Case(lambda lake, db: ("somebody", [])),
    "shutdown": Case(lambda lake, db: ()),
    "getStatus": Case(lambda lake, db: ()),
    "getName": Case(lambda lake, db: ()),
    "getVersion": Case(lambda lake, db: ()),
}

CASES = {"glue": GLUE, "lakeformation": LAKE_FORMATION, "hive": HIVE}


# -- the table covers everything served, and the cases cover the table ---------------------------------


def _own(cls: Any) -> set[str]:
    return {getattr(getattr(cls, n), "api_operation", None) for n in dir(cls)} - {None}  # type: ignore[misc]


def test_every_operation_served_has_a_rule_and_a_case() -> None:
    served = {
        "glue": {a for _, a in operations(Catalog, "glue")} | _own(Catalog),
        "lakeformation": {a for _, a in operations(LakeFormation, "lakeformation")} | _own(LakeFormation),
        "hive": set(SERVED),
    }
    for protocol, names in served.items():
        assert set(RULES[protocol]) == names, protocol
        assert set(CASES[protocol]) == names, protocol


# -- the matrix ------------------------------------------------------------------------------------------

MATRIX = [(protocol, op) for protocol, table in RULES.items() for op in sorted(table)]


def _grants_for(lake: PermissionLake, rule: Rule, request: Any, protocol: str, db: str) -> str:
    """Grant what ``rule`` needs for ``request`` to a caller; the caller's name (alice, the
    administrator, for the administrators' operations)."""
    if rule.kind in (permissions.ADMIN, permissions.READER):
        return "alice"
    if rule.kind == permissions.GRANT:
        lake.grant("granted", "SELECT", ("table", db, "t"), grantable=True)
        return "granted"
    if rule.kind == permissions.EACH:
        assert rule.batch is not None
        for item in rule.batch.items(request):
            if protocol == "lakeformation":
                lake.grant("granted", "SELECT", ("table", db, "t"), grantable=True)
            else:
                for need in rule.needs(item):
                    lake.grant("granted", need.permission, need.resource)
        return "granted"
    needs: list[Need] = rule.needs(request)
    if rule.kind == permissions.LISTING:
        # What the listing is to show: the case's table (grants, to holders of a grant option).
        needs = [*needs, Need("DESCRIBE", ("table", db, "t"))]
        if protocol == "lakeformation":
            lake.grant("granted", "SELECT", ("table", db, "t"), grantable=True)
    for need in needs:
        lake.grant("granted", need.permission, need.resource)
    return "granted"


def _call(lake: PermissionLake, protocol: str, op: str, user: str, request: Any) -> Any:
    if protocol == "hive":
        client = lake.hive(user)
        return getattr(client, op)(*request)
    model = lake.glue.meta.service_model if protocol == "glue" else lake.lf.meta.service_model
    if op not in model.operation_names:
        return _in_process(lake, protocol, op, user, request)
    service = extensions.SERVICE if op in extensions.OPERATIONS else protocol
    return getattr(lake.client(user, service), xform_name(op))(**request)


def _in_process(lake: PermissionLake, protocol: str, op: str, user: str, request: Any) -> Any:
    """Operations of the Python API that the endpoint does not serve (Arrow answers), decided and run
    as the endpoint runs a request."""

    decision = lake.authorizer.decide(user, protocol, op, request)
    if not decision.allowed:
        raise AccessDeniedException(decision.reason)
    implementation = lake.glue if protocol == "glue" else lake.lf
    with access.acting(decision.view):
        return getattr(implementation, xform_name(op))(**request)


def _refused(protocol: str, op: str, error: BaseException) -> bool:
    if protocol == "hive":
        if isinstance(error, ttypes.MetaException):
            return "Insufficient Lake Formation permission" in str(error.message)
        return isinstance(error, ttypes.NoSuchObjectException) and all(
            n.permission == "DESCRIBE" for n in RULES["hive"][op].needs(("x", "t"))
        )
    return isinstance(error, ClientError) and error.response["Error"]["Code"] == "AccessDeniedException"


def _state(lake: PermissionLake, db: str) -> tuple[int, int]:
    return lake.glue.warehouse_version(), lake.glue.table_version(db, "t")


@pytest.mark.parametrize(("protocol", "op"), MATRIX, ids=[f"{p}:{o}" for p, o in MATRIX])
def test_an_operation_needs_its_permission(lake: PermissionLake, protocol: str, op: str) -> None:
    rule = RULES[protocol][op]
    case = CASES[protocol][op]
    db = lake.name()
    lake.make_table(db)
    case.prepare(lake, db)
    request = case.request(lake, db)

    # Without the permission: refused (answered as the protocol refuses), and nothing changed.
    before = _state(lake, db)
    if rule.kind == permissions.OPEN:
        _call(lake, protocol, op, "denied", request)  # open to every caller: that is all there is to it
        return
    if case.shows is not None and not (rule.kind == permissions.LISTING and rule.needs(request)):
        assert not case.shows(_call(lake, protocol, op, "denied", request), db)
    elif rule.kind == permissions.EACH:
        out = _call(lake, protocol, op, "denied", request)
        errors = out.get("Errors") or out.get("Failures")
        assert [e.get("ErrorDetail", e.get("Error"))["ErrorCode"] for e in errors] == [
            "AccessDeniedException"
        ]
    else:
        with pytest.raises((ClientError, ttypes.MetaException, ttypes.NoSuchObjectException)) as e:
            _call(lake, protocol, op, "denied", request)
        assert _refused(protocol, op, e.value), e.value
    assert _state(lake, db) == before

    # With exactly what the rule names: served.
    caller = _grants_for(lake, rule, request, protocol, db)
    out = _call(lake, protocol, op, caller, request)
    if case.shows is not None:
        assert case.shows(out, db)
    if rule.kind == permissions.EACH:
        assert not (out.get("Errors") or out.get("Failures")), out


def test_a_caller_with_no_set_ugi_holds_the_groups_grants_alone(lake: PermissionLake) -> None:
    db = lake.name()
    lake.make_table(db)
    anonymous = lake.hive(None)
    assert db not in anonymous.get_all_databases()
    lake.grant("IAM_ALLOWED_PRINCIPALS", "DESCRIBE", ("table", db, "t"))
    assert db in anonymous.get_all_databases()
    assert anonymous.get_table(db, "t").tableName == "t"


def test_placing_a_table_in_a_registered_location_needs_data_location_access(lake: PermissionLake) -> None:
    db = lake.name()
    lake.glue.create_database(DatabaseInput={"Name": db})
    lake.lf.register_resource(ResourceArn=f"arn:aws:s3:::governed/{db}")
    lake.grant("granted", "CREATE_TABLE", ("database", db))
    glue = lake.client("granted")
    inside = _table_input("t", StorageDescriptor={"Location": f"s3://governed/{db}/t"})
    with pytest.raises(
        glue.exceptions.AccessDeniedException,
        match=f"DATA_LOCATION_ACCESS on data location s3://governed/{db}",
    ):
        glue.create_table(DatabaseName=db, TableInput=inside)
    glue.create_table(DatabaseName=db, TableInput=_table_input("elsewhere"))  # not registered: no need
    lake.lf.grant_permissions(
        Principal=principal("granted"),
        Resource={"DataLocation": {"ResourceArn": f"arn:aws:s3:::governed/{db}"}},
        Permissions=["DATA_LOCATION_ACCESS"],
    )
    glue.create_table(DatabaseName=db, TableInput=inside)
    assert glue.get_table(DatabaseName=db, Name="t")["Table"]["CreatedBy"] == arn("granted")


def test_a_rename_that_moves_partitions_into_a_registered_location_needs_data_location_access(
    lake: PermissionLake,
) -> None:
    """RenameTable's MovedFolder relocates the partitions inside the table's folder: where it moves them
    is placed data as much as the table's own location is."""
    db = lake.name()
    lake.make_table(db)
    lake.lf.register_resource(ResourceArn=f"arn:aws:s3:::governed/{db}")
    lake.grant("granted", "ALTER", ("table", db, "t"))
    lake.grant("granted", "CREATE_TABLE", ("database", db))
    renames = lake.client("granted", extensions.SERVICE)
    request = {
        "Table": _as_read(lake, db),
        "NewDatabaseName": db,
        "TableInput": _table_input("moved"),
        "MovedFolder": {"From": f"s3://lake/{db}/t", "To": f"s3://governed/{db}/moved"},
    }
    with pytest.raises(ClientError, match=f"DATA_LOCATION_ACCESS on data location s3://governed/{db}"):
        renames.rename_table(**request)
    assert lake.glue.get_table(DatabaseName=db, Name="t")["Table"]["Name"] == "t"  # nothing changed
    lake.lf.grant_permissions(
        Principal=principal("granted"),
        Resource={"DataLocation": {"ResourceArn": f"arn:aws:s3:::governed/{db}"}},
        Permissions=["DATA_LOCATION_ACCESS"],
    )
    renames.rename_table(**request)
    moved = lake.glue.get_partitions(DatabaseName=db, TableName="moved")["Partitions"]
    assert [p["StorageDescriptor"]["Location"] for p in moved] == [f"s3://governed/{db}/moved/dt=a"]


def _governed_folder(lake: PermissionLake, db: str) -> str:
    """A registered data location on this machine (Hive makes the folders of what it places)."""
    folder = f"file://{lake.root}/governed/{db}"
    lake.lf.register_resource(ResourceArn=folder)
    return folder


def _may_place(lake: PermissionLake, user: str, folder: str) -> None:
    lake.lf.grant_permissions(
        Principal=principal(user),
        Resource={"DataLocation": {"ResourceArn": folder}},
        Permissions=["DATA_LOCATION_ACCESS"],
    )


def test_a_hive_table_made_without_a_location_needs_data_location_access_where_it_is_put(
    lake: PermissionLake,
) -> None:
    """Hive's create_table with no location puts the table in its database's folder: a table placed
    there by the server needs DATA_LOCATION_ACCESS as one whose request names that folder does."""
    db = lake.name()
    folder = _governed_folder(lake, db)
    lake.glue.create_database(DatabaseInput={"Name": db, "LocationUri": f"{folder}/{db}.db"})
    lake.grant("granted", "CREATE_TABLE", ("database", db))
    hive = lake.hive("granted")
    table = _new_ttable(db)
    table.sd.location = None
    with pytest.raises(ttypes.MetaException, match=f"DATA_LOCATION_ACCESS on data location {folder}"):
        hive.create_table(table)
    assert lake.glue.get_tables(DatabaseName=db)["TableList"] == []  # nothing made
    _may_place(lake, "granted", folder)
    hive.create_table(table)
    made = lake.glue.get_table(DatabaseName=db, Name="t2")["Table"]
    assert made["StorageDescriptor"]["Location"] == f"{folder}/{db}.db/t2"


def test_a_hive_rename_that_moves_a_table_into_a_registered_location_needs_data_location_access(
    lake: PermissionLake,
) -> None:
    """Hive's rename of a table at its database's default folder moves the table's folder to the new
    name's: where the server moves it is placed data, as where RenameTable's MovedFolder names is."""
    db, there = lake.name(), lake.name()
    lake.glue.create_database(DatabaseInput={"Name": db, "LocationUri": f"file://{lake.root}/plain/{db}"})
    folder = _governed_folder(lake, there)
    lake.glue.create_database(DatabaseInput={"Name": there, "LocationUri": folder})
    lake.grant("granted", "CREATE_TABLE", ("database", db))
    hive = lake.hive("granted")
    table = _new_ttable(db)
    table.tableType, table.parameters, table.sd.location = "MANAGED_TABLE", {}, None
    hive.create_table(table)
    old = lake.glue.get_table(DatabaseName=db, Name="t2")["Table"]["StorageDescriptor"]["Location"]
    lake.grant("granted", "CREATE_TABLE", ("database", there))
    renamed = mapping.table(lake.glue.get_table(DatabaseName=db, Name="t2")["Table"])
    renamed.dbName = there  # the location is the old one, as Hive sends it
    with pytest.raises(ttypes.MetaException, match=f"DATA_LOCATION_ACCESS on data location {folder}"):
        hive.alter_table(db, "t2", renamed)
    assert lake.glue.get_table(DatabaseName=db, Name="t2")["Table"]["StorageDescriptor"]["Location"] == old
    _may_place(lake, "granted", folder)
    hive.alter_table(db, "t2", renamed)
    moved = lake.glue.get_table(DatabaseName=there, Name="t2")["Table"]["StorageDescriptor"]["Location"]
    assert moved == f"{folder}/t2"


def test_a_hive_database_made_without_a_location_needs_data_location_access_where_it_is_put(
    lake: PermissionLake, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Hive's create_database with no location puts the database in the warehouse's folder: that folder
    needs DATA_LOCATION_ACCESS where it is registered, as a LocationUri naming it does."""
    db = lake.name()
    folder = _governed_folder(lake, db)
    monkeypatch.setattr(lake.glue, "warehouse", folder)  # a warehouse inside a registered location
    lake.grant("granted", "CREATE_DATABASE", ("catalog",))
    hive = lake.hive("granted")
    try:
        with pytest.raises(ttypes.MetaException, match=f"DATA_LOCATION_ACCESS on data location {folder}"):
            hive.create_database(ttypes.Database(name=db, parameters={}))
        assert db not in [d["Name"] for d in lake.glue.get_databases()["DatabaseList"]]  # nothing made
        _may_place(lake, "granted", folder)
        hive.create_database(ttypes.Database(name=db, parameters={}))
        assert lake.glue.get_database(Name=db)["Database"]["LocationUri"] == f"{folder}/{db}.db"
    finally:
        lake.lf.revoke_permissions(
            Principal=principal("granted"), Resource={"Catalog": {}}, Permissions=["CREATE_DATABASE"]
        )


def test_a_databases_create_table_default_permissions_are_granted_only_by_who_may_grant_them(
    lake: PermissionLake,
) -> None:
    """A database's CreateTableDefaultPermissions grant their principals permissions on every table made
    in it from then on: naming a principal there is granting, and needs those permissions with grant
    option on the database's tables (or a data lake administrator), not only ALTER on the database.
    The defaults the database already has may be sent back unchanged (clients update a database with
    the document they read)."""
    db = lake.name()
    lake.glue.create_database(DatabaseInput={"Name": db})
    lake.grant("granted", "ALTER", ("database", db))
    glue = lake.client("granted")
    mine = [{"Principal": principal("granted"), "Permissions": ["ALL"]}]
    with pytest.raises(
        glue.exceptions.AccessDeniedException, match=f"ALL with grant option on every table of database {db}"
    ):
        glue.update_database(Name=db, DatabaseInput={"Name": db, "CreateTableDefaultPermissions": mine})
    lake.glue.create_table(DatabaseName=db, TableInput=_table_input("secret"))  # someone else's new table
    with pytest.raises(glue.exceptions.AccessDeniedException):
        glue.get_table(DatabaseName=db, Name="secret")
    with pytest.raises(glue.exceptions.AccessDeniedException, match="with grant option"):
        glue.update_database(
            Name=db,
            DatabaseInput={
                "Name": db,
                "CreateTableDefaultPermissions": [{"Principal": IAM, "Permissions": ["ALL"]}],
            },
        )  # every caller's, the caller's among them
    as_read = lake.glue.get_database(Name=db)["Database"]
    kept = {
        "Name": db,
        "Description": "d",
        "CreateTableDefaultPermissions": as_read["CreateTableDefaultPermissions"],
    }
    glue.update_database(Name=db, DatabaseInput=kept)  # unchanged defaults: ALTER is enough
    lake.grant("granted", "ALL", ("tables", db), grantable=True)
    glue.update_database(Name=db, DatabaseInput={"Name": db, "CreateTableDefaultPermissions": mine})
    assert lake.glue.get_database(Name=db)["Database"]["CreateTableDefaultPermissions"] == mine
    opened = lake.name()  # a database its owner left open: its defaults may be sent back as they are
    everyones = [{"Principal": IAM, "Permissions": ["ALL"]}]
    lake.glue.create_database(DatabaseInput={"Name": opened, "CreateTableDefaultPermissions": everyones})
    lake.grant("granted", "ALTER", ("database", opened))
    glue.update_database(
        Name=opened, DatabaseInput={"Name": opened, "CreateTableDefaultPermissions": everyones}
    )


def test_an_iceberg_table_is_placed_only_where_the_caller_may_place_data(lake: PermissionLake) -> None:
    """CreateTable's OpenTableFormatInput writes the table's first metadata file and puts the table at its
    CreateIcebergTableInput's Location, or, given none, in its database's folder: either place needs
    DATA_LOCATION_ACCESS where registered, as TableInput's own location does."""
    db = lake.name()
    folder = _governed_folder(lake, db)
    lake.glue.create_database(DatabaseInput={"Name": db, "LocationUri": f"{folder}/{db}.db"})
    lake.grant("granted", "CREATE_TABLE", ("database", db))
    glue = lake.client("granted")
    schema = {"Fields": [{"Id": 1, "Name": "id", "Type": "long", "Required": True}]}
    named = {
        "MetadataOperation": "CREATE",
        "CreateIcebergTableInput": {"Location": f"{folder}/named", "Schema": schema},
    }
    unnamed = {"MetadataOperation": "CREATE", "Version": "2"}
    columns = {"Columns": [{"Name": "id", "Type": "bigint"}]}
    for name, iceberg in (("named", named), ("unnamed", unnamed)):
        with pytest.raises(
            glue.exceptions.AccessDeniedException, match=f"DATA_LOCATION_ACCESS on data location {folder}"
        ):
            glue.create_table(
                DatabaseName=db,
                TableInput={"Name": name, "StorageDescriptor": columns},
                OpenTableFormatInput={"IcebergInput": iceberg},
            )
    assert lake.glue.get_tables(DatabaseName=db)["TableList"] == []  # nothing made
    assert not (lake.root / "governed" / db).exists() or not any(
        (lake.root / "governed" / db).rglob("*.json")
    )
    _may_place(lake, "granted", folder)
    for name, iceberg in (("named", named), ("unnamed", unnamed)):
        glue.create_table(
            DatabaseName=db,
            TableInput={"Name": name, "StorageDescriptor": columns},
            OpenTableFormatInput={"IcebergInput": iceberg},
        )
    tables = lake.glue.get_tables(DatabaseName=db)["TableList"]
    assert {t["Name"]: t["StorageDescriptor"]["Location"] for t in tables} == {
        "named": f"{folder}/named",
        "unnamed": f"{folder}/{db}.db/unnamed",
    }


def test_a_hive_drop_with_its_data_keeps_the_folders_of_tables_the_caller_may_not_see(
    lake: PermissionLake,
) -> None:
    """drop_table with deleteData deletes a managed table's folder unless another table uses it: every
    other table counts, not only those the caller may see, or a caller with DROP on one table could
    delete the data of a table hidden from it."""
    db = lake.name()
    folder = lake.root / "plain" / db
    lake.glue.create_database(DatabaseInput={"Name": db, "LocationUri": f"file://{folder}"})
    columns = [{"Name": "id", "Type": "int"}]
    lake.glue.create_table(
        DatabaseName=db,
        TableInput={
            "Name": "t",
            "TableType": "MANAGED_TABLE",
            "StorageDescriptor": {"Columns": columns, "Location": f"file://{folder}/t"},
        },
    )
    lake.glue.create_table(
        DatabaseName=db,
        TableInput={
            "Name": "secret",
            "TableType": "EXTERNAL_TABLE",
            "Parameters": {"EXTERNAL": "TRUE"},
            "StorageDescriptor": {"Columns": columns, "Location": f"file://{folder}/t/secret"},
        },
    )
    (folder / "t" / "secret").mkdir(parents=True)
    (folder / "t" / "secret" / "rows.csv").write_text("1\n")
    lake.grant("granted", "DROP", ("table", db, "t"))
    hive = lake.hive("granted")
    assert hive.get_all_tables(db) == ["t"]  # secret is hidden from the caller
    hive.drop_table(db, "t", True)
    assert (folder / "t" / "secret" / "rows.csv").read_text() == "1\n"  # the hidden table's data stays
    assert lake.glue.get_table(DatabaseName=db, Name="secret")["Table"]["Name"] == "secret"


def test_a_new_databases_create_table_default_permissions_are_weighed_against_the_settings_alone(
    lake: PermissionLake,
) -> None:
    """CreateDatabase may name the defaults the settings give a new database; naming others needs the
    right to grant them, whatever a database of that name the caller may not see already gives (which
    its answer must not tell)."""
    hidden = lake.name()
    mine = [{"Principal": principal("granted"), "Permissions": ["ALL"]}]
    lake.glue.create_database(DatabaseInput={"Name": hidden, "CreateTableDefaultPermissions": mine})
    lake.grant("granted", "CREATE_DATABASE", ("catalog",))
    glue = lake.client("granted")
    try:
        with pytest.raises(glue.exceptions.AccessDeniedException, match="with grant option"):
            glue.create_database(DatabaseInput={"Name": hidden, "CreateTableDefaultPermissions": mine})
        fresh = lake.name()
        with pytest.raises(glue.exceptions.AccessDeniedException, match="with grant option"):
            glue.create_database(DatabaseInput={"Name": fresh, "CreateTableDefaultPermissions": mine})
        settings = lake.lf.get_data_lake_settings()["DataLakeSettings"]["CreateTableDefaultPermissions"]
        glue.create_database(DatabaseInput={"Name": fresh, "CreateTableDefaultPermissions": settings})
        with pytest.raises(glue.exceptions.AlreadyExistsException):
            glue.create_database(DatabaseInput={"Name": hidden})  # a name taken is no secret
    finally:
        lake.lf.revoke_permissions(
            Principal=principal("granted"), Resource={"Catalog": {}}, Permissions=["CREATE_DATABASE"]
        )


def test_a_refused_delete_on_cancel_does_not_name_a_table_the_caller_may_not_see(
    lake: PermissionLake,
) -> None:
    """DeleteObjectsOnCancel refuses a file in the folder of another table inside the governed table's:
    the refusal names that table only to a caller who may see it."""
    db, other = lake.name(), lake.name()
    lake.glue.create_database(DatabaseInput={"Name": db})
    governed = {**_table_input("g"), "TableType": "GOVERNED"}
    governed["StorageDescriptor"] = {**governed["StorageDescriptor"], "Location": f"s3://lake/{db}/g"}
    lake.glue.create_table(DatabaseName=db, TableInput=governed)
    inner = _table_input("hidden", StorageDescriptor={"Location": f"s3://lake/{db}/g/inner"})
    lake.make_table(other)
    lake.glue.create_table(DatabaseName=other, TableInput=inner)
    lake.grant("granted", "INSERT", ("table", db, "g"))
    tx = lake.lf.start_transaction()["TransactionId"]
    lf = lake.client("granted", "lakeformation")
    request = {
        "DatabaseName": db,
        "TableName": "g",
        "TransactionId": tx,
        "Objects": [{"Uri": f"s3://lake/{db}/g/inner/f1"}],
    }
    with pytest.raises(lf.exceptions.InvalidInputException) as refused:
        lf.delete_objects_on_cancel(**request)
    assert "hidden" not in str(refused.value) and other not in str(refused.value)
    assert "another table" in str(refused.value)
    lake.grant("granted", "DESCRIBE", ("table", other, "hidden"))
    with pytest.raises(lf.exceptions.InvalidInputException, match=f"table {other}.hidden"):
        lf.delete_objects_on_cancel(**request)


def test_a_conflict_on_commit_does_not_name_a_table_the_committer_may_not_see(lake: PermissionLake) -> None:
    """Any caller may commit any transaction (ListTransactions shows them all): when the commit conflicts,
    the answer names the table only to a caller who may see it."""
    db = lake.name()
    lake.make_table(db, "hidden")
    tx = lake.lf.start_transaction()["TransactionId"]
    table = lake.glue.get_table(DatabaseName=db, Name="hidden")["Table"]
    update = {
        "Name": "hidden",
        "StorageDescriptor": table["StorageDescriptor"],
        "PartitionKeys": table["PartitionKeys"],
        "Description": "in tx",
    }
    lake.glue.update_table(DatabaseName=db, TableInput=update, TransactionId=tx)
    lake.glue.update_table(DatabaseName=db, TableInput={**update, "Description": "meanwhile"})
    lf = lake.client("granted", "lakeformation")
    with pytest.raises(lf.exceptions.ConcurrentModificationException) as refused:
        lf.commit_transaction(TransactionId=tx)
    assert "hidden" not in str(refused.value) and f"database {db}" not in str(refused.value)
    with pytest.raises(lf.exceptions.TransactionCanceledException) as canceled:
        lf.commit_transaction(TransactionId=tx)  # the reason it was canceled does not name it either
    assert "hidden" not in str(canceled.value) and f"database {db}" not in str(canceled.value)
    lake.grant("granted", "DESCRIBE", ("table", db, "hidden"))
    tx = lake.lf.start_transaction()["TransactionId"]
    lake.glue.update_table(DatabaseName=db, TableInput=update, TransactionId=tx)
    lake.glue.update_table(DatabaseName=db, TableInput={**update, "Description": "meanwhile again"})
    with pytest.raises(lf.exceptions.ConcurrentModificationException, match=f"Table hidden in database {db}"):
        lf.commit_transaction(TransactionId=tx)


def test_a_local_location_is_checked_where_it_leads_however_it_is_spelled(lake: PermissionLake) -> None:
    """A folder on this machine can be named as a plain path, as file:/..., as file:///..., or through
    '..': each spelling of a place inside a registered location needs DATA_LOCATION_ACCESS on it."""
    db = lake.name()
    real = lake.root.resolve()
    folder = f"file://{real}/governed/{db}"
    lake.lf.register_resource(ResourceArn=folder)
    lake.glue.create_database(DatabaseInput={"Name": db})
    lake.grant("granted", "CREATE_TABLE", ("database", db))
    glue = lake.client("granted")
    spellings = (
        f"{real}/governed/{db}/t",
        f"file:{real}/governed/{db}/t",
        f"file://{real}/other/../governed/{db}/t",
    )
    for i, spelled in enumerate(spellings):
        inside = _table_input(f"t{i}", StorageDescriptor={"Location": spelled})
        with pytest.raises(
            glue.exceptions.AccessDeniedException, match=f"DATA_LOCATION_ACCESS on data location {folder}"
        ):
            glue.create_table(DatabaseName=db, TableInput=inside)
    assert lake.glue.get_tables(DatabaseName=db)["TableList"] == []
    _may_place(lake, "granted", folder)
    glue.create_table(
        DatabaseName=db, TableInput=_table_input("t0", StorageDescriptor={"Location": spellings[0]})
    )
