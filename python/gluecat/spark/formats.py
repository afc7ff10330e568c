"""Glue storage descriptors <-> Spark file sources, both ways.

Tables made through Spark get the Hive-compatible InputFormat, OutputFormat and SerDe of their format, as
Spark's built-in Hive catalog, Glue crawlers and Athena record them, so Hive, Athena and Trino read them
too: ``USING parquet|orc|csv|json`` and Hive's DDL (``STORED AS PARQUET|ORC|TEXTFILE|JSONFILE``, ``ROW FORMAT
DELIMITED ...``, ``ROW FORMAT SERDE ... WITH SERDEPROPERTIES``). A table's options become its SerDe
parameters, and come back from them as the options of Spark's reader and writer. The reverse direction maps
any descriptor (a crawler's, Athena's) to the Spark source that reads the same bytes; Hive's text SerDe
(LazySimpleSerDe) is read and written with Hive's own SerDe ("hive-text"), as Spark's Hive catalog does. A
format Spark cannot write is refused at CREATE, and a SerDe Spark cannot read gives an explanation naming it
instead of a wrong answer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from gluecat.catalog.table_changes import Layout
from gluecat.data.refusals import SparkRefusal, quoted
from gluecat.errors import InvalidInputException

TEXT_INPUT = "org.apache.hadoop.mapred.TextInputFormat"
TEXT_OUTPUT = "org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat"
LAZY_SIMPLE = "org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe"
OPEN_CSV = "org.apache.hadoop.hive.serde2.OpenCSVSerde"
HIVE_JSON = "org.apache.hadoop.hive.serde2.JsonSerDe"
OPENX_JSON = "org.openx.data.jsonserde.JsonSerDe"
JSON_SERDES = (OPENX_JSON, "org.apache.hive.hcatalog.data.JsonSerDe", HIVE_JSON)
PARQUET_SERDE = "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe"
ORC_SERDE = "org.apache.hadoop.hive.ql.io.orc.OrcSerde"
# The Spark source that reads and writes Hive's delimited text with Hive's LazySimpleSerDe (the shim's).
HIVE_TEXT = "hive-text"

_DESCRIPTORS: dict[str, dict[str, Any]] = {
    "parquet": {
        "InputFormat": "org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat",
        "OutputFormat": "org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat",
        "SerdeInfo": {"SerializationLibrary": PARQUET_SERDE, "Parameters": {"serialization.format": "1"}},
    },
    "orc": {
        "InputFormat": "org.apache.hadoop.hive.ql.io.orc.OrcInputFormat",
        "OutputFormat": "org.apache.hadoop.hive.ql.io.orc.OrcOutputFormat",
        "SerdeInfo": {"SerializationLibrary": ORC_SERDE, "Parameters": {"serialization.format": "1"}},
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
    # Hive's STORED AS TEXTFILE, as Spark's Hive catalog records it.
    HIVE_TEXT: {
        "InputFormat": TEXT_INPUT,
        "OutputFormat": TEXT_OUTPUT,
        "SerdeInfo": {"SerializationLibrary": LAZY_SIMPLE, "Parameters": {}},
    },
}

FORMATS = ("parquet", "orc", "csv", "json")
STORED_AS = {"PARQUET": "parquet", "ORC": "orc", "TEXTFILE": HIVE_TEXT, "JSONFILE": "json"}
# Spark's CSV options and the OpenCSVSerde parameters that say the same.
_CSV_TO_SERDE = {
    "sep": "separatorChar",
    "delimiter": "separatorChar",
    "quote": "quoteChar",
    "escape": "escapeChar",
}
# SerDe parameters that describe Hive's own encoding, not options of Spark's readers and writers.
_HIVE_ONLY = {"serialization.format"}
HEADER = "skip.header.line.count"


def storage_descriptor(provider: str) -> dict[str, Any]:
    """The Hive-compatible InputFormat, OutputFormat and SerdeInfo of a Spark file source."""
    sd = _DESCRIPTORS[provider]
    return {**sd, "SerdeInfo": {**sd["SerdeInfo"], "Parameters": dict(sd["SerdeInfo"]["Parameters"])}}


@dataclass
class Storage:
    """How a new table's files are stored: its descriptor (less columns and location), the table parameters
    the format adds, and the Spark source that will read and write it."""

    descriptor: dict[str, Any]
    parameters: dict[str, str]
    source: str


def table_storage(properties: dict[str, str]) -> Storage:
    """The storage of a table Spark creates, from its properties: ``provider`` (USING) with ``option.*``, or
    Hive's DDL as Spark passes it (``hive.stored-as``, ``hive.serde``, ``hive.input-format``, and the SerDe
    properties and ROW FORMAT delimiters as ``option.*``). Refuses what Spark's file sources cannot write."""
    # The path option repeats LOCATION (DataFrameWriter.save(path), Catalog.createTable(path=...)).
    options = {
        k.removeprefix("option."): v
        for k, v in properties.items()
        if k.startswith("option.") and k != "option.path"
    }
    provider = (properties.get("provider") or "").lower()
    stored_as = properties.get("hive.stored-as")
    if provider == "hive":  # USING hive OPTIONS (fileFormat 'orc'): Hive's DDL by other words
        stored_as = options.pop("fileFormat", None) or stored_as or "TEXTFILE"
        provider = ""
    hive = stored_as or properties.get("hive.serde") or properties.get("hive.input-format")
    if hive:
        return _hive_storage(stored_as, properties, options)
    provider = provider or "parquet"
    if provider not in FORMATS:
        raise InvalidInputException(
            f"USING {provider}: gluecat tables are USING {', '.join(FORMATS)}, or Hive's STORED AS "
            f"{', '.join(STORED_AS)}"
        )
    sd = storage_descriptor(provider)
    params: dict[str, str] = {"classification": provider}
    if provider == "csv":
        serde = sd["SerdeInfo"]["Parameters"]
        for key, value in options.items():
            if key in _CSV_TO_SERDE:
                serde[_CSV_TO_SERDE[key]] = value
            elif key == "header":
                if value.lower() == "true":
                    params[HEADER] = "1"  # Athena's and Hive's way of saying the files start with a header
            else:
                serde[key] = value
    else:
        sd["SerdeInfo"]["Parameters"].update(options)
    return Storage(sd, params, provider)


