"""Glue partition calls: create/update/delete (single and batch), get, GetPartitions with expressions,
segments and paging, and partition indexes used the way the partition index document says."""

from __future__ import annotations

import itertools

import pytest

from gluecat import Catalog

from .conftest import in_process


def make_table(catalog: Catalog, name: str, keys: list[tuple[str, str]], **kwargs) -> None:
    catalog.create_table(
        DatabaseName="db",
        TableInput={
            "Name": name,
            "StorageDescriptor": {"Columns": [{"Name": "x", "Type": "int"}], "Location": f"s3://b/{name}/"},
            "PartitionKeys": [{"Name": k, "Type": t} for k, t in keys],
        },
        **kwargs,
    )


def part(*values: str) -> dict:
    location = "s3://b/" + "/".join(v.encode("unicode_escape").decode() for v in values) + "/"
    return {"Values": list(values), "StorageDescriptor": {"Location": location}}


@pytest.fixture
def glue(catalog: Catalog) -> Catalog:
    catalog.create_database(DatabaseInput={"Name": "db"})
    return catalog


def values_of(resp: dict) -> list[list[str]]:
    return sorted(p["Values"] for p in resp["Partitions"])


def test_a_partition_round_trips(glue: Catalog) -> None:
    make_table(glue, "t", [("dt", "string")])
    glue.create_partition(
        DatabaseName="db", TableName="t", PartitionInput={**part("2024-01-01"), "Parameters": {"a": "b"}}
    )
    p = glue.get_partition(DatabaseName="db", TableName="t", PartitionValues=["2024-01-01"])["Partition"]
    assert p["Values"] == ["2024-01-01"]
    assert (p["DatabaseName"], p["TableName"]) == ("db", "t")
    assert p["StorageDescriptor"]["Location"] == "s3://b/2024-01-01/"
    assert p["Parameters"] == {"a": "b"}
    assert p["CreationTime"].tzinfo is not None
    with pytest.raises(glue.exceptions.AlreadyExistsException):
        glue.create_partition(DatabaseName="db", TableName="t", PartitionInput=part("2024-01-01"))


def test_values_must_match_the_partition_keys_in_number(glue: Catalog) -> None:
    make_table(glue, "t", [("a", "string"), ("b", "string")])
    with pytest.raises(glue.exceptions.InvalidInputException, match="2 partition keys"):
        glue.create_partition(DatabaseName="db", TableName="t", PartitionInput=part("x"))


def test_batch_create_reports_each_failure_and_commits_the_rest(glue: Catalog) -> None:
    make_table(glue, "t", [("k", "string")])
    glue.create_partition(DatabaseName="db", TableName="t", PartitionInput=part("a"))
    out = glue.batch_create_partition(
        DatabaseName="db", TableName="t", PartitionInputList=[part("a"), part("b"), part("b"), part("c", "d")]
    )
    assert [(e["PartitionValues"], e["ErrorDetail"]["ErrorCode"]) for e in out["Errors"]] == [
        (["a"], "AlreadyExistsException"),
        (["b"], "AlreadyExistsException"),
        (["c", "d"], "InvalidInputException"),
    ]
    assert values_of(glue.get_partitions(DatabaseName="db", TableName="t")) == [["a"], ["b"]]
    with pytest.raises(glue.exceptions.InvalidInputException, match="at most 100"):
        glue.batch_create_partition(
            DatabaseName="db", TableName="t", PartitionInputList=[part(str(i)) for i in range(101)]
        )


def test_update_partition_can_change_its_values(glue: Catalog) -> None:
    make_table(glue, "t", [("k", "string")])
    glue.create_partition(DatabaseName="db", TableName="t", PartitionInput=part("a"))
    created = glue.get_partition(DatabaseName="db", TableName="t", PartitionValues=["a"])["Partition"][
        "CreationTime"
    ]
    glue.update_partition(
        DatabaseName="db", TableName="t", PartitionValueList=["a"], PartitionInput=part("b")
    )
    with pytest.raises(glue.exceptions.EntityNotFoundException):
        glue.get_partition(DatabaseName="db", TableName="t", PartitionValues=["a"])
    moved = glue.get_partition(DatabaseName="db", TableName="t", PartitionValues=["b"])["Partition"]
    assert moved["CreationTime"] == created
    with pytest.raises(glue.exceptions.EntityNotFoundException):
        glue.update_partition(
            DatabaseName="db", TableName="t", PartitionValueList=["zz"], PartitionInput=part("c")
        )


def test_delete_and_batch_delete(glue: Catalog) -> None:
    make_table(glue, "t", [("k", "string")])
    glue.batch_create_partition(
        DatabaseName="db", TableName="t", PartitionInputList=[part(c) for c in "abcd"]
    )
    glue.delete_partition(DatabaseName="db", TableName="t", PartitionValues=["a"])
    with pytest.raises(glue.exceptions.EntityNotFoundException):
        glue.delete_partition(DatabaseName="db", TableName="t", PartitionValues=["a"])
    out = glue.batch_delete_partition(
        DatabaseName="db", TableName="t", PartitionsToDelete=[{"Values": ["b"]}, {"Values": ["zz"]}]
    )
    assert [e["PartitionValues"] for e in out["Errors"]] == [["zz"]]
    assert values_of(glue.get_partitions(DatabaseName="db", TableName="t")) == [["c"], ["d"]]
    with pytest.raises(glue.exceptions.InvalidInputException, match="at most 25"):
        glue.batch_delete_partition(
            DatabaseName="db", TableName="t", PartitionsToDelete=[{"Values": ["c"]}] * 26
        )


def test_batch_get_returns_the_partitions_that_exist(glue: Catalog) -> None:
    make_table(glue, "t", [("k", "string")])
    glue.batch_create_partition(DatabaseName="db", TableName="t", PartitionInputList=[part(c) for c in "abc"])
    out = glue.batch_get_partition(
        DatabaseName="db",
        TableName="t",
        PartitionsToGet=[{"Values": ["a"]}, {"Values": ["x"]}, {"Values": ["c"]}],
    )
    assert values_of(out) == [["a"], ["c"]]
    assert out["UnprocessedKeys"] == []


