"""README's first command: `gluecat demo` queries the sample lake through the catalog plugin."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def test_demo_runs_spark_sql_over_the_sample_warehouse(tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "gluecat", "demo", "--warehouse", str(tmp_path / "wh")],
        check=True,
        capture_output=True,
        text=True,
        timeout=300,
    ).stdout
    assert "|US     |125   |16371.25|" in out
    assert "GlueFileIndex(2 paths)" in out  # country = 'US' AND dt >= 2024-01-13: two of 56 partitions read
    assert "|by_country_dt|country,dt|ACTIVE|" in out
