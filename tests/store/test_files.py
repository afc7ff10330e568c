"""How segments are laid out in Parquet, and carried inside log entries."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from gluecat.errors import StorageError
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


def test_a_commits_rows_travel_inline_compressed_and_come_back_with_their_schema() -> None:
    rows = segment(100)
    carried = files.inline_segment_bytes(rows, limit=128 * 1024)
    assert carried is not None
    data, size = carried
    assert len(data) < size / 2  # compressed
    back = files.read_inline_segment(data, files.INLINE_ENCODING, size, "log/1.json#0")
    assert back.equals(rows) and back.schema.equals(rows.schema, check_metadata=True)


@pytest.mark.parametrize("chunks", [1, 3])
def test_an_inline_segment_is_the_arrow_ipc_stream_a_stream_writer_makes(chunks: int) -> None:
    rows = pa.concat_tables([segment(10)] * chunks)
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, rows.schema) as writer:
        writer.write_table(rows)
    data, size = files.inline_segment_bytes(rows, limit=1 << 20) or (b"", 0)
    codec = pa.Codec(files.INLINE_ENCODING.removeprefix("arrow-ipc+"))
    assert codec.decompress(data, size, asbytes=True) == sink.getvalue().to_pybytes()


def test_an_entrys_inline_base64_is_spliced_into_the_same_json_that_encoding_it_would_give() -> None:
    def entry(*inline: str, operation: str = "BatchCreatePartition") -> dict[str, object]:
        actions = [
            {"add_segment": f"log/7.json#{i}", "inline": text, "rows": 1} for i, text in enumerate(inline)
        ]
        return {"actions": actions, "operation": operation, "version": 7}

    texts = ["QUJD+/==", "", "eHl6"]
    for e in (entry(*texts), entry(*texts, operation="\x00")):  # a string that is the slot: encoded plainly
        spliced = files.encode_entry(
            {**e, "actions": [{**a, "inline": files.Base64Text(a["inline"])} for a in e["actions"]]}
        )  # type: ignore[attr-defined]
        assert spliced == json.dumps(e, sort_keys=True, separators=(",", ":")).encode()


def test_rows_that_would_not_fit_the_limit_do_not_travel_inline() -> None:
    rows = segment(1000)
    data, _ = files.inline_segment_bytes(rows, limit=1 << 20) or (b"", 0)
    assert files.inline_segment_bytes(rows, limit=len(data)) is not None
    assert files.inline_segment_bytes(rows, limit=len(data) - 1) is None


@pytest.mark.parametrize("encoding", [files.INLINE_ENCODING, "arrow-ipc+zstd"])
def test_each_inline_encoding_a_warehouse_may_hold_is_read(encoding: str, monkeypatch) -> None:
    rows = segment(10)
    monkeypatch.setattr(files, "INLINE_ENCODING", encoding)
    data, size = files.inline_segment_bytes(rows, limit=1 << 20) or (b"", 0)
    assert files.read_inline_segment(data, encoding, size, "log/1.json#0").equals(rows)


@pytest.mark.parametrize(
    "encoding, size",
    [
        ("parquet", None),
        (None, None),
        (files.INLINE_ENCODING, None),
        (files.INLINE_ENCODING, "12"),
        (files.INLINE_ENCODING, -1),
        (files.INLINE_ENCODING, 3),
    ],
)
def test_an_inline_segment_that_does_not_decode_is_an_error_naming_it(encoding: object, size: object) -> None:
    data, real = files.inline_segment_bytes(segment(10), limit=1 << 20) or (b"", 0)
    with pytest.raises(StorageError, match=r"log/7\.json#0"):
        files.read_inline_segment(data, encoding, size, "log/7.json#0")
    with pytest.raises(StorageError, match=r"log/7\.json#0"):
        files.read_inline_segment(data[:-4], files.INLINE_ENCODING, real, "log/7.json#0")
