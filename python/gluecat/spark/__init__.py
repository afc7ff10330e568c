"""gluecat's Spark catalog plugin: the shim jar, its settings, and ready sessions for PySpark scripts."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

CATALOG_CLASS = "io.gluecat.spark.GlueCatalog"
# Brings MSCK REPAIR TABLE, ANALYZE TABLE, partial DROP PARTITION specs and PARTITION ... SET LOCATION to gluecat
# tables (Spark refuses them for v2 tables), and reports partitions in errors by their values as written.
EXTENSIONS_CLASS = "io.gluecat.spark.GlueExtensions"


def jar_path() -> Path:
    """The shim jar shipped in this package (built by the install's build backend)."""
    jar = Path(__file__).resolve().parent / "gluecat-spark.jar"
    if not jar.is_file():
        raise FileNotFoundError(
            f"{jar} is missing: reinstall gluecat (pip install .) or run python jvm-shim/gluecat_build.py"
        )
    return jar


def hadoop_aws_package() -> str:
    """The Maven coordinate of Hadoop's S3A file system (``hadoop-aws``) of the Hadoop version whose client
    jars the installed pyspark ships, for ``spark.jars.packages``: tables on ``s3a://`` need it, and it
    brings the AWS SDK bundle it was built with."""
    import pyspark

    jars = Path(pyspark.__file__).resolve().parent / "jars"
    prefix = "hadoop-client-api-"
    for jar in sorted(jars.glob(f"{prefix}*.jar")):
        return f"org.apache.hadoop:hadoop-aws:{jar.name[len(prefix) : -len('.jar')]}"
    raise FileNotFoundError(f"no {prefix}<version>.jar in {jars}: which Hadoop pyspark runs is unknown")


def spark_conf(warehouse: str, name: str = "glue", python: str | None = None) -> dict[str, str]:
    """The Spark settings that mount a gluecat warehouse as catalog `name`.

    ``python`` is the interpreter (with gluecat installed) that a JVM-only Spark process (spark-sql,
    spark-shell) starts for the catalog; by default this one.
    """
    return {
        "spark.jars": str(jar_path()),
        "spark.sql.extensions": EXTENSIONS_CLASS,
        f"spark.sql.catalog.{name}": CATALOG_CLASS,
        f"spark.sql.catalog.{name}.warehouse": warehouse,
        f"spark.sql.catalog.{name}.python": python or sys.executable,
    }


def session(warehouse: str, name: str = "glue", master: str = "local[2]", **conf: str) -> Any:
    """A SparkSession with `warehouse` mounted as catalog `name`, its calls served by this process."""
    from pyspark.java_gateway import ensure_callback_server_started
    from pyspark.sql import SparkSession

    from gluecat import Catalog
    from gluecat.spark.backend import Backend

    warehouse = os.path.abspath(warehouse) if "://" not in warehouse else warehouse
    builder = SparkSession.builder.master(master).config("spark.ui.enabled", "false")
    for key, value in {**spark_conf(warehouse, name), **conf}.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    gateway: Any = spark.sparkContext._gateway
    ensure_callback_server_started(gateway)
    # Registered before the catalog is first used: Spark instantiates it lazily on first reference.
    gateway.jvm.io.gluecat.spark.Registry.register(warehouse, Backend(Catalog(warehouse)))
    return spark
