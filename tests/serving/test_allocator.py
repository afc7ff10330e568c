"""The serving process's Arrow allocations go to jemalloc or the C library's allocator, not mimalloc."""

from __future__ import annotations

from collections.abc import Iterator

import pyarrow as pa
import pytest

from gluecat.serving.allocator import use_server_allocator


@pytest.fixture
def pool_restored() -> Iterator[None]:
    before = pa.default_memory_pool()
    yield
    pa.set_memory_pool(before)


def test_the_server_allocator_is_jemalloc_where_pyarrow_has_it(
    pool_restored: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ARROW_DEFAULT_MEMORY_POOL", raising=False)
    expected = "jemalloc" if "jemalloc" in pa.supported_memory_backends() else "system"
    assert use_server_allocator() == expected
    assert pa.default_memory_pool().backend_name == expected


def test_a_pool_the_user_chose_is_kept(pool_restored: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARROW_DEFAULT_MEMORY_POOL", "mimalloc")
    pa.set_memory_pool(pa.mimalloc_memory_pool())
    assert use_server_allocator() == "mimalloc"
