"""A Spark INSERT into a governed table against the same INSERT into a plain gluecat table.

    python bench/spark_governed.py [--rows 200000 2000000] [--partitions 10] [--rounds 9]

One Spark session (local[2]) on a fresh warehouse; two tables of the same shape (id BIGINT, amount
DOUBLE, note STRING, partitioned by day DATE): a plain gluecat table and a governed one. Each round runs
`INSERT INTO t SELECT ... FROM range(rows)` spread over `partitions` days into both tables, taking turns
(which goes first alternates), so both see the same machine load. A plain INSERT writes its files, moves
them into the partition folders and registers new partitions; a governed one writes its files, hashes
them (MD5, the ETag), moves them, registers them as objects in its transaction and commits it. Also
timed: a full scan (sum over every row) of each table after the rounds, planned from the partitions'
folders (plain) or from the object set (governed). Medians in seconds; target: governed within 10% of
plain.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from typing import Any


def timed(spark: Any, sql: str) -> float:
    start = time.perf_counter()
    spark.sql(sql).collect()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rows", type=int, nargs="+", default=[200_000, 2_000_000])
    parser.add_argument("--partitions", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=9)
    args = parser.parse_args()

    from gluecat import LakeFormation
    from gluecat.spark import session

    with tempfile.TemporaryDirectory() as root:
        conf = {"spark.sql.shuffle.partitions": "2", "spark.ui.showConsoleProgress": "false"}
        spark = session(f"{root}/warehouse", **conf)
        spark.sparkContext.setLogLevel("ERROR")
        spark.sql("CREATE NAMESPACE glue.bench")
        print(
            "| rows per INSERT | files per INSERT | MB per INSERT | plain INSERT (s) | governed INSERT (s) "
            "| governed / plain |"
        )
        print("|---|---|---|---|---|---|")
        scans: dict[str, list[float]] = {"plain": [], "governed": []}
        for rows in args.rows:
            tables = {"plain": f"glue.bench.plain_{rows}", "governed": f"glue.bench.governed_{rows}"}
            for kind, table in tables.items():
                props = "TBLPROPERTIES ('table_type' = 'GOVERNED')" if kind == "governed" else ""
                spark.sql(
                    f"CREATE TABLE {table} (id BIGINT, amount DOUBLE, note STRING, day DATE) USING parquet "
                    f"PARTITIONED BY (day) {props}"
                )
            insert = (
                "INSERT INTO {t} SELECT id, id * 0.5, concat('note ', id), "
                f"date_add(DATE'2024-01-01', CAST(id % {args.partitions} AS INT)) FROM range({rows})"
            )
            for table in tables.values():  # warm-up: the first statements compile and load classes
                timed(spark, insert.format(t=table))
            times: dict[str, list[float]] = {"plain": [], "governed": []}
            for round_ in range(args.rounds):
                order = list(tables) if round_ % 2 == 0 else list(reversed(tables))
                for kind in order:
                    times[kind].append(timed(spark, insert.format(t=tables[kind])))
            plain, governed = (statistics.median(times[k]) for k in ("plain", "governed"))
            objects = LakeFormation(f"{root}/warehouse").get_table_objects_arrow(
                DatabaseName="bench", TableName=f"governed_{rows}"
            )
            inserts = args.rounds + 1
            files = objects.num_rows // inserts
            megabytes = sum(objects.column("Size").to_pylist()) / inserts / 1e6
            print(
                f"| {rows:,} | {files} | {megabytes:.1f} | {plain:.3f} | {governed:.3f} "
                f"| {governed / plain:.2f} |"
            )
            for kind, table in tables.items():
                scans[kind].append(
                    statistics.median(timed(spark, f"SELECT sum(amount) FROM {table}") for _ in range(5))
                )
        print()
        print(
            "Full scans after the rounds (median of 5, s): "
            + ", ".join(
                f"{rows:,} rows x {args.rounds + 1} INSERTs: plain {p:.3f}, governed {g:.3f}"
                for rows, p, g in zip(args.rows, scans["plain"], scans["governed"], strict=True)
            )
        )
        spark.stop()


if __name__ == "__main__":
    main()
