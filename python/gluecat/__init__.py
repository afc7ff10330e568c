"""gluecat: an AWS Glue Data Catalog compatible metadata catalog for Apache Spark, stored as Parquet."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gluecat.errors import GlueError

if TYPE_CHECKING:
    from gluecat.api.client import Catalog
    from gluecat.api.lake_formation import LakeFormation

__all__ = ["Catalog", "GlueError", "LakeFormation"]
__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    # Imported on first use so that `import gluecat.store` (e.g. in the Spark bridge's child or the
    # HMS server) does not pay for the whole API layer.
    if name == "Catalog":
        from gluecat.api.client import Catalog

        return Catalog
    if name == "LakeFormation":
        from gluecat.api.lake_formation import LakeFormation

        return LakeFormation
    raise AttributeError(name)
