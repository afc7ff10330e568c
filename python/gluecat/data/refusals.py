"""Requests the Spark shim refuses as Spark's own catalogs do, with Spark's error class and parameters.

The shim raises Spark's AnalysisException of that class, so a refusal reads the same through gluecat as
through Spark's built-in catalog (CANNOT_TRUNCATE_EXTERNAL_TABLE, LOCATION_ALREADY_EXISTS, ...). Anyone
else (the Python API, tests) sees an InvalidInputException carrying the same message.
"""

from __future__ import annotations

from gluecat.errors import InvalidInputException


class SparkRefusal(InvalidInputException):
    """A refused request: Spark's error class, its message parameters, and gluecat's own message."""

    def __init__(self, error_class: str, params: dict[str, str], message: str) -> None:
        super().__init__(message)
        self.error_class = error_class
        self.params = params


def quoted(*parts: str) -> str:
    """A multi-part name as Spark prints it in messages: `db`.`table`."""
    return ".".join("`" + p.replace("`", "``") + "`" for p in parts)
