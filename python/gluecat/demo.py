"""``gluecat demo``: a sample warehouse, and a look at it.

Creates (once) a ``sales`` database with an ``orders`` table partitioned by ``country`` and ``dt``,
writes its data as Parquet files, registers the partitions and a partition index through the Glue API,
then queries it in a local Spark SQL session (or, with --no-spark, through the Python API).
"""

from __future__ import annotations

import argparse
import os
from datetime import date, timedelta
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

COUNTRIES = ("US", "UK", "DE", "FR")
DAYS = 14


def ensure_sample(warehouse: str) -> Any:
    """The sample lake in ``warehouse`` (created on first use); returns the Catalog."""
    from gluecat import Catalog

    catalog = Catalog(warehouse)
    if catalog.get_databases()["DatabaseList"]:
        return catalog
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
    "SHOW VIEWS",
    "SELECT country, count(*) AS orders, round(sum(amount), 2) AS revenue FROM sales_orders "
    "WHERE dt >= DATE '2024-01-10' GROUP BY country ORDER BY country",
    "SELECT customer, round(sum(amount), 2) AS spent FROM sales_orders_us GROUP BY customer ORDER BY spent DESC LIMIT 5",
]


def _spark_tour(catalog: Any, statements: list[str] | None) -> int:
    """A local Spark SQL session over the sample warehouse.

    Each Parquet table becomes a view over exactly the partition folders the catalog lists (Spark
    infers the partition values from their key=value names); ``sales_orders_us`` is planned by the
    catalog's partition index (country = 'US'), so Spark reads only those folders. (The Spark catalog plugin, which makes this
    ``glue.sales.orders``, is not part of this build yet.)
    """
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master("local[2]")
        .appName("gluecat demo")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.ui.showConsoleProgress", "false")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    try:
        for name, expression in (("sales_orders", ""), ("sales_orders_us", "country = 'US'")):
            table = catalog.get_table(DatabaseName="sales", Name="orders")["Table"]
            parts = catalog.get_partitions_arrow(
                DatabaseName="sales", TableName="orders", Expression=expression
            )
            locations = parts.column("Location").to_pylist()
            plan = catalog.explain_partitions(DatabaseName="sales", TableName="orders", Expression=expression)
            print(
                f"view {name}: {len(locations)} partition folders chosen by gluecat (index: {plan['Index']})"
            )
            base = table["StorageDescriptor"]["Location"]
            spark.read.option("basePath", base).parquet(*locations).createOrReplaceTempView(name)
        for statement in statements or DEFAULT_SQL:
            print(f"\nspark-sql> {statement}")
            spark.sql(statement).show(truncate=False)
    finally:
        spark.stop()
    return 0


def _cmd_demo(args: argparse.Namespace) -> int:
    catalog = ensure_sample(args.warehouse)
    if not args.no_spark:
        return _spark_tour(catalog, args.sql)
    _python_tour(catalog)
    return 0


def register(sub: Any) -> None:
    p = sub.add_parser("demo", help="create a sample warehouse and query it with Spark SQL")
    p.add_argument("--warehouse", "-w", default="warehouse", help="warehouse path (default ./warehouse)")
    p.add_argument("--no-spark", action="store_true", help="only use the Python API")
    p.add_argument("--sql", action="append", help="a SQL statement to run in the Spark session (repeatable)")
    p.set_defaults(func=_cmd_demo)
