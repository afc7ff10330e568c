"""Glue storage descriptors <-> Spark file sources.

Tables made through Spark get the Hive-compatible InputFormat, OutputFormat and SerDe of their format, as
Glue crawlers and Athena write them, so Hive, Athena and Trino read them too. The reverse direction maps a
crawler's or Athena's descriptor to the Spark file source and reader options that read the same bytes; a
SerDe that Spark cannot read gives an explanation naming it instead of a wrong answer.
"""

from __future__ import annotations

from typing import Any

from gluecat.catalog.table_changes import Layout

TEXT_INPUT = "org.apache.hadoop.mapred.TextInputFormat"
TEXT_OUTPUT = "org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat"
LAZY_SIMPLE = "org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe"
OPEN_CSV = "org.apache.hadoop.hive.serde2.OpenCSVSerde"
JSON_SERDES = (
    "org.openx.data.jsonserde.JsonSerDe",
    "org.apache.hive.hcatalog.data.JsonSerDe",
    "org.apache.hadoop.hive.serde2.JsonSerDe",
)

_DESCRIPTORS: dict[str, dict[str, Any]] = {
    "parquet": {
        "InputFormat": "org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat",
        "OutputFormat": "org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat",
        "SerdeInfo": {
            "SerializationLibrary": "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe",
            "Parameters": {"serialization.format": "1"},
        },
    },
    "orc": {
        "InputFormat": "org.apache.hadoop.hive.ql.io.orc.OrcInputFormat",
        "OutputFormat": "org.apache.hadoop.hive.ql.io.orc.OrcOutputFormat",
        "SerdeInfo": {
            "SerializationLibrary": "org.apache.hadoop.hive.ql.io.orc.OrcSerde",
            "Parameters": {"serialization.format": "1"},
        },
    },
    # Spark's CSV writer quotes fields the way OpenCSVSerde reads them (Athena's choice for quoted CSV).
    "csv": {
        "InputFormat": TEXT_INPUT,
        "OutputFormat": TEXT_OUTPUT,
        "SerdeInfo": {
            "SerializationLibrary": OPEN_CSV,
            "Parameters": {"separatorChar": ",", "quoteChar": '"', "escapeChar": "\\"},
        },
    },
    "json": {
        "InputFormat": TEXT_INPUT,
        "OutputFormat": TEXT_OUTPUT,
        "SerdeInfo": {"SerializationLibrary": "org.apache.hive.hcatalog.data.JsonSerDe", "Parameters": {}},
    },
}

FORMATS = tuple(_DESCRIPTORS)


def storage_descriptor(provider: str) -> dict[str, Any]:
    """The Hive-compatible InputFormat, OutputFormat and SerdeInfo of a Spark file source."""
    sd = _DESCRIPTORS[provider]
    return {**sd, "SerdeInfo": {**sd["SerdeInfo"], "Parameters": dict(sd["SerdeInfo"]["Parameters"])}}


class Unreadable(Exception):
    """A table whose storage Spark's file sources cannot read; the message names the SerDe."""


def _header(params: dict[str, str], table: dict[str, Any]) -> dict[str, str]:
    skip = table.get("Parameters", {}).get("skip.header.line.count") or params.get("skip.header.line.count")
    if skip in (None, "", "0"):
        return {}
    if skip == "1":
        return {"header": "true"}
    raise Unreadable(f"skip.header.line.count={skip}: Spark's CSV reader can skip one header line only")


def spark_source(table: dict[str, Any]) -> tuple[str, dict[str, str]]:
    """The Spark file source and reader options that read a Glue table's files, or Unreadable."""
    sd = table.get("StorageDescriptor") or {}
    serde = sd.get("SerdeInfo") or {}
    lib = serde.get("SerializationLibrary") or ""
    params = dict(serde.get("Parameters") or {})
    input_format = sd.get("InputFormat") or ""
    classification = (table.get("Parameters") or {}).get("classification", "").lower()
    lowered = (lib + " " + input_format).lower()
    if "parquet" in lowered or (not lib and classification == "parquet"):
        return "parquet", {}
    if "orc" in lowered or (not lib and classification == "orc"):
        return "orc", {}
    if lib in JSON_SERDES or (not lib and classification == "json"):
        return "json", {}
    if lib == OPEN_CSV:
        options = {
            "sep": params.get("separatorChar", ","),
            "quote": params.get("quoteChar", '"'),
            "escape": params.get("escapeChar", "\\"),
        }
        return "csv", {**options, **_header(params, table)}
    if lib == LAZY_SIMPLE or (not lib and classification == "csv"):
        sep = params.get("field.delim") or params.get("serialization.format") or "\x01"
        if sep.isdigit() and len(sep) > 1:  # Hive also accepts the delimiter as a byte number
            sep = chr(int(sep))
        options = {
            "sep": "\x01" if sep == "1" else sep,
            "quote": "\x00",  # LazySimpleSerDe has no quoting
            "nullValue": params.get("serialization.null.format", "\\N"),
        }
        if params.get("escape.delim"):
            options["escape"] = params["escape.delim"]
        return "csv", {**options, **_header(params, table)}
    if not lib:
        raise Unreadable(
            "the table has no SerDe (StorageDescriptor.SerdeInfo.SerializationLibrary) or classification"
        )
    raise Unreadable(f"SerDe {lib} cannot be read by Spark's file sources (parquet, orc, csv, json)")


def layout(table: dict[str, Any]) -> Layout:
    """How the table's data files find a column: CSV and Hive text by position, the rest by name."""
    try:
        fmt, _ = spark_source(table)
    except Unreadable:
        return Layout.BY_NAME  # the stricter rules for renames; a table Spark cannot read keeps its files
    return Layout.BY_POSITION if fmt == "csv" else Layout.BY_NAME