def _hive_storage(stored_as: str | None, properties: dict[str, str], options: dict[str, str]) -> Storage:
    serde = properties.get("hive.serde")
    input_format = properties.get("hive.input-format") or ""
    name = (stored_as or "").upper()
    if name:
        if name not in STORED_AS:
            raise InvalidInputException(
                f"STORED AS {name}: Spark's file sources cannot write it; gluecat tables are STORED AS "
                f"{', '.join(STORED_AS)}, or USING {', '.join(FORMATS)}"
            )
        source = STORED_AS[name]
    elif "parquet" in input_format.lower():
        source = "parquet"
    elif "orc" in input_format.lower():
        source = "orc"
    elif input_format == TEXT_INPUT or serde:
        source = HIVE_TEXT
    else:
        raise InvalidInputException(
            f"STORED AS INPUTFORMAT '{input_format}': Spark's file sources cannot read it; gluecat tables are "
            f"STORED AS {', '.join(STORED_AS)}"
        )
    sd = storage_descriptor(source)
    if serde and source == HIVE_TEXT:
        if serde not in (LAZY_SIMPLE, OPEN_CSV, *JSON_SERDES):
            raise InvalidInputException(
                f"ROW FORMAT SERDE '{serde}': Spark's file sources cannot write it; gluecat's text tables use "
                f"{LAZY_SIMPLE}, {OPEN_CSV} or a JSON SerDe"
            )
        sd["SerdeInfo"]["SerializationLibrary"] = serde
        sd["SerdeInfo"]["Parameters"] = {}
    elif serde and serde != sd["SerdeInfo"]["SerializationLibrary"]:
        raise InvalidInputException(f"ROW FORMAT SERDE '{serde}' cannot store a table STORED AS {name}")
    sd["SerdeInfo"]["Parameters"].update(options)
    lib = sd["SerdeInfo"]["SerializationLibrary"]
    if lib == LAZY_SIMPLE and "field.delim" not in options:
        sd["SerdeInfo"]["Parameters"].setdefault("serialization.format", "1")  # Hive's ^A
    classification = {HIVE_TEXT: "csv"}.get(source, source)
    if lib == OPEN_CSV:
        classification = "csv"
    elif lib in JSON_SERDES:
        classification = "json"
    return Storage(sd, {"classification": classification}, spark_source({"StorageDescriptor": sd})[0])


