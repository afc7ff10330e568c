"""Request validation (gluecat.api.shapes and gluecat.api.patterns), structure by structure.

Each table below is one documented limit per row, at its boundary: the last accepted value and the
first refused one. Lengths are UTF-8 bytes ("é" is 2 bytes, "😀" is 4). A refusal's message starts
with the full field path and says the rule. Accepted input comes back as a normalized deep copy.
"""

from __future__ import annotations

import contextlib
import copy
import unicodedata
from collections.abc import Callable
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gluecat.api import patterns, shapes, validate
from gluecat.errors import InvalidInputException

Check = Callable[[Any], Any]


def refusal(check: Check, raw: Any) -> str:
    """The message of the InvalidInputException that ``check(raw)`` raises; ``raw`` must stay unchanged."""
    before = copy.deepcopy(raw)
    with pytest.raises(InvalidInputException) as caught:
        check(raw)
    assert repr(raw) == repr(before), "a refused input was mutated"  # repr: nan != nan
    return caught.value.message


def assert_refused(check: Check, raw: Any, field: str, rule: str) -> None:
    message = refusal(check, raw)
    assert message.startswith(f"{field}: "), message
    assert rule in message, message


# -- strings and their patterns ------------------------------------------------------------------

SINGLE = {"pattern": "single_line"}
MULTI = {"pattern": "multi_line"}
CUSTOM11 = {"pattern": "custom11"}

# (value, check_string options); each is accepted and returned unchanged.
ACCEPTED_STRINGS = [
    ("n" * 255, {"max_bytes": 255}),
    ("é" * 127 + "x", {"max_bytes": 255}),  # 255 bytes in 128 characters
    ("😀", {"min_bytes": 4}),  # one character, four bytes
    ("", {}),
    ("tab\tseparated", SINGLE),
    ("\x7f and \x85", SINGLE),  # the pattern starts at U+0020: DEL and C1 controls are in it
    ("private \ue000 and last \ufffd", SINGLE),
    ("astral 😀 𝄞", SINGLE),  # surrogate pairs in the pattern are astral characters in Python
    ("line one\r\nline two\n", MULTI),
    ("tab\there", MULTI),
    ("tx-1.2:3_(ok)", CUSTOM11),
    ("Übung٣", CUSTOM11),  # any letter or digit, not only ASCII
]


@pytest.mark.parametrize(("value", "options"), ACCEPTED_STRINGS)
def test_strings_within_their_limits_are_accepted(value: str, options: dict[str, Any]) -> None:
    assert shapes.check_string(value, "F", **options) == value


# (value, check_string options, rule named in the error)
REFUSED_STRINGS = [
    ("n" * 256, {"max_bytes": 255}, "must be at most 255 bytes long (it is 256)"),
    ("é" * 128, {"max_bytes": 255}, "must be at most 255 bytes long (it is 256)"),
    ("😀", {"min_bytes": 5}, "must be at least 5 bytes long (it is 4)"),
    ("", {"min_bytes": 1}, "must be at least 1 byte long"),
    ("a\nb", SINGLE, "does not match the single-line string pattern"),
    ("a\rb", SINGLE, "does not match the single-line string pattern"),
    ("nul\x00", SINGLE, "does not match the single-line string pattern"),
    ("unit\x1f", SINGLE, "does not match the single-line string pattern"),
    ("\ufffe", SINGLE, "does not match the single-line string pattern"),
    ("\uffff", SINGLE, "does not match the single-line string pattern"),
    ("vertical\x0btab", MULTI, "does not match the URI address multi-line string pattern"),
    ("bell\x07", MULTI, "does not match the URI address multi-line string pattern"),
    ("has space", CUSTOM11, "does not match Custom string pattern #11"),
    ("a+b", CUSTOM11, "does not match Custom string pattern #11"),  # + is a math symbol
    ("a$b", CUSTOM11, "does not match Custom string pattern #11"),  # $ is a currency symbol
    ("lone \ud800", {}, "is not valid UTF-8 (it contains a lone surrogate)"),
    ("lone \udfff", SINGLE, "is not valid UTF-8"),
    (7, {}, "must be a string, not int"),
    (b"bytes", {}, "must be a string, not bytes"),
    (None, {"required": True}, "is required"),
]


@pytest.mark.parametrize(("value", "options", "rule"), REFUSED_STRINGS)
def test_strings_past_their_limits_are_refused(value: Any, options: dict[str, Any], rule: str) -> None:
    assert_refused(lambda v: shapes.check_string(v, "Some.Field", **options), value, "Some.Field", rule)


def test_custom11_takes_exactly_the_letters_numbers_and_punctuation_of_unicode_in_ascii_or_not() -> None:
    for text in [*(chr(c) for c in range(128)), "é", "٣", "¿", "€", "a€", "ok-1_2:/"]:
        expected = all(unicodedata.category(c)[0] in "LNP" for c in text)
        assert patterns.matches(text, "custom11") is expected, repr(text)


def test_an_absent_optional_string_is_none_and_a_str_subclass_comes_back_plain() -> None:
    class Name(str):
        pass

    assert shapes.check_string(None, "F") is None
    out = shapes.check_string(Name("x"), "F")
    assert type(out) is str and out == "x"


def test_names_are_checked_and_only_database_and_table_names_fold_to_lowercase() -> None:
    assert shapes.check_name("MiXed", "ColumnName") == "MiXed"
    assert shapes.check_db_or_table_name("MiXed", "DatabaseName") == "mixed"
    assert shapes.check_db_or_table_name("é" * 127 + "X", "Name") == "é" * 127 + "x"
    assert_refused(lambda v: shapes.check_name(v, "Name"), "", "Name", "must be at least 1 byte long")
    assert_refused(lambda v: shapes.check_name(v, "Name"), "é" * 128, "Name", "at most 255 bytes")
    assert_refused(lambda v: shapes.check_name(v, "Name"), "a\nb", "Name", "single-line string pattern")
    assert_refused(lambda v: shapes.check_name(v, "Name"), None, "Name", "is required")
    assert_refused(
        lambda v: shapes.check_db_or_table_name(v, "Db"), ["x"], "Db", "must be a string, not list"
    )


def get_table(**params: Any) -> dict[str, Any]:
    """GetTable's parameters, checked against the service model as every call's are."""
    return validate.request("glue", "GetTable", {"DatabaseName": "d", "Name": "t", **params})


def test_catalog_and_transaction_ids() -> None:
    assert "CatalogId" not in get_table(CatalogId=None)
    assert get_table(CatalogId="c" * 255)["CatalogId"] == "c" * 255
    assert_refused(lambda v: get_table(CatalogId=v), "c" * 256, "CatalogId", "at most 255 bytes")
    assert_refused(lambda v: get_table(CatalogId=v), "", "CatalogId", "at least 1 byte")
    assert shapes.check_transaction_id("tx-1.2:3") == "tx-1.2:3"
    assert shapes.check_transaction_id("t" * 255) == "t" * 255
    assert_refused(shapes.check_transaction_id, "t" * 256, "TransactionId", "at most 255 bytes")
    assert_refused(shapes.check_transaction_id, "a b", "TransactionId", "Custom string pattern #11")
    assert_refused(shapes.check_transaction_id, "", "TransactionId", "at least 1 byte")


# -- numbers, booleans, timestamps ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "rule"),
    [
        (True, "must be an integer, not bool"),  # bool is an int to Python, not to Glue
        (1.0, "must be an integer, not float"),
        ("1", "must be an integer, not str"),
        (-1, "must be at least 0 (it is -1)"),
        (11, "must be at most 10 (it is 11)"),
    ],
)
def test_integers(value: Any, rule: str) -> None:
    assert shapes.check_int(0, "N", min=0, max=10) == 0
    assert shapes.check_int(10, "N", min=0, max=10) == 10
    assert shapes.check_int(None, "N") is None
    assert_refused(lambda v: shapes.check_int(v, "N", min=0, max=10), value, "N", rule)


