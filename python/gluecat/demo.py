"""``gluecat demo``: a sample warehouse, and a look at it.

Creates (once) a ``sales`` database with an ``orders`` table partitioned by ``country`` and ``dt``,
writes its data as Parquet files, registers the partitions and a partition index through the Glue API,
then queries it as ``glue.sales.orders`` in a local Spark SQL session with the gluecat catalog plugin
(or, with --no-spark, through the Python API).
"""

from __future__ import annotations

import argparse
import os
import sys
from datetime import date, timedelta
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

COUNTRIES = ("US", "UK", "DE", "FR")
DAYS = 14


class NotTheSample(Exception):
    """The warehouse holds databases of its own: the demo neither writes its sample among them nor
    shows them as the sample."""


def ensure_sample(warehouse: str) -> Any:
    """The sample lake in ``warehouse`` (created on first use); returns the Catalog."""
    from gluecat import Catalog
    from gluecat.api.pages import every

    catalog = Catalog(warehouse)
    databases = list(every(catalog.get_databases, "DatabaseList"))
    if [(db["Name"], db.get("Description")) for db in databases] == [("sales", "sample data")]:
        return catalog
    if databases:
        raise NotTheSample(
            f"{warehouse} holds databases that are not the sample's "
            f"({', '.join(db['Name'] for db in databases[:5])}{', ...' if len(databases) > 5 else ''}): "
            "give the demo a new folder with --warehouse"
        )
    root = os.path.abspath(warehouse)
    catalog.create_database(
        DatabaseInput={"Name": "sales", "Description": "sample data", "LocationUri": f"file:{root}/sales.db"}
    )
    location = f"file:{root}/sales.db/orders"
    catalog.create_table(
        DatabaseName="sales",
        TableInput={
            "Name": "orders",
            "TableType": "EXTERNAL_TABLE",
            "Parameters": {"classification": "parquet", "EXTERNAL": "TRUE"},
            "StorageDescriptor": {
                "Columns": [
                    {"Name": "order_id", "Type": "bigint"},
                    {"Name": "customer", "Type": "string"},
                    {"Name": "amount", "Type": "double"},
                ],
                "Location": location,
                "InputFormat": "org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat",
                "OutputFormat": "org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat",
                "SerdeInfo": {
                    "SerializationLibrary": "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe"
                },
            },
            "PartitionKeys": [{"Name": "country", "Type": "string"}, {"Name": "dt", "Type": "date"}],
        },
        PartitionIndexes=[{"IndexName": "by_country_dt", "Keys": ["country", "dt"]}],
    )
    parts = []
    order_id = 0
    for country in COUNTRIES:
        for d in range(DAYS):
            day = (date(2024, 1, 1) + timedelta(days=d)).isoformat()
            folder = f"{root}/sales.db/orders/country={country}/dt={day}"
            os.makedirs(folder, exist_ok=True)
            ids = list(range(order_id, order_id + 25))
            order_id += 25
            pq.write_table(
                pa.table(
                    {
                        "order_id": pa.array(ids, pa.int64()),
                        "customer": [f"customer-{i % 37}" for i in ids],
                        "amount": [round(5 + (i * 7.31) % 250, 2) for i in ids],
                    }
                ),
                f"{folder}/part-00000.parquet",
            )
            parts.append(
                {
                    "Values": [country, day],
                    "StorageDescriptor": {
                        "Location": f"file:{folder}",
                        "InputFormat": "org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat",
                        "OutputFormat": "org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat",
                        "SerdeInfo": {
                            "SerializationLibrary": "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe"
                        },
                    },
                }
            )
    for i in range(0, len(parts), 100):
        catalog.batch_create_partition(
            DatabaseName="sales", TableName="orders", PartitionInputList=parts[i : i + 100]
        )
    return catalog


def _python_tour(catalog: Any) -> None:
    expression = "country = 'US' AND dt >= '2024-01-10'"
    print(f"warehouse: {catalog.warehouse}")
    for db in catalog.get_databases()["DatabaseList"]:
        tables = catalog.get_tables(DatabaseName=db["Name"])["TableList"]
        print(f"database {db['Name']}: tables {[t['Name'] for t in tables]}")
    plan = catalog.explain_partitions(DatabaseName="sales", TableName="orders", Expression=expression)
    print(f"explain {expression!r}: {plan}")
    parts = catalog.get_partitions(DatabaseName="sales", TableName="orders", Expression=expression)[
        "Partitions"
    ]
    print(f"{len(parts)} partitions match:")
    for p in parts:
        print(f"  {p['Values']}  {p['StorageDescriptor']['Location']}")


DEFAULT_SQL = [
    "SHOW TABLES IN glue.sales",
    "SELECT country, count(*) AS orders, round(sum(amount), 2) AS revenue FROM glue.sales.orders "
    "WHERE dt >= DATE '2024-01-10' GROUP BY country ORDER BY country",
    "SELECT customer, round(sum(amount), 2) AS spent FROM glue.sales.orders WHERE country = 'US' "
    "GROUP BY customer ORDER BY spent DESC LIMIT 5",
    "EXPLAIN SELECT * FROM glue.sales.orders WHERE country = 'US' AND dt >= DATE '2024-01-13'",
    "CALL glue.system.partition_indexes(table => 'sales.orders')",
]


def _spark_tour(warehouse: str, statements: list[str] | None) -> int:
    """A local Spark SQL session with the sample warehouse mounted as catalog ``glue``.

    Queries on ``glue.sales.orders`` are pruned by the catalog: Spark's partition filters go to gluecat,
    which plans them with the table's partition index, and only the chosen folders are read.
    """
    from gluecat.spark import session

    spark = session(
        warehouse, **{"spark.sql.shuffle.partitions": "2", "spark.ui.showConsoleProgress": "false"}
    )
    spark.sparkContext.setLogLevel("ERROR")
    try:
        for statement in statements or DEFAULT_SQL:
            print(f"\nspark-sql> {statement}")
            result = spark.sql(statement)
            if statement.lstrip().upper().startswith("EXPLAIN"):
                print(result.collect()[0][0])
            else:
                result.show(truncate=False)
    finally:
        spark.stop()
    return 0


def _cmd_demo(args: argparse.Namespace) -> int:
    try:
        catalog = ensure_sample(args.warehouse)
    except NotTheSample as e:
        print(f"gluecat demo: {e}", file=sys.stderr)
        return 2
    if not args.no_spark:
        return _spark_tour(catalog.warehouse, args.sql)
    _python_tour(catalog)
    return 0


def register(sub: Any) -> None:
    p = sub.add_parser("demo", help="create a sample warehouse and query it with Spark SQL")
    p.add_argument("--warehouse", "-w", default="warehouse", help="warehouse path (default ./warehouse)")
    p.add_argument("--no-spark", action="store_true", help="only use the Python API")
    p.add_argument("--sql", action="append", help="a SQL statement to run in the Spark session (repeatable)")
    p.set_defaults(func=_cmd_demo)