@pytest.fixture
def twitter(glue: Catalog) -> Catalog:
    """The document's example table: twitter_partition with partitions year = 2015, 2016, 2017."""
    make_table(glue, "twitter_partition", [("year", "string")])
    glue.batch_create_partition(
        DatabaseName="db",
        TableName="twitter_partition",
        PartitionInputList=[part(y) for y in ("2015", "2016", "2017")],
    )
    return glue


@pytest.mark.parametrize(
    ("expression", "years"),
    [
        ("year = '2015'", ["2015"]),
        ("year>'2016' AND year<'2018'", ["2017"]),
        ("year>='2015' AND year<='2018'", ["2015", "2016", "2017"]),
        ("year BETWEEN 2015 AND 2018", ["2015", "2016", "2017"]),
        ("year IN (2015,2016,2017,2018)", ["2015", "2016", "2017"]),
        ("year LIKE '%7'", ["2017"]),
        ("", ["2015", "2016", "2017"]),
    ],
)
def test_the_documents_examples(twitter: Catalog, expression: str, years: list[str]) -> None:
    resp = twitter.get_partitions(DatabaseName="db", TableName="twitter_partition", Expression=expression)
    assert values_of(resp) == [[y] for y in years]


def test_a_malformed_expression_or_unknown_column_is_invalid_input(twitter: Catalog) -> None:
    with pytest.raises(twitter.exceptions.InvalidInputException):
        twitter.get_partitions(DatabaseName="db", TableName="twitter_partition", Expression="year = = 1")
    with pytest.raises(twitter.exceptions.InvalidInputException, match="month"):
        twitter.get_partitions(DatabaseName="db", TableName="twitter_partition", Expression="month = 1")
    with pytest.raises(twitter.exceptions.InvalidInputException, match="Expression"):
        twitter.get_partitions(DatabaseName="db", TableName="twitter_partition", Expression="x" * 2049)


def test_keys_compare_by_their_type(glue: Catalog) -> None:
    make_table(glue, "s", [("year", "string")])
    make_table(glue, "i", [("year", "int")])
    for table in ("s", "i"):
        glue.batch_create_partition(
            DatabaseName="db", TableName=table, PartitionInputList=[part(y) for y in ("9", "10", "2017")]
        )
    as_string = glue.get_partitions(DatabaseName="db", TableName="s", Expression="year > 2016")
    as_int = glue.get_partitions(DatabaseName="db", TableName="i", Expression="year > 2016")
    assert values_of(as_string) == [["2017"], ["9"]]  # as strings '9' > '2016' but '10' < '2016'
    assert values_of(as_int) == [["2017"]]


def test_retyping_a_key_changes_how_existing_partitions_compare(glue: Catalog) -> None:
    make_table(glue, "t", [("year", "string")])
    glue.batch_create_partition(
        DatabaseName="db", TableName="t", PartitionInputList=[part(y) for y in ("9", "10", "2017")]
    )
    assert values_of(glue.get_partitions(DatabaseName="db", TableName="t", Expression="year > 2016")) == [
        ["2017"],
        ["9"],
    ]
    table = glue.get_table(DatabaseName="db", Name="t")["Table"]
    glue.update_table(
        DatabaseName="db",
        TableInput={
            "Name": "t",
            "StorageDescriptor": table["StorageDescriptor"],
            "PartitionKeys": [{"Name": "year", "Type": "int"}],
        },
    )
    # The same stored partitions, now compared as integers.
    assert values_of(glue.get_partitions(DatabaseName="db", TableName="t", Expression="year > 2016")) == [
        ["2017"]
    ]


@pytest.fixture
def sales(glue: Catalog) -> Catalog:
    """The partition index document's sales_data table, indexed on (country, category, year)."""
    make_table(
        glue,
        "sales_data",
        [
            ("country", "string"),
            ("category", "string"),
            ("year", "int"),
            ("month", "int"),
            ("creationdate", "date"),
        ],
        PartitionIndexes=[{"IndexName": "ccy", "Keys": ["country", "category", "year"]}],
    )
    rows = [
        part(c, cat, str(y), str(m), f"2023-{m:02d}-15")
        for c, cat, y, m in itertools.product(
            ("US", "UK", "DE"), ("Shoes", "Books"), (2016, 2017, 2018, 2019), (1, 2, 9)
        )
    ]
    for i in range(0, len(rows), 100):
        glue.batch_create_partition(
            DatabaseName="db", TableName="sales_data", PartitionInputList=rows[i : i + 100]
        )
    return glue


def reference(expression_filter) -> list[list[str]]:
    rows = [
        [c, cat, str(y), str(m), f"2023-{m:02d}-15"]
        for c, cat, y, m in itertools.product(
            ("US", "UK", "DE"), ("Shoes", "Books"), (2016, 2017, 2018, 2019), (1, 2, 9)
        )
    ]
    return sorted(r for r in rows if expression_filter(r))


# Every row of the example table of the partition index document: whether the index is used, and the
# partitions returned (always exactly the expression's answer, index or not).
INDEX_EXAMPLES = [
    ("Country = 'US'", True, lambda r: r[0] == "US"),
    ("Country = 'US' and Category = 'Shoes'", True, lambda r: r[0] == "US" and r[1] == "Shoes"),
    ("Category = 'Shoes'", False, lambda r: r[1] == "Shoes"),
    (
        "Country = 'US' and Category = 'Shoes' and Year > '2018'",
        True,
        lambda r: r[:2] == ["US", "Shoes"] and int(r[2]) > 2018,
    ),
    (
        "Country = 'US' and Category = 'Shoes' and Year > '2018' and month = 2",
        True,
        lambda r: r[:2] == ["US", "Shoes"] and int(r[2]) > 2018 and r[3] == "2",
    ),
    (
        "Country = 'US' AND Category = 'Shoes' OR Year > '2018'",
        False,
        lambda r: r[:2] == ["US", "Shoes"] or int(r[2]) > 2018,
    ),
    (
        "Country = 'US' AND Category = 'Shoes' AND (Year = 2017 OR Year = '2018')",
        True,
        lambda r: r[:2] == ["US", "Shoes"] and r[2] in ("2017", "2018"),
    ),
    (
        "Country in ('US', 'UK') AND Category = 'Shoes'",
        False,
        lambda r: r[0] in ("US", "UK") and r[1] == "Shoes",
    ),
    (
        "Country = 'US' AND Category in ('Shoes', 'Books')",
        True,
        lambda r: r[0] == "US" and r[1] in ("Shoes", "Books"),
    ),
    (
        "Country = 'US' AND Category in ('Shoes', 'Books') AND (creationDate > '2023-9-01')",
        True,
        lambda r: r[0] == "US" and r[4] > "2023-09-01",
    ),
]