def test_max_results_bounds() -> None:
    def get_tables(max_results: Any) -> Any:
        return validate.request("glue", "GetTables", {"DatabaseName": "d", "MaxResults": max_results})

    assert get_tables(1)["MaxResults"] == 1
    assert get_tables(100)["MaxResults"] == 100
    assert "MaxResults" not in get_tables(None)
    assert_refused(get_tables, 0, "MaxResults", "at least 1")
    assert_refused(get_tables, 101, "MaxResults", "at most 100")


def test_booleans() -> None:
    assert shapes.check_bool(False, "B") is False
    assert shapes.check_bool(None, "B") is None
    assert_refused(lambda v: shapes.check_bool(v, "B"), 1, "B", "must be a boolean, not int")
    assert_refused(lambda v: shapes.check_bool(v, "B"), "true", "B", "must be a boolean, not str")


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (datetime(2024, 5, 1, 12, 30), datetime(2024, 5, 1, 12, 30, tzinfo=UTC)),  # naive is UTC
        (
            datetime(2024, 5, 1, 14, 30, tzinfo=timezone(timedelta(hours=2))),
            datetime(2024, 5, 1, 12, 30, tzinfo=UTC),
        ),
        (0, datetime(1970, 1, 1, tzinfo=UTC)),
        (1.5, datetime(1970, 1, 1, 0, 0, 1, 500_000, tzinfo=UTC)),
        ("2024-05-01T12:30:00Z", datetime(2024, 5, 1, 12, 30, tzinfo=UTC)),
    ],
)
def test_timestamps_come_back_as_aware_utc_datetimes(value: Any, expected: datetime) -> None:
    out = shapes.check_timestamp(value, "T")
    assert out == expected
    assert out is not None and out.tzinfo is UTC and type(out) is datetime


@pytest.mark.parametrize(
    ("value", "rule"),
    [
        (True, "must be a timestamp"),
        ([2024], "must be a timestamp"),
        (float("nan"), "is not a representable time"),
        (10**20, "is not a representable time"),
        ("yesterday", "is not an ISO-8601 time"),
    ],
)
def test_bad_timestamps(value: Any, rule: str) -> None:
    assert shapes.check_timestamp(None, "T") is None
    assert_refused(
        lambda v: shapes.check_timestamp(v, "TableInput.LastAccessTime"),
        value,
        "TableInput.LastAccessTime",
        rule,
    )


# -- maps and lists ------------------------------------------------------------------------------


def test_parameters_at_their_limits() -> None:
    raw = {"k" * 255: "v" * 512_000, "é" * 127 + "x": "", "tab\tkey": "multi\nline value"}
    out = shapes.check_parameters(raw, "TableInput.Parameters")
    assert out == raw and out is not raw


@pytest.mark.parametrize(
    ("raw", "field", "rule"),
    [
        ({"a\nb": "v"}, "TableInput.Parameters key 'a\\nb'", "does not match the single-line string pattern"),
        (
            {"k" * 256: "v"},
            "TableInput.Parameters key '" + "k" * 40 + "'",
            "at most 255 bytes",
        ),  # key cut short
        (
            {"é" * 128: "v"},
            "TableInput.Parameters key '" + "é" * 40 + "'",
            "must be at most 255 bytes long (it is 256)",
        ),
        ({"": "v"}, "TableInput.Parameters key ''", "must be at least 1 byte long"),
        ({1: "v"}, "TableInput.Parameters key 1", "must be a string, not int"),
        ({"k": "v" * 512_001}, "TableInput.Parameters['k']", "must be at most 512000 bytes long"),
        ({"k": 1}, "TableInput.Parameters['k']", "must be a string, not int"),
        ({"k": None}, "TableInput.Parameters['k']", "must be a string, not NoneType"),
        ([("k", "v")], "TableInput.Parameters", "must be a map of strings (dict), not list"),
    ],
)
def test_refused_parameters(raw: Any, field: str, rule: str) -> None:
    assert_refused(lambda v: shapes.check_parameters(v, "TableInput.Parameters"), raw, field, rule)


def test_string_lists() -> None:
    def check(v: Any) -> list[str] | None:
        return shapes.check_string_list(
            v, "L", min_items=1, max_items=2, item_min_bytes=1, item_max_bytes=3, item_pattern="single_line"
        )

    assert check(("a", "bcd")) == ["a", "bcd"]  # a tuple is a list to boto3 too
    assert check(None) is None
    assert_refused(check, [], "L", "must have at least 1 item")
    assert_refused(check, ["a", "b", "c"], "L", "has 3 items; at most 2 are allowed")
    assert_refused(check, "abc", "L", "must be a list, not str")
    assert_refused(check, ["a", "abcd"], "L[1]", "at most 3 bytes")
    assert_refused(check, ["", "a"], "L[0]", "at least 1 byte")
    assert_refused(check, ["a\n"], "L[0]", "single-line")
    assert_refused(check, ["a", None], "L[1]", "must be a string, not NoneType")


def test_unknown_keyword_arguments_are_named() -> None:
    message = refusal(lambda kw: validate.request("glue", "GetTable", kw), {"Nmae": "t"})
    assert message.startswith("GetTable: unknown parameter 'Nmae'")
    assert "CatalogId, DatabaseName" in message


# -- TableInput and what it holds ----------------------------------------------------------------


def table(**overrides: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "Name": "Orders",
        "Description": "orders\nby day",
        "Owner": "etl",
        "Retention": 0,
        "TableType": "EXTERNAL_TABLE",
        "LastAccessTime": datetime(2024, 1, 2, 3, 4, 5),
        "StorageDescriptor": {
            "Columns": [
                {"Name": "id", "Type": "bigint", "Comment": "key"},
                {"Name": "Amount", "Type": "decimal(10,2)", "Parameters": {"k": "v"}},
                {"Name": "note", "Type": "string"},
            ],
            "Location": "s3://bucket/orders/",
            "InputFormat": "org.apache.hadoop.mapred.TextInputFormat",
            "OutputFormat": "org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat",
            "Compressed": False,
            "NumberOfBuckets": -1,
            "SerdeInfo": {"SerializationLibrary": "org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe"},
            "BucketColumns": ["id"],
            "SortColumns": [{"Column": "id", "SortOrder": 1}],
            "SkewedInfo": {"SkewedColumnNames": ["note"], "SkewedColumnValueLocationMaps": {"x": "s3://b/x"}},
            "StoredAsSubDirectories": False,
        },
        "PartitionKeys": [{"Name": "dt", "Type": "string"}],
        "Parameters": {"classification": "csv"},
        "TargetTable": {"CatalogId": "123", "DatabaseName": "Other", "Name": "T", "Region": "eu-west-1"},
    }
    base.update(overrides)
    return base


def sd(**overrides: Any) -> dict[str, Any]:
    return table(StorageDescriptor={**table()["StorageDescriptor"], **overrides})


def test_a_valid_table_input_comes_back_normalized_and_independent_of_the_input() -> None:
    raw = table()
    before = copy.deepcopy(raw)
    out = shapes.check_table_input(raw)
    assert out["Name"] == "orders"
    assert out["LastAccessTime"] == datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC)
    assert out["StorageDescriptor"]["Columns"][1]["Name"] == "Amount"  # column names keep their case
    assert out["TargetTable"]["Name"] == "T"
    assert {k: v for k, v in out.items() if k not in ("Name", "LastAccessTime")} == {
        k: v for k, v in before.items() if k not in ("Name", "LastAccessTime")
    }
    out["StorageDescriptor"]["Columns"][0]["Parameters"] = {"changed": "yes"}
    out["StorageDescriptor"]["SkewedInfo"]["SkewedColumnValueLocationMaps"]["x"] = "changed"
    out["PartitionKeys"].append({"Name": "extra"})
    assert raw == before


