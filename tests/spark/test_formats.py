"""Glue tables as crawlers and Athena describe them read correctly from Spark; other SerDes are refused by name."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gluecat import Catalog
from gluecat.spark import formats

TEXT = {"InputFormat": formats.TEXT_INPUT, "OutputFormat": formats.TEXT_OUTPUT}


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


def test_spark_source_maps_descriptors_to_reader_options() -> None:
    def sd(lib: str, **params: str) -> dict[str, Any]:
        return {"StorageDescriptor": {"SerdeInfo": {"SerializationLibrary": lib, "Parameters": params}}}

    assert formats.spark_source(sd("org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe")) == (
        "parquet",
        {},
    )
    assert formats.spark_source(sd("org.apache.hadoop.hive.ql.io.orc.OrcSerde")) == ("orc", {})
    assert formats.spark_source(sd(formats.LAZY_SIMPLE, **{"field.delim": "\t"}))[1]["sep"] == "\t"
    assert formats.spark_source(sd(formats.LAZY_SIMPLE, **{"serialization.format": "44"}))[1]["sep"] == ","
    assert formats.spark_source({"Parameters": {"classification": "parquet"}}) == ("parquet", {})
    with pytest.raises(formats.Unreadable, match="one header line"):
        formats.spark_source({**sd(formats.OPEN_CSV), "Parameters": {"skip.header.line.count": "2"}})
    with pytest.raises(formats.Unreadable, match="no SerDe"):
        formats.spark_source({})


@pytest.mark.parametrize("provider", formats.FORMATS)
def test_every_spark_format_round_trips_through_its_descriptor(provider: str) -> None:
    table = {"StorageDescriptor": formats.storage_descriptor(provider)}
    assert formats.spark_source(table)[0] == provider
