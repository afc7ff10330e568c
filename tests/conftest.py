"""Shared fixtures: every test gets its own warehouse folder."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def warehouse(tmp_path: Path) -> str:
    return str(tmp_path / "warehouse")