@pytest.mark.parametrize(
    ("expression", "uses_index", "expected"), INDEX_EXAMPLES, ids=[e[0] for e in INDEX_EXAMPLES]
)
def test_the_partition_index_documents_examples(
    sales: Catalog, expression: str, uses_index: bool, expected
) -> None:
    if in_process(sales):
        plan = sales.explain_partitions(DatabaseName="db", TableName="sales_data", Expression=expression)
        assert (plan["Index"] == "ccy") is uses_index, plan
    resp = sales.get_partitions(DatabaseName="db", TableName="sales_data", Expression=expression)
    assert values_of(resp) == reference(expected)


def test_segments_are_disjoint_and_complete_and_pages_resume_exactly(sales: Catalog) -> None:
    everything = values_of(sales.get_partitions(DatabaseName="db", TableName="sales_data"))
    for total in (1, 3, 10):
        seen: list[list[str]] = []
        for number in range(total):
            token = None
            while True:
                resp = sales.get_partitions(
                    DatabaseName="db",
                    TableName="sales_data",
                    Segment={"SegmentNumber": number, "TotalSegments": total},
                    MaxResults=7,
                    **({"NextToken": token} if token else {}),
                )
                assert len(resp["Partitions"]) <= 7
                seen += [p["Values"] for p in resp["Partitions"]]
                token = resp.get("NextToken")
                if not token:
                    break
        assert sorted(seen) == everything


def test_paging_resumes_exactly_while_partitions_are_added(sales: Catalog) -> None:
    first = sales.get_partitions(
        DatabaseName="db", TableName="sales_data", Expression="country = 'US'", MaxResults=10
    )
    sales.create_partition(
        DatabaseName="db",
        TableName="sales_data",
        PartitionInput=part("US", "Zebra", "2020", "1", "2023-01-01"),
    )
    got = [p["Values"] for p in first["Partitions"]]
    token = first["NextToken"]
    while token:
        resp = sales.get_partitions(
            DatabaseName="db", TableName="sales_data", Expression="country = 'US'", NextToken=token
        )
        got += [p["Values"] for p in resp["Partitions"]]
        token = resp.get("NextToken")
    assert len(got) == len({tuple(v) for v in got})
    assert sorted(got) == reference(lambda r: r[0] == "US") + [["US", "Zebra", "2020", "1", "2023-01-01"]]


def test_a_token_of_a_table_dropped_and_made_again_is_refused(glue: Catalog) -> None:
    def table_of(values: list[str]) -> None:
        make_table(glue, "t", [("k", "string")])
        glue.batch_create_partition(
            DatabaseName="db", TableName="t", PartitionInputList=[part(v) for v in values]
        )

    table_of(["a", "b", "c", "d"])
    first = glue.get_partitions(DatabaseName="db", TableName="t", MaxResults=2)
    glue.delete_table(DatabaseName="db", Name="t")
    table_of(["a", "b", "c", "d"])
    # Resumed in the new table, the token would list c and d: half a listing that looks whole.
    with pytest.raises(glue.exceptions.InvalidInputException, match="NextToken: .*made again"):
        glue.get_partitions(DatabaseName="db", TableName="t", NextToken=first["NextToken"])


def test_exclude_column_schema_drops_the_columns(glue: Catalog) -> None:
    make_table(glue, "t", [("k", "string")])
    glue.create_partition(
        DatabaseName="db",
        TableName="t",
        PartitionInput={
            "Values": ["a"],
            "StorageDescriptor": {"Columns": [{"Name": "x", "Type": "int"}], "Location": "l"},
        },
    )
    p = glue.get_partitions(DatabaseName="db", TableName="t", ExcludeColumnSchema=True)["Partitions"][0]
    assert "Columns" not in p["StorageDescriptor"] and p["StorageDescriptor"]["Location"] == "l"


def indexes_of(glue: Catalog, table: str) -> list[dict]:
    return glue.get_partition_indexes(DatabaseName="db", TableName=table)["PartitionIndexDescriptorList"]


def test_an_index_built_over_valid_partitions_becomes_active(glue: Catalog) -> None:
    make_table(glue, "t", [("country", "string"), ("year", "int")])
    glue.batch_create_partition(
        DatabaseName="db", TableName="t", PartitionInputList=[part("US", "2020"), part("UK", "2021")]
    )
    glue.create_partition_index(
        DatabaseName="db", TableName="t", PartitionIndex={"IndexName": "y", "Keys": ["year", "country"]}
    )
    (index,) = indexes_of(glue, "t")
    assert index == {
        "IndexName": "y",
        "Keys": [{"Name": "year", "Type": "int"}, {"Name": "country", "Type": "string"}],
        "IndexStatus": "ACTIVE",
    }
    if in_process(glue):
        plan = glue.explain_partitions(DatabaseName="db", TableName="t", Expression="year >= 2021")
        assert plan["Index"] == "y"
    assert values_of(glue.get_partitions(DatabaseName="db", TableName="t", Expression="year >= 2021")) == [
        ["UK", "2021"]
    ]


