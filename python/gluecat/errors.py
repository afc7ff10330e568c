"""The errors of the Glue and Lake Formation documents, one class per error code.

Each error carries the code and a message naming the field or entity at fault, and offers the same
``response["Error"]["Code"]`` shape as botocore's ``ClientError`` so that code written against
``boto3.client("glue")`` catches them unchanged (``except catalog.exceptions.EntityNotFoundException``,
or by inspecting ``err.response["Error"]["Code"]``).
"""

from __future__ import annotations

from typing import Any


class GlueError(Exception):
    """Base class of every error the catalog raises to its callers."""

    code: str = "InternalServiceException"

    def __init__(self, message: str, *, operation_name: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.operation_name = operation_name

    @property
    def response(self) -> dict[str, Any]:
        """The botocore-shaped error response."""
        return {
            "Error": {"Code": self.code, "Message": self.message},
            "ResponseMetadata": {"HTTPStatusCode": 400},
        }

    def __str__(self) -> str:
        op = f" when calling the {self.operation_name} operation" if self.operation_name else ""
        return f"An error occurred ({self.code}){op}: {self.message}"


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


class StorageError(GlueError):
    """The warehouse holds a file that cannot be read as gluecat metadata; the message names the file."""

    code = "InternalServiceException"


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


class ExceptionsNamespace:
    """``client.exceptions``: every error class under its code, as boto3 clients expose them."""

    ClientError = GlueError

    def __init__(self) -> None:
        for cls in ALL_ERRORS:
            setattr(self, cls.code, cls)

    def __getattr__(self, name: str) -> type[GlueError]:
        raise AttributeError(f"no error code {name!r}")
