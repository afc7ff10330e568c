"""The serving process's runtime: Arrow allocates with jemalloc or the C library's allocator, not mimalloc,
and the cyclic collector walks the youngest generation less often."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pyarrow as pa
import pytest

from gluecat.serving.runtime import YOUNG_THRESHOLD, collect_less_often, use_server_allocator


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
    monkeypatch.setenv("ARROW_DEFAULT_MEMORY_POOL", "system")
    pa.set_memory_pool(pa.system_memory_pool())
    assert use_server_allocator() == "system"


def test_the_collector_runs_less_often_and_keeps_its_older_generations() -> None:
    before = gc.get_threshold()
    try:
        collect_less_often()
        assert gc.get_threshold() == (YOUNG_THRESHOLD, before[1], before[2])
    finally:
        gc.set_threshold(*before)
