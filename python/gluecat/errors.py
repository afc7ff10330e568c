"""The errors of the Glue and Lake Formation documents, one class per error code.

Every error is a ``botocore.exceptions.ClientError``, shaped as botocore shapes the errors it raises
for ``boto3.client("glue")``: ``err.response["Error"]["Code"]`` and ``["Message"]``, the
``ResponseMetadata`` (RequestId, HTTPStatusCode, HTTPHeaders, RetryAttempts), ``err.operation_name``
and botocore's ``str(err)``. So code written for boto3 catches them unchanged: ``except ClientError``,
``except catalog.exceptions.EntityNotFoundException``, or by inspecting the code.
"""

from __future__ import annotations

import sys
import uuid
from typing import Any

from botocore.exceptions import ClientError


def error_response(code: str, message: str, status: int) -> dict[str, Any]:
    """The ``response`` botocore gives a ClientError of a JSON service: the error and the metadata."""
    request_id = str(uuid.uuid4())
    return {
        "Error": {"Message": message, "Code": code},
        "ResponseMetadata": {
            "RequestId": request_id,
            "HTTPStatusCode": status,
            "HTTPHeaders": {
                "x-amzn-requestid": request_id,
                "x-amzn-errortype": code,
                "content-type": "application/x-amz-json-1.1",
            },
            "RetryAttempts": 0,
        },
    }


class GlueError(ClientError):
    """Base class of every error the catalog raises to its callers."""

    code: str = "InternalServiceException"
    status: int = 400
    """The HTTP status Glue answers this error with."""

    def __init__(self, message: str, *, operation_name: str | None = None) -> None:
        self.message = message
        self._operation_name = operation_name
        super().__init__(error_response(self.code, message, self.status), operation_name)  # type: ignore[arg-type]

    # ClientError formats its message once, in __init__; the operation's name is only known when the
    # error leaves the API call that raised it (gluecat.api.operation), so the text follows the name.
    @property  # type: ignore[override]
    def operation_name(self) -> str | None:
        return self._operation_name

    @operation_name.setter
    def operation_name(self, name: str | None) -> None:
        self._operation_name = name
        self.args = (str(self),)

    def __str__(self) -> str:
        op = f" when calling the {self._operation_name} operation" if self._operation_name else ""
        return f"An error occurred ({self.code}){op}: {self.message}"

    def __reduce__(self) -> Any:
        # ClientError pickles as a bare ClientError; keep the class, the message and the operation.
        return (_rebuild, (type(self), self.message, self._operation_name))


def _rebuild(cls: type[GlueError], message: str, operation_name: str | None) -> GlueError:
    return cls(message, operation_name=operation_name)


class AlreadyExistsException(GlueError):
    """The resource to create already exists."""

    code = "AlreadyExistsException"


class EntityNotFoundException(GlueError):
    """A named entity (database, table, version, partition, index, ...) does not exist."""

    code = "EntityNotFoundException"


class InvalidInputException(GlueError):
    """The request is malformed: the message names the field and the rule it breaks."""

    code = "InvalidInputException"


class ConcurrentModificationException(GlueError):
    """Another writer changed the entity first (e.g. a stale VersionId)."""

    code = "ConcurrentModificationException"


class ResourceNumberLimitExceededException(GlueError):
    """A documented limit on the number of resources would be exceeded."""

    code = "ResourceNumberLimitExceededException"


class InternalServiceException(GlueError):
    """The catalog failed for a reason that is not the caller's."""

    code = "InternalServiceException"
    status = 500


class OperationTimeoutException(GlueError):
    """The operation did not finish in time (e.g. commit retries exhausted)."""

    code = "OperationTimeoutException"


class GlueEncryptionException(GlueError):
    """Encrypted metadata could not be read."""

    code = "GlueEncryptionException"


class ResourceNotReadyException(GlueError):
    """The resource is not ready for the operation yet (e.g. a CREATING partition index)."""

    code = "ResourceNotReadyException"


class ConflictException(GlueError):
    """The request conflicts with the resource's state."""

    code = "ConflictException"


class AccessDeniedException(GlueError):
    """The caller may not perform the operation."""

    code = "AccessDeniedException"


class TransactionCommittedException(GlueError):
    """The transaction is already committed."""

    code = "TransactionCommittedException"


class TransactionCanceledException(GlueError):
    """The transaction was cancelled (aborted)."""

    code = "TransactionCanceledException"


class TransactionCommitInProgressException(GlueError):
    """The transaction is being committed."""

    code = "TransactionCommitInProgressException"


class StorageError(InternalServiceException):
    """The warehouse holds a file that cannot be read as gluecat metadata; the message names the file.

    An InternalServiceException to callers (it is not their fault), but its own class, so that tools
    that check a warehouse can tell damage from other failures."""


ALL_ERRORS: tuple[type[GlueError], ...] = (
    AlreadyExistsException,
    EntityNotFoundException,
    InvalidInputException,
    ConcurrentModificationException,
    ResourceNumberLimitExceededException,
    InternalServiceException,
    OperationTimeoutException,
    GlueEncryptionException,
    ResourceNotReadyException,
    ConflictException,
    AccessDeniedException,
    TransactionCommittedException,
    TransactionCanceledException,
    TransactionCommitInProgressException,
)
_BY_CODE: dict[str, type[GlueError]] = {cls.code: cls for cls in ALL_ERRORS}


def error_class(code: str) -> type[GlueError]:
    """The class of an error code: one of the above, or a GlueError subclass made once for a code that
    only the service model names (as botocore makes one per error shape), kept in this module so that
    its errors pickle."""
    cls = _BY_CODE.get(code)
    if cls is None:
        cls = type(code, (GlueError,), {"code": code, "__module__": __name__, "__doc__": f"Glue's {code}."})
        _BY_CODE[code] = cls
        setattr(sys.modules[__name__], code, cls)
    return cls