def test_members_given_as_none_are_left_out() -> None:
    assert shapes.check_table_input({"Name": "t", "Owner": None, "StorageDescriptor": None}) == {"Name": "t"}


@pytest.mark.parametrize(
    "raw",
    [
        table(Name="n" * 255),
        table(Name="é" * 127 + "x"),
        table(Description="d" * 2048),
        table(Description="é" * 1024),
        table(Owner="o" * 255),
        table(Retention=2**31 - 1),
        table(TableType="t" * 255),
        table(ViewOriginalText="v" * 409_600, ViewExpandedText="line\none\x00"),  # no pattern on views
        table(PartitionKeys=[]),
        # Primitive types, and a key without a type, are partition keys; complex types are columns.
        table(
            PartitionKeys=[
                {"Name": "dt", "Type": "date"},
                {"Name": "price", "Type": "decimal(10,2)"},
                {"Name": "mapped", "Type": "varchar(10)"},
                {"Name": "raw"},
            ]
        ),
        sd(Columns=[{"Name": "tags", "Type": "array<string>"}, {"Name": "kv", "Type": "map<string,int>"}]),
        sd(Location="l" * 2056),
        sd(Location="s3://b/with\nnewline"),
        sd(InputFormat="i" * 128),
        sd(Columns=[{"Name": "c" * 255, "Type": "t" * 131_072, "Comment": "c" * 255}]),
        sd(Columns=[], SchemaReference={"SchemaVersionId": "0123abcd-0000-1111-2222-333344445555"}),
        sd(
            SchemaReference={
                "SchemaId": {"SchemaName": "s", "RegistryName": "r"},
                "SchemaVersionNumber": 100_000,
            }
        ),
        sd(SortColumns=[{"Column": "id", "SortOrder": 0}]),
        sd(AdditionalLocations=["s3://b/delta/"]),
    ],
)
def test_table_inputs_at_their_limits_are_accepted(raw: dict[str, Any]) -> None:
    shapes.check_table_input(raw)


SDF = "TableInput.StorageDescriptor"
REFUSED_TABLE_INPUTS = [
    (table(Name=""), "TableInput.Name", "must be at least 1 byte long"),
    (table(Name="é" * 128), "TableInput.Name", "must be at most 255 bytes long"),
    (table(Name="a\nb"), "TableInput.Name", "single-line string pattern"),
    (table(Name=None), "TableInput.Name", "is required"),
    (table(Description="d" * 2049), "TableInput.Description", "at most 2048 bytes"),
    (table(Description="bell\x07"), "TableInput.Description", "URI address multi-line string pattern"),
    (table(Owner=""), "TableInput.Owner", "at least 1 byte"),
    (table(Owner="o" * 256), "TableInput.Owner", "at most 255 bytes"),
    (table(Retention=-1), "TableInput.Retention", "must be at least 0"),
    (table(Retention=2**31), "TableInput.Retention", "must be at most 2147483647"),
    (table(Retention="7"), "TableInput.Retention", "must be an integer, not str"),
    (table(TableType="t" * 256), "TableInput.TableType", "at most 255 bytes"),
    (table(ViewOriginalText="v" * 409_601), "TableInput.ViewOriginalText", "at most 409600 bytes"),
    (table(ViewExpandedText="é" * 204_801), "TableInput.ViewExpandedText", "at most 409600 bytes"),
    (table(LastAnalyzedTime="soon"), "TableInput.LastAnalyzedTime", "is not an ISO-8601 time"),
    (table(Parameters={"a\nb": "v"}), "TableInput.Parameters key 'a\\nb'", "does not match the single-line"),
    (table(TargetTable={"Region": ""}), "TableInput.TargetTable.Region", "at least 1 byte"),
    (table(TargetTable={"Table": "t"}), "TableInput.TargetTable", "unknown field 'Table'"),
    (table(Foo=1), "TableInput", "unknown field 'Foo'"),
    (table(ViewDefinition={}), "TableInput.ViewDefinition", "not supported"),
    (table(PartitionKeys={"Name": "dt"}), "TableInput.PartitionKeys", "must be a list, not dict"),
    (table(PartitionKeys=[{"Name": "dt"}, {"Name": "DT"}]), "TableInput.PartitionKeys[1].Name", "'DT' repeats PartitionKeys[0]"),
    (table(PartitionKeys=[{"Name": "Note"}]), "TableInput.PartitionKeys[0].Name", "'Note' is also StorageDescriptor.Columns[2] ('note')"),
    (table(PartitionKeys=[{"Type": "string"}]), "TableInput.PartitionKeys[0].Name", "is required"),
    (table(PartitionKeys=[{"Name": "dt"}, {"Name": "tags", "Type": "array<string>"}]), "TableInput.PartitionKeys[1].Type", "'array<string>' is not a primitive type"),
    (table(PartitionKeys=[{"Name": "m", "Type": "MAP < string,int>"}]), "TableInput.PartitionKeys[0].Type", "only primitive types are supported as partition keys"),
    (table(PartitionKeys=[{"Name": "s", "Type": "struct<a:int>"}]), "TableInput.PartitionKeys[0].Type", "not a primitive type"),
    (table(PartitionKeys=[{"Name": "u", "Type": "uniontype<int,string>"}]), "TableInput.PartitionKeys[0].Type", "not a primitive type"),
    (table(StorageDescriptor=[]), SDF, "must be a structure (dict), not list"),
    (sd(Columns=[{"Name": "a"}, {"Name": "b"}, {"Name": ""}]), f"{SDF}.Columns[2].Name", "must be at least 1 byte long"),
    (sd(Columns=[{"Name": "c", "Type": "t" * 131_073}]), f"{SDF}.Columns[0].Type", "at most 131072 bytes"),
    (sd(Columns=[{"Name": "c", "Comment": "c" * 256}]), f"{SDF}.Columns[0].Comment", "at most 255 bytes"),
    (sd(Columns=[{"Name": "c", "Comment": "two\nlines"}]), f"{SDF}.Columns[0].Comment", "single-line"),
    (sd(Columns=[{"Name": "c", "Parameters": {"": "v"}}]), f"{SDF}.Columns[0].Parameters key ''", "must be at least 1 byte"),
    (sd(Columns=[{"Name": "c", "Nmae": "d"}]), f"{SDF}.Columns[0]", "unknown field 'Nmae'"),
    (sd(Columns=["id"]), f"{SDF}.Columns[0]", "must be a structure (dict), not str"),
    (sd(Location="l" * 2057), f"{SDF}.Location", "at most 2056 bytes"),
    (sd(Location="s3://b/\x00"), f"{SDF}.Location", "URI address multi-line string pattern"),
    (sd(AdditionalLocations=["l" * 2057]), f"{SDF}.AdditionalLocations[0]", "at most 2056 bytes"),
    (sd(InputFormat="i" * 129), f"{SDF}.InputFormat", "at most 128 bytes"),
    (sd(OutputFormat="o\n"), f"{SDF}.OutputFormat", "single-line"),
    (sd(Compressed="yes"), f"{SDF}.Compressed", "must be a boolean"),
    (sd(StoredAsSubDirectories=0), f"{SDF}.StoredAsSubDirectories", "must be a boolean"),
    (sd(NumberOfBuckets="4"), f"{SDF}.NumberOfBuckets", "must be an integer"),
    (sd(NumberOfBuckets=2**31), f"{SDF}.NumberOfBuckets", "at most 2147483647"),
    (sd(SerdeInfo={"SerializationLibrary": "s" * 256}), f"{SDF}.SerdeInfo.SerializationLibrary", "at most 255 bytes"),
    (sd(SerdeInfo={"Name": ""}), f"{SDF}.SerdeInfo.Name", "at least 1 byte"),
    (sd(SerdeInfo={"Parameters": {"k": 1}}), f"{SDF}.SerdeInfo.Parameters['k']", "must be a string"),
    (sd(BucketColumns=[""]), f"{SDF}.BucketColumns[0]", "at least 1 byte"),
    (sd(SortColumns=[{"Column": "id", "SortOrder": 2}]), f"{SDF}.SortColumns[0].SortOrder", "at most 1"),
    (sd(SortColumns=[{"Column": "id", "SortOrder": -1}]), f"{SDF}.SortColumns[0].SortOrder", "at least 0"),
    (sd(SortColumns=[{"SortOrder": 1}]), f"{SDF}.SortColumns[0].Column", "is required"),
    (sd(SortColumns=[{"Column": "id"}]), f"{SDF}.SortColumns[0].SortOrder", "is required"),
    (sd(SkewedInfo={"SkewedColumnNames": [""]}), f"{SDF}.SkewedInfo.SkewedColumnNames[0]", "at least 1 byte"),
    (sd(SkewedInfo={"SkewedColumnValueLocationMaps": {"x": 1}}), f"{SDF}.SkewedInfo.SkewedColumnValueLocationMaps['x']", "must be a string"),
    (sd(SkewedInfo={"Skew": []}), f"{SDF}.SkewedInfo", "unknown field 'Skew'"),
    (sd(SchemaReference={}), f"{SDF}.SchemaReference", "needs SchemaId or SchemaVersionId"),
    (sd(SchemaReference={"SchemaId": {}}), f"{SDF}.SchemaReference.SchemaId", "needs SchemaArn or SchemaName"),
    (sd(SchemaReference={"SchemaVersionId": "x" * 36}), f"{SDF}.SchemaReference.SchemaVersionId", "Custom string pattern #12"),
    (sd(SchemaReference={"SchemaVersionId": "0" * 37}), f"{SDF}.SchemaReference.SchemaVersionId", "at most 36 bytes"),
    (sd(SchemaReference={"SchemaId": {"SchemaName": "s"}, "SchemaVersionNumber": 0}), f"{SDF}.SchemaReference.SchemaVersionNumber", "at least 1"),
    (sd(Bucketed=True), SDF, "unknown field 'Bucketed'"),
]  # fmt: skip