_COMPLEX = ("array<", "map<", "struct<")


def check_columns(source: str, columns: list[dict[str, Any]], partition_keys: list[dict[str, Any]]) -> None:
    """Refuses, at CREATE, a table that no write could fill: every column a partition column, a nested
    column in CSV (Spark's CSV source cannot hold one), with Spark's own error classes; a timestamp_ntz
    column in Hive text, whose SerDe has no such type (Spark's Hive catalog refuses the table too)."""
    if partition_keys and not columns:
        raise SparkRefusal(
            "ALL_PARTITION_COLUMNS_NOT_ALLOWED", {}, "Cannot use all columns for partition columns"
        )
    if source == HIVE_TEXT:
        for c in columns:
            if "timestamp_ntz" in c["type"].lower():
                raise InvalidInputException(
                    f"Column {c['name']} has type {c['type']}, which Hive's text SerDe (STORED AS TEXTFILE) "
                    "cannot read or write: use timestamp, or a Spark format (USING parquet, orc, csv or json)"
                )
    if source == "csv":
        for c in columns:
            if c["type"].replace(" ", "").lower().startswith(_COMPLEX):
                raise SparkRefusal(
                    "UNSUPPORTED_DATA_TYPE_FOR_DATASOURCE",
                    {
                        "format": "CSV",
                        "columnName": quoted(c["name"]),
                        "columnType": f'"{sql_type(c["type"])}"',
                    },
                    f"The CSV datasource doesn't support the column {c['name']} of the type {c['type']}",
                )


def sql_type(hive_type: str) -> str:
    """A type as Spark prints it in messages: ``map<string,int>`` as MAP<STRING, INT>, struct field names kept."""
    tokens = re.findall(r"\w+(?:\([^)]*\))?|[<>,:]", hive_type)
    out = []
    for i, token in enumerate(tokens):
        if token in ",:":
            out.append(token + " ")
        elif token in "<>" or tokens[i + 1 : i + 2] == [":"]:
            out.append(token)
        else:
            out.append(token.upper())
    return "".join(out)


class Unreadable(Exception):
    """A table whose storage Spark's file sources cannot read; the message names the SerDe."""


def _header(params: dict[str, str], table: dict[str, Any]) -> str | None:
    skip = (table.get("Parameters") or {}).get(HEADER) or params.get(HEADER)
    return None if skip in (None, "", "0") else skip


def _passed(params: dict[str, str], *dropped: str) -> dict[str, str]:
    return {k: v for k, v in params.items() if k not in _HIVE_ONLY and k not in dropped}


# Open table formats by the names Glue tables give them (Parameters table_type, Spark's provider).
_TABLE_FORMATS = {"ICEBERG": "an Iceberg", "DELTA": "a Delta Lake", "HUDI": "a Hudi"}


def _table_format(table: dict[str, Any]) -> str | None:
    """Which open table format keeps the table's data, if one does: its rows are the files its own
    metadata lists, not every file under its location."""
    params = table.get("Parameters") or {}
    for key in ("table_type", "spark.sql.sources.provider"):
        found = _TABLE_FORMATS.get(str(params.get(key) or "").strip().upper())
        if found:
            return found
    input_format = ((table.get("StorageDescriptor") or {}).get("InputFormat") or "").lower()
    for marker, name in (("hoodie", "a Hudi"), ("hudi", "a Hudi"), ("iceberg", "an Iceberg")):
        if marker in input_format:
            return name
    return None


# OpenX's parameters saying which key a column is read from; gluecat's JSON reader takes them as options.
_CASE_INSENSITIVE = "case.insensitive"
_JSON_MAPPING = "mapping."


def _json_options(lib: str, params: dict[str, str]) -> dict[str, str]:
    """The JSON reader's options. Keys match columns case-insensitively, as the Hive SerDes match them,
    except in an OpenX table whose ``case.insensitive`` is not true; ``mapping.<column>`` (OpenX's) reads a
    column from another key. Other SerDes know neither parameter, so they do not reach the reader."""
    options = _passed(params)
    if lib != OPENX_JSON:
        options = {
            k: v for k, v in options.items() if k != _CASE_INSENSITIVE and not k.startswith(_JSON_MAPPING)
        }
    return options


