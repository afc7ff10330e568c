"""Partition names as Hive makes them: k1=v1/k2=v2 with Hive's %XX escapes."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from gluecat.api.partition_names import (
    DEFAULT_PARTITION_NAME,
    escape_path_name,
    partition_name,
    partition_names,
)


def test_hive_escapes_path_characters_and_names_empty_values() -> None:
    assert partition_name(["Country", "dt"], ["US", "2024-01-01"]) == "country=US/dt=2024-01-01"
    assert partition_name(["k"], ["a/b:c=d%"]) == "k=a%2Fb%3Ac%3Dd%25"
    assert partition_name(["k"], [""]) == f"k={DEFAULT_PARTITION_NAME}"
    assert escape_path_name("tab\there é") == "tab%09here é"  # non-ASCII stays as it is
    # Hive's FileUtils escapes every character below U+0020, U+0000 included ("for (char c = 0; ...").
    assert escape_path_name("a\x00b") == "a%00b"
    assert partition_names(["k"], [["a\x00b"], ["c"]]) == ["k=a%00b", "k=c"]


@given(st.text())
def test_escaping_is_hives_rule_for_any_text(value: str) -> None:
    hive_escapes = {chr(c) for c in range(0x00, 0x20)} | set("\"#%'*/:=?\\\x7f{[]^")
    expected = "".join(f"%{ord(c):02X}" if c in hive_escapes else c for c in value)
    assert escape_path_name(value) == (expected or DEFAULT_PARTITION_NAME)


@given(
    st.lists(st.sampled_from(["k", "Year", "a%b", "x}{y", "=s"]), min_size=0, max_size=3, unique=True),
    st.lists(st.lists(st.sampled_from(["US", "", "2024", "a/b", "%s", "{0}", "é", "x,y"]), max_size=3)),
)
def test_a_batch_is_named_as_each_partition_would_be(keys: list[str], batch: list[list[str]]) -> None:
    batch = [values[: len(keys)] + ["v"] * (len(keys) - len(values)) for values in batch]
    assert partition_names(keys, batch) == [partition_name(keys, values) for values in batch]
