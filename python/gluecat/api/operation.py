"""The edge every API call passes: argument binding, error translation, response metadata."""

from __future__ import annotations

import functools
import inspect
import uuid
from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar

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
    """Mark a method as the Glue operation ``name``.

    Arguments are bound before the call so that an unknown or missing parameter is an
    InvalidInputException naming it (boto3 refuses such calls too), and every GlueError raised inside
    carries the operation's name, as botocore's errors do.
    """

    def wrap(fn: Callable[P, R]) -> Callable[P, R]:
        sig = inspect.signature(fn)
        params = list(sig.parameters.values())
        # A method of self and keyword-only parameters binds when the call names a subset of them that
        # holds the required ones: two set comparisons instead of Signature.bind (a tenth of the time).
        plain = bool(params) and params[0].kind is params[0].POSITIONAL_OR_KEYWORD
        plain = plain and all(p.kind is p.KEYWORD_ONLY for p in params[1:])
        keyword = frozenset(p.name for p in params[1:])
        required = frozenset(p.name for p in params[1:] if p.default is p.empty)

        @functools.wraps(fn)
        def call(*args: P.args, **kwargs: P.kwargs) -> R:
            meta = getattr(args[0], "meta", None) if args else None
            if meta is not None and meta.events.listened:
                kwargs = _emit_params(args[0], name, kwargs)  # type: ignore[assignment]
            if not (plain and len(args) == 1 and required <= kwargs.keys() <= keyword):
                try:
                    sig.bind(*args, **kwargs)
                except TypeError as e:
                    raise InvalidInputException(_binding_message(str(e)), operation_name=name) from None
            try:
                return fn(*args, **kwargs)
            except GlueError as e:
                if e.operation_name is None:
                    e.operation_name = name
                raise

        call.api_operation = name  # type: ignore[attr-defined]
        return call

    return wrap


def _emit_params(client: Any, name: str, params: dict[str, Any]) -> dict[str, Any]:
    """boto3's two parameter events, so that handlers registered on ``client.meta.events`` (e.g.
    pyiceberg's, which adds a CatalogId to every call) see and may change the parameters."""
    from gluecat.api import model

    service = client.SERVICE
    op_model = (
        model.operation_model(service, name) if name in model.service_model(service).operation_names else None
    )
    service_id = model.service_model(service).service_id.hyphenize()
    events = client.meta.events
    responses = events.emit(
        f"provide-client-params.{service_id}.{name}", params=params, model=op_model, context={}
    )
    params = next((r for _, r in responses if r is not None), params)
    events.emit(f"before-parameter-build.{service_id}.{name}", params=params, model=op_model, context={})
    return params


def _binding_message(text: str) -> str:
    # Python says "missing a required argument: 'DatabaseName'" or "got an unexpected keyword
    # argument 'Foo'"; say it as a parameter problem.
    if "missing" in text:
        return "Missing required parameter " + text.split(":", 1)[-1].strip()
    if "unexpected keyword" in text:
        return "Unknown parameter " + text.rsplit(" ", 1)[-1].strip()
    if "positional" in text:
        return "parameters must be passed by keyword (e.g. DatabaseName=...)"
    return text