@pytest.mark.parametrize(
    ("bad", "code"),
    [
        ("twenty", "INVALID_PARTITION_TYPE_DATA_ERROR"),
        ("20\u000121", "UNSUPPORTED_PARTITION_CHARACTER_ERROR"),
        ("", "MISSING_PARTITION_VALUE_ERROR"),
    ],
)
def test_an_index_over_bad_partitions_fails_with_backfill_errors(glue: Catalog, bad: str, code: str) -> None:
    make_table(glue, "t", [("country", "string"), ("year", "int")])
    glue.batch_create_partition(
        DatabaseName="db", TableName="t", PartitionInputList=[part("US", "2020"), part("UK", bad)]
    )
    glue.create_partition_index(
        DatabaseName="db", TableName="t", PartitionIndex={"IndexName": "y", "Keys": ["year"]}
    )
    (index,) = indexes_of(glue, "t")
    assert index["IndexStatus"] == "FAILED"
    assert index["BackfillErrors"] == [{"Code": code, "Partitions": [{"Values": ["UK", bad]}]}]
    # A FAILED index is never used, and the failed index can be deleted.
    if in_process(glue):
        plan = glue.explain_partitions(DatabaseName="db", TableName="t", Expression="year = 2020")
        assert plan["Index"] is None
    assert values_of(glue.get_partitions(DatabaseName="db", TableName="t", Expression="year = 2020")) == [
        ["US", "2020"]
    ]
    glue.delete_partition_index(DatabaseName="db", TableName="t", IndexName="y")
    assert indexes_of(glue, "t") == []


@pytest.mark.parametrize(
    ("glue_type", "lowest", "highest"),
    [
        ("tinyint", -(2**7), 2**7 - 1),
        ("smallint", -(2**15), 2**15 - 1),
        ("int", -(2**31), 2**31 - 1),
        ("integer", -(2**31), 2**31 - 1),
        ("bigint", -(2**63), 2**63 - 1),
        ("long", -(2**63), 2**63 - 1),
    ],
)
def test_an_indexed_integer_key_holds_only_values_of_its_width(
    glue: Catalog, glue_type: str, lowest: int, highest: int
) -> None:
    # 004: a value that is not a valid value of the key's type fails the backfill and, once an index
    # exists, refuses the partition; 200 is not a tinyint any more than "foo" is an int.
    make_table(glue, "t", [("n", glue_type)])
    fine = [str(lowest), str(highest), "0"]
    glue.batch_create_partition(
        DatabaseName="db", TableName="t", PartitionInputList=[part(v) for v in [*fine, str(highest + 1)]]
    )
    glue.create_partition_index(
        DatabaseName="db", TableName="t", PartitionIndex={"IndexName": "n", "Keys": ["n"]}
    )
    (index,) = indexes_of(glue, "t")
    assert index["IndexStatus"] == "FAILED"
    assert index["BackfillErrors"] == [
        {"Code": "INVALID_PARTITION_TYPE_DATA_ERROR", "Partitions": [{"Values": [str(highest + 1)]}]}
    ]

    make_table(glue, "u", [("n", glue_type)], PartitionIndexes=[{"IndexName": "n", "Keys": ["n"]}])
    out = glue.batch_create_partition(
        DatabaseName="db",
        TableName="u",
        PartitionInputList=[part(v) for v in [*fine, str(highest + 1), str(lowest - 1)]],
    )
    assert [(e["PartitionValues"], e["ErrorDetail"]["ErrorCode"]) for e in out["Errors"]] == [
        ([str(highest + 1)], "InvalidInputException"),
        ([str(lowest - 1)], "InvalidInputException"),
    ]
    with pytest.raises(glue.exceptions.InvalidInputException, match=f"not a valid {glue_type} value"):
        glue.create_partition(DatabaseName="db", TableName="u", PartitionInput=part(str(lowest - 1)))
    assert values_of(glue.get_partitions(DatabaseName="db", TableName="u")) == sorted([v] for v in fine)


def test_a_date_index_holds_the_documents_whole_range_of_dates(glue: Catalog) -> None:
    # 004: "允许的日期索引范围为 0000-01-01 到 9999-12-31" (dates from 0000-01-01 to 9999-12-31 may be
    # indexed). Year 0000 (1 BC) is a leap year, and comes before 0001.
    days = ["0000-01-01", "0000-02-29", "0000-12-31", "0001-01-01", "2024-06-15", "9999-12-31"]
    make_table(glue, "t", [("d", "date")])
    glue.batch_create_partition(
        DatabaseName="db", TableName="t", PartitionInputList=[part(d) for d in days[:3]]
    )
    glue.create_partition_index(
        DatabaseName="db", TableName="t", PartitionIndex={"IndexName": "d", "Keys": ["d"]}
    )
    assert [i["IndexStatus"] for i in indexes_of(glue, "t")] == ["ACTIVE"]
    out = glue.batch_create_partition(
        DatabaseName="db", TableName="t", PartitionInputList=[part(d) for d in [*days[3:], "0001-02-29"]]
    )
    assert [e["PartitionValues"] for e in out["Errors"]] == [["0001-02-29"]]  # 0001 is no leap year

    def query(expression: str) -> list[str]:
        return [
            v
            for (v,) in values_of(
                glue.get_partitions(DatabaseName="db", TableName="t", Expression=expression)
            )
        ]

    assert query("d < '0001-01-01'") == days[:3]
    assert query("d BETWEEN '0000-01-01' AND '9999-12-31'") == days
    assert query("d = DATE '0000-02-29'") == ["0000-02-29"]
    assert query("d > '0000-02-29' AND d <= '0001-01-01'") == ["0000-12-31", "0001-01-01"]
    assert query("d IN ('0000-12-31', '9999-12-31')") == ["0000-12-31", "9999-12-31"]
    assert query("d >= '2000-01-01' OR d = '0-1-1'") == ["0000-01-01", "2024-06-15", "9999-12-31"]
    if in_process(glue):
        plan = glue.explain_partitions(DatabaseName="db", TableName="t", Expression="d < '0001-01-01'")
        assert plan["Index"] == "d" and plan["MatchingPartitions"] == 3


def test_once_an_index_exists_new_partitions_are_validated(glue: Catalog) -> None:
    make_table(
        glue,
        "t",
        [("category", "string"), ("year", "int")],
        PartitionIndexes=[{"IndexName": "i", "Keys": ["category", "year"]}],
    )
    with pytest.raises(glue.exceptions.InvalidInputException, match="year"):
        glue.create_partition(DatabaseName="db", TableName="t", PartitionInput=part("Books", "foo"))
    with pytest.raises(glue.exceptions.InvalidInputException, match="U\\+0000"):
        glue.create_partition(DatabaseName="db", TableName="t", PartitionInput=part("Bo\u0000oks", "2020"))
    glue.create_partition(DatabaseName="db", TableName="t", PartitionInput=part("Books", "2020"))
    # In a batch, only the partitions an index cannot hold are refused, each with its own error.
    out = glue.batch_create_partition(
        DatabaseName="db",
        TableName="t",
        PartitionInputList=[
            part("Books", "2021"),
            part("Books", "x"),
            part("Bo\u0001oks", "2022"),
            part("Toys", "2021"),
        ],
    )
    assert [(e["PartitionValues"], e["ErrorDetail"]["ErrorCode"]) for e in out["Errors"]] == [
        (["Books", "x"], "InvalidInputException"),
        (["Bo\u0001oks", "2022"], "InvalidInputException"),
    ]
    names = glue.get_partitions(DatabaseName="db", TableName="t")["Partitions"]
    assert sorted(p["Values"] for p in names) == [["Books", "2020"], ["Books", "2021"], ["Toys", "2021"]]


