"""Shared fixtures: every test gets its own warehouse folder."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import settings

# The object-store servers (moto's S3, versitygw, fake-gcs-server, Azurite), buckets and proxy, for any
# test that asks for them: see tests/object_stores/__init__.py.
pytest_plugins = ["tests.object_stores.fixtures"]

# No time limit on an example: on a shared machine an example's time says nothing about the code, and
# hypothesis's default (200 ms) failed examples that took 280 ms once and 3 ms when run again.
settings.register_profile("gluecat", deadline=None)
settings.load_profile("gluecat")


@pytest.fixture
def warehouse(tmp_path: Path) -> str:
    return str(tmp_path / "warehouse")


@pytest.fixture
def record_files(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every commit's records in a record file of their own, as a large commit's are (a small one's
    travel inside its log entry): for the tests of what happens to such files."""
    from gluecat.store import store

    monkeypatch.setattr(store, "INLINE_RECORDS_BYTES", -1)
