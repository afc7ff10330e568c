"""What a boto3 client has besides its operations, from botocore's service model: ``meta``,
``exceptions``, ``get_paginator`` / ``can_paginate`` (botocore's own Paginator, run over the client's
methods) and the waiter calls. Subclasses name their service: ``Catalog`` is "glue"; a Lake Formation
client is "lakeformation" and needs nothing more.
"""

from __future__ import annotations

import functools
from typing import Any, ClassVar

from botocore.config import Config
from botocore.exceptions import OperationNotPageableError
from botocore.hooks import HierarchicalEmitter
from botocore.model import ServiceModel
from botocore.paginate import Paginator

from gluecat.api import model
from gluecat.api.model import ClientExceptions


class Events(HierarchicalEmitter):
    """botocore's event emitter; remembers whether anything was registered, so that a call made while
    nothing listens (the usual case) does not emit."""

    listened = False

    def _register(self, *args: Any, **kwargs: Any) -> None:
        self.listened = True
        super()._register(*args, **kwargs)  # type: ignore[misc]


class ClientMeta:
    """``client.meta``, as far as it means something for a client without an endpoint."""

    def __init__(self, client: ServiceClient, region_name: str) -> None:
        self._service = client.SERVICE
        self._class: Any = type(client)
        self.region_name = region_name
        self.endpoint_url: str | None = None  # calls go to the warehouse, not over HTTP
        self.partition = "aws"
        self.config = Config(region_name=region_name)
        self.events = Events()

    @property
    def service_model(self) -> ServiceModel:
        return model.service_model(self._service)

    @property
    def method_to_api_mapping(self) -> dict[str, str]:
        return dict(operations(self._class, self._service))


@functools.cache
def operations(cls: Any, service: str) -> tuple[tuple[str, str], ...]:
    """The operations of the service model that a client class implements: (method name, API name)."""
    known = set(model.service_model(service).operation_names)
    out = []
    for name in dir(cls):
        api = getattr(getattr(cls, name, None), "api_operation", None)
        if api in known and model.python_name(api) == name:
            out.append((name, api))
    return tuple(out)


class ServiceClient:
    """The boto3 client machinery shared by gluecat's clients."""

    SERVICE: ClassVar[str]
    exceptions: ClassVar[ClientExceptions]
    meta: ClientMeta
    waiter_names: ClassVar[list[str]] = []

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "SERVICE" in cls.__dict__:
            cls.exceptions = ClientExceptions(cls.SERVICE)

    def can_paginate(self, operation_name: str) -> bool:
        """Whether boto3's paginator exists for the operation (a method name, e.g. "get_tables") and
        this client implements it."""
        api = self.meta.method_to_api_mapping.get(operation_name)
        return api is not None and model.paginator_config(self.SERVICE, api) is not None

    def get_paginator(self, operation_name: str) -> Paginator:
        """botocore's Paginator for the operation, calling this client's method for each page."""
        if not self.can_paginate(operation_name):
            raise OperationNotPageableError(operation_name=operation_name)
        api = self.meta.method_to_api_mapping[operation_name]
        config = model.paginator_config(self.SERVICE, api) or {}
        return Paginator(getattr(self, operation_name), config, model.operation_model(self.SERVICE, api))

    def get_waiter(self, waiter_name: str) -> Any:
        # Glue and Lake Formation define no waiters; boto3 answers so.
        raise ValueError(f"Waiter does not exist: {waiter_name}")
