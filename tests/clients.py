"""Real clients that cannot share the test environment, each in a virtual environment of its own.

awswrangler caps pyarrow below the version gluecat is tested with, so it gets an environment of its
own, made on first use and kept under this environment's prefix (``.venv/gluecat-test-clients/<name>``);
tests run scripts with its python (tests/aws/test_awswrangler.py, the docs' snippets).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

REQUIREMENTS = {"awswrangler": "awswrangler>=3,<4"}


def client_environment(name: str, requirement: str | None = None) -> Path:
    """The python of a virtual environment holding ``requirement`` (by default the client's own in
    REQUIREMENTS), made once and then reused."""
    requirement = requirement or REQUIREMENTS[name]
    root = Path(sys.prefix) / "gluecat-test-clients" / name
    python, marker = root / "bin" / "python", root / "gluecat-requirement.txt"
    if not (python.exists() and marker.exists() and marker.read_text() == requirement):
        shutil.rmtree(root, ignore_errors=True)
        subprocess.run([sys.executable, "-m", "venv", str(root)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", requirement], check=True, timeout=1200)
        marker.write_text(requirement)
    return python