@pytest.mark.parametrize(("raw", "field", "rule"), REFUSED_TABLE_INPUTS)
def test_refused_table_inputs_name_the_field_path_and_the_rule(raw: Any, field: str, rule: str) -> None:
    assert_refused(shapes.check_table_input, raw, field, rule)


def test_a_table_input_must_be_a_dict() -> None:
    assert_refused(shapes.check_table_input, "orders", "TableInput", "must be a structure (dict), not str")
    assert_refused(lambda v: shapes.check_table_input(v, "Tables[3]"), {}, "Tables[3].Name", "is required")


# -- DatabaseInput --------------------------------------------------------------------------------


def database(**overrides: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "Name": "Sales",
        "Description": "all\nsales",
        "LocationUri": "s3://bucket/sales/",
        "Parameters": {"owner": "team"},
        "CreateTableDefaultPermissions": [
            {
                "Principal": {"DataLakePrincipalIdentifier": "IAM_ALLOWED_PRINCIPALS"},
                "Permissions": ["ALL", "SELECT"],
            }
        ],
        "TargetDatabase": {"CatalogId": "123", "DatabaseName": "Shared", "Region": "us-east-1"},
        "FederatedDatabase": {"Identifier": "i" * 512, "ConnectionName": "c" * 255},
    }
    base.update(overrides)
    return base


def test_a_valid_database_input_comes_back_normalized_and_independent_of_the_input() -> None:
    raw = database()
    before = copy.deepcopy(raw)
    out = shapes.check_database_input(raw)
    assert out == {**before, "Name": "sales"}
    out["CreateTableDefaultPermissions"][0]["Permissions"].append("DROP")
    out["CreateTableDefaultPermissions"][0]["Principal"]["DataLakePrincipalIdentifier"] = "x"
    assert raw == before


DBF = "DatabaseInput"
REFUSED_DATABASE_INPUTS = [
    (database(Name="é" * 128), f"{DBF}.Name", "at most 255 bytes"),
    (database(Name=None), f"{DBF}.Name", "is required"),
    (database(Description="d" * 2049), f"{DBF}.Description", "at most 2048 bytes"),
    (database(LocationUri=""), f"{DBF}.LocationUri", "at least 1 byte"),
    (database(LocationUri="l" * 1025), f"{DBF}.LocationUri", "at most 1024 bytes"),
    (database(LocationUri="s3://\x01"), f"{DBF}.LocationUri", "URI address multi-line string pattern"),
    (database(Parameters={"k": "v" * 512_001}), f"{DBF}.Parameters['k']", "at most 512000 bytes"),
    (database(CreateTableDefaultPermissions=[{"Permissions": ["READ"]}]), f"{DBF}.CreateTableDefaultPermissions[0].Permissions[0]", "'READ' is not one of ALL, SELECT"),
    (database(CreateTableDefaultPermissions=[{"Permissions": ["all"]}]), f"{DBF}.CreateTableDefaultPermissions[0].Permissions[0]", "'all' is not one of"),
    (database(CreateTableDefaultPermissions=[{"Permissions": [["ALL"]]}]), f"{DBF}.CreateTableDefaultPermissions[0].Permissions[0]", "must be a string, not list"),
    (database(CreateTableDefaultPermissions=[{"Principal": {"DataLakePrincipalIdentifier": "p" * 256}}]), f"{DBF}.CreateTableDefaultPermissions[0].Principal.DataLakePrincipalIdentifier", "at most 255 bytes"),
    (database(CreateTableDefaultPermissions=[{"Principal": {"Arn": "x"}}]), f"{DBF}.CreateTableDefaultPermissions[0].Principal", "unknown field 'Arn'"),
    (database(CreateTableDefaultPermissions={"Permissions": ["ALL"]}), f"{DBF}.CreateTableDefaultPermissions", "must be a list"),
    (database(TargetDatabase={"Region": ""}), f"{DBF}.TargetDatabase.Region", "at least 1 byte"),
    (database(TargetDatabase={"DatabaseName": "d" * 256}), f"{DBF}.TargetDatabase.DatabaseName", "at most 255 bytes"),
    (database(FederatedDatabase={"Identifier": "i" * 513}), f"{DBF}.FederatedDatabase.Identifier", "at most 512 bytes"),
    (database(FederatedDatabase={"ConnectionName": "c" * 256}), f"{DBF}.FederatedDatabase.ConnectionName", "at most 255 bytes"),
    (database(CreateTime=0), DBF, "unknown field 'CreateTime'"),
]  # fmt: skip


@pytest.mark.parametrize(("raw", "field", "rule"), REFUSED_DATABASE_INPUTS)
def test_refused_database_inputs(raw: Any, field: str, rule: str) -> None:
    assert_refused(shapes.check_database_input, raw, field, rule)


# -- the Partition API ----------------------------------------------------------------------------


def test_a_valid_partition_input_comes_back_normalized() -> None:
    raw = {
        "Values": ["2024-01-01", "é" * 512, "any\ntext\x01"],  # values have a length limit, no pattern
        "LastAccessTime": 0,
        "LastAnalyzedTime": datetime(2024, 1, 1, 1, tzinfo=timezone(timedelta(hours=1))),
        "StorageDescriptor": {
            "Columns": [{"Name": "id", "Type": "bigint"}],
            "Location": "s3://b/dt=2024-01-01/",
        },
        "Parameters": {"numRows": "10"},
    }
    before = copy.deepcopy(raw)
    out = shapes.check_partition_input(raw)
    assert out["Values"] == before["Values"]
    assert out["LastAccessTime"] == datetime(1970, 1, 1, tzinfo=UTC)
    assert out["LastAnalyzedTime"] == datetime(2024, 1, 1, tzinfo=UTC)
    out["Values"].append("x")
    out["StorageDescriptor"]["Columns"][0]["Name"] = "changed"
    assert raw == before


