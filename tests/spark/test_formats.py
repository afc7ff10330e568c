"""Glue tables as crawlers and Athena describe them read correctly from Spark; other SerDes are refused by name."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from gluecat import Catalog
from gluecat.data.refusals import SparkRefusal
from gluecat.errors import InvalidInputException
from gluecat.spark import formats

TEXT = {"InputFormat": formats.TEXT_INPUT, "OutputFormat": formats.TEXT_OUTPUT}
OPENX = "org.openx.data.jsonserde.JsonSerDe"


def make(
    cat: Catalog,
    db: str,
    name: str,
    folder: Path,
    serde: dict[str, Any],
    params: dict[str, str] | None = None,
) -> None:
    cat.create_table(
        DatabaseName=db,
        TableInput={
            "Name": name,
            "StorageDescriptor": {
                **TEXT,
                "SerdeInfo": serde,
                "Columns": [{"Name": "id", "Type": "int"}, {"Name": "name", "Type": "string"}],
                "Location": str(folder),
            },
            "Parameters": params or {},
        },
    )


def test_lazy_simple_serde_with_delimiter_and_header(
    spark: Any, warehouse: Path, ns: str, tmp_path: Path
) -> None:
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "data.txt").write_text("id|name\n1|ann\n2|\\N\n")
    serde = {"SerializationLibrary": formats.LAZY_SIMPLE, "Parameters": {"field.delim": "|"}}
    make(Catalog(str(warehouse)), ns, "pipes", tmp_path / "t", serde, {"skip.header.line.count": "1"})
    assert [tuple(r) for r in spark.sql(f"SELECT * FROM glue.{ns}.pipes ORDER BY id").collect()] == [
        (1, "ann"),
        (2, None),
    ]


def test_a_write_to_a_lazy_simple_serde_table_that_skips_headers_is_refused_not_lost(
    spark: Any, warehouse: Path, ns: str, tmp_path: Path
) -> None:
    # A crawler's CSV table: Hive's text SerDe writes no header, so each file written would lose its first
    # row to the header skip. The INSERT used to succeed and its rows never read back.
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "data.csv").write_text("id,name\n1,ann\n")
    serde = {"SerializationLibrary": formats.LAZY_SIMPLE, "Parameters": {"field.delim": ","}}
    make(Catalog(str(warehouse)), ns, "crawled", tmp_path / "t", serde, {"skip.header.line.count": "1"})
    with pytest.raises(Exception, match="skip.header.line.count.*rows written would read as headers"):
        spark.sql(f"INSERT INTO glue.{ns}.crawled VALUES (2, 'bob')")
    assert [p.name for p in (tmp_path / "t").iterdir()] == ["data.csv"]
    assert [tuple(r) for r in spark.sql(f"SELECT * FROM glue.{ns}.crawled").collect()] == [(1, "ann")]


def test_a_value_hives_text_serde_would_not_read_back_is_refused_before_anything_is_written(
    spark: Any, warehouse: Path, ns: str, tmp_path: Path
) -> None:
    # A crawler's unquoted CSV table (LazySimpleSerDe, field.delim ',', no escape.delim). Hive's SerDe
    # writes values as they are: 'smith, ann' used to be written and read back as name 'smith' and a
    # next column ' ann'; a line break made two rows; the string '\\N' read as NULL.
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "data.csv").write_text("1,ann\n")
    serde = {"SerializationLibrary": formats.LAZY_SIMPLE, "Parameters": {"field.delim": ","}}
    make(Catalog(str(warehouse)), ns, "crawled", tmp_path / "t", serde)
    t = f"glue.{ns}.crawled"
    for value, why in (
        ("'smith, ann'", "holds the field delimiter"),
        ("'two\\nlines'", "holds a line break"),
        ("'\\\\N'", "equals the table's null sequence"),
    ):
        with pytest.raises(Exception, match=f"column name {why}"):
            spark.sql(f"INSERT INTO {t} VALUES (1, 'fine'), (2, {value})")
    assert [p.name for p in (tmp_path / "t").iterdir()] == ["data.csv"]
    spark.sql(f"INSERT INTO {t} VALUES (2, 'bob')")  # values it reads back are written as before
    assert [tuple(r) for r in spark.sql(f"SELECT * FROM {t} ORDER BY id").collect()] == [
        (1, "ann"),
        (2, "bob"),
    ]


def test_lazy_simple_serde_default_ctrl_a_delimiter(
    spark: Any, warehouse: Path, ns: str, tmp_path: Path
) -> None:
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "data").write_text('1\x01"quoted, text"\n')
    make(
        Catalog(str(warehouse)),
        ns,
        "hive_text",
        tmp_path / "t",
        {"SerializationLibrary": formats.LAZY_SIMPLE},
    )
    assert [tuple(r) for r in spark.sql(f"SELECT * FROM glue.{ns}.hive_text").collect()] == [
        (1, '"quoted, text"')
    ]


def test_open_csv_serde(spark: Any, warehouse: Path, ns: str, tmp_path: Path) -> None:
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "data.csv").write_text('"id","name"\n1,"smith, ann"\n')
    serde = {"SerializationLibrary": formats.OPEN_CSV, "Parameters": {"separatorChar": ",", "quoteChar": '"'}}
    make(Catalog(str(warehouse)), ns, "quoted", tmp_path / "t", serde, {"skip.header.line.count": "1"})
    assert [tuple(r) for r in spark.sql(f"SELECT * FROM glue.{ns}.quoted").collect()] == [(1, "smith, ann")]


@pytest.mark.parametrize("serde", formats.JSON_SERDES)
def test_json_serdes(spark: Any, warehouse: Path, ns: str, tmp_path: Path, serde: str) -> None:
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "data.json").write_text(json.dumps({"id": 7, "name": "x"}) + "\n")
    make(Catalog(str(warehouse)), ns, "js", tmp_path / "t", {"SerializationLibrary": serde})
    assert [tuple(r) for r in spark.sql(f"SELECT * FROM glue.{ns}.js").collect()] == [(7, "x")]


def json_table(
    cat: Catalog, db: str, name: str, folder: Path, serde: str, columns: str, **params: str
) -> None:
    """A crawler's or Athena's JSON table: ``columns`` as ``name type, ...``."""
    cat.create_table(
        DatabaseName=db,
        TableInput={
            "Name": name,
            "StorageDescriptor": {
                **TEXT,
                "SerdeInfo": {"SerializationLibrary": serde, "Parameters": params},
                "Columns": [
                    {"Name": n, "Type": t} for n, t in (c.strip().split(" ", 1) for c in columns.split(";"))
                ],
                "Location": str(folder),
            },
            "Parameters": {"classification": "json"},
        },
    )


def rows(spark: Any, query: str) -> list[tuple[Any, ...]]:
    return [tuple(r) for r in spark.sql(query).collect()]


@pytest.mark.parametrize("serde", formats.JSON_SERDES)
def test_json_keys_match_columns_case_insensitively_at_every_level(
    spark: Any, warehouse: Path, ns: str, tmp_path: Path, serde: str
) -> None:
    # JSON logs are camelCase; Glue's columns are lower case. Hive's JSON SerDes (so Hive, Athena, Spark on
    # EMR) match keys to columns and struct fields case-insensitively; Spark's JSON reader matched them
    # exactly, so these columns read as NULL without an error. Map keys and a string column's JSON text
    # stay as written.
    record = {
        "Payload": {"A": 1},
        "userId": 7,
        "Info": {"CountryCode": "FR", "Tags": {"K": 1, "k": 2}},
        "EVENTS": [{"Kind": "click"}],
    }
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "data.json").write_text(json.dumps(record) + "\n")
    columns = (
        "userid int; info struct<countrycode:string,tags:map<string,int>>; events array<struct<kind:string>>; "
        "payload string"
    )
    json_table(Catalog(str(warehouse)), ns, "logs", tmp_path / "t", serde, columns)
    assert rows(spark, f"SELECT * FROM glue.{ns}.logs") == [
        (7, ("FR", {"K": 1, "k": 2}), [("click",)], '{"A": 1}')
    ]
    # The filters Spark evaluates while parsing see the matched columns too.
    assert rows(spark, f"SELECT userid FROM glue.{ns}.logs WHERE info.countrycode = 'FR' AND userid = 7") == [
        (7,)
    ]


def test_json_keys_match_case_insensitively_in_tables_made_with_hive_ddl_and_in_multiline_files(
    spark: Any, ns: str, tmp_path: Path
) -> None:
    folder = tmp_path / "t"
    folder.mkdir()
    (folder / "a.json").write_text(json.dumps([{"Id": 1, "Name": {"First": "ann"}}], indent=2))
    spark.sql(
        f"CREATE TABLE glue.{ns}.people (id INT, name STRUCT<first: STRING>) "
        "ROW FORMAT SERDE 'org.apache.hive.hcatalog.data.JsonSerDe' WITH SERDEPROPERTIES ('multiLine' = 'true') "
        f"STORED AS TEXTFILE LOCATION '{folder}'"
    )
    spark.sql(f"INSERT INTO glue.{ns}.people VALUES (2, named_struct('first', 'bob'))")
    assert rows(spark, f"SELECT id, name.first FROM glue.{ns}.people ORDER BY id") == [(1, "ann"), (2, "bob")]


JSON_SEED = 20261127


def test_random_json_records_with_keys_in_any_case_read_as_spark_reads_them_in_lower_case(
    spark: Any, warehouse: Path, ns: str, tmp_path: Path
) -> None:
    # Nested structs, arrays of structs, maps, string columns holding objects and keys of no column (whose
    # values Spark's parser skips whole), each struct key in random case in the table's file: every row
    # and filtered query must read as Spark's own reader reads the same records with lower-case keys.
    rnd = random.Random(JSON_SEED)

    def cased(key: str) -> str:
        return "".join(c.upper() if rnd.random() < 0.5 else c for c in key)

    def anything(depth: int) -> Any:
        pick = rnd.random()
        if depth < 3 and pick < 0.3:
            return {
                cased(k): anything(depth + 1) for k in rnd.sample(["id", "s", "aa", "k"], rnd.randint(0, 4))
            }
        if depth < 3 and pick < 0.45:
            return [anything(depth + 1) for _ in range(rnd.randint(0, 3))]
        return rnd.choice([1, "x", None, 2.5, True])

    mixed, lower = [], []
    for i in range(300):
        raw, junk, tags = anything(0), anything(0), {cased("key"): i % 3, cased("key"): 1}
        s = {"aa": rnd.choice([None, 1, 2]), "bb": {"cc": rnd.choice(["p", "q"]), "mm": tags}}
        arr = [{"xx": rnd.randint(0, 3)} for _ in range(rnd.randint(0, 2))]
        fields = [("junk", junk), ("id", i), ("s", s), ("arr", arr), ("raw", raw)]
        rnd.shuffle(fields)
        lower.append(dict(fields))
        mixed.append(
            {
                cased(k): {cased("aa"): v["aa"], cased("bb"): {cased("cc"): v["bb"]["cc"], cased("mm"): tags}}
                if k == "s"
                else [{cased("xx"): e["xx"]} for e in v]
                if k == "arr"
                else v
                for k, v in fields
            }
        )
    for name, records in (("mixed", mixed), ("lower", lower)):
        (tmp_path / name).mkdir()
        (tmp_path / name / "data.json").write_text("".join(json.dumps(r) + "\n" for r in records))
    columns = "id int; s struct<aa:int,bb:struct<cc:string,mm:map<string,int>>>; arr array<struct<xx:int>>; raw string"
    json_table(Catalog(str(warehouse)), ns, "mixed", tmp_path / "mixed", OPENX, columns)
    spark.read.schema(columns.replace(";", ",")).json(str(tmp_path / "lower")).createOrReplaceTempView(
        "lower_keys"
    )
    for where in ("true", "s.aa = 2 AND s.bb.cc = 'p'", "size(arr) > 1 AND raw IS NULL"):
        query = f"SELECT * FROM {{}} WHERE {where} ORDER BY id"
        got = rows(spark, query.format(f"glue.{ns}.mixed"))
        assert got == rows(spark, query.format("lower_keys")), f"seed {JSON_SEED}: {where}"
        assert got, where


def test_of_two_json_keys_naming_one_column_the_first_is_read(
    spark: Any, warehouse: Path, ns: str, tmp_path: Path
) -> None:
    # Spark's parser tests a pushed filter as soon as the column is set: were a later key read, a row
    # would be kept or dropped by a value other than the one returned.
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "data.json").write_text(
        json.dumps({"id": 1, "ID": 5, "s": {"X": "first", "x": "second"}}) + "\n"
    )
    json_table(
        Catalog(str(warehouse)),
        ns,
        "dups",
        tmp_path / "t",
        formats.JSON_SERDES[1],
        "id int; s struct<x:string>",
    )
    assert rows(spark, f"SELECT id, s.x FROM glue.{ns}.dups") == [(1, "first")]
    assert rows(spark, f"SELECT id FROM glue.{ns}.dups WHERE id = 1") == [(1,)]
    assert rows(spark, f"SELECT id FROM glue.{ns}.dups WHERE id = 5") == []


def test_openx_case_insensitive_false_matches_keys_exactly_and_mappings_name_other_keys(
    spark: Any, warehouse: Path, ns: str, tmp_path: Path
) -> None:
    # Athena's documented answer to keys that differ only in case: case.insensitive = false, and a
    # mapping.<column> for each key that is not the column's name.
    cat = Catalog(str(warehouse))
    (tmp_path / "exact").mkdir()
    (tmp_path / "exact" / "data.json").write_text(
        json.dumps({"userid": 1, "UserId": 2, "URL": "a", "Url": "b", "in": {"Deep": 3, "deep": 4}}) + "\n"
    )
    params = {"case.insensitive": "FALSE", "mapping.url1": "URL", "mapping.url2": "Url"}
    columns = "userid int; url1 string; url2 string; in struct<deep:int>"
    json_table(cat, ns, "exact", tmp_path / "exact", OPENX, columns, **params)
    assert rows(spark, f"SELECT * FROM glue.{ns}.exact") == [(1, "a", "b", (4,))]

    (tmp_path / "mapped").mkdir()
    (tmp_path / "mapped" / "data.json").write_text(json.dumps({"ts": "no", "TimeStamp": "yes"}) + "\n")
    json_table(cat, ns, "mapped", tmp_path / "mapped", OPENX, "ts string", **{"mapping.ts": "timestamp"})
    assert rows(spark, f"SELECT ts FROM glue.{ns}.mapped") == [("yes",)]
    # Spark's JSON writer would write the column as "ts", which the table does not read.
    with pytest.raises(Exception, match="mapping.ts.*would read as NULL"):
        spark.sql(f"INSERT INTO glue.{ns}.mapped VALUES ('lost')")
    assert [p.name for p in (tmp_path / "mapped").iterdir()] == ["data.json"]


def test_only_openx_tables_pass_its_key_parameters_to_the_json_reader() -> None:
    def options(lib: str) -> dict[str, str]:
        params = {"case.insensitive": "false", "mapping.ts": "timestamp", "multiLine": "true"}
        return formats.spark_source(
            {"StorageDescriptor": {"SerdeInfo": {"SerializationLibrary": lib, "Parameters": params}}}
        )[1]

    assert options(OPENX) == {
        "case.insensitive": "false",
        "mapping.ts": "timestamp",
        "multiLine": "true",
    }
    for lib in formats.JSON_SERDES[1:]:
        assert options(lib) == {"multiLine": "true"}


def test_a_serde_spark_cannot_read_is_named_in_the_error(
    spark: Any, warehouse: Path, ns: str, tmp_path: Path
) -> None:
    regex = {
        "SerializationLibrary": "org.apache.hadoop.hive.serde2.RegexSerDe",
        "Parameters": {"input.regex": "(.*)"},
    }
    make(Catalog(str(warehouse)), ns, "logs", tmp_path, regex)
    # The table is still visible and describable; only reading or writing it is refused.
    assert [r.col_name for r in spark.sql(f"DESCRIBE TABLE glue.{ns}.logs").collect()][:2] == ["id", "name"]
    with pytest.raises(Exception, match="SerDe org.apache.hadoop.hive.serde2.RegexSerDe cannot be read"):
        spark.sql(f"SELECT * FROM glue.{ns}.logs").collect()
    with pytest.raises(Exception, match="RegexSerDe"):
        spark.sql(f"INSERT INTO glue.{ns}.logs VALUES (1, 'x')")


@pytest.mark.parametrize(
    ("shape", "serde", "input_format", "params"),
    [
        # Athena's CREATE TABLE ... TBLPROPERTIES ('table_type'='ICEBERG'), as Glue shows it.
        (
            "iceberg",
            formats.LAZY_SIMPLE,
            "org.apache.hadoop.mapred.FileInputFormat",
            {"table_type": "ICEBERG"},
        ),
        # Hudi's Glue sync: Parquet files, several versions of each row among them.
        ("hudi", formats.PARQUET_SERDE, "org.apache.hudi.hadoop.HoodieParquetInputFormat", {}),
        # A Delta table registered with a Parquet SerDe: its folder keeps removed files.
        (
            "delta",
            formats.PARQUET_SERDE,
            "org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat",
            {"spark.sql.sources.provider": "delta"},
        ),
    ],
)
def test_an_open_table_formats_table_is_not_read_as_its_folders_files(
    spark: Any,
    warehouse: Path,
    ns: str,
    tmp_path: Path,
    shape: str,
    serde: str,
    input_format: str,
    params: dict[str, str],
) -> None:
    # Such a table's rows are the files its own metadata lists; its folder also holds files it removed
    # or superseded (and metadata). Read as plain Parquet or text, they used to come back as rows.
    folder = tmp_path / "t"
    folder.mkdir()
    pq.write_table(pa.table({"id": pa.array([1], pa.int32()), "name": ["removed"]}), folder / "old.parquet")
    Catalog(str(warehouse)).create_table(
        DatabaseName=ns,
        TableInput={
            "Name": shape,
            "TableType": "EXTERNAL_TABLE",
            "Parameters": params,
            "StorageDescriptor": {
                "InputFormat": input_format,
                "OutputFormat": formats.TEXT_OUTPUT,
                "SerdeInfo": {"SerializationLibrary": serde},
                "Columns": [{"Name": "id", "Type": "int"}, {"Name": "name", "Type": "string"}],
                "Location": str(folder),
            },
        },
    )
    with pytest.raises(Exception, match="table: its rows are the data files its own metadata lists"):
        spark.sql(f"SELECT * FROM glue.{ns}.{shape}").collect()
    with pytest.raises(Exception, match="its own metadata lists"):
        spark.sql(f"INSERT INTO glue.{ns}.{shape} VALUES (2, 'new')")
    assert [p.name for p in folder.iterdir()] == ["old.parquet"]


def test_a_table_spark_could_not_read_is_not_created(spark: Any, warehouse: Path, ns: str) -> None:
    with pytest.raises(Exception, match="an Iceberg table"):
        spark.sql(f"CREATE TABLE glue.{ns}.i (a INT) USING parquet TBLPROPERTIES ('table_type' = 'ICEBERG')")
    assert Catalog(str(warehouse)).get_tables(DatabaseName=ns)["TableList"] == []


def test_spark_source_maps_descriptors_to_reader_options() -> None:
    def sd(lib: str, **params: str) -> dict[str, Any]:
        return {"StorageDescriptor": {"SerdeInfo": {"SerializationLibrary": lib, "Parameters": params}}}

    assert formats.spark_source(sd(formats.PARQUET_SERDE, **{"serialization.format": "1"})) == ("parquet", {})
    assert formats.spark_source(sd(formats.ORC_SERDE)) == ("orc", {})
    # Every SerDe parameter reaches the reader and writer (Hive's own encoding flags excepted).
    assert formats.spark_source(sd(formats.PARQUET_SERDE, compression="gzip"))[1] == {"compression": "gzip"}
    orc = {**sd(formats.ORC_SERDE), "Parameters": {"orc.compress": "ZLIB", "other": "x"}}
    assert formats.spark_source(orc) == ("orc", {"orc.compress": "ZLIB"})
    csv = formats.spark_source(sd(formats.OPEN_CSV, separatorChar=";", nullValue="NA"))[1]
    assert (csv["sep"], csv["nullValue"]) == (";", "NA") and "separatorChar" not in csv
    text = formats.spark_source(sd(formats.LAZY_SIMPLE, **{"field.delim": "\t"}))
    assert text == ("hive-text", {"field.delim": "\t", "serialization.lib": formats.LAZY_SIMPLE})
    assert formats.spark_source({"Parameters": {"classification": "parquet"}}) == ("parquet", {})
    with pytest.raises(formats.Unreadable, match="one header line"):
        formats.spark_source({**sd(formats.OPEN_CSV), "Parameters": {"skip.header.line.count": "2"}})
    with pytest.raises(formats.Unreadable, match="no SerDe"):
        formats.spark_source({})


def serde_of(properties: dict[str, str]) -> tuple[str, dict[str, str], str, dict[str, str]]:
    storage = formats.table_storage(properties)
    info = storage.descriptor["SerdeInfo"]
    return info["SerializationLibrary"], info["Parameters"], storage.source, storage.parameters


def test_hive_ddl_is_recorded_as_hive_records_it() -> None:
    assert serde_of({"hive.stored-as": "ORC"})[:3] == (
        formats.ORC_SERDE,
        {"serialization.format": "1"},
        "orc",
    )
    delimited = {"hive.stored-as": "TEXTFILE", "option.field.delim": "|", "option.serialization.format": "|"}
    assert serde_of(delimited) == (
        formats.LAZY_SIMPLE,
        {"field.delim": "|", "serialization.format": "|"},
        "hive-text",
        {"classification": "csv"},
    )
    assert serde_of({"hive.stored-as": "TEXTFILE"})[1] == {"serialization.format": "1"}  # Hive's ^A
    open_csv = {"hive.serde": formats.OPEN_CSV, "hive.stored-as": "TEXTFILE", "option.separatorChar": ";"}
    assert serde_of(open_csv)[:3] == (formats.OPEN_CSV, {"separatorChar": ";"}, "csv")
    assert serde_of({"hive.stored-as": "JSONFILE"})[2] == "json"
    assert serde_of({"provider": "hive", "option.fileFormat": "parquet"})[2] == "parquet"
    text_io = {"hive.input-format": formats.TEXT_INPUT, "hive.output-format": formats.TEXT_OUTPUT}
    assert serde_of(text_io)[0] == formats.LAZY_SIMPLE
    for refused, match in [
        ({"hive.stored-as": "SEQUENCEFILE"}, "STORED AS SEQUENCEFILE: Spark's file sources cannot write it"),
        ({"hive.stored-as": "AVRO"}, "STORED AS AVRO"),
        ({"hive.serde": "org.apache.hadoop.hive.serde2.RegexSerDe"}, "RegexSerDe'"),
        (
            {"hive.stored-as": "ORC", "hive.serde": formats.PARQUET_SERDE},
            "cannot store a table STORED AS ORC",
        ),
        ({"provider": "avro"}, "USING avro"),
    ]:
        with pytest.raises(InvalidInputException, match=match):
            formats.table_storage(refused)


def test_csv_options_become_opencsv_parameters_and_come_back_as_options() -> None:
    lib, serde, source, params = serde_of(
        {"provider": "csv", "option.sep": ";", "option.header": "true", "option.nullValue": "NA"}
    )
    assert (lib, source) == (formats.OPEN_CSV, "csv")
    assert serde == {"separatorChar": ";", "quoteChar": '"', "escapeChar": "\\", "nullValue": "NA"}
    assert params == {"classification": "csv", "skip.header.line.count": "1"}
    table = {
        "StorageDescriptor": {"SerdeInfo": {"SerializationLibrary": lib, "Parameters": serde}},
        "Parameters": params,
    }
    assert formats.spark_source(table) == (
        "csv",
        {"sep": ";", "quote": '"', "escape": "\\", "nullValue": "NA", "header": "true"},
    )


def test_tables_no_write_could_fill_are_refused_at_create() -> None:
    with pytest.raises(SparkRefusal) as refused:
        formats.check_columns("parquet", [], [{"name": "a", "type": "int"}])
    assert refused.value.error_class == "ALL_PARTITION_COLUMNS_NOT_ALLOWED"
    with pytest.raises(SparkRefusal) as refused:
        formats.check_columns("csv", [{"name": "m", "type": "map<string,int>"}], [])
    assert refused.value.params == {"format": "CSV", "columnName": "`m`", "columnType": '"MAP<STRING, INT>"'}
    formats.check_columns("hive-text", [{"name": "m", "type": "map<string,int>"}], [])  # Hive text holds it
    assert (
        formats.sql_type("array<struct<a:int,b:decimal(10,2)>>") == "ARRAY<STRUCT<a: INT, b: DECIMAL(10,2)>>"
    )


@pytest.mark.parametrize("provider", formats.FORMATS)
def test_every_spark_format_round_trips_through_its_descriptor(provider: str) -> None:
    table = {"StorageDescriptor": formats.storage_descriptor(provider)}
    assert formats.spark_source(table)[0] == provider


def part_files(folder: Path) -> list[Path]:
    return sorted(folder.rglob("part-*"))


def test_stored_as_textfile_row_format_delimited_writes_and_reads_as_hive_does(
    spark: Any, warehouse: Path, ns: str
) -> None:
    t = f"glue.{ns}.txt"
    spark.sql(
        f"CREATE TABLE {t} (a INT, b STRING, tags ARRAY<STRING>) "
        "ROW FORMAT DELIMITED FIELDS TERMINATED BY '|' COLLECTION ITEMS TERMINATED BY ',' STORED AS TEXTFILE"
    )
    sd = Catalog(str(warehouse)).get_table(DatabaseName=ns, Name="txt")["Table"]["StorageDescriptor"]
    assert (sd["InputFormat"], sd["OutputFormat"]) == (formats.TEXT_INPUT, formats.TEXT_OUTPUT)
    assert sd["SerdeInfo"]["SerializationLibrary"] == formats.LAZY_SIMPLE
    assert sd["SerdeInfo"]["Parameters"]["field.delim"] == "|"
    spark.sql(f"INSERT INTO {t} VALUES (1, 'x', array('p', 'q')), (2, NULL, NULL), (3, '', array())")
    # Hive's SerDe has no escape here: 'x|y' would be written as is and read back as 'x' and ['y'].
    with pytest.raises(Exception, match="column b holds the field delimiter"):
        spark.sql(f"INSERT INTO {t} VALUES (4, 'x|y', array('p', 'q'))")
    lines = sorted(
        line for f in part_files(warehouse / f"{ns}.db" / "txt") for line in f.read_text().splitlines()
    )
    assert lines == ["1|x|p,q", "2|\\N|\\N", "3||"]  # Hive's bytes: no quoting, \N for NULL
    # Read as Hive reads them: an empty string stays one.
    assert [tuple(r) for r in spark.sql(f"SELECT a, b, tags FROM {t} ORDER BY a").collect()] == [
        (1, "x", ["p", "q"]),
        (2, None, None),
        (3, "", []),
    ]
    described = {r.col_name: r.data_type for r in spark.sql(f"DESCRIBE TABLE EXTENDED {t}").collect()}
    assert described["Provider"] == "hive"


def test_stored_as_orc_and_table_options_reach_the_writer(spark: Any, warehouse: Path, ns: str) -> None:
    spark.sql(f"CREATE TABLE glue.{ns}.o (a INT) STORED AS ORC TBLPROPERTIES ('orc.compress'='ZLIB')")
    spark.sql(f"CREATE TABLE glue.{ns}.pq (a INT) USING parquet OPTIONS (compression 'gzip')")
    for name in ("o", "pq"):
        spark.sql(f"INSERT INTO glue.{ns}.{name} VALUES (1)")
        assert [tuple(r) for r in spark.table(f"glue.{ns}.{name}").collect()] == [(1,)]
    sd = Catalog(str(warehouse)).get_table(DatabaseName=ns, Name="o")["Table"]["StorageDescriptor"]
    assert sd["SerdeInfo"]["SerializationLibrary"] == formats.ORC_SERDE
    assert [f.name.endswith(".zlib.orc") for f in part_files(warehouse / f"{ns}.db" / "o")] == [True]
    assert [f.name.endswith(".gz.parquet") for f in part_files(warehouse / f"{ns}.db" / "pq")] == [True]


def test_csv_options_reach_the_writer_and_the_reader(spark: Any, warehouse: Path, ns: str) -> None:
    t = f"glue.{ns}.c"
    spark.sql(f"CREATE TABLE {t} (a INT, b STRING) USING csv OPTIONS (sep ';', header 'true')")
    spark.sql(f"INSERT INTO {t} VALUES (1, 'x'), (2, 'y;z')")
    texts = [f.read_text() for f in part_files(warehouse / f"{ns}.db" / "c")]
    assert all(text.startswith("a;b\n") for text in texts) and '2;"y;z"' in "".join(texts)
    assert [tuple(r) for r in spark.sql(f"SELECT * FROM {t} ORDER BY a").collect()] == [(1, "x"), (2, "y;z")]
    table = Catalog(str(warehouse)).get_table(DatabaseName=ns, Name="c")["Table"]
    assert table["StorageDescriptor"]["SerdeInfo"]["Parameters"]["separatorChar"] == ";"
    assert table["Parameters"]["skip.header.line.count"] == "1"
    assert "sep" not in table["Parameters"] and "header" not in table["Parameters"]


def test_what_no_write_could_fill_is_refused_at_create(spark: Any, warehouse: Path, ns: str) -> None:
    with pytest.raises(Exception, match="UNSUPPORTED_DATA_TYPE_FOR_DATASOURCE"):
        spark.sql(f"CREATE TABLE glue.{ns}.m (m MAP<STRING, INT>) USING csv")
    with pytest.raises(Exception, match="ALL_PARTITION_COLUMNS_NOT_ALLOWED"):
        spark.sql(f"CREATE TABLE glue.{ns}.p (a INT) USING parquet PARTITIONED BY (a)")
    with pytest.raises(Exception, match="STORED AS SEQUENCEFILE: Spark's file sources cannot write it"):
        spark.sql(f"CREATE TABLE glue.{ns}.s (a INT) STORED AS SEQUENCEFILE")
    assert Catalog(str(warehouse)).get_tables(DatabaseName=ns)["TableList"] == []


@pytest.mark.parametrize(
    "storage", ["USING parquet", "USING orc", "USING csv", "USING json", "STORED AS TEXTFILE"]
)
def test_a_table_an_earlier_gluecat_kept_in_sparks_column_order_reads_its_files_as_before(
    spark: Any, warehouse: Path, ns: str, storage: str
) -> None:
    """gluecat once kept Spark's order (partition column in the middle) in a table parameter; tables now
    read in Glue's order, which changes no file's reading: the files hold the data columns, in the
    order of the descriptor's columns, which Parquet, ORC and JSON find by name and CSV and text by
    position."""
    hive = "STORED AS TEXTFILE" in storage
    ddl = "(a INT, b STRING) PARTITIONED BY (p STRING)" if hive else "(a INT, p STRING, b STRING)"
    spark.sql(f"CREATE TABLE glue.{ns}.t {ddl} {storage}{'' if hive else ' PARTITIONED BY (p)'}")
    spark.sql(f"INSERT INTO glue.{ns}.t VALUES (1, 'one', 'x')")  # a, b, then the key p
    cat = Catalog(str(warehouse))
    table = cat.get_table(DatabaseName=ns, Name="t")["Table"]
    new = {k: table[k] for k in ("Name", "StorageDescriptor", "PartitionKeys", "TableType", "Parameters")}
    new["Parameters"] = {**table["Parameters"], "gluecat.spark.column_order": json.dumps(["a", "p", "b"])}
    cat.update_table(DatabaseName=ns, TableInput=new)
    assert [f.name for f in spark.table(f"glue.{ns}.t").schema.fields] == ["a", "b", "p"]
    spark.sql(f"INSERT INTO glue.{ns}.t VALUES (2, 'two', 'y')")
    assert sorted(tuple(r) for r in spark.sql(f"SELECT a, b, p FROM glue.{ns}.t").collect()) == [
        (1, "one", "x"),
        (2, "two", "y"),
    ]
    shown = {r[0] for r in spark.sql(f"SHOW TBLPROPERTIES glue.{ns}.t").collect()}
    assert "gluecat.spark.column_order" not in shown
