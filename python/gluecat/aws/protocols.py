"""The two wire protocols, each driven by its botocore service model.

- Glue speaks ``json`` 1.1: ``POST /`` with ``X-Amz-Target: AWSGlue.<Operation>`` and the input shape as
  a JSON object; errors are ``{"__type": code, "Message": ...}``.
- Lake Formation speaks ``rest-json``: ``POST /<Operation>`` (the operation's ``requestUri``), the input
  shape as a JSON object (or the ``payload`` member as the body); errors name their code in the
  ``x-amzn-ErrorType`` header and the body, with the HTTP status of the error shape's ``httpStatusCode``.

Both answer with the output shape's members; the status of an error comes from its shape in the model
(AWS's own status for it), else 500 for the internal-error codes and 400 for the rest.
"""

from __future__ import annotations

import uuid
from typing import Any

import orjson
from botocore.model import OperationModel, ServiceModel, StructureShape

from gluecat.aws.codec import ShapeCodec
from gluecat.aws.errors import AwsError, serialization, unknown_operation

Reply = tuple[int, list[tuple[str, str]], bytes]

_SERVER_FAULTS = frozenset({"InternalServiceException", "InternalServerException", "InternalFailure"})


def _unencodable(value: Any) -> Any:
    raise TypeError(f"a {type(value).__name__} has no JSON form in the service model")


def dumps(value: Any) -> bytes:
    """Compact JSON (orjson: a 1,000-partition reply encodes in a fifth of the json module's time)."""
    return orjson.dumps(value, default=_unencodable)


def request_object(body: bytes) -> dict[str, Any]:
    """The JSON object a request body holds (an empty body is an empty object)."""
    if not body.strip():
        return {}
    try:
        value = orjson.loads(body)
    except orjson.JSONDecodeError as e:
        raise serialization(f"the body is not JSON: {e}"[:300]) from None
    if not isinstance(value, dict):
        raise serialization("the body must be a JSON object")
    return value


class Protocol:
    """What both protocols share: the model, its codec, and error statuses and bodies."""

    content_type = "application/json"

    def __init__(self, model: ServiceModel) -> None:
        self.model = model
        self.service = model.signing_name or model.endpoint_prefix
        self.codec = ShapeCodec(model)
        self._errors = {shape.name: shape for shape in model.error_shapes}

    def status(self, code: str) -> int:
        shape = self._errors.get(code)
        if shape is not None:
            declared = shape.metadata.get("error", {}).get("httpStatusCode")
            if declared:
                return int(declared)
            if shape.metadata.get("fault"):
                return 500
        return 500 if code in _SERVER_FAULTS else 400

    def _message_member(self, code: str) -> str:
        shape = self._errors.get(code)
        if isinstance(shape, StructureShape) and "Message" in shape.members:
            return "Message"
        return "message"

    def read(self, operation: OperationModel, body: bytes) -> dict[str, Any]:
        """The operation's keyword arguments from the request body."""
        params = request_object(body)
        return dict(self.codec.read_input(operation)(params))

    def headers(self, content_type: str, request_id: str) -> list[tuple[str, str]]:
        return [("Content-Type", content_type), ("x-amzn-RequestId", request_id)]

    def reply(self, operation: OperationModel, result: dict[str, Any]) -> Reply:
        body = dumps(self.codec.write_output(operation)(result))
        return 200, self.headers(self.content_type, str(uuid.uuid4())), body

    def error(self, code: str, message: str, status: int | None = None) -> Reply:
        body = dumps({"__type": code, self._message_member(code): message})
        return status or self.status(code), self.headers(self.content_type, str(uuid.uuid4())), body


class GlueJson(Protocol):
    """JSON 1.1 with X-Amz-Target."""

    content_type = "application/x-amz-json-1.1"

    def __init__(self, model: ServiceModel) -> None:
        super().__init__(model)
        self.target_prefix = str(model.metadata["targetPrefix"]) + "."
        self._operations = set(model.operation_names)

    def operation(self, method: str, path: str, target: str | None) -> OperationModel:
        name = target[len(self.target_prefix) :] if target and target.startswith(self.target_prefix) else None
        if method != "POST" or path != "/" or name not in self._operations:
            raise unknown_operation(f"Unknown operation {target or ''}".strip())
        return self.model.operation_model(name)


class LakeFormationRest(Protocol):
    """REST-JSON: the operation is the request's method and path."""

    def __init__(self, model: ServiceModel) -> None:
        super().__init__(model)
        self.routes: dict[tuple[str, str], str] = {}
        for name in model.operation_names:
            http = model.operation_model(name).http
            self.routes[(str(http.get("method", "POST")), str(http["requestUri"]))] = name
        self.paths = frozenset(path for _, path in self.routes)
        self._checked: set[str] = set()

    def operation(self, method: str, path: str) -> OperationModel:
        name = self.routes.get((method, path))
        if name is None:
            raise unknown_operation(f"No operation is served at {method} {path}", status=404)
        operation = self.model.operation_model(name)
        if name not in self._checked:
            _check_body_only(operation)
            self._checked.add(name)
        return operation

    def read(self, operation: OperationModel, body: bytes) -> dict[str, Any]:
        shape = operation.input_shape
        payload = shape.serialization.get("payload") if shape is not None else None
        if shape is not None and payload is not None:
            member = shape.members[payload]
            if member.type_name == "blob":
                return {payload: body} if body else {}
            inner = self.codec.reader(member)
            value = request_object(body)
            return {payload: inner(value) if inner else value}
        return super().read(operation, body)

    def reply(self, operation: OperationModel, result: dict[str, Any]) -> Reply:
        shape = operation.output_shape
        payload = shape.serialization.get("payload") if shape is not None else None
        if shape is not None and payload is not None:
            member = shape.members[payload]
            value: Any = result.get(payload)
            if member.type_name == "blob":
                data = value.read() if hasattr(value, "read") else bytes(value or b"")
                return 200, self.headers("application/octet-stream", str(uuid.uuid4())), data
            writer = self.codec.writer(member)
            body = dumps(writer(value) if writer and value is not None else value or {})
            return 200, self.headers(self.content_type, str(uuid.uuid4())), body
        return super().reply(operation, result)

    def error(self, code: str, message: str, status: int | None = None) -> Reply:
        status, headers, body = super().error(code, message, status)
        return status, [*headers, ("x-amzn-ErrorType", code)], body


def _check_body_only(operation: OperationModel) -> None:
    """Members bound to headers, the query string or the URI are not read or written here (Lake
    Formation's model has none); an operation that has them is refused rather than misread."""
    for shape in (operation.input_shape, operation.output_shape):
        if isinstance(shape, StructureShape):
            for name, member in shape.members.items():
                location = member.serialization.get("location")
                if location:
                    raise AwsError(
                        "InternalServiceException",
                        f"gluecat cannot serve {operation.name}: its member {name} travels in the {location}",
                        500,
                    )