def json_mappings(table: dict[str, Any]) -> dict[str, str]:
    """The fields an OpenX JSON table reads from a key other than their name (``mapping.<field>`` = key)."""
    serde = (table.get("StorageDescriptor") or {}).get("SerdeInfo") or {}
    if serde.get("SerializationLibrary") != OPENX_JSON:
        return {}
    params = serde.get("Parameters") or {}
    # OpenX's own reading of the flag: anything but "true" is case-sensitive.
    insensitive = params.get(_CASE_INSENSITIVE, "true").lower() == "true"
    mapped = {k.removeprefix(_JSON_MAPPING): v for k, v in params.items() if k.startswith(_JSON_MAPPING)}
    return {
        field: key
        for field, key in mapped.items()
        if (key.lower() != field.lower() if insensitive else key != field)
    }


def spark_source(table: dict[str, Any]) -> tuple[str, dict[str, str]]:
    """The Spark source and reader/writer options for a Glue table's files, or Unreadable. Every SerDe
    parameter reaches the reader and writer (under Spark's name where the two differ), so do a table's
    ``orc.*`` and ``parquet.*`` parameters (ORC's and Parquet's own writer settings).

    An Iceberg, Delta Lake or Hudi table (as pyiceberg, Athena, crawlers and Hudi's sync register them,
    often with a Parquet or text SerDe) is Unreadable: its folders hold removed and superseded files and
    metadata beside its rows, which a file scan would return (and a write there would be invisible to
    its readers). A SymlinkTextInputFormat table's folder holds manifests naming its files."""
    sd = table.get("StorageDescriptor") or {}
    table_format = _table_format(table)
    if table_format is not None:
        raise Unreadable(
            f"it is {table_format} table: its rows are the data files its own metadata lists, not the files "
            "in its folders; read and write it with that format's Spark catalog"
        )
    if "symlinktextinputformat" in (sd.get("InputFormat") or "").lower():
        raise Unreadable(
            "its InputFormat is SymlinkTextInputFormat: its folder holds manifests naming the data files, "
            "not the data"
        )
    serde = sd.get("SerdeInfo") or {}
    lib = serde.get("SerializationLibrary") or ""
    params = dict(serde.get("Parameters") or {})
    input_format = sd.get("InputFormat") or ""
    table_params = table.get("Parameters") or {}
    classification = table_params.get("classification", "").lower()
    lowered = (lib + " " + input_format).lower()
    for fmt in ("parquet", "orc"):
        if fmt in lowered or (not lib and classification == fmt):
            own = {k: v for k, v in table_params.items() if k.startswith(fmt + ".")}
            return fmt, {**own, **_passed(params)}
    if lib in JSON_SERDES or (not lib and classification == "json"):
        return "json", _json_options(lib, params)
    if lib == OPEN_CSV:
        options = {
            "sep": params.get("separatorChar", ","),
            "quote": params.get("quoteChar", '"'),
            "escape": params.get("escapeChar", "\\"),
            **_passed(params, "separatorChar", "quoteChar", "escapeChar", HEADER),
        }
        skip = _header(params, table)
        if skip is not None:
            if skip != "1":
                raise Unreadable(f"{HEADER}={skip}: Spark's CSV reader can skip one header line only")
            options["header"] = "true"
        return "csv", options
    if lib == LAZY_SIMPLE or (not lib and classification == "csv"):
        options = {**params, "serialization.lib": LAZY_SIMPLE}
        skip = _header(params, table)
        if skip is not None:
            options[HEADER] = skip
        return HIVE_TEXT, options
    if not lib:
        raise Unreadable(
            "the table has no SerDe (StorageDescriptor.SerdeInfo.SerializationLibrary) or classification"
        )
    raise Unreadable(
        f"SerDe {lib} cannot be read by Spark's file sources (parquet, orc, csv, json, Hive text)"
    )