def test_indexed_keys_cannot_be_renamed_retyped_or_reordered(glue: Catalog) -> None:
    keys = [("category", "string"), ("year", "int")]
    make_table(glue, "t", keys, PartitionIndexes=[{"IndexName": "i", "Keys": ["year"]}])

    def update(new_keys: list[tuple[str, str]]) -> None:
        glue.update_table(
            DatabaseName="db",
            TableInput={"Name": "t", "PartitionKeys": [{"Name": k, "Type": t} for k, t in new_keys]},
        )

    for bad in (
        [("category", "string"), ("yr", "int")],
        [("year", "int"), ("category", "string")],
        [("category", "string"), ("year", "bigint")],
    ):
        with pytest.raises(glue.exceptions.InvalidInputException, match="PartitionKeys"):
            update(bad)
    update(keys)  # an update that leaves the keys alone is fine


@pytest.mark.in_process
def test_a_key_retyped_between_two_indexes_of_one_name_is_looked_up_as_its_new_type(
    glue: Catalog, warehouse: str
) -> None:
    """Once an index is deleted its key may change type, and an index of the same name be made on it
    again: lookups through the new index compare the key as its new type, in a process that read the
    table through the old index too (it kept the old lookup, of ints, and failed comparing it with
    '10')."""
    years = ["9", "10", "2021", "02021"]
    make_table(glue, "t", [("year", "int")], PartitionIndexes=[{"IndexName": "i", "Keys": ["year"]}])
    glue.batch_create_partition(DatabaseName="db", TableName="t", PartitionInputList=[part(y) for y in years])
    reader = Catalog(warehouse)  # a process that holds the partitions folded, as one opened now does

    def matching(expression: str) -> list[str]:
        found = reader.get_partitions(DatabaseName="db", TableName="t", Expression=expression)
        return sorted(p["Values"][0] for p in found["Partitions"])

    assert matching("year >= 10") == ["02021", "10", "2021"]
    reader.delete_partition_index(DatabaseName="db", TableName="t", IndexName="i")
    reader.update_table(
        DatabaseName="db", TableInput={"Name": "t", "PartitionKeys": [{"Name": "year", "Type": "string"}]}
    )
    reader.create_partition_index(
        DatabaseName="db", TableName="t", PartitionIndex={"IndexName": "i", "Keys": ["year"]}
    )
    assert (
        reader.explain_partitions(DatabaseName="db", TableName="t", Expression="year >= '10'")["Index"] == "i"
    )
    assert matching("year >= '10'") == ["10", "2021", "9"]  # compared as text now


@pytest.mark.in_process
def test_a_filter_after_partition_keys_are_renamed_reads_the_keys_new_columns(
    glue: Catalog, warehouse: str
) -> None:
    """UpdateTable may rename partition keys (with no index on them): a filter then compares the values
    under their new names, also in a process that filtered the partitions under the old names (it kept
    the key columns it had cast by name, and answered with the old column's matches)."""
    make_table(glue, "t", [("a", "string"), ("b", "string")])
    glue.batch_create_partition(
        DatabaseName="db", TableName="t", PartitionInputList=[part("x", "y"), part("y", "x")]
    )
    reader = Catalog(warehouse)  # a process that holds the partitions folded, as one opened now does

    def matching(expression: str) -> list[list[str]]:
        return values_of(reader.get_partitions(DatabaseName="db", TableName="t", Expression=expression))

    assert matching("a = 'x'") == [["x", "y"]]
    reader.update_table(
        DatabaseName="db",
        TableInput={
            "Name": "t",
            "PartitionKeys": [{"Name": "b", "Type": "string"}, {"Name": "a", "Type": "string"}],
        },
    )
    assert matching("a = 'x'") == [["y", "x"]]


def test_an_update_that_leaves_an_indexed_untyped_key_alone_is_not_a_type_change(glue: Catalog) -> None:
    """A partition key without a Type is a string key, which is how its index records it; sending the
    table back unchanged (or the same type spelled in capitals) changes no type."""
    table = {"Name": "t", "PartitionKeys": [{"Name": "category"}, {"Name": "year", "Type": "int"}]}
    glue.create_table(
        DatabaseName="db",
        TableInput=table,
        PartitionIndexes=[{"IndexName": "i", "Keys": ["category", "year"]}],
    )
    (index,) = indexes_of(glue, "t")
    assert index["Keys"] == [{"Name": "category", "Type": "string"}, {"Name": "year", "Type": "int"}]
    glue.update_table(DatabaseName="db", TableInput={**table, "Description": "unchanged keys"})
    glue.update_table(
        DatabaseName="db",
        TableInput={
            "Name": "t",
            "PartitionKeys": [{"Name": "category", "Type": "STRING"}, table["PartitionKeys"][1]],
        },
    )
    assert glue.get_table(DatabaseName="db", Name="t")["Table"]["VersionId"] == "3"
    with pytest.raises(glue.exceptions.InvalidInputException, match="category"):
        glue.update_table(
            DatabaseName="db",
            TableInput={
                "Name": "t",
                "PartitionKeys": [{"Name": "category", "Type": "int"}, table["PartitionKeys"][1]],
            },
        )
    assert glue.get_table(DatabaseName="db", Name="t")["Table"]["VersionId"] == "3"


