"""docs/permissions.md's tables of what each operation needs are the server's own rules
(gluecat.serving.permissions.RULES), operation by operation: the docs cannot drift from the code."""

from __future__ import annotations

import re
from pathlib import Path

from gluecat.serving.permissions import RULES

DOC = Path(__file__).parents[2] / "docs" / "permissions.md"
_ROW = re.compile(r"^\| (`[^|]+`) \| ([^|]+) \|$")


def documented() -> dict[str, dict[str, str]]:
    """The section's three tables (Glue, Lake Formation, the Hive Metastore): operation -> needs."""
    text = DOC.read_text()
    section = text[text.index("## What each operation needs") :]
    section = section[: section.index("\n## ", 1)]
    tables: list[dict[str, str]] = []
    for line in section.splitlines():
        if line.startswith("| operation |") or line.startswith("| call |"):
            tables.append({})
        row = _ROW.match(line)
        if row is not None and tables:
            for name in row[1].split(", "):
                tables[-1][name.strip("`")] = row[2].strip()
    assert len(tables) == 3
    return dict(zip(("glue", "lakeformation", "hive"), tables, strict=True))


def test_the_docs_say_what_each_operation_needs_as_the_server_decides() -> None:
    for protocol, table in documented().items():
        assert table == {op: rule.summary for op, rule in RULES[protocol].items()}, protocol