PIF = "PartitionInput"
REFUSED_PARTITION_INPUTS = [
    ({"StorageDescriptor": {}}, f"{PIF}.Values", "is required"),
    ({"Values": "2024"}, f"{PIF}.Values", "must be a list, not str"),
    ({"Values": [2024]}, f"{PIF}.Values[0]", "must be a string, not int"),
    ({"Values": ["a", "v" * 1025]}, f"{PIF}.Values[1]", "at most 1024 bytes"),
    ({"Values": ["é" * 513]}, f"{PIF}.Values[0]", "at most 1024 bytes long (it is 1026)"),
    ({"Values": ["a"], "LastAccessTime": "now"}, f"{PIF}.LastAccessTime", "is not an ISO-8601 time"),
    ({"Values": ["a"], "Parameters": {"": "x"}}, f"{PIF}.Parameters key ''", "must be at least 1 byte"),
    ({"Values": ["a"], "StorageDescriptor": {"Columns": [{"Name": ""}]}}, f"{PIF}.StorageDescriptor.Columns[0].Name", "at least 1 byte"),
    ({"Values": ["a"], "CreationTime": 0}, PIF, "unknown field 'CreationTime'"),
]  # fmt: skip


@pytest.mark.parametrize(("raw", "field", "rule"), REFUSED_PARTITION_INPUTS)
def test_refused_partition_inputs(raw: Any, field: str, rule: str) -> None:
    assert_refused(shapes.check_partition_input, raw, field, rule)


def test_a_batch_checks_what_its_partitions_share_once_and_still_names_the_first_bad_one() -> None:
    shared_columns = [{"Name": "id", "Type": "bigint"}]
    serde = {"SerializationLibrary": "org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe"}
    batch = [
        {
            "Values": [str(i)],
            "StorageDescriptor": {"Columns": shared_columns, "SerdeInfo": serde, "Location": f"/t/{i}"},
        }
        for i in range(3)
    ]
    checked: shapes.Checked = {}
    out = [shapes.check_partition_input(p, f"Add[{i}]", checked) for i, p in enumerate(batch)]
    assert out == [shapes.check_partition_input(p, f"Add[{i}]") for i, p in enumerate(batch)]
    assert [o["StorageDescriptor"]["Location"] for o in out] == ["/t/0", "/t/1", "/t/2"]
    assert out[0]["StorageDescriptor"]["Columns"] is not shared_columns  # still a checked copy

    # A shared member that is bad is refused where it first appears; one that differs is checked anew.
    bad_shared = [{"Name": ""}]
    checked = {}
    first = {"Values": ["a"], "StorageDescriptor": {"Columns": bad_shared}}
    with pytest.raises(InvalidInputException, match=r"Add\[0\]\.StorageDescriptor\.Columns\[0\]\.Name"):
        shapes.check_partition_input(first, "Add[0]", checked)
    checked = {}
    shapes.check_partition_input(batch[0], "Add[0]", checked)
    other = {"Values": ["b"], "StorageDescriptor": {"Columns": [{"Name": "x" * 256}], "SerdeInfo": serde}}
    with pytest.raises(InvalidInputException, match=r"Add\[1\]\.StorageDescriptor\.Columns\[0\]\.Name"):
        shapes.check_partition_input(other, "Add[1]", checked)

    # A descriptor sharing every member with one checked before still has its own location checked,
    # and one with a member more is checked whole.
    same_but_location = {**batch[0]["StorageDescriptor"], "Location": "x" * 2057}
    with pytest.raises(InvalidInputException, match=r"Add\[2\]\.StorageDescriptor\.Location"):
        shapes.check_partition_input(
            {"Values": ["c"], "StorageDescriptor": same_but_location}, "Add[2]", checked
        )
    one_more = {**batch[0]["StorageDescriptor"], "Owner": "me"}
    with pytest.raises(InvalidInputException, match=r"Add\[3\]\.StorageDescriptor: unknown field 'Owner'"):
        shapes.check_partition_input({"Values": ["d"], "StorageDescriptor": one_more}, "Add[3]", checked)
    no_location = {k: v for k, v in batch[0]["StorageDescriptor"].items() if k != "Location"}
    no_location["Location"] = None
    got = shapes.check_partition_input({"Values": ["e"], "StorageDescriptor": no_location}, "Add[4]", checked)
    assert "Location" not in got["StorageDescriptor"] and got["StorageDescriptor"]["SerdeInfo"] == serde


_SHARED_SD = {
    "Columns": [{"Name": "id", "Type": "bigint"}],
    "SerdeInfo": {"Parameters": {"a": "b"}},
    "NumberOfBuckets": 1,
}
_ODD_SD = {"Columns": [{"Name": "", "Type": "int"}]}  # invalid: refused wherever it appears


@st.composite
def partition_batches(draw: st.DrawFn) -> list[Any]:
    """Batches that are mostly uniform (what the batch check takes in one pass), with odd items mixed in."""
    text = st.one_of(st.text(max_size=6), st.text(alphabet="ab/=\t\né", max_size=4), st.just("v" * 1025))
    location = st.one_of(text.map(lambda t: "s3://b/" + t), st.just("x" * 2057), st.none(), st.integers())
    item = st.fixed_dictionaries(
        {
            "Values": st.one_of(st.lists(text, max_size=3), st.lists(st.integers(), max_size=1), st.none()),
            "StorageDescriptor": st.builds(
                lambda members, loc: {**members, "Location": loc} if loc != "absent" else dict(members),
                st.sampled_from([_SHARED_SD, _ODD_SD, {**_SHARED_SD, "Owner": "me"}, {}]),
                st.one_of(location, st.just("absent")),
            ),
        },
        optional={"Parameters": st.just({"k": "v"})},
    )
    if draw(st.booleans()):
        return draw(st.lists(st.one_of(item, st.just("not a dict")), min_size=1, max_size=5))
    # Uniform but for values and locations, one of which may still break a rule anywhere in the batch.
    members = draw(st.sampled_from([_SHARED_SD, _SHARED_SD, _ODD_SD, {}]))
    # Over the wire, each partition holds equal copies (a JSON decoder shares nothing).
    wire = draw(st.booleans())
    nice = st.text(alphabet="ab12-/=", max_size=6)
    batch = [
        {
            "Values": values,
            "StorageDescriptor": {
                **(copy.deepcopy(members) if wire else members),
                "Location": "s3://b/" + loc,
            },
        }
        for values, loc in draw(st.lists(st.tuples(st.lists(nice, max_size=3), nice), min_size=1, max_size=8))
    ]
    # Members of each partition's own, before or after its descriptor, one of which may be invalid.
    own = st.sampled_from([{"n": "1"}, {"n": "2"}, {"": "x"}, {"n": 2}, None])
    if draw(st.booleans()):
        for item in batch:
            parameters = draw(own)
            if draw(st.booleans()):
                item["Parameters"] = parameters
            else:
                members = dict(item)
                item.clear()
                item.update({"Parameters": parameters, **members})
    if draw(st.booleans()):
        at = draw(st.integers(0, len(batch) - 1))
        change = draw(st.sampled_from(["values", "location", "look-alike"]))
        if change == "values":
            batch[at]["Values"] = draw(st.lists(text, min_size=1, max_size=2))
        elif change == "location":
            batch[at]["StorageDescriptor"]["Location"] = draw(location)
        else:
            # Equal by == to the others' members, but of other types, which a check may refuse.
            sd = batch[at]["StorageDescriptor"]
            batch[at]["StorageDescriptor"] = {**sd, **draw(st.sampled_from(_LOOK_ALIKES))(sd)}
    return batch


