"""gluecat: an AWS Glue Data Catalog compatible metadata catalog for Apache Spark, stored as Parquet."""

from gluecat.errors import GlueError

__all__ = ["GlueError"]
__version__ = "0.1.0"
