"""Catalog documents to JSON and back: whatever keys a document holds, it comes back equal."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from gluecat.store import codec

keys = st.one_of(st.sampled_from(["$t", "$b", "$$t", "$", "$$", "a", "$x"]), st.text(max_size=4))
leaves = st.one_of(
    st.text(alphabet=st.sampled_from(list('a$"\\\\{}:t')), max_size=5),
    st.integers(),
    st.booleans(),
    st.none(),
    st.binary(max_size=4),
    st.integers(0, 10**15).map(lambda us: datetime(1970, 1, 1, tzinfo=UTC) + timedelta(microseconds=us)),
)


def maps(values: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    # Maps of Glue shapes hold strings: a number under a key "$t" is what a timestamp is stored as.
    return st.dictionaries(keys, values, max_size=3).filter(lambda d: type(d.get("$t")) is not int)


documents = st.recursive(
    leaves, lambda inner: st.one_of(st.lists(inner, max_size=3), maps(inner)), max_leaves=12
)


@given(maps(documents))
def test_any_document_comes_back_equal(doc: dict[str, Any]) -> None:
    assert codec.loads(codec.dumps(doc)) == doc


@given(st.lists(maps(documents), max_size=4))
def test_documents_decoded_together_equal_each_decoded_alone(docs: list[dict[str, Any]]) -> None:
    texts = [codec.dumps(d) for d in docs]
    assert codec.loads_many(texts) == [codec.loads(t) for t in texts] == docs


def test_a_batch_decodes_timestamps_at_any_depth() -> None:
    """Top-level timestamps take the fast path; one deeper in any document sends the batch to the hook."""
    t = datetime(2020, 1, 1, tzinfo=UTC)
    flat = [{"CreationTime": t, "StorageDescriptor": {"Location": f"s3://b/{i}"}} for i in range(3)]
    more = [*flat, {"LastAccessTime": t}, {"CreationTime": t, "LastAnalyzedTime": t}]
    deep = [*flat, {"CreationTime": t, "Inner": {"LastAccessTime": t, "List": [t]}}]
    for docs in (flat, more, deep):
        decoded = codec.loads_many([codec.dumps(d) for d in docs])
        assert decoded == docs
        assert all(type(v) is datetime for d in decoded for k, v in d.items() if k.endswith("Time"))


def test_a_map_whose_only_key_looks_like_a_marker_stays_a_map() -> None:
    """A Parameters map may hold any key: {"$t": "5"} is not a timestamp, {"$b": ...} not bytes."""
    doc = {
        "Parameters": {"$t": "5"},
        "Other": {"$b": "aGk="},
        "CreationTime": datetime(2020, 1, 1, tzinfo=UTC),
    }
    text = codec.dumps(doc)
    assert codec.loads(text) == doc
    assert '"CreationTime":{"$t":1577836800000000}' in text  # the markers themselves are unchanged


def test_a_document_without_dollar_keys_is_stored_as_plain_canonical_json() -> None:
    assert codec.dumps({"b": 1, "a": ["x", {"c": None}]}) == '{"a":["x",{"c":null}],"b":1}'