def _buckets(value: Any) -> Callable[[dict[str, Any]], dict[str, Any]]:
    return lambda sd: {"NumberOfBuckets": value}


_LOOK_ALIKES: list[Callable[[dict[str, Any]], dict[str, Any]]] = [
    lambda sd: {"Columns": tuple(sd.get("Columns") or ())},
    lambda sd: {"Columns": [{**c, "Type": Text(c["Type"])} for c in sd.get("Columns") or ()]},
    lambda sd: {"SerdeInfo": {**sd.get("SerdeInfo", {}), "Parameters": {"a": True}}},
    lambda sd: {"SerdeInfo": {**sd.get("SerdeInfo", {}), "Parameters": {"a": Text("b")}}},
    _buckets(True),
    _buckets(1.0),
    _buckets(1),
]


class Text(str):
    """A str subclass: the checks take it and hand back a plain str."""


@settings(max_examples=400, deadline=None)
@given(partition_batches())
def test_a_batch_is_checked_as_its_partitions_one_by_one_would_be(batch: list[Any]) -> None:
    def one_by_one() -> list[dict[str, Any]]:
        checked: shapes.Checked = {}
        return [shapes.check_partition_input(p, f"Add[{i}]", checked) for i, p in enumerate(batch)]

    try:
        expected = one_by_one()
    except InvalidInputException as e:
        assert refusal(lambda b: shapes.check_partition_inputs(b, "Add"), batch) == e.message
        return
    assert shapes.check_partition_inputs(batch, "Add") == expected


def test_partition_value_lists() -> None:
    raw = {"Values": ["2024", "v" * 1024]}
    out = shapes.check_partition_value_list(raw, "PartitionsToDelete[0]")
    assert out == ["2024", "v" * 1024] and out is not raw["Values"]

    def check(v: Any) -> list[str]:
        return shapes.check_partition_value_list(v, "PartitionsToDelete[0]")

    assert_refused(check, ["2024"], "PartitionsToDelete[0]", "must be a structure (dict), not list")
    assert_refused(check, {}, "PartitionsToDelete[0].Values", "is required")
    assert_refused(check, {"Values": ["v" * 1025]}, "PartitionsToDelete[0].Values[0]", "at most 1024 bytes")


def test_partition_indexes() -> None:
    raw = {"IndexName": "By_Day", "Keys": ["dt", "hour"]}
    assert shapes.check_partition_index(raw) == {"IndexName": "By_Day", "Keys": ["dt", "hour"]}
    assert shapes.check_partition_index({"IndexName": "i" * 255, "Keys": ["k" * 255]})["Keys"] == ["k" * 255]
    cases = [
        (
            {"IndexName": "i", "Keys": ["dt", "DT"]},
            "PartitionIndex.Keys[1]",
            "'DT' appears twice (also Keys[0])",
        ),
        ({"IndexName": "i", "Keys": []}, "PartitionIndex.Keys", "must have at least 1 item"),
        ({"IndexName": "i", "Keys": [""]}, "PartitionIndex.Keys[0]", "at least 1 byte"),
        ({"IndexName": "i"}, "PartitionIndex.Keys", "is required"),
        ({"IndexName": "i" * 256, "Keys": ["dt"]}, "PartitionIndex.IndexName", "at most 255 bytes"),
        ({"IndexName": "a\nb", "Keys": ["dt"]}, "PartitionIndex.IndexName", "single-line"),
        (
            {"IndexName": "i", "Keys": ["dt"], "IndexStatus": "ACTIVE"},
            "PartitionIndex",
            "unknown field 'IndexStatus'",
        ),
    ]
    for bad, field, rule in cases:
        assert_refused(shapes.check_partition_index, bad, field, rule)


@pytest.mark.parametrize(
    ("raw", "field", "rule"),
    [
        ({"SegmentNumber": 0, "TotalSegments": 11}, "Segment.TotalSegments", "at most 10"),
        ({"SegmentNumber": 0, "TotalSegments": 0}, "Segment.TotalSegments", "at least 1"),
        (
            {"SegmentNumber": 3, "TotalSegments": 3},
            "Segment.SegmentNumber",
            "3 must be less than TotalSegments (3)",
        ),
        ({"SegmentNumber": -1, "TotalSegments": 3}, "Segment.SegmentNumber", "at least 0"),
        ({"TotalSegments": 3}, "Segment.SegmentNumber", "is required"),
        ({"SegmentNumber": 0}, "Segment.TotalSegments", "is required"),
        (
            {"SegmentNumber": False, "TotalSegments": 2},
            "Segment.SegmentNumber",
            "must be an integer, not bool",
        ),
    ],
)
def test_segments(raw: Any, field: str, rule: str) -> None:
    assert shapes.check_segment({"SegmentNumber": 9, "TotalSegments": 10}) == {
        "SegmentNumber": 9,
        "TotalSegments": 10,
    }
    assert_refused(shapes.check_segment, raw, field, rule)


def test_expressions_follow_each_document() -> None:
    # GetPartitions: a predicate string matching the URI address multi-line pattern.
    assert shapes.check_expression("dt = '2024'\nAND hour = 1") == "dt = '2024'\nAND hour = 1"
    assert shapes.check_expression("x" * 2048) == "x" * 2048
    assert shapes.check_expression(None) is None
    assert_refused(shapes.check_expression, "x" * 2049, "Expression", "at most 2048 bytes")
    assert_refused(shapes.check_expression, "a\x00", "Expression", "URI address multi-line")
    # GetTables: a single-line regular expression.
    assert_refused(
        lambda v: shapes.check_expression(v, pattern="single_line"), "a\nb", "Expression", "single-line"
    )


# -- SearchTables ---------------------------------------------------------------------------------


def test_sort_criteria() -> None:
    raw = [{"FieldName": "Name", "Sort": "DESC"}]
    assert shapes.check_sort_criteria(raw) == raw
    assert shapes.check_sort_criteria([{"FieldName": "f" * 1024, "Sort": "ASC"}]) is not None
    cases = [
        ([{"FieldName": "Name"}, {"FieldName": "Owner"}], "SortCriteria", "has 2 items; at most 1"),
        ([{"FieldName": "Name", "Sort": "UP"}], "SortCriteria[0].Sort", "'UP' is not one of ASC or DESC"),
        ([{"FieldName": "Name", "Sort": "ASCENDING"}], "SortCriteria[0].Sort", "is not one of ASC or DESC"),
        ([{"FieldName": "f" * 1025}], "SortCriteria[0].FieldName", "at most 1024 bytes"),
        ([{"Field": "Name"}], "SortCriteria[0]", "unknown field 'Field'"),
    ]
    for bad, field, rule in cases:
        assert_refused(shapes.check_sort_criteria, bad, field, rule)


def test_property_predicates() -> None:
    raw = [
        {"Key": "Name", "Value": "v" * 1024},
        {"Key": "UpdateTime", "Value": "1", "Comparator": "GREATER_THAN"},
    ]
    assert shapes.check_property_predicates(raw) == raw
    cases = [
        ([{"Key": "k" * 1025}], "Filters[0].Key", "at most 1024 bytes"),
        ([{"Key": "Name", "Value": "é" * 513}], "Filters[0].Value", "at most 1024 bytes"),
        ([{"Key": "Name", "Comparator": "LIKE"}], "Filters[0].Comparator", "'LIKE' is not one of EQUALS"),
        ([{"Key": "Name", "Comparator": ["EQUALS"]}], "Filters[0].Comparator", "must be a string, not list"),
        ({"Key": "Name"}, "Filters", "must be a list, not dict"),
    ]
    for bad, field, rule in cases:
        assert_refused(shapes.check_property_predicates, bad, field, rule)


