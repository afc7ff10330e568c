"""No acknowledged write is lost across expiries: writers (one pausing with its catalog open, as the
stale process of issue 24) create tables while two compactions expire all history behind them."""

from __future__ import annotations

from typing import Any

import pytest

from tests.object_stores.fixtures import use
from tests.reliability.battery import run_expiry_race, seed_from_env


def test_writers_and_a_stale_writer_lose_nothing_to_concurrent_compactions() -> None:
    result = run_expiry_race(writers=3, tables=45, pause=2.0, compactors=2, seed=seed_from_env())
    print(dict(result.kinds))
    assert result.failures == []
    assert result.kinds["compactions"] >= 2


def test_writers_lose_nothing_to_concurrent_compactions_on_an_object_store(
    moto_bucket: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same on S3 (moto's server), where no folder can be locked: an expiry replaces old entries by
    stubs and deletes files while writers and readers catching up may be reading them."""
    result = run_expiry_race(
        writers=3,
        tables=24,
        pause=2.0,
        compactors=2,
        seed=seed_from_env(),
        warehouse=use(monkeypatch, moto_bucket),
    )
    print(dict(result.kinds))
    assert result.failures == []
    assert result.kinds["compactions"] >= 2