def check_writable(table: dict[str, Any]) -> None:
    """Refuses a write whose rows would not read back. Hive's text SerDe writes no header line, so in a
    LazySimpleSerDe table that skips header lines (``skip.header.line.count``, as crawlers and Athena set
    it for CSV with a header) the first rows of every file written would be skipped as headers: the
    INSERT would succeed and its rows be lost (Hive and Spark's Hive catalog lose them so; Trino refuses).
    An OpenX JSON table that reads a column from another key (``mapping.<column>``) would read the column
    Spark's writer writes under its own name as NULL."""
    fmt, options = spark_source(table)
    mapped = json_mappings(table)
    if mapped:
        raise InvalidInputException(
            f"table {table.get('DatabaseName')}.{table.get('Name')} reads column(s) {', '.join(sorted(mapped))} "
            f"from other JSON keys ({', '.join(f'{_JSON_MAPPING}{c}' for c in sorted(mapped))}) but Spark's "
            "JSON writer writes each column under its own name, so those columns of the rows written would "
            "read as NULL: write it with another engine"
        )
    if fmt == HIVE_TEXT and options.get(HEADER) is not None:
        raise InvalidInputException(
            f"table {table.get('DatabaseName')}.{table.get('Name')} skips {options[HEADER]} header line(s) at "
            f"the start of each file ({HEADER}) but Hive's text SerDe ({LAZY_SIMPLE}) writes none, so rows "
            "written would read as headers and be skipped: write it with another engine, or use a table "
            "whose writer writes the header (USING csv OPTIONS (header 'true'))"
        )


def layout(table: dict[str, Any]) -> Layout:
    """How the table's data files find a column: CSV and Hive text by position, the rest by name."""
    try:
        fmt, _ = spark_source(table)
    except Unreadable:
        return Layout.BY_NAME  # the stricter rules for renames; a table Spark cannot read keeps its files
    return Layout.BY_POSITION if fmt in ("csv", HIVE_TEXT) else Layout.BY_NAME


# Integer types by the decimal digits their values can have.
_INTEGER_DIGITS = {"tinyint": 3, "smallint": 5, "int": 10, "integer": 10, "bigint": 20, "long": 20}
_DECIMAL = re.compile(r"decimal\(\s*(\d+)\s*(?:,\s*(\d+)\s*)?\)")
_CHARS = re.compile(r"(?:var)?char\(\s*\d+\s*\)")


def decimal_type(glue_type: str) -> tuple[int, int] | None:
    """A decimal type's precision and scale (Hive's decimal alone is decimal(10,0)), as Spark reads its
    DDL; None for another type. ``glue_type`` is lower case, without spaces around it."""
    if glue_type == "decimal":
        return 10, 0
    m = _DECIMAL.fullmatch(glue_type)
    return (int(m.group(1)), int(m.group(2) or 0)) if m else None


def reads_as(fmt: str, old: str, new: str) -> bool:
    """Whether Spark 4.3's reader for ``fmt`` reads the files a column of Glue type ``old`` was written
    with as type ``new``, each value as CAST(value AS new) gives it (CSV, JSON and text: as its written
    digits read, so a float 1.1 reads as the double 1.1), in any session time zone and with the vectorized
    reader on or off. Only widenings: Parquet stores each type in its own physical form (an int is not
    read as a string, a date not as a timestamp); ORC and Hive's text SerDe read no date as timestamp_ntz.

    >>> reads_as("parquet", "int", "bigint"), reads_as("parquet", "int", "string")
    (True, False)
    >>> reads_as("parquet", "smallint", "decimal(10,2)"), reads_as("json", "smallint", "decimal(10,2)")
    (False, True)
    """
    old, new = old.strip().lower(), new.strip().lower()
    if old == new:
        return True
    if _CHARS.fullmatch(old):
        return new == "string"
    if old in _INTEGER_DIGITS:
        digits = _INTEGER_DIGITS[old]
        if new in _INTEGER_DIGITS:
            return _INTEGER_DIGITS[new] > digits
        if new == "double":
            return digits < 20  # a bigint does not fit a double's 53 bits (nor does Parquet read it so)
        decimal = decimal_type(new)
        if decimal is None:
            return False
        if fmt == "parquet":
            # Parquet reads its 32-bit (tinyint to int) and 64-bit integers as decimals of scale 0 with
            # room for any value of their physical type.
            return decimal[1] == 0 and decimal[0] >= (20 if digits == 20 else 10)
        return decimal[0] - decimal[1] >= digits
    if old == "float":
        return new == "double"
    old_decimal = decimal_type(old)
    if old_decimal is not None:
        new_decimal = decimal_type(new)
        return (
            new_decimal is not None
            and new_decimal[1] >= old_decimal[1]
            and new_decimal[0] - new_decimal[1] >= old_decimal[0] - old_decimal[1]
        )
    if old == "date":
        return new == "timestamp_ntz" and fmt not in ("orc", HIVE_TEXT)
    return False