# -- column statistics ----------------------------------------------------------------------------


def stats(kind: str, member: str, data: Any, **overrides: Any) -> dict[str, Any]:
    return {
        "ColumnName": "c",
        "ColumnType": "bigint",
        "AnalyzedTime": datetime(2024, 1, 1, tzinfo=UTC),
        "StatisticsData": {"Type": kind, member: data},
        **overrides,
    }


def decimal(unscaled: int, scale: int) -> dict[str, Any]:
    return {"UnscaledValue": unscaled.to_bytes(8, "big", signed=True), "Scale": scale}


COUNTS = {"NumberOfNulls": 0, "NumberOfDistinctValues": 3}
VALID_STATISTICS = [
    ("BOOLEAN", "BooleanColumnStatisticsData", {"NumberOfTrues": 5, "NumberOfFalses": 0, "NumberOfNulls": 1}),
    ("DATE", "DateColumnStatisticsData", {"MinimumValue": datetime(2024, 1, 1, tzinfo=UTC), "MaximumValue": datetime(2024, 2, 1, tzinfo=UTC), **COUNTS}),
    ("DECIMAL", "DecimalColumnStatisticsData", {"MinimumValue": decimal(-150, 2), "MaximumValue": decimal(99, 2), **COUNTS}),
    ("DECIMAL", "DecimalColumnStatisticsData", {"MinimumValue": {"UnscaledValue": (-(10**38) + 1).to_bytes(17, "big", signed=True), "Scale": 38}, "MaximumValue": {"UnscaledValue": (10**38 - 1).to_bytes(16, "big", signed=True), "Scale": 0}, **COUNTS}),
    ("DOUBLE", "DoubleColumnStatisticsData", {"MinimumValue": -1.5, "MaximumValue": 2.0, **COUNTS}),
    ("LONG", "LongColumnStatisticsData", {"MinimumValue": -(2**63), "MaximumValue": 2**63 - 1, **COUNTS}),
    ("LONG", "LongColumnStatisticsData", COUNTS),  # minimum and maximum are optional
    ("STRING", "StringColumnStatisticsData", {"MaximumLength": 10, "AverageLength": 4.5, **COUNTS}),
    ("BINARY", "BinaryColumnStatisticsData", {"MaximumLength": 0, "AverageLength": 0.0, "NumberOfNulls": 0}),
]  # fmt: skip


@pytest.mark.parametrize(("kind", "member", "data"), VALID_STATISTICS)
def test_valid_column_statistics_come_back_as_a_copy(kind: str, member: str, data: dict[str, Any]) -> None:
    raw = stats(kind, member, data)
    before = copy.deepcopy(raw)
    out = shapes.check_column_statistics(raw, "ColumnStatisticsList[0]")
    assert out == before
    out["StatisticsData"][member]["NumberOfNulls"] = 99
    assert raw == before


def test_column_statistics_normalize_times_and_numbers() -> None:
    raw = stats("DOUBLE", "DoubleColumnStatisticsData", {"MinimumValue": 1, "MaximumValue": 2, **COUNTS})
    out = shapes.check_column_statistics({**raw, "AnalyzedTime": datetime(2024, 1, 1)}, "S")
    assert out["AnalyzedTime"] == datetime(2024, 1, 1, tzinfo=UTC)
    assert type(out["StatisticsData"]["DoubleColumnStatisticsData"]["MinimumValue"]) is float
    decimal_data = {"MinimumValue": {"UnscaledValue": bytearray(b"\x01"), "Scale": 0}, **COUNTS}
    out = shapes.check_column_statistics(stats("DECIMAL", "DecimalColumnStatisticsData", decimal_data), "S")
    assert out["StatisticsData"]["DecimalColumnStatisticsData"]["MinimumValue"]["UnscaledValue"] == b"\x01"


SF = "ColumnStatisticsList[0]"
LONG_DATA = "LongColumnStatisticsData"
REFUSED_STATISTICS = [
    (stats("LONG", "DoubleColumnStatisticsData", COUNTS), f"{SF}.StatisticsData", "Type LONG needs exactly the member LongColumnStatisticsData, but has DoubleColumnStatisticsData"),
    ({**stats("LONG", LONG_DATA, COUNTS), "StatisticsData": {"Type": "LONG"}}, f"{SF}.StatisticsData", "but has none"),
    ({**stats("LONG", LONG_DATA, COUNTS), "StatisticsData": {"Type": "LONG", LONG_DATA: COUNTS, "StringColumnStatisticsData": {}}}, f"{SF}.StatisticsData", "but has LongColumnStatisticsData, StringColumnStatisticsData"),
    (stats("TEXT", LONG_DATA, COUNTS), f"{SF}.StatisticsData.Type", "'TEXT' is not one of BOOLEAN"),
    (stats("long", LONG_DATA, COUNTS), f"{SF}.StatisticsData.Type", "'long' is not one of"),
    (stats("LONG", LONG_DATA, {"MinimumValue": 9, "MaximumValue": 1, **COUNTS}), f"{SF}.StatisticsData.{LONG_DATA}.MinimumValue", "is greater than MaximumValue"),
    (stats("LONG", LONG_DATA, {"MinimumValue": 2**63, **COUNTS}), f"{SF}.StatisticsData.{LONG_DATA}.MinimumValue", "at most 9223372036854775807"),
    (stats("LONG", LONG_DATA, {"MinimumValue": 1.5, **COUNTS}), f"{SF}.StatisticsData.{LONG_DATA}.MinimumValue", "must be an integer, not float"),
    (stats("LONG", LONG_DATA, {"NumberOfNulls": -1, "NumberOfDistinctValues": 1}), f"{SF}.StatisticsData.{LONG_DATA}.NumberOfNulls", "at least 0"),
    (stats("LONG", LONG_DATA, {"NumberOfNulls": 0}), f"{SF}.StatisticsData.{LONG_DATA}.NumberOfDistinctValues", "is required"),
    (stats("LONG", LONG_DATA, {"Minimum": 1, **COUNTS}), f"{SF}.StatisticsData.{LONG_DATA}", "unknown field 'Minimum'"),
    (stats("LONG", LONG_DATA, [1, 2]), f"{SF}.StatisticsData.{LONG_DATA}", "must be a structure (dict), not list"),
    (stats("DOUBLE", "DoubleColumnStatisticsData", {"MinimumValue": 2.5, "MaximumValue": 2.25, **COUNTS}), f"{SF}.StatisticsData.DoubleColumnStatisticsData.MinimumValue", "is greater than MaximumValue"),
    (stats("DOUBLE", "DoubleColumnStatisticsData", {"MaximumValue": float("inf"), **COUNTS}), f"{SF}.StatisticsData.DoubleColumnStatisticsData.MaximumValue", "must be a finite number"),
    (stats("DATE", "DateColumnStatisticsData", {"MinimumValue": datetime(2024, 2, 1), "MaximumValue": datetime(2024, 1, 1), **COUNTS}), f"{SF}.StatisticsData.DateColumnStatisticsData.MinimumValue", "is greater than MaximumValue"),
    # 1.00 > 0.999: compared exactly, across scales
    (stats("DECIMAL", "DecimalColumnStatisticsData", {"MinimumValue": decimal(100, 2), "MaximumValue": decimal(999, 3), **COUNTS}), f"{SF}.StatisticsData.DecimalColumnStatisticsData.MinimumValue", "is greater than MaximumValue"),
    (stats("DECIMAL", "DecimalColumnStatisticsData", {"MinimumValue": {"UnscaledValue": 1, "Scale": 0}, **COUNTS}), f"{SF}.StatisticsData.DecimalColumnStatisticsData.MinimumValue.UnscaledValue", "must be bytes"),
    (stats("DECIMAL", "DecimalColumnStatisticsData", {"MinimumValue": {"UnscaledValue": b"\x01"}, **COUNTS}), f"{SF}.StatisticsData.DecimalColumnStatisticsData.MinimumValue.Scale", "is required"),
    # No decimal holds more than 38 digits, or a scale outside 0..38: a Scale of 2**31 - 1, or thousands of
    # digits, cost gigabytes or failed with ValueError wherever the bound was written out as a number.
    (stats("DECIMAL", "DecimalColumnStatisticsData", {"MinimumValue": {"UnscaledValue": b"\x01", "Scale": 2**31 - 1}, **COUNTS}), f"{SF}.StatisticsData.DecimalColumnStatisticsData.MinimumValue.Scale", "must be between 0 and 38"),
    (stats("DECIMAL", "DecimalColumnStatisticsData", {"MaximumValue": {"UnscaledValue": b"\x01", "Scale": -1}, **COUNTS}), f"{SF}.StatisticsData.DecimalColumnStatisticsData.MaximumValue.Scale", "must be between 0 and 38"),
    (stats("DECIMAL", "DecimalColumnStatisticsData", {"MinimumValue": {"UnscaledValue": b"\x01" * 2000, "Scale": 0}, "MaximumValue": {"UnscaledValue": b"\x01" * 2001, "Scale": 0}, **COUNTS}), f"{SF}.StatisticsData.DecimalColumnStatisticsData.MinimumValue.UnscaledValue", "more than 38 digits"),
    (stats("DECIMAL", "DecimalColumnStatisticsData", {"MinimumValue": {"UnscaledValue": (-(10**38)).to_bytes(17, "big", signed=True), "Scale": 0}, **COUNTS}), f"{SF}.StatisticsData.DecimalColumnStatisticsData.MinimumValue.UnscaledValue", "more than 38 digits"),
    (stats("DECIMAL", "DecimalColumnStatisticsData", {"MinimumValue": {"UnscaledValue": b"", "Scale": 0}, **COUNTS}), f"{SF}.StatisticsData.DecimalColumnStatisticsData.MinimumValue.UnscaledValue", "at least one byte"),
    (stats("BOOLEAN", "BooleanColumnStatisticsData", {"NumberOfTrues": 1, "NumberOfFalses": 1}), f"{SF}.StatisticsData.BooleanColumnStatisticsData.NumberOfNulls", "is required"),
    (stats("STRING", "StringColumnStatisticsData", {"MaximumLength": 1, "AverageLength": -0.5, **COUNTS}), f"{SF}.StatisticsData.StringColumnStatisticsData.AverageLength", "at least 0"),
    (stats("BINARY", "BinaryColumnStatisticsData", {"MaximumLength": 1, "AverageLength": 1.0, **COUNTS}), f"{SF}.StatisticsData.BinaryColumnStatisticsData", "unknown field 'NumberOfDistinctValues'"),
    (stats("LONG", LONG_DATA, COUNTS, ColumnType="t" * 20_001), f"{SF}.ColumnType", "at most 20000 bytes"),
    (stats("LONG", LONG_DATA, COUNTS, ColumnType="a\nb"), f"{SF}.ColumnType", "single-line"),
    (stats("LONG", LONG_DATA, COUNTS, ColumnName=""), f"{SF}.ColumnName", "at least 1 byte"),
    (stats("LONG", LONG_DATA, COUNTS, AnalyzedTime=None), f"{SF}.AnalyzedTime", "is required"),
]  # fmt: skip


