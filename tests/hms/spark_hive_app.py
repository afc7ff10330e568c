"""A Spark application whose own Hive catalog (enableHiveSupport, hive.metastore.uris) is gluecat's TCP
endpoint; tests/hms/test_spark_hive_support.py runs it in a process of its own, since a Spark session's
metastore cannot change once made.

``python spark_hive_app.py write|read THRIFT_URI WAREHOUSE DATA`` runs the statements of its part and
prints one JSON object of their answers. The read part also reads the tables through gluecat's own
Spark catalog (``glue``) over the same warehouse.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from gluecat.spark import session


def rows(spark: Any, sql: str) -> list[list[Any]]:
    return [list(r) for r in spark.sql(sql).collect()]


def write(spark: Any, data: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    spark.sql(f"CREATE DATABASE hs LOCATION '{data}/hs.db'")
    spark.sql("CREATE DATABASE IF NOT EXISTS hs")
    out["databases"] = sorted(r[0] for r in rows(spark, "SHOW DATABASES"))
    # Spark's format (no location sent: the server fills in the default) ...
    spark.sql("CREATE TABLE hs.events (id INT, name STRING, ds STRING) USING parquet PARTITIONED BY (ds)")
    spark.sql(
        "INSERT INTO hs.events VALUES (1, 'a', '2024-01-01'), (2, 'b', '2024-01-02'), (3, 'c', '2024-01-03')"
    )
    out["events_eq"] = rows(spark, "SELECT id FROM hs.events WHERE ds = '2024-01-02'")
    out["events_in"] = rows(
        spark, "SELECT id FROM hs.events WHERE ds IN ('2024-01-01', '2024-01-03') ORDER BY id"
    )
    out["events_like"] = rows(spark, "SELECT id FROM hs.events WHERE ds LIKE '2024-01-0%' ORDER BY id")
    # ... and Hive's.
    spark.sql("CREATE TABLE hs.metrics (id INT, v STRING) PARTITIONED BY (p INT) STORED AS PARQUET")
    spark.sql("INSERT INTO hs.metrics PARTITION (p = 1) VALUES (1, 'x')")
    spark.sql("INSERT INTO hs.metrics PARTITION (p = 2) VALUES (2, 'y')")
    spark.sql("INSERT OVERWRITE TABLE hs.metrics PARTITION (p = 2) VALUES (20, 'yy')")
    out["metrics_gt"] = rows(spark, "SELECT id, v, p FROM hs.metrics WHERE p > 1")
    out["metrics_range"] = rows(spark, "SELECT id FROM hs.metrics WHERE p >= 1 AND p <= 2 ORDER BY id")
    spark.sql("ALTER TABLE hs.metrics ADD PARTITION (p = 3)")
    spark.sql("ALTER TABLE hs.metrics PARTITION (p = 3) RENAME TO PARTITION (p = 4)")
    out["partitions"] = [r[0] for r in rows(spark, "SHOW PARTITIONS hs.metrics")]
    spark.sql("ALTER TABLE hs.metrics DROP PARTITION (p = 4)")
    out["partitions_after_drop"] = [r[0] for r in rows(spark, "SHOW PARTITIONS hs.metrics")]
    spark.sql("ALTER TABLE hs.events RENAME TO hs.events_renamed")
    spark.sql("ALTER TABLE hs.events_renamed SET TBLPROPERTIES ('team' = 'core')")
    spark.sql("CREATE TABLE hs.scratch (a INT) USING parquet")
    spark.sql("INSERT INTO hs.scratch VALUES (1)")
    spark.sql("DROP TABLE hs.scratch")
    spark.sql("CREATE TABLE hs.scratch (a INT) USING parquet")  # its folder went with the drop
    out["scratch"] = rows(spark, "SELECT count(*) FROM hs.scratch")
    out["tables"] = sorted(r[1] for r in rows(spark, "SHOW TABLES IN hs"))
    out["missing"] = spark.catalog.tableExists("hs.nope")
    return out


def read(spark: Any) -> dict[str, Any]:
    return {
        "hive_events": rows(spark, "SELECT id, name, ds FROM hs.events_renamed ORDER BY id"),
        "hive_metrics": rows(spark, "SELECT id, v, p FROM hs.metrics ORDER BY id"),
        "glue_events": rows(spark, "SELECT id, name, ds FROM glue.hs.events_renamed ORDER BY id"),
        "glue_metrics": rows(spark, "SELECT id, v, p FROM glue.hs.metrics WHERE p = 2"),
        "properties": dict(rows(spark, "SHOW TBLPROPERTIES hs.events_renamed")).get("team"),
    }


def main() -> None:
    part, uri, warehouse, data = sys.argv[1:5]
    spark = session(
        warehouse,
        **{
            "spark.sql.catalogImplementation": "hive",
            "spark.hadoop.hive.metastore.uris": uri,
            "spark.sql.warehouse.dir": f"{data}/spark-warehouse",
            "spark.sql.shuffle.partitions": "2",
            "spark.ui.enabled": "false",
        },
    )
    spark.sparkContext.setLogLevel("ERROR")
    try:
        answer = write(spark, data) if part == "write" else read(spark)
    finally:
        spark.stop()
    print("RESULT " + json.dumps(answer, default=str))


if __name__ == "__main__":
    main()
