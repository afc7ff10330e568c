"""The catalog a Spark catalog's options name, opened for the shim: a warehouse (``warehouse``), opened in
this process, or a catalog service over the Glue API (``endpoint``, or AWS Glue by ``region`` or
``profile`` alone), with ``warehouse`` then where tables made without a location go."""

from __future__ import annotations

import json
from collections.abc import Mapping

from gluecat import Catalog
from gluecat.errors import GlueError, InvalidInputException
from gluecat.spark.backend import Backend
from gluecat.spark.remote import GlueClient, RemoteCatalog


def is_remote(options: Mapping[str, str]) -> bool:
    """As the shim's Backend.remote decides."""
    return bool(options.get("endpoint")) or (
        not options.get("warehouse") and bool(options.get("region") or options.get("profile"))
    )


def open_catalog(options: Mapping[str, str]) -> GlueClient:
    if is_remote(options):
        return RemoteCatalog(
            options.get("endpoint") or None,
            region=options.get("region") or None,
            profile=options.get("profile") or None,
            warehouse=options.get("warehouse") or None,
        )
    warehouse = options.get("warehouse")
    if not warehouse:
        raise InvalidInputException("warehouse or endpoint: one is required to name the catalog")
    return Catalog(warehouse)


OPENED: list[Backend] = []
"""The backends this process opened for Spark catalogs (one for each catalog the JVM asked for)."""


class Unopened:
    """The backend of options that name no catalog (an endpoint without a region, ...): every call answers
    the error that opening it raised, so that Spark shows it as it shows the catalog's other errors."""

    def __init__(self, error: GlueError) -> None:
        self.error = error

    def call(self, operation: str, arguments: str) -> str:
        return json.dumps({"error": self.error.code, "message": self.error.message})

    class Java:
        implements = ["io.gluecat.spark.PythonCatalog"]  # noqa: RUF012 (Py4J reads this class attribute)


class Catalogs:
    """Implements io.gluecat.spark.PythonCatalogFactory: each catalog of a PySpark session opened in the
    driver's process, also one configured at run time (spark.conf.set before its first use)."""

    def open(self, options: str) -> Backend | Unopened:
        try:
            backend = Backend(open_catalog(json.loads(options)))
        except GlueError as e:  # options that name no catalog: every call says why
            return Unopened(e)
        OPENED.append(backend)
        return backend

    class Java:
        implements = ["io.gluecat.spark.PythonCatalogFactory"]  # noqa: RUF012 (Py4J reads this class attribute)
