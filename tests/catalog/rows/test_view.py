"""A partition's identity is the JSON of its values, and a view answers which identities are live."""

from __future__ import annotations

import gc
import json

import pyarrow as pa
import pyarrow.compute as pc
from hypothesis import given
from hypothesis import strategies as st

from gluecat.catalog.rows.segments import segment_table, value_key, value_keys
from gluecat.catalog.rows.view import extend, fold, refold
from gluecat.store import codec

TRICKY = ['x"y', "a\\b", "é", "\x7f", "\t", "a,b", '"]', '["', "", "\x00"]


def as_json(values: list[str]) -> str:
    return json.dumps(values, ensure_ascii=False, separators=(",", ":"))


def test_identity_is_compact_json_of_the_values() -> None:
    assert value_key(["US", "Books", "2020"]) == '["US","Books","2020"]'
    assert value_key([]) == "[]"
    assert value_key([""]) == '[""]'
    for text in TRICKY:
        assert value_key([text, "b"]) == as_json([text, "b"])


@given(st.lists(st.text(alphabet=st.sampled_from(list('ab",\\[]é\t\x00\x7f ')), max_size=4), max_size=4))
def test_identity_equals_json_for_any_values(values: list[str]) -> None:
    assert value_key(values) == as_json(values)


@given(
    st.lists(st.lists(st.text(alphabet=st.sampled_from(list('ab",\\é\x00\x7f ')), max_size=3), max_size=3))
)
def test_identities_of_a_batch_are_each_partitions_identity(batch: list[list[str]]) -> None:
    assert value_keys(batch) == [value_key(values) for values in batch]


locations = st.text(alphabet=st.sampled_from(list('ab/"\\é\t\x00\x7f\u2028:')), max_size=6)


@given(
    st.lists(st.one_of(st.none(), st.sampled_from(["shared", "own", "no-location"]), locations), max_size=8),
    st.lists(st.integers(0, 4)),
)
def test_documents_sharing_all_but_their_location_are_stored_as_if_encoded_one_by_one(
    kinds: list[str | None], cuts: list[int]
) -> None:
    """A write's partitions share the table's columns and SerDe objects; their segment must hold
    exactly the documents' own JSON however they share and whatever their locations hold."""
    columns = [{"Name": "v", "Type": "int"}]
    serde = {"SerializationLibrary": "\x00gluecat:location\x00"}  # the placeholder text itself
    parameters = {"n": "1"}
    docs: list[dict[str, object] | None] = []
    for i, kind in enumerate(kinds):
        if kind is None:
            docs.append(None)
        elif kind == "no-location":
            docs.append({"StorageDescriptor": {"Columns": columns}})
        elif kind == "own":
            docs.append({"StorageDescriptor": {"Columns": [{"Name": "w"}], "Location": f"/own/{i}"}})
        elif kind == "shared":
            docs.append({"StorageDescriptor": {"Columns": columns, "SerdeInfo": serde, "Location": "/s"}})
        else:
            docs.append(
                {"Parameters": parameters, "StorageDescriptor": {"Columns": columns, "Location": kind}}
            )
    rows = [([str(i)], doc) for i, doc in enumerate(docs)]
    expected = [None if doc is None else codec.dumps(doc) for doc in docs]
    assert segment_table(1, rows).column("doc").to_pylist() == expected
    # The rows of a group commit, as runs of the requests they came from: encoded run by run.
    runs = [n for n in cuts if n] + [len(rows) - sum(n for n in cuts if n)]
    if runs[-1] >= 0:
        assert segment_table(1, rows, runs=runs).column("doc").to_pylist() == expected


def test_existing_follows_the_newest_segment_that_names_an_identity() -> None:
    doc = {"StorageDescriptor": {"Location": "s3://x/"}}
    base = segment_table(1, [(["a"], doc), (["b"], doc), (["c"], doc)])
    view = fold(1, ["s0"], [base])
    dropped_b = segment_table(1, [(["b"], None), (["d"], doc)])
    readded_b = segment_table(1, [(["b"], doc), (["a"], None)])
    view = extend(view, ["s1", "s2"], [dropped_b, readded_b])
    everything = {value_key([v]) for v in "abcde"}
    assert view.existing(everything) == {value_key([v]) for v in "bcd"}
    assert view.existing(set()) == set()
    assert all(view.exists(vk) == (vk in view.existing({vk})) for vk in everything)


def test_a_filters_base_hits_are_built_once_and_only_the_newest_few_filters_are_kept() -> None:
    """Pages of one query reuse its hits; views that share a base (extended ones) share them too."""
    doc = {"StorageDescriptor": {"Location": "s3://x/"}}
    view = fold(1, ["s0"], [segment_table(1, [([v], doc) for v in "abcd"])])
    builds: list[str] = []

    def hits(key: str) -> pa.Array:
        def build(base: pa.Table) -> pa.Array:
            builds.append(key)
            return pa.array([0, base.num_rows - 1], pa.int64())

        return view.base_hits(key, build)

    assert hits("x").to_pylist() == [0, 3]
    assert hits("x") is hits("x") and builds == ["x"]
    newer = extend(view, ["s1"], [segment_table(1, [(["e"], doc)])])
    assert newer.base_hits("x", lambda base: pa.array([], pa.int64())).to_pylist() == [0, 3]
    for key in "abcdef":
        hits(key)
    kept = [k for k in view._lookups if k[0] == "hits"]
    assert kept == [("hits", k) for k in "cdef"]


