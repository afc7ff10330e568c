"""How segments are laid out in Parquet."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq

from gluecat.store import files

PLAIN = {files.ENCODING: b"plain"}
TEXT = {files.ENCODING: b"text"}
SCHEMA = pa.schema(
    [
        pa.field("p0", pa.string()),
        pa.field("_vk", pa.string(), metadata=PLAIN),
        pa.field("doc", pa.large_string(), metadata=TEXT),
    ]
)


def segment(n: int) -> pa.Table:
    return pa.table(
        {
            "p0": [f"country{i % 7}" for i in range(n)],
            "_vk": [f'["{i:08d}"]' for i in range(n)],
            "doc": [f'{{"Location":"s3://lake/{i}"}}' for i in range(n)],
        },
        schema=SCHEMA,
    )


def layout(data: bytes) -> dict[str, tuple[bool, bool]]:
    """Column -> (dictionary encoded, has min/max statistics), in the first row group."""
    meta = pq.ParquetFile(pa.BufferReader(data)).metadata.row_group(0)
    out = {}
    for i in range(meta.num_columns):
        col = meta.column(i)
        stats = col.statistics
        out[col.path_in_schema] = (
            col.dictionary_page_offset is not None,
            stats is not None and stats.has_min_max,
        )
    return out


def test_a_large_segment_has_dictionaries_and_statistics_only_where_they_help() -> None:
    rows = segment(files.SEGMENT_ROW_GROUP * 2)
    data = files.segment_parquet_bytes(rows)
    assert layout(data) == {"p0": (True, True), "_vk": (False, True), "doc": (False, False)}
    back = files.read_parquet_bytes(data, "segment")
    assert back.equals(rows) and back.schema.field("doc").metadata == TEXT


def test_a_small_segment_has_neither() -> None:
    rows = segment(100)
    data = files.segment_parquet_bytes(rows)
    assert layout(data) == {"p0": (False, False), "_vk": (False, False), "doc": (False, False)}
    assert files.read_parquet_bytes(data, "segment").equals(rows)
