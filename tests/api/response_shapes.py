"""Checks a response against botocore's output shape of its operation: member names, types, required
members and enums, at every depth. Used by the recorder in conftest.py on every call the API tests make."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from botocore.model import Shape

from gluecat.api import model


def problems(service: str, operation: str, response: dict[str, Any]) -> list[str]:
    """Everything in ``response`` that botocore's output shape does not allow (empty: it conforms)."""
    shape = model.operation_model(service, operation).output_shape
    body = {k: v for k, v in response.items() if k != "ResponseMetadata"}
    if shape is None:
        return (
            [f"{operation}: the model has no output, but the response holds {sorted(body)}"] if body else []
        )
    out: list[str] = []
    _check(shape, body, operation, out)
    return out


def _check(shape: Shape, value: Any, path: str, out: list[str]) -> None:
    kind = shape.type_name
    if kind == "structure":
        if shape.metadata.get("document"):
            return
        if not isinstance(value, dict):
            out.append(f"{path}: a {type(value).__name__}, not a structure ({shape.name})")
            return
        members = shape.members  # type: ignore[attr-defined]
        for name, item in value.items():
            if name not in members:
                out.append(f"{path}.{name}: not a member of {shape.name}")
            elif item is None:
                out.append(f"{path}.{name}: None (an absent member is left out)")
            else:
                _check(members[name], item, f"{path}.{name}", out)
        for name in shape.required_members:  # type: ignore[attr-defined]
            if name not in value:
                out.append(f"{path}.{name}: required by {shape.name}, missing")
    elif kind == "list":
        if not isinstance(value, list):
            out.append(f"{path}: a {type(value).__name__}, not a list")
            return
        for i, item in enumerate(value):
            _check(shape.member, item, f"{path}[{i}]", out)  # type: ignore[attr-defined]
    elif kind == "map":
        if not isinstance(value, dict):
            out.append(f"{path}: a {type(value).__name__}, not a map")
            return
        for key, item in value.items():
            _check(shape.key, key, f"{path} key {key!r}", out)  # type: ignore[attr-defined]
            _check(shape.value, item, f"{path}[{key!r}]", out)  # type: ignore[attr-defined]
    elif kind == "string":
        if not isinstance(value, str):
            out.append(f"{path}: a {type(value).__name__}, not a string")
        elif shape.metadata.get("enum") and value not in shape.metadata["enum"]:
            out.append(f"{path}: {value!r} is not one of {shape.name}'s {shape.metadata['enum']}")
    elif kind in ("integer", "long"):
        if isinstance(value, bool) or not isinstance(value, int):
            out.append(f"{path}: a {type(value).__name__}, not an integer")
    elif kind in ("double", "float"):
        if isinstance(value, bool) or not isinstance(value, int | float):
            out.append(f"{path}: a {type(value).__name__}, not a number")
    elif kind == "boolean":
        if not isinstance(value, bool):
            out.append(f"{path}: a {type(value).__name__}, not a boolean")
    elif kind == "timestamp":
        if not isinstance(value, datetime) or value.tzinfo is None:
            out.append(f"{path}: {value!r} is not a timezone-aware datetime (botocore parses timestamps so)")
    elif kind == "blob":
        if not isinstance(value, bytes):
            out.append(f"{path}: a {type(value).__name__}, not bytes")
    else:
        out.append(f"{path}: shape type {kind} unknown to this check")