@pytest.mark.parametrize(
    ("key_type", "indexable"),
    [
        ("char(1)", True),
        ("char(255)", True),
        ("varchar(65535)", True),
        ("char(0)", False),
        ("char(256)", False),
        ("varchar(0)", False),
        ("varchar(65536)", False),
    ],
)
def test_char_and_varchar_keys_are_indexed_within_their_lengths(
    glue: Catalog, key_type: str, indexable: bool
) -> None:
    """The partition index document's string types: char of length 1 to 255, varchar of 1 to 65535."""
    make_table(glue, "t", [("k", key_type)])
    index = {"IndexName": "i", "Keys": ["k"]}
    if indexable:
        glue.create_partition_index(DatabaseName="db", TableName="t", PartitionIndex=index)
        make_table(glue, "made_with_it", [("k", key_type)], PartitionIndexes=[index])
        assert [i["IndexStatus"] for i in indexes_of(glue, "made_with_it")] == ["ACTIVE"]
    else:
        with pytest.raises(glue.exceptions.InvalidInputException, match=r"PartitionIndex.Keys\[0\].*length"):
            glue.create_partition_index(DatabaseName="db", TableName="t", PartitionIndex=index)
        with pytest.raises(glue.exceptions.InvalidInputException, match=r"PartitionIndexes\[0\].Keys\[0\]"):
            make_table(glue, "made_with_it", [("k", key_type)], PartitionIndexes=[index])
        with pytest.raises(glue.exceptions.EntityNotFoundException):
            glue.get_table(DatabaseName="db", Name="made_with_it")
    assert [i["IndexStatus"] for i in indexes_of(glue, "t")] == (["ACTIVE"] if indexable else [])


def test_index_limits_and_life_cycle_errors(glue: Catalog) -> None:
    make_table(glue, "t", [("a", "string"), ("b", "string")])
    for i in range(3):
        glue.create_partition_index(
            DatabaseName="db", TableName="t", PartitionIndex={"IndexName": f"i{i}", "Keys": ["a"]}
        )
    with pytest.raises(glue.exceptions.ResourceNumberLimitExceededException):
        glue.create_partition_index(
            DatabaseName="db", TableName="t", PartitionIndex={"IndexName": "i3", "Keys": ["b"]}
        )
    with pytest.raises(glue.exceptions.AlreadyExistsException):
        glue.create_partition_index(
            DatabaseName="db", TableName="t", PartitionIndex={"IndexName": "i0", "Keys": ["b"]}
        )
    with pytest.raises(glue.exceptions.EntityNotFoundException):
        glue.delete_partition_index(DatabaseName="db", TableName="t", IndexName="nope")
    glue.delete_partition_index(DatabaseName="db", TableName="t", IndexName="i0")
    assert [d["IndexName"] for d in indexes_of(glue, "t")] == ["i1", "i2"]


def test_a_table_keeps_its_last_ten_failed_indexes(glue: Catalog) -> None:
    # 004: "每个表存储最后 10 个失败的索引" (each table stores its last 10 failed indexes). An index that
    # succeeds takes none of them away; the eleventh failure drops the oldest.
    make_table(glue, "t", [("year", "int"), ("s", "string")])
    glue.batch_create_partition(
        DatabaseName="db", TableName="t", PartitionInputList=[part("foo", "a"), part("2024", "b")]
    )

    def create(name: str, key: str) -> None:
        index = {"IndexName": name, "Keys": [key]}
        glue.create_partition_index(DatabaseName="db", TableName="t", PartitionIndex=index)

    def failed() -> list[str]:
        return sorted(d["IndexName"] for d in indexes_of(glue, "t") if d["IndexStatus"] == "FAILED")

    for i in range(10):
        create(f"f{i}", "year")  # "foo" is no int
    assert failed() == sorted(f"f{i}" for i in range(10))
    create("fine", "s")
    assert failed() == sorted(f"f{i}" for i in range(10))
    create("f10", "year")
    assert failed() == sorted(f"f{i}" for i in range(1, 11))
    assert [d["IndexName"] for d in indexes_of(glue, "t") if d["IndexStatus"] == "ACTIVE"] == ["fine"]


@pytest.mark.in_process
def test_a_creating_index_cannot_be_deleted(glue: Catalog) -> None:
    from gluecat.catalog.context import PARTITION_INDEX
    from gluecat.store.snapshot import Changes

    make_table(glue, "t", [("a", "string")])

    def creating(snap):  # an index whose backfill is under way in another process
        changes = Changes()
        changes.put(
            PARTITION_INDEX,
            ("db", "t", "i"),
            {
                "IndexName": "i",
                "Keys": [{"Name": "a", "Type": "string"}],
                "IndexStatus": "CREATING",
                "_touched": 9e18,
            },
        )
        return changes, None

    glue.store.commit("test", creating)
    with pytest.raises(glue.exceptions.ConflictException):
        glue.delete_partition_index(DatabaseName="db", TableName="t", IndexName="i")
    with pytest.raises(glue.exceptions.ResourceNotReadyException):
        glue.delete_table(DatabaseName="db", Name="t")


@pytest.mark.in_process
def test_a_table_whose_partitions_were_all_deleted_takes_partitions_of_another_number_of_keys(
    glue: Catalog, warehouse: str
) -> None:
    """With no partitions left, UpdateTable may change the number of partition keys; the deleted
    partitions' rows, of the old number of values, go with the change, so partitions of the new number
    are written, read, merged and compacted (with those rows left among them, every partition call
    failed, and so did compaction)."""
    from gluecat.cli import main as cli

    make_table(glue, "t", [("a", "string")])
    glue.create_partition(DatabaseName="db", TableName="t", PartitionInput=part("x"))
    glue.delete_partition(DatabaseName="db", TableName="t", PartitionValues=["x"])
    glue.update_table(
        DatabaseName="db",
        TableInput={
            "Name": "t",
            "PartitionKeys": [{"Name": "a", "Type": "string"}, {"Name": "b", "Type": "string"}],
        },
    )
    glue.batch_create_partition(
        DatabaseName="db", TableName="t", PartitionInputList=[part("x", "y"), part("z", "w")]
    )
    assert values_of(glue.get_partitions(DatabaseName="db", TableName="t")) == [["x", "y"], ["z", "w"]]
    assert cli(["compact", "-w", warehouse, "--apply"]) == 0
    found = Catalog(warehouse).get_partitions(DatabaseName="db", TableName="t", Expression="b = 'y'")
    assert values_of(found) == [["x", "y"]]


