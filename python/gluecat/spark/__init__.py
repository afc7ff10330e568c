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


def spark_conf(
    warehouse: str | None = None,
    name: str = "glue",
    python: str | None = None,
    *,
    endpoint: str | None = None,
    region: str | None = None,
    profile: str | None = None,
) -> dict[str, str]:
    """The Spark settings that mount a catalog as `name`: a gluecat warehouse this application opens, or
    (``endpoint``) a catalog service's Glue API: gluecat serve, any Glue; AWS Glue itself by ``region``
    alone. Credentials and the CA bundle come from the AWS chain, as boto3 finds them; ``warehouse`` is
    then where tables made without a location go (gluecat serve's own by default).

    ``python`` is the interpreter (with gluecat installed) that a JVM-only Spark process (spark-sql,
    spark-shell) starts for the catalog; by default this one.
    """
    if not (warehouse or endpoint or region or profile):
        raise ValueError(
            "spark_conf: give a warehouse, or the endpoint (region, profile) of a catalog service"
        )
    conf = {
        "spark.jars": str(jar_path()),
        "spark.sql.extensions": EXTENSIONS_CLASS,
        f"spark.sql.catalog.{name}": CATALOG_CLASS,
    }
    options = {"warehouse": warehouse, "endpoint": endpoint, "region": region, "profile": profile}
    conf.update({f"spark.sql.catalog.{name}.{k}": v for k, v in options.items() if v})
    conf[f"spark.sql.catalog.{name}.python"] = python or sys.executable
    return conf


def session(
    warehouse: str | None = None,
    name: str = "glue",
    master: str = "local[2]",
    *,
    endpoint: str | None = None,
    region: str | None = None,
    profile: str | None = None,
    **conf: str,
) -> Any:
    """A SparkSession with a catalog mounted as `name` (a warehouse, or a catalog service: see spark_conf),
    its calls served by this process, as are those of any gluecat catalog set later (spark.conf.set)."""
    from pyspark.java_gateway import ensure_callback_server_started
    from pyspark.sql import SparkSession

    from gluecat.spark.catalogs import Catalogs, open_catalog

    if warehouse is not None and "://" not in warehouse:
        warehouse = os.path.abspath(warehouse)
    settings = spark_conf(warehouse, name, endpoint=endpoint, region=region, profile=profile)
    builder = SparkSession.builder.master(master).config("spark.ui.enabled", "false")
    for key, value in {**settings, **conf}.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    gateway: Any = spark.sparkContext._gateway
    ensure_callback_server_started(gateway)
    # Registered before the catalog is first used: Spark instantiates it lazily on first reference.
    registry = gateway.jvm.io.gluecat.spark.Registry
    registry.registerFactory(Catalogs())
    if endpoint is None and region is None and profile is None and warehouse is not None:
        from gluecat.spark.backend import Backend

        registry.register(warehouse, Backend(open_catalog({"warehouse": warehouse})))
    return spark
