"""Errors that the wire itself answers (authentication, framing, routing), as AWS names them.

The catalog's own errors (GlueError, botocore's ClientError) are written by protocols.py from their
error code; these are the ones that happen before a request reaches the catalog.
"""

from __future__ import annotations


class AwsError(Exception):
    """An error answered with AWS's code, message and HTTP status."""

    def __init__(self, code: str, message: str, status: int = 400) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.status = status


def serialization(message: str) -> AwsError:
    """A body that is not the JSON the protocol expects (AWS: SerializationException, 400)."""
    return AwsError("SerializationException", message)


def unknown_operation(message: str, status: int = 400) -> AwsError:
    return AwsError("UnknownOperationException", message, status)