def test_deleting_a_table_removes_its_partitions(glue: Catalog) -> None:
    make_table(glue, "t", [("k", "string")])
    glue.create_partition(DatabaseName="db", TableName="t", PartitionInput=part("a"))
    glue.delete_table(DatabaseName="db", Name="t")
    make_table(glue, "t", [("k", "string")])
    assert glue.get_partitions(DatabaseName="db", TableName="t")["Partitions"] == []


@pytest.mark.in_process
def test_many_small_writes_are_merged_and_stay_correct(glue: Catalog) -> None:
    from gluecat.catalog import compact
    from gluecat.catalog.rows import merging

    make_table(glue, "t", [("k", "int")], PartitionIndexes=[{"IndexName": "k", "Keys": ["k"]}])
    for i in range(120):
        glue.create_partition(DatabaseName="db", TableName="t", PartitionInput=part(str(i)))
        if i % 3 == 0:
            glue.delete_partition(DatabaseName="db", TableName="t", PartitionValues=[str(i)])
    assert len(glue.store.latest().table_segments(("db", "t"))) <= merging.MAX_SEGMENTS
    expected = [[str(i)] for i in range(120) if i % 3]
    assert values_of(glue.get_partitions(DatabaseName="db", TableName="t")) == sorted(expected)
    assert values_of(glue.get_partitions(DatabaseName="db", TableName="t", Expression="k >= 100")) == sorted(
        [str(i)] for i in range(100, 120) if i % 3
    )
    fresh = Catalog(glue.warehouse)  # another process's view, built from the files
    assert values_of(fresh.get_partitions(DatabaseName="db", TableName="t")) == sorted(expected)
    compact.compact_all(glue._ctx)
    assert len(glue.store.latest().table_segments(("db", "t"))) == 1
    assert values_of(glue.get_partitions(DatabaseName="db", TableName="t", Expression="k >= 100")) == sorted(
        [str(i)] for i in range(100, 120) if i % 3
    )


def test_get_partitions_as_of_a_time_sees_the_partitions_of_then(glue: Catalog) -> None:
    import time
    from datetime import UTC, datetime

    make_table(glue, "t", [("k", "string")])
    glue.batch_create_partition(DatabaseName="db", TableName="t", PartitionInputList=[part("a"), part("b")])
    time.sleep(0.01)
    then = datetime.now(UTC)
    time.sleep(0.01)
    glue.delete_partition(DatabaseName="db", TableName="t", PartitionValues=["a"])
    glue.create_partition(DatabaseName="db", TableName="t", PartitionInput=part("c"))
    assert values_of(glue.get_partitions(DatabaseName="db", TableName="t", QueryAsOfTime=then)) == [
        ["a"],
        ["b"],
    ]
    assert values_of(glue.get_partitions(DatabaseName="db", TableName="t")) == [["b"], ["c"]]


@pytest.mark.in_process
def test_partitions_unchanged_since_passes_over_merges_and_other_tables(glue: Catalog) -> None:
    from gluecat.catalog import compact

    make_table(glue, "t", [("k", "string")])
    make_table(glue, "other", [("k", "string")])
    glue.create_partition(DatabaseName="db", TableName="t", PartitionInput=part("a"))
    since = glue.table_version("db", "t")
    assert glue.partitions_unchanged_since("db", "t", since) == since
    # Another table's partitions, the table's own definition and a merge of its segments change nothing.
    glue.create_partition(DatabaseName="db", TableName="other", PartitionInput=part("x"))
    glue.update_table(
        DatabaseName="db",
        TableInput={
            "Name": "t",
            "Description": "now described",
            "StorageDescriptor": {"Columns": [{"Name": "x", "Type": "int"}], "Location": "s3://b/t/"},
            "PartitionKeys": [{"Name": "k", "Type": "string"}],
        },
    )
    glue.create_partition(DatabaseName="db", TableName="t", PartitionInput=part("b"))
    own = glue.table_version("db", "t")
    assert compact.compact_table(glue._ctx, "db", "t")
    now = glue.table_version("db", "t")
    assert now == own + 1
    assert glue.partitions_unchanged_since("db", "t", own) == now
    assert glue.partitions_unchanged_since("db", "t", since) is None  # "b" was added after it...
    assert (
        glue.partitions_unchanged_since("db", "t", since, excluding=[own]) == now
    )  # ...unless the caller has it
    glue.delete_partition(DatabaseName="db", TableName="t", PartitionValues=["a"])
    assert glue.partitions_unchanged_since("db", "t", now) is None
    # Dropping the table and making it again under its name is a change, too.
    again = glue.table_version("db", "t")
    glue.delete_table(DatabaseName="db", Name="t")
    assert glue.partitions_unchanged_since("db", "t", again) is None
    assert (
        glue.partitions_unchanged_since("db", "t", glue.table_version("db", "t") + 1) is None
    )  # not yet committed


@pytest.mark.in_process
def test_parameter_keys_that_look_like_storage_markers_survive_a_new_process(
    glue: Catalog, warehouse: str
) -> None:
    """gluecat stores timestamps as {"$t": ...}: a map whose only key is "$t" must still come back a map."""
    make_table(glue, "t", [("k", "string")])
    odd = {"$t": "5"}
    glue.create_partition(DatabaseName="db", TableName="t", PartitionInput={**part("a"), "Parameters": odd})
    glue.batch_create_partition(
        DatabaseName="db", TableName="t", PartitionInputList=[{**part("b"), "Parameters": {"$b": "aGk="}}]
    )
    fresh = Catalog(warehouse)  # reads the documents back from their files
    got = fresh.get_partition(DatabaseName="db", TableName="t", PartitionValues=["a"])["Partition"]
    assert got["Parameters"] == odd
    pages = fresh.get_partitions(DatabaseName="db", TableName="t")["Partitions"]
    assert {p["Values"][0]: p["Parameters"] for p in pages} == {"a": odd, "b": {"$b": "aGk="}}


