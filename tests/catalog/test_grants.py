"""Lake Formation's permission model as the catalog keeps it (gluecat.catalog.grants), through
``gluecat.LakeFormation`` in process: the initial state and its defaults, granting and revoking (columns
included), what goes with a table or database, time travel, fsck, and one caller's view of it all
(gluecat.catalog.permission_index). Over the wire, with who may call what: tests/serving."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from botocore.exceptions import ClientError

from gluecat import Catalog, LakeFormation
from gluecat.catalog import access, grants
from gluecat.catalog.permission_index import View, index_of
from gluecat.store.fsck import check
from gluecat.store.snapshot import Changes

IAM = {"DataLakePrincipalIdentifier": "IAM_ALLOWED_PRINCIPALS"}
BOB_ARN = "arn:aws:iam::000000000000:user/bob"
BOB = {"DataLakePrincipalIdentifier": BOB_ARN}
ALICE_ARN = "arn:aws:iam::000000000000:user/alice"
COLUMNS = [
    {"Name": "id", "Type": "int"},
    {"Name": "ssn", "Type": "string"},
    {"Name": "amount", "Type": "double"},
]


def table(name: str) -> dict[str, Any]:
    return {"Name": name, "Resource": {"Table": {"DatabaseName": "sales", "Name": name}}}


def orders() -> dict[str, Any]:
    return {"Table": {"DatabaseName": "sales", "Name": "orders"}}


def columns(*names: str, excluded: bool = False) -> dict[str, Any]:
    body: dict[str, Any] = {"DatabaseName": "sales", "Name": "orders"}
    if excluded:
        body["ColumnWildcard"] = {"ExcludedColumnNames": list(names)}
    else:
        body["ColumnNames"] = list(names)
    return {"TableWithColumns": body}


@pytest.fixture
def lake(warehouse: str) -> tuple[Catalog, LakeFormation]:
    glue = Catalog(warehouse)
    glue.create_database(DatabaseInput={"Name": "sales"})
    glue.create_table(
        DatabaseName="sales",
        TableInput={
            "Name": "orders",
            "StorageDescriptor": {"Columns": COLUMNS, "Location": "s3://lake/sales/orders"},
            "PartitionKeys": [{"Name": "dt", "Type": "string"}],
        },
    )
    return glue, LakeFormation(glue)


def rows(lf: LakeFormation, **kwargs: Any) -> list[tuple[str, dict[str, Any], list[str], list[str]]]:
    return [
        (
            r["Principal"]["DataLakePrincipalIdentifier"],
            r["Resource"],
            r["Permissions"],
            r["PermissionsWithGrantOption"],
        )
        for r in lf.list_permissions(**kwargs)["PrincipalResourcePermissions"]
    ]


def view(glue: Catalog, principal: str | None) -> View:
    return View(index_of(glue.store.latest().root), principal)


def code(e: pytest.ExceptionInfo[ClientError]) -> str:
    return str(e.value.response["Error"]["Code"])


# -- the initial state -------------------------------------------------------------------------------


def test_a_new_warehouse_is_in_lake_formations_initial_state(lake: tuple[Catalog, LakeFormation]) -> None:
    glue, lf = lake
    settings = lf.get_data_lake_settings()["DataLakeSettings"]
    assert settings["DataLakeAdmins"] == []
    assert settings["CreateDatabaseDefaultPermissions"] == [{"Principal": IAM, "Permissions": ["ALL"]}]
    assert settings["CreateTableDefaultPermissions"] == [{"Principal": IAM, "Permissions": ["ALL"]}]
    # Glue's Database says what its new tables grant: the settings' default when it was made.
    assert glue.get_database(Name="sales")["Database"]["CreateTableDefaultPermissions"] == [
        {"Principal": IAM, "Permissions": ["ALL"]}
    ]
    everyone = view(glue, BOB_ARN)
    assert everyone.open and everyone.allows("DROP", ("table", "sales", "orders"))
    assert not everyone.admin and not everyone.grantable("SELECT", ("table", "sales", "orders"))


def test_the_first_settings_write_out_the_initial_grants_of_everything_made_before(
    lake: tuple[Catalog, LakeFormation],
) -> None:
    """A warehouse made before permissions existed has no grant records at all: its databases and
    tables are the group's until an administrator closes them, as Lake Formation treats the resources
    made before it was set up."""
    glue, lf = lake

    def forget_permissions(snap: Any) -> tuple[Changes, None]:
        changes = Changes()
        for key in snap.sorted_keys(grants.GRANT):
            changes.delete(grants.GRANT, key)
        changes.put(
            "database", ("sales",), {**snap.get("database", ("sales",)), "CreateTableDefaultPermissions": []}
        )
        return changes, None

    glue.store.commit("Legacy", forget_permissions)
    assert rows(lf) == []
    lf.put_data_lake_settings(
        DataLakeSettings={"DataLakeAdmins": [{"DataLakePrincipalIdentifier": ALICE_ARN}]}
    )
    assert sorted(rows(lf), key=str) == sorted(
        [
            ("IAM_ALLOWED_PRINCIPALS", {"Catalog": {"Id": "000000000000"}}, ["CREATE_DATABASE"], []),
            (
                "IAM_ALLOWED_PRINCIPALS",
                {"Database": {"CatalogId": "000000000000", "Name": "sales"}},
                ["ALL"],
                [],
            ),
            (
                "IAM_ALLOWED_PRINCIPALS",
                {"Table": {"CatalogId": "000000000000", "DatabaseName": "sales", "Name": "orders"}},
                ["ALL"],
                [],
            ),
        ],
        key=str,
    )
    assert glue.get_database(Name="sales")["Database"]["CreateTableDefaultPermissions"] == [
        {"Principal": IAM, "Permissions": ["ALL"]}
    ]
    # The settings replaced whole: lists not given are empty from now on.
    settings = lf.get_data_lake_settings()["DataLakeSettings"]
    assert (
        settings["CreateTableDefaultPermissions"] == [] and settings["CreateDatabaseDefaultPermissions"] == []
    )
    glue.create_table(DatabaseName="sales", TableInput={"Name": "later"})
    # ...but a database keeps the defaults it was made with: its new tables are the group's still.
    assert ("IAM_ALLOWED_PRINCIPALS", ["ALL"]) in [
        (p, perms) for p, r, perms, _ in rows(lf) if r.get("Table", {}).get("Name") == "later"
    ]
    glue.create_database(DatabaseInput={"Name": "closed"})
    assert glue.get_database(Name="closed")["Database"]["CreateTableDefaultPermissions"] == []
    assert not [r for r in rows(lf) if r[1].get("Database", {}).get("Name") == "closed"]


def test_serve_admin_names_the_first_administrators_only(lake: tuple[Catalog, LakeFormation]) -> None:
    glue, lf = lake
    assert grants.add_admins(glue._ctx, ["alice"]) == [ALICE_ARN]
    assert grants.add_admins(glue._ctx, ["bob"]) == [ALICE_ARN]  # settings exist: left as they are
    assert lf.get_data_lake_settings()["DataLakeSettings"]["DataLakeAdmins"] == [
        {"DataLakePrincipalIdentifier": ALICE_ARN}
    ]


# -- granting and revoking ---------------------------------------------------------------------------


def test_grants_merge_and_revokes_take_away_what_they_name(lake: tuple[Catalog, LakeFormation]) -> None:
    _, lf = lake
    lf.grant_permissions(
        Principal=BOB, Resource=orders(), Permissions=["SELECT"], PermissionsWithGrantOption=["SELECT"]
    )
    lf.grant_permissions(Principal=BOB, Resource=orders(), Permissions=["INSERT"])
    mine = rows(lf, Principal=BOB)
    assert [(perms, option) for _, _, perms, option in mine] == [(["INSERT", "SELECT"], ["SELECT"])]
    lf.revoke_permissions(
        Principal=BOB, Resource=orders(), Permissions=[], PermissionsWithGrantOption=["SELECT"]
    )
    assert [(perms, option) for _, _, perms, option in rows(lf, Principal=BOB)] == [
        (["INSERT", "SELECT"], [])
    ]
    lf.revoke_permissions(Principal=BOB, Resource=orders(), Permissions=["SELECT"])
    assert [perms for _, _, perms, _ in rows(lf, Principal=BOB)] == [["INSERT"]]
    with pytest.raises(lf.exceptions.InvalidInputException, match="No permissions revoked") as e:
        lf.revoke_permissions(Principal=BOB, Resource=orders(), Permissions=["DROP"])
    assert code(e) == "InvalidInputException"
    lf.revoke_permissions(Principal=BOB, Resource=orders(), Permissions=["INSERT"])
    assert rows(lf, Principal=BOB) == []


@pytest.mark.parametrize(
    ("request_", "error", "says"),
    [
        (
            {"Resource": orders(), "Permissions": ["CREATE_TABLE"]},
            "InvalidInputException",
            "Permissions: CREATE_TABLE is not",
        ),
        (
            {"Resource": {"Database": {"Name": "sales"}}, "Permissions": ["SELECT"]},
            "InvalidInputException",
            "SELECT is not a permission of a Database",
        ),
        ({"Resource": columns("id"), "Permissions": ["ALTER"]}, "InvalidInputException", "TableWithColumns"),
        (
            {"Resource": columns("nope"), "Permissions": ["SELECT"]},
            "InvalidInputException",
            "'nope' is not a column",
        ),
        (
            {"Resource": orders(), "Permissions": ["SELECT"], "PermissionsWithGrantOption": ["INSERT"]},
            "InvalidInputException",
            "INSERT is not among the Permissions",
        ),
        (
            {"Resource": {"Table": {"DatabaseName": "sales", "Name": "gone"}}, "Permissions": ["SELECT"]},
            "EntityNotFoundException",
            "Table gone not found",
        ),
        (
            {"Resource": {"LFTag": {"TagKey": "k", "TagValues": ["v"]}}, "Permissions": ["DESCRIBE"]},
            "InvalidInputException",
            "does not support LFTag",
        ),
        (
            {
                "Resource": {"Table": {"DatabaseName": "sales", "Name": "orders", "TableWildcard": {}}},
                "Permissions": ["SELECT"],
            },
            "InvalidInputException",
            "exactly one of Name and TableWildcard",
        ),
        (
            {
                "Resource": {"DataLocation": {"ResourceArn": "arn:aws:s3:::lake/x"}},
                "Permissions": ["DATA_LOCATION_ACCESS"],
            },
            "InvalidInputException",
            "not registered",
        ),
        ({"Resource": orders(), "Permissions": []}, "InvalidInputException", "at least one permission"),
    ],
)
def test_a_grant_that_cannot_be_is_refused_by_name_and_changes_nothing(
    lake: tuple[Catalog, LakeFormation], request_: dict[str, Any], error: str, says: str
) -> None:
    glue, lf = lake
    before = glue.warehouse_version()
    with pytest.raises(ClientError, match=says) as e:
        lf.grant_permissions(Principal=BOB, **request_)
    assert code(e) == error
    assert glue.warehouse_version() == before


@pytest.mark.parametrize(
    ("principal", "says"),
    [
        ("arn:aws:iam::123456789012:user/bob", "of account 123456789012"),
        ("arn:aws:iam::000000000000:role/etl", "is not a principal of gluecat"),
        ("bob", "is not a principal of gluecat"),
    ],
)
def test_principals_are_this_catalogs_users_or_the_group(
    lake: tuple[Catalog, LakeFormation], principal: str, says: str
) -> None:
    _, lf = lake
    with pytest.raises(lf.exceptions.InvalidInputException, match=says):
        lf.grant_permissions(
            Principal={"DataLakePrincipalIdentifier": principal}, Resource=orders(), Permissions=["SELECT"]
        )
    with pytest.raises(lf.exceptions.InvalidInputException, match="cannot be given the grant option"):
        lf.grant_permissions(
            Principal=IAM, Resource=orders(), Permissions=["SELECT"], PermissionsWithGrantOption=["SELECT"]
        )


def test_columns_are_granted_and_revoked_as_sets(lake: tuple[Catalog, LakeFormation]) -> None:
    glue, lf = lake
    lf.revoke_permissions(Principal=IAM, Resource=orders(), Permissions=["ALL"])
    lf.grant_permissions(Principal=BOB, Resource=columns("id", "ssn"), Permissions=["SELECT"])
    lf.grant_permissions(Principal=BOB, Resource=columns("amount"), Permissions=["SELECT"])
    lf.revoke_permissions(Principal=BOB, Resource=columns("ssn"), Permissions=["SELECT"])
    assert [r for _, r, _, _ in rows(lf, Principal=BOB)] == [
        {
            "TableWithColumns": {
                "CatalogId": "000000000000",
                "DatabaseName": "sales",
                "Name": "orders",
                "ColumnNames": ["amount", "id"],
            }
        }
    ]
    assert view(glue, BOB_ARN).visible_columns("sales", "orders") == grants.Columns.of(["amount", "id"])
    # SELECT on the table is every column; revoking one leaves every other, future ones too.
    lf.revoke_permissions(Principal=BOB, Resource=columns("amount", "id"), Permissions=["SELECT"])
    lf.grant_permissions(Principal=BOB, Resource=orders(), Permissions=["SELECT", "ALTER"])
    lf.revoke_permissions(Principal=BOB, Resource=columns("ssn"), Permissions=["SELECT"])
    assert sorted(rows(lf, Principal=BOB), key=str) == sorted(
        [
            (
                BOB_ARN,
                {"Table": {"CatalogId": "000000000000", "DatabaseName": "sales", "Name": "orders"}},
                ["ALTER"],
                [],
            ),
            (
                BOB_ARN,
                {
                    "TableWithColumns": {
                        "CatalogId": "000000000000",
                        "DatabaseName": "sales",
                        "Name": "orders",
                        "ColumnWildcard": {"ExcludedColumnNames": ["ssn"]},
                    }
                },
                ["SELECT"],
                [],
            ),
        ],
        key=str,
    )
    # A ColumnWildcard without exclusions is SELECT on the table.
    lf.grant_permissions(Principal=BOB, Resource=columns(excluded=True), Permissions=["SELECT"])
    assert (["ALTER", "SELECT"]) in [p for _, r, p, _ in rows(lf, Principal=BOB) if "Table" in r]


def test_a_column_caller_sees_its_columns_and_the_partition_keys_only(
    lake: tuple[Catalog, LakeFormation],
) -> None:
    glue, lf = lake
    glue.batch_create_partition(
        DatabaseName="sales",
        TableName="orders",
        PartitionInputList=[
            {
                "Values": ["2024"],
                "StorageDescriptor": {"Columns": COLUMNS, "Location": "s3://lake/sales/orders/2024"},
            }
        ],
    )
    lf.revoke_permissions(Principal=IAM, Resource=orders(), Permissions=["ALL"])
    lf.grant_permissions(Principal=BOB, Resource=columns("ssn", excluded=True), Permissions=["SELECT"])
    with access.acting(view(glue, BOB_ARN)):
        got = glue.get_table(DatabaseName="sales", Name="orders")["Table"]
        parts = glue.get_partitions(DatabaseName="sales", TableName="orders")["Partitions"]
        stats = glue.get_column_statistics_for_table(
            DatabaseName="sales", TableName="orders", ColumnNames=["ssn"]
        )
        found = glue.search_tables(SearchText="ssn")["TableList"]
    assert [c["Name"] for c in got["StorageDescriptor"]["Columns"]] == ["id", "amount"]
    assert [k["Name"] for k in got["PartitionKeys"]] == ["dt"]
    assert [c["Name"] for c in parts[0]["StorageDescriptor"]["Columns"]] == ["id", "amount"]
    # A column it may not see is answered as one the table does not have.
    assert stats["Errors"][0]["Error"]["ErrorMessage"] == "Column ssn is not a column of sales.orders"
    assert found == []  # a search matches only what it may see
    with access.acting(view(glue, "arn:aws:iam::000000000000:user/carol")):
        with pytest.raises(glue.exceptions.EntityNotFoundException, match="Table orders not found."):
            glue.get_table(DatabaseName="sales", Name="orders")
        assert [t["Name"] for t in glue.get_tables(DatabaseName="sales")["TableList"]] == []


# -- what goes with a resource -------------------------------------------------------------------------


def test_grants_go_with_a_dropped_table_and_follow_a_renamed_one(lake: tuple[Catalog, LakeFormation]) -> None:
    glue, lf = lake
    lf.grant_permissions(Principal=BOB, Resource=orders(), Permissions=["SELECT"])
    lf.grant_permissions(Principal=BOB, Resource=columns("id"), Permissions=["SELECT"])
    read = glue.get_table(DatabaseName="sales", Name="orders")["Table"]
    glue.rename_table(Table=read, NewDatabaseName="sales", TableInput={**_input(read), "Name": "orders2"})
    assert {r["Table"]["Name"] for _, r, _, _ in rows(lf, Principal=BOB) if "Table" in r} == {"orders2"}
    glue.delete_table(DatabaseName="sales", Name="orders2")
    assert rows(lf, Principal=BOB) == []
    glue.create_table(DatabaseName="sales", TableInput={"Name": "orders2"})
    assert rows(lf, Principal=BOB) == []  # a table made again under the name does not get them back


def _input(table: dict[str, Any]) -> dict[str, Any]:
    return {k: table[k] for k in ("Name", "StorageDescriptor", "PartitionKeys") if k in table}


def test_a_dropped_database_takes_every_grant_inside_it(lake: tuple[Catalog, LakeFormation]) -> None:
    glue, lf = lake
    lf.grant_permissions(Principal=BOB, Resource={"Database": {"Name": "sales"}}, Permissions=["ALTER"])
    lf.grant_permissions(
        Principal=BOB,
        Resource={"Table": {"DatabaseName": "sales", "TableWildcard": {}}},
        Permissions=["SELECT"],
    )
    lf.grant_permissions(Principal=BOB, Resource=columns("id"), Permissions=["SELECT"])
    glue.delete_database(Name="sales")
    assert [r for r in rows(lf) if "Catalog" not in r[1]] == []


def test_a_table_made_in_a_transaction_gets_its_grants_when_it_commits(
    lake: tuple[Catalog, LakeFormation],
) -> None:
    glue, lf = lake
    tx = lf.start_transaction()["TransactionId"]
    with access.acting(view(glue, BOB_ARN)):
        glue.create_table(DatabaseName="sales", TableInput={"Name": "staged"}, TransactionId=tx)
    assert not [r for _, r, _, _ in rows(lf) if r.get("Table", {}).get("Name") == "staged"]
    lf.commit_transaction(TransactionId=tx)
    assert {p for p, r, _, _ in rows(lf) if r.get("Table", {}).get("Name") == "staged"} == {
        BOB_ARN,
        "IAM_ALLOWED_PRINCIPALS",
    }


def test_a_creator_holds_all_on_what_it_makes_with_grant_option(lake: tuple[Catalog, LakeFormation]) -> None:
    glue, lf = lake
    with access.acting(view(glue, BOB_ARN)):
        glue.create_database(DatabaseInput={"Name": "bobs"})
        glue.create_table(DatabaseName="bobs", TableInput={"Name": "t"})
    assert ("ALL", "ALL") in [
        (p[0], o[0])
        for who, r, p, o in rows(lf)
        if who == BOB_ARN and r.get("Database", {}).get("Name") == "bobs"
    ]
    assert [(p, o) for who, r, p, o in rows(lf) if who == BOB_ARN and "Table" in r] == [(["ALL"], ["ALL"])]
    assert glue.get_table(DatabaseName="bobs", Name="t")["Table"]["CreatedBy"] == BOB_ARN


def test_grants_are_records_of_the_warehouse_time_travel_and_fsck(
    lake: tuple[Catalog, LakeFormation], warehouse: str
) -> None:
    glue, lf = lake
    lf.grant_permissions(Principal=BOB, Resource=orders(), Permissions=["SELECT"])
    granted_at = datetime.now(UTC)
    lf.revoke_permissions(Principal=BOB, Resource=orders(), Permissions=["SELECT"])
    then = View(index_of(glue.store.as_of(granted_at).root), BOB_ARN)
    assert then.table_visible("sales", "orders") and then.visible_columns("sales", "orders") is None
    assert not view(glue, BOB_ARN).index.holders.get(BOB_ARN)
    # Another process sees them, and fsck verifies them with every other record.
    assert rows(LakeFormation(Catalog(warehouse)), Principal=BOB) == []
    assert not check(warehouse).damaged


def test_a_batch_applies_the_entries_it_can_and_names_the_others(lake: tuple[Catalog, LakeFormation]) -> None:
    glue, lf = lake
    before = glue.warehouse_version()
    out = lf.batch_grant_permissions(
        Entries=[
            {"Id": "1", "Principal": BOB, "Resource": orders(), "Permissions": ["SELECT"]},
            {"Id": "2", "Principal": BOB, "Resource": orders(), "Permissions": ["CREATE_TABLE"]},
            {
                "Id": "3",
                "Principal": BOB,
                "Resource": {"Database": {"Name": "sales"}},
                "Permissions": ["DESCRIBE"],
            },
        ]
    )
    assert [(f["RequestEntry"]["Id"], f["Error"]["ErrorCode"]) for f in out["Failures"]] == [
        ("2", "InvalidInputException")
    ]
    assert glue.warehouse_version() == before + 1  # one commit
    assert len(rows(lf, Principal=BOB)) == 2
    out = lf.batch_revoke_permissions(
        Entries=[
            {"Id": "1", "Principal": BOB, "Resource": orders(), "Permissions": ["SELECT"]},
            {"Id": "2", "Principal": BOB, "Resource": orders(), "Permissions": ["SELECT"]},
        ]
    )
    assert [f["RequestEntry"]["Id"] for f in out["Failures"]] == ["2"]  # nothing left to revoke
    assert len(rows(lf, Principal=BOB)) == 1


def test_list_permissions_filters_and_pages(lake: tuple[Catalog, LakeFormation]) -> None:
    glue, lf = lake
    for i in range(5):
        glue.create_table(DatabaseName="sales", TableInput={"Name": f"t{i}"})
        lf.grant_permissions(
            Principal=BOB,
            Resource={"Table": {"DatabaseName": "sales", "Name": f"t{i}"}},
            Permissions=["SELECT"],
        )
    seen: list[Any] = []
    token: dict[str, Any] = {}
    while True:
        page = lf.list_permissions(Principal=BOB, ResourceType="TABLE", MaxResults=2, **token)
        seen += page["PrincipalResourcePermissions"]
        assert len(page["PrincipalResourcePermissions"]) <= 2
        if "NextToken" not in page:
            break
        token = {"NextToken": page["NextToken"]}
    assert [r["Resource"]["Table"]["Name"] for r in seen] == [f"t{i}" for i in range(5)]
    assert {p for p, *_ in rows(lf, Resource=orders())} == {"IAM_ALLOWED_PRINCIPALS"}
    assert {p for p, *_ in rows(lf, Resource={"Database": {"Name": "sales"}})} == {"IAM_ALLOWED_PRINCIPALS"}
    assert rows(lf, ResourceType="DATA_LOCATION") == []


def test_data_locations_are_registered_before_they_are_granted(lake: tuple[Catalog, LakeFormation]) -> None:
    glue, lf = lake
    lf.register_resource(ResourceArn="arn:aws:s3:::lake/sales", UseServiceLinkedRole=True)
    with pytest.raises(lf.exceptions.AlreadyExistsException):
        lf.register_resource(ResourceArn="arn:aws:s3:::lake/sales")
    assert [r["ResourceArn"] for r in lf.list_resources()["ResourceInfoList"]] == ["arn:aws:s3:::lake/sales"]
    lf.grant_permissions(
        Principal=BOB,
        Resource={"DataLocation": {"ResourceArn": "arn:aws:s3:::lake/sales/orders"}},
        Permissions=["DATA_LOCATION_ACCESS"],
    )
    bob = view(glue, BOB_ARN)
    assert bob.index.registered("s3://lake/sales/orders/x") == "s3://lake/sales"
    effective = lf.get_effective_permissions_for_path(ResourceArn="arn:aws:s3:::lake/sales/orders")[
        "Permissions"
    ]
    assert {
        (e["Principal"]["DataLakePrincipalIdentifier"], next(iter(e["Resource"]))) for e in effective
    } == {
        ("IAM_ALLOWED_PRINCIPALS", "Table"),
        (BOB_ARN, "DataLocation"),
    }
    lf.deregister_resource(ResourceArn="arn:aws:s3:::lake/sales")
    with pytest.raises(lf.exceptions.EntityNotFoundException):
        lf.describe_resource(ResourceArn="arn:aws:s3:::lake/sales")


# -- one caller's view ---------------------------------------------------------------------------------


def test_what_a_caller_may_do_by_its_grants_and_the_groups(lake: tuple[Catalog, LakeFormation]) -> None:
    glue, lf = lake
    glue.create_table(DatabaseName="sales", TableInput={"Name": "other"})
    lf.put_data_lake_settings(
        DataLakeSettings={"DataLakeAdmins": [{"DataLakePrincipalIdentifier": ALICE_ARN}]}
    )
    for name in ("orders", "other"):
        lf.revoke_permissions(
            Principal=IAM, Resource={"Table": {"DatabaseName": "sales", "Name": name}}, Permissions=["ALL"]
        )
    lf.revoke_permissions(Principal=IAM, Resource={"Database": {"Name": "sales"}}, Permissions=["ALL"])
    lf.grant_permissions(
        Principal=BOB, Resource=orders(), Permissions=["INSERT"], PermissionsWithGrantOption=["INSERT"]
    )
    alice, bob, carol = (
        view(glue, ALICE_ARN),
        view(glue, BOB_ARN),
        view(glue, "arn:aws:iam::000000000000:user/carol"),
    )
    # An administrator sees and grants everything, but does not drop what others made.
    assert alice.table_visible("sales", "other") and alice.grantable("DROP", ("table", "sales", "other"))
    assert not alice.allows("DROP", ("table", "sales", "other"))
    # A table grant lets its holder see the table and (implicitly) its database, and nothing else.
    assert bob.allows("DESCRIBE", ("database", "sales")) and bob.allows(
        "DESCRIBE", ("table", "sales", "orders")
    )
    assert not bob.table_visible("sales", "other") and not bob.allows("SELECT", ("table", "sales", "orders"))
    assert bob.grantable("INSERT", ("table", "sales", "orders")) and not bob.grantable(
        "SELECT", ("table", "sales", "orders")
    )
    assert not carol.database_visible("sales")
    # A grant on every table of a database holds for tables made later.
    lf.grant_permissions(
        Principal={"DataLakePrincipalIdentifier": "arn:aws:iam::000000000000:user/carol"},
        Resource={"Table": {"DatabaseName": "sales", "TableWildcard": {}}},
        Permissions=["SELECT"],
    )
    glue.create_table(DatabaseName="sales", TableInput={"Name": "later"})
    assert view(glue, "arn:aws:iam::000000000000:user/carol").allows("SELECT", ("table", "sales", "later"))
