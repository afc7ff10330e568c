"""Two Spark applications writing different partitions of one table at once both land, with every row."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

from gluecat import Catalog

WRITER = textwrap.dedent(
    """
    import sys
    from gluecat.spark import session
    warehouse, table, part = sys.argv[1:]
    spark = session(warehouse, **{"spark.sql.shuffle.partitions": "2"})
    for batch in range(3):  # several commits each, so the two applications' commits interleave
        spark.sql(
            f"INSERT INTO {table} SELECT CAST(id AS INT), '{part}', {batch} FROM range({batch * 100}, {batch * 100 + 100})"
        )
    spark.stop()
    """
)


def test_two_applications_write_different_partitions_at_once(spark: Any, warehouse: Path, ns: str) -> None:
    table = f"glue.{ns}.shared"
    spark.sql(
        f"CREATE TABLE {table} (v INT, app STRING, batch INT) USING parquet PARTITIONED BY (app, batch)"
    )
    apps = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(warehouse), table, name],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        for name in ("left", "right")
    ]
    for app in apps:
        out, _ = app.communicate(timeout=300)
        assert app.returncode == 0, out.decode()[-3000:]

    counts = {
        (r.app, r.batch): r.n
        for r in spark.sql(f"SELECT app, batch, count(*) AS n FROM {table} GROUP BY 1, 2").collect()
    }
    assert counts == {(app, batch): 100 for app in ("left", "right") for batch in range(3)}
    assert spark.sql(f"SELECT count(DISTINCT app, v) FROM {table}").collect()[0][0] == 600
    parts = Catalog(str(warehouse)).get_partitions(DatabaseName=ns, TableName="shared")["Partitions"]
    assert len(parts) == 6
    leftovers = [p.name for p in (warehouse / f"{ns}.db" / "shared").iterdir() if p.name.startswith(".")]
    assert leftovers == []
