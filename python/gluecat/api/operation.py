"""The edge every API call passes: parameter events, validation, error naming, response metadata."""

from __future__ import annotations

import functools
import inspect
import uuid
from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar

from gluecat.api import model, validate
from gluecat.errors import GlueError, InvalidInputException

P = ParamSpec("P")
R = TypeVar("R")


def response(body: dict[str, Any] | None = None) -> dict[str, Any]:
    """A boto3-shaped response: the body plus ResponseMetadata."""
    out = dict(body or {})
    request_id = str(uuid.uuid4())
    out["ResponseMetadata"] = {
        "RequestId": request_id,
        "HTTPStatusCode": 200,
        "HTTPHeaders": {"x-amzn-requestid": request_id, "content-type": "application/x-amz-json-1.1"},
        "RetryAttempts": 0,
    }
    return out


def operation(name: str) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Mark a method of a client (gluecat.api.service.ServiceClient) as the operation ``name``.

    A call's parameters are checked against the operation's input shape in the client's service model
    (gluecat.api.validate) and the method gets the checked, normalized copy; a parameter the model has
    but gluecat does not take is refused by name. gluecat's own operations, which the model does not
    hold, are checked against the method's signature. Every GlueError raised inside carries the
    operation's name, as botocore's errors do.
    """

    def wrap(fn: Callable[P, R]) -> Callable[P, R]:
        sig = inspect.signature(fn)
        params = list(sig.parameters.values())
        keyword = frozenset(p.name for p in params[1:] if p.kind is p.KEYWORD_ONLY)
        required = frozenset(p.name for p in params[1:] if p.kind is p.KEYWORD_ONLY and p.default is p.empty)

        @functools.wraps(fn)
        def call(*args: P.args, **kwargs: P.kwargs) -> R:
            try:
                if len(args) != 1:
                    raise InvalidInputException(
                        f"{name}: parameters must be passed by keyword (e.g. DatabaseName=...)"
                    )
                client = args[0]
                service = client.SERVICE  # type: ignore[attr-defined]
                if client.meta.events.listened:  # type: ignore[attr-defined]
                    kwargs = _emit_params(client, service, name, kwargs)  # type: ignore[assignment]
                if _modeled(service, name):
                    kwargs = validate.request(service, name, kwargs)  # type: ignore[assignment]
                    for member in kwargs.keys() - keyword:
                        raise InvalidInputException(f"{member}: not supported by gluecat")
                else:
                    _bind(name, kwargs, keyword, required)
                return fn(*args, **kwargs)
            except GlueError as e:
                if e.operation_name is None:
                    e.operation_name = name
                raise

        call.api_operation = name  # type: ignore[attr-defined]
        return call

    return wrap


@functools.cache
def _modeled(service: str, name: str) -> bool:
    return name in model.service_model(service).operation_names


def _bind(name: str, kwargs: dict[str, Any], keyword: frozenset[str], required: frozenset[str]) -> None:
    unknown = sorted(str(k) for k in kwargs if k not in keyword)
    if unknown:
        raise InvalidInputException(
            f"{name}: unknown parameter {unknown[0]!r}; valid parameters are {', '.join(sorted(keyword))}"
        )
    for missing in sorted(required - kwargs.keys()):
        raise InvalidInputException(f"{missing}: is required")


def _emit_params(client: Any, service: str, name: str, params: dict[str, Any]) -> dict[str, Any]:
    """boto3's two parameter events, so that handlers registered on ``client.meta.events`` (e.g.
    pyiceberg's, which adds a CatalogId to every call) see and may change the parameters."""
    op_model = model.operation_model(service, name) if _modeled(service, name) else None
    service_id = model.service_model(service).service_id.hyphenize()
    events = client.meta.events
    responses = events.emit(
        f"provide-client-params.{service_id}.{name}", params=params, model=op_model, context={}
    )
    params = next((r for _, r in responses if r is not None), params)
    events.emit(f"before-parameter-build.{service_id}.{name}", params=params, model=op_model, context={})
    return params