@pytest.mark.in_process
@pytest.mark.parametrize("expression", ["", "k <> 'zz'"])
def test_pages_merge_newer_partitions_with_the_base_at_every_page_size(
    glue: Catalog, warehouse: str, expression: str
) -> None:
    """A catalog opened on a table folds the partitions it finds into its view's base; its own later
    writes delete some of them, replace others and add partitions before, among and after them. Each page
    reads only as many base and newer rows as it can use; whatever the page size, the pages together are
    every live partition once, in order."""
    make_table(glue, "t", [("k", "string")])
    glue.batch_create_partition(
        DatabaseName="db", TableName="t", PartitionInputList=[part(f"m{i:02d}") for i in range(20)]
    )
    with Catalog(warehouse) as other:
        assert other.get_partitions(DatabaseName="db", TableName="t", MaxResults=1)["Partitions"]
        for gone in ("m00", "m07", "m08", "m19"):
            other.delete_partition(DatabaseName="db", TableName="t", PartitionValues=[gone])
        other.update_partition(
            DatabaseName="db", TableName="t", PartitionValueList=["m10"], PartitionInput=part("m10")
        )
        added = ["a0", "m07x", "m11x", "z0", "z1", "z2"]
        other.batch_create_partition(
            DatabaseName="db", TableName="t", PartitionInputList=[part(v) for v in added]
        )
        live = sorted({f"m{i:02d}" for i in range(20)} - {"m00", "m07", "m08", "m19"} | set(added))
        for size in range(1, len(live) + 2):
            got: list[str] = []
            kwargs: dict = {
                "DatabaseName": "db",
                "TableName": "t",
                "Expression": expression,
                "MaxResults": size,
            }
            while True:
                resp = other.get_partitions(**kwargs)
                assert len(resp["Partitions"]) <= size
                got += [p["Values"][0] for p in resp["Partitions"]]
                if "NextToken" not in resp:
                    break
                kwargs["NextToken"] = resp["NextToken"]
            assert got == live, size


def test_commit_partitions_adds_a_partition_it_drops_at_most_once(warehouse: str) -> None:
    # With the drop or without it, adding the same partition twice in one call is AlreadyExistsException
    # (with the drop, the second addition used to be taken); with IfNotExists the first is kept.
    glue = Catalog(warehouse)  # a Python-only call (the Spark shim's): not served over the wire
    glue.create_database(DatabaseInput={"Name": "db"})
    make_table(glue, "t", [("k", "string")])
    glue.create_partition(DatabaseName="db", TableName="t", PartitionInput=part("a"))
    twice = [{**part("a"), "Parameters": {"n": "1"}}, {**part("a"), "Parameters": {"n": "2"}}]
    before = glue.table_version("db", "t")
    for drop in ([], [["a"]]):
        with pytest.raises(glue.exceptions.AlreadyExistsException, match="Partition already exists."):
            glue.commit_partitions(DatabaseName="db", TableName="t", Add=twice, Drop=drop)
    assert glue.table_version("db", "t") == before
    glue.commit_partitions(DatabaseName="db", TableName="t", Add=twice, Drop=[["a"]], IfNotExists=True)
    got = glue.get_partition(DatabaseName="db", TableName="t", PartitionValues=["a"])["Partition"]
    assert got["Parameters"] == {"n": "1"}


@pytest.mark.parametrize(
    "kwargs, field",
    [
        ({"Add": 7}, "Add"),
        ({"Drop": "2024"}, "Drop"),
        ({"Add": [], "IfNotExists": {"x": 1}}, "IfNotExists"),
        ({"Drop": [], "IfExists": "yes"}, "IfExists"),
    ],
)
def test_commit_partitions_refuses_arguments_of_the_wrong_type(
    warehouse: str, kwargs: dict, field: str
) -> None:
    glue = Catalog(warehouse)  # a Python-only call (the Spark shim's): not served over the wire
    glue.create_database(DatabaseInput={"Name": "db"})
    before = glue.table_version("db", "t")
    with pytest.raises(glue.exceptions.InvalidInputException, match=field):
        glue.commit_partitions(DatabaseName="db", TableName="t", **kwargs)
    assert glue.table_version("db", "t") == before


def test_partitions_unchanged_since_refuses_a_version_that_is_not_one(warehouse: str) -> None:
    glue = Catalog(warehouse)  # a Python-only call (the Spark shim's): not served over the wire
    with pytest.raises(glue.exceptions.InvalidInputException, match="version"):
        glue.partitions_unchanged_since("db", "t", {"v": 1})  # type: ignore[arg-type]
    with pytest.raises(glue.exceptions.InvalidInputException, match="excluding"):
        glue.partitions_unchanged_since("db", "t", 0, ["1"])  # type: ignore[list-item]


def test_an_index_whose_backfill_fails_is_still_made_and_the_call_succeeds(tmp_path) -> None:
    """CreatePartitionIndex registers the index (CREATING) and then builds it, as Glue does in the
    background. A build that cannot read the partitions (here a damaged partition file) leaves the index
    CREATING for a later GetPartitionIndexes to finish; the call that made it does not fail, or its
    caller would retry and get AlreadyExistsException for an index that it was told was not made."""
    from pathlib import Path

    from gluecat.catalog.rows import merging

    warehouse = str(tmp_path / "w")
    glue = Catalog(warehouse)
    glue.create_database(DatabaseInput={"Name": "db"})
    make_table(glue, "t", [("k", "string")])
    for batch in ("a", "b"):
        glue.batch_create_partition(
            DatabaseName="db", TableName="t", PartitionInputList=[part(f"{batch}{i}") for i in range(3)]
        )
    assert merging.merge(glue.store, ("db", "t"), whole=True)  # the partitions in one data file
    (segment,) = glue.store.latest().table_segments(("db", "t"))
    data = bytearray(Path(warehouse, segment).read_bytes())
    data[len(data) // 2] ^= 0x01
    Path(warehouse, segment).write_bytes(data)

    fresh = Catalog(warehouse)  # a process that has not read the partitions yet
    fresh.create_partition_index(
        DatabaseName="db", TableName="t", PartitionIndex={"IndexName": "i", "Keys": ["k"]}
    )
    (index,) = fresh.get_partition_indexes(DatabaseName="db", TableName="t")["PartitionIndexDescriptorList"]
    assert (index["IndexName"], index["IndexStatus"]) == ("i", "CREATING")