@pytest.mark.parametrize(("raw", "field", "rule"), REFUSED_STATISTICS)
def test_refused_column_statistics(raw: Any, field: str, rule: str) -> None:
    assert_refused(lambda v: shapes.check_column_statistics(v, SF), raw, field, rule)


def test_column_type_at_its_limit_is_accepted() -> None:
    raw = stats("LONG", LONG_DATA, COUNTS, ColumnType="t" * 20_000)
    assert shapes.check_column_statistics(raw, SF)["ColumnType"] == "t" * 20_000


# -- anything at all: a result or InvalidInputException, never another exception ------------------

_MEMBERS = sorted(
    {"Name", "Values", "StorageDescriptor", "Columns", "Type", "Parameters", "SortColumns", "SortOrder"}
    | {"SchemaReference", "SchemaId", "StatisticsData", LONG_DATA, "DecimalColumnStatisticsData"}
    | {"MinimumValue", "MaximumValue", "UnscaledValue", "Scale", "NumberOfNulls", "PartitionKeys", "Keys"}
    | {"IndexName", "SegmentNumber", "TotalSegments", "Sort", "Comparator", "Key", "Permissions"}
)
_LEAVES = (
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats()
    | st.text(max_size=4)
    | st.binary(max_size=3)
    | st.datetimes()
    | st.sampled_from(["LONG", "DECIMAL", "ASC", "ALL", "EQUALS"])
)
_ANYTHING = st.recursive(
    _LEAVES,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.sampled_from(_MEMBERS) | st.text(max_size=3), inner, max_size=4)
    ),
    max_leaves=10,
)
_STRUCTURE_CHECKS: list[Check] = [
    shapes.check_table_input,
    shapes.check_database_input,
    shapes.check_partition_input,
    shapes.check_partition_index,
    shapes.check_segment,
    shapes.check_sort_criteria,
    shapes.check_property_predicates,
    lambda v: shapes.check_column_statistics(v, "S"),
    lambda v: shapes.check_partition_value_list(v, "P"),
    lambda v: shapes.check_storage_descriptor(v, "SD"),
]


@settings(max_examples=50, derandomize=True, database=None, deadline=None)
@given(st.sampled_from(_STRUCTURE_CHECKS), _ANYTHING)
def test_any_input_is_either_accepted_or_refused_as_invalid_input(check: Check, raw: Any) -> None:
    before = repr(raw)
    with contextlib.suppress(InvalidInputException):
        check(raw)
    assert repr(raw) == before


def test_a_batch_decoded_from_the_wire_is_checked_as_one_template() -> None:
    """A JSON decoder gives each partition equal copies of the same descriptor: they are checked once, and
    the checked partitions share the checked members (which lets the store encode them once too)."""
    batch = [
        {"Values": [f"v{i}"], "StorageDescriptor": {**copy.deepcopy(_SHARED_SD), "Location": f"s3://b/{i}"}}
        for i in range(3)
    ]
    out = shapes.check_partition_inputs(batch, "Add")
    assert [p["StorageDescriptor"]["Location"] for p in out] == ["s3://b/0", "s3://b/1", "s3://b/2"]
    columns = [p["StorageDescriptor"]["Columns"] for p in out]
    assert columns[0] == _SHARED_SD["Columns"] and columns[1] is columns[0] and columns[2] is columns[0]


def test_partitions_with_members_of_their_own_share_the_checked_descriptor() -> None:
    batch = [
        {
            "Values": [f"v{i}"],
            "Parameters": {"rows": str(i)},
            "StorageDescriptor": {**copy.deepcopy(_SHARED_SD), "Location": f"s3://b/{i}"},
        }
        for i in range(3)
    ]
    out = shapes.check_partition_inputs(batch, "Add")
    assert [list(p) for p in out] == [["Values", "Parameters", "StorageDescriptor"]] * 3
    assert [p["Parameters"] for p in out] == [{"rows": "0"}, {"rows": "1"}, {"rows": "2"}]
    assert out[2]["StorageDescriptor"]["Columns"] is out[0]["StorageDescriptor"]["Columns"]
    batch[1]["Parameters"] = {"rows": 1}
    assert_refused(
        lambda b: shapes.check_partition_inputs(b, "Add"),
        batch,
        "Add[1].Parameters['rows']",
        "must be a string",
    )
