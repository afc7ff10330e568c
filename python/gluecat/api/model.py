"""botocore's service models (botocore/data/glue, data/lakeformation): the reference for operations,
shapes, limits, enums, errors and paginators, loaded once per process on first use.
"""

from __future__ import annotations

import functools
from typing import Any

from botocore import xform_name
from botocore.exceptions import ClientError
from botocore.model import OperationModel, ServiceModel

from gluecat.errors import GlueError, error_class


@functools.cache
def _session() -> Any:
    # Imported here: botocore's session module costs a few hundred milliseconds to import, which a
    # process that never makes an API call (the Spark bridge's child, the CLI's help) should not pay.
    import botocore.session

    return botocore.session.get_session()


@functools.cache
def service_model(service: str) -> ServiceModel:
    """The service model of ``service`` ("glue" or "lakeformation")."""
    return _session().get_service_model(service)


@functools.cache
def operation_model(service: str, operation: str) -> OperationModel:
    return service_model(service).operation_model(operation)


@functools.cache
def paginator_config(service: str, operation: str) -> dict[str, Any] | None:
    """The paginator of an operation in paginators-1.json (with its sdk-extras), or None."""
    try:
        return dict(_session().get_paginator_model(service).get_paginator(operation))
    except ValueError:  # botocore's answer for an operation without a paginator
        return None


@functools.cache
def error_codes(service: str) -> tuple[str, ...]:
    """The codes of the service's modeled errors."""
    return tuple(
        str(getattr(shape, "error_code", shape.name)) for shape in service_model(service).error_shapes
    )


def python_name(operation: str) -> str:
    """boto3's method name of an operation: GetTableVersions -> get_table_versions."""
    return str(xform_name(operation))


class ClientExceptions:
    """``client.exceptions``: the class of each of the service's error codes, as boto3 makes them, plus
    botocore's ClientError; ``from_code`` as botocore's."""

    def __init__(self, service: str) -> None:
        self._service = service
        self.ClientError = ClientError

    def __getattr__(self, name: str) -> type[GlueError]:
        if name.startswith("_") or name not in self._codes():
            raise AttributeError(f"{self._service} has no error code {name!r}")
        cls = error_class(name)
        setattr(self, name, cls)
        return cls

    def _codes(self) -> set[str]:
        from gluecat.errors import ALL_ERRORS

        return set(error_codes(self._service)) | {cls.code for cls in ALL_ERRORS}

    def from_code(self, error_code: str) -> type[Exception]:
        if error_code in self._codes():
            return getattr(self, error_code)
        return self.ClientError

    def __dir__(self) -> list[str]:
        return sorted({*super().__dir__(), *self._codes()})