def test_a_filters_delta_hits_count_the_deletions_among_them() -> None:
    """A page takes as many delta rows as it needs live ones plus the deletions that may be among them."""
    doc = {"StorageDescriptor": {"Location": "s3://x/"}}
    view = fold(1, ["s0"], [segment_table(1, [([v], doc) for v in "abcd"])])
    view = extend(view, ["s1"], [segment_table(1, [(["b"], None), (["e"], doc), (["c"], None)])])
    everything = view.delta_hits("all", lambda rows: pa.array(range(rows.num_rows), pa.int64()))
    assert everything[0].to_pylist() == [0, 1, 2] and everything[1] == 2
    live = view.delta_hits("live", lambda rows: pc.indices_nonzero(pc.invert(rows.column("_tomb"))))
    assert live[1] == 0
    assert view.delta_hits("all", lambda rows: pa.array([], pa.int64())) is everything


def test_an_older_view_answers_from_its_own_segments_after_a_newer_one_was_extended_from_it() -> None:
    """Views extended from one another share the set of identities their deltas name, as a filter: a
    newer view's identities in it must not change what the older view says."""
    doc = {"StorageDescriptor": {"Location": "s3://x/"}}
    older = extend(
        fold(1, ["s0"], [segment_table(1, [(["a"], doc)])]), ["s1"], [segment_table(1, [(["b"], doc)])]
    )
    newer = extend(older, ["s2"], [segment_table(1, [(["c"], doc), (["a"], None)])])
    wanted = {value_key([v]) for v in "abc"}
    assert older.existing(wanted) == {value_key(["a"]), value_key(["b"])}
    assert newer.existing(wanted) == {value_key(["b"]), value_key(["c"])}


def test_a_views_identity_sets_are_not_walked_by_the_garbage_collector() -> None:
    """At a million partitions they hold a million strings each: a set would be walked by every
    collection that reaches it, a dict of strings is not tracked at all."""
    doc = {"StorageDescriptor": {"Location": "s3://x/"}}
    view = fold(1, ["s0"], [segment_table(1, [([v], doc) for v in "abc"])])
    view = extend(view, ["s1", "s2"], [segment_table(1, [(["d"], doc)]), segment_table(1, [(["a"], None)])])
    assert view.existing({value_key([v]) for v in "abcd"}) == {value_key([v]) for v in "bcd"}
    folded = refold(view, ["s0", "s1", "s2"])
    for identities in (view.base_identities(), view._delta_named, folded.base_identities()):
        assert identities is not None and not gc.is_tracked(identities)
    assert set(folded.base_identities()) == {value_key([v]) for v in "bcd"}


# A segment: rows of (value, location or None for a deletion), in commit order.
segments_strategy = st.lists(
    st.lists(st.tuples(st.sampled_from("abcdefg"), st.one_of(st.none(), st.sampled_from("xyz"))), max_size=6),
    min_size=1,
    max_size=5,
)


def as_segment(rows: list[tuple[str, str | None]]) -> object:
    return segment_table(
        1, [([v], None if loc is None else {"StorageDescriptor": {"Location": loc}}) for v, loc in rows]
    )


@given(segments_strategy, segments_strategy, st.booleans())
def test_refolding_a_view_equals_folding_all_its_segments(
    base_rows: list[list[tuple[str, str | None]]], delta_rows: list[list[tuple[str, str | None]]], warm: bool
) -> None:
    base_names = [f"b{i}" for i in range(len(base_rows))]
    delta_names = [f"d{i}" for i in range(len(delta_rows))]
    base = [as_segment(rows) for rows in base_rows]
    deltas = [as_segment(rows) for rows in delta_rows]
    view = fold(1, base_names, base)
    if warm:  # the identity set is carried over when it was built, rebuilt later when not
        view.base_identities()
    folded = refold(extend(view, delta_names, deltas), base_names + delta_names)
    expected = fold(1, base_names + delta_names, base + deltas)
    assert folded.segments == expected.segments
    assert folded.base.equals(expected.base)
    assert folded.base_identities() == expected.base_identities()
    assert folded.deltas == []


@given(segments_strategy, st.lists(segments_strategy, min_size=1, max_size=6))
def test_squashing_the_newest_deltas_answers_as_before_and_keeps_few_deltas(
    base_rows: list[list[tuple[str, str | None]]], writes: list[list[list[tuple[str, str | None]]]]
) -> None:
    """A view squashed after each batch of writes (as the latest view is, past MAX_DELTA_SEGMENTS
    deltas) holds what folding every segment holds; a squash merges the newest deltas and the older
    ones no larger than those, so that a delta row is copied a few times, not at every squash."""
    base_names = [f"b{i}" for i in range(len(base_rows))]
    view = fold(1, base_names, [as_segment(rows) for rows in base_rows])
    segments = list(base_names)
    tables = [as_segment(rows) for rows in base_rows]
    for w, batch in enumerate(writes):
        names = [f"w{w}.{i}" for i in range(len(batch))]
        new = [as_segment(rows) for rows in batch]
        extended = extend(view, names, new)
        view = extended.squashed()
        segments += names
        tables += new
        assert len(view.deltas) == 1 or len(view.deltas) < len(extended.deltas)
        if len(view.deltas) > 1:  # the squash stopped at a delta larger than what it merged
            assert view.deltas[-2].num_rows > view.deltas[-1].num_rows
    expected = fold(1, segments, tables)
    assert refold(view, segments).base.equals(expected.base)
    assert view.count() == expected.count()
    for vk in {value_key([v]) for v in "abcdefgh"}:
        assert view.exists(vk) == expected.exists(vk)
