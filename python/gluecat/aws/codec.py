"""JSON bodies to boto3's Python values and back, by botocore's service model.

What the JSON protocols carry differently from boto3's values is timestamps (epoch seconds, or ISO 8601
where a shape says so), blobs (base64) and, in requests, the doubles JSON has no number for (NaN and the
infinities, which botocore sends as the strings "NaN", "Infinity" and "-Infinity"); everything else is
JSON as it is. So each shape gets a converter only if such a member lies somewhere below it, and the converters are built once per
shape: a thousand partitions are converted by a loop over their three timestamps, not by a walk of
every column of every partition. The top level of a reply is always rebuilt from the output shape's
members (which drops the ResponseMetadata of the Python API's answers).

A member of the wrong JSON type is passed on unconverted, so that the API's own validation names the
member and the rule, as it does for a Python caller.
"""

from __future__ import annotations

import base64
import binascii
import math
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from botocore.model import ListShape, MapShape, OperationModel, ServiceModel, Shape, StructureShape

from gluecat.aws.errors import serialization

Converter = Callable[[Any], Any]

_LEAVES = ("timestamp", "blob", "double", "float")
_NOT_FINITE = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}


def _children(shape: Shape) -> list[Shape]:
    if isinstance(shape, StructureShape):
        return list(shape.members.values())
    if isinstance(shape, ListShape):
        return [shape.member]
    if isinstance(shape, MapShape):
        return [shape.value]
    return []


def shapes_needing_conversion(model: ServiceModel) -> frozenset[str]:
    """The names of the shapes that hold a timestamp, blob or double at any depth (recursive shapes too)."""
    shapes = [model.shape_for(name) for name in model.shape_names]
    children = {s.name: [c for c in _children(s)] for s in shapes}
    needs = {s.name for s in shapes if s.type_name in _LEAVES}
    changed = True
    while changed:
        changed = False
        for name, kids in children.items():
            if name not in needs and any(k.name in needs for k in kids):
                needs.add(name)
                changed = True
    return frozenset(needs)


def _epoch_to_datetime(value: Any) -> Any:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        try:
            return datetime.fromtimestamp(value, UTC)
        except (OverflowError, OSError, ValueError) as e:
            raise serialization(f"the timestamp {value!r} is out of range") from e
    return value


def _iso_to_datetime(value: Any) -> Any:
    if isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value)
        except ValueError as e:
            raise serialization(f"{value!r} is not an ISO 8601 timestamp") from e
        return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)
    return value


def _datetime_to_epoch(value: Any) -> Any:
    if isinstance(value, datetime):
        # An aware datetime's timestamp() divides its whole microseconds since the epoch once: the
        # float that botocore parses back to exactly this microsecond.
        return (value if value.tzinfo is not None else value.replace(tzinfo=UTC)).timestamp()
    return value


def _datetime_to_iso(value: Any) -> Any:
    if isinstance(value, datetime):
        utc = value.astimezone(UTC) if value.tzinfo is not None else value
        return utc.strftime("%Y-%m-%dT%H:%M:%S.%fZ" if utc.microsecond else "%Y-%m-%dT%H:%M:%SZ")
    return value


def _base64_to_bytes(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError) as e:
            raise serialization("a blob member is not valid base64") from e
    return value


def _bytes_to_base64(value: Any) -> Any:
    if isinstance(value, (bytes, bytearray, memoryview)):
        return base64.b64encode(value).decode("ascii")
    return value


def _timestamp_format(shape: Shape) -> str:
    return str(shape.serialization.get("timestampFormat") or "unixtimestamp")


def _string_to_double(value: Any) -> Any:
    # Anything else is left for the API's validation to name.
    return _NOT_FINITE.get(value, value) if isinstance(value, str) else value


def _reader_leaf(shape: Shape) -> Converter:
    if shape.type_name == "blob":
        return _base64_to_bytes
    if shape.type_name in ("double", "float"):
        return _string_to_double
    return _iso_to_datetime if _timestamp_format(shape) == "iso8601" else _epoch_to_datetime


def _writer_leaf(shape: Shape) -> Converter:
    if shape.type_name == "blob":
        return _bytes_to_base64
    if shape.type_name in ("double", "float"):
        return _identity  # the API answers finite doubles only
    return _datetime_to_iso if _timestamp_format(shape) == "iso8601" else _datetime_to_epoch


def _wire_name(name: str, member: Shape) -> str:
    wire = member.serialization.get("name", name)
    if wire != name:
        # Neither Glue's nor Lake Formation's model renames a body member; a model that does needs
        # the converters below taught to rename.
        raise NotImplementedError(f"member {name} is renamed {wire} on the wire")
    return name


class ShapeCodec:
    """Converters for one service model, built on first use and kept."""

    def __init__(self, model: ServiceModel) -> None:
        self.model = model
        self._needs = shapes_needing_conversion(model)
        self._readers: dict[tuple[str, str], Converter | None] = {}
        self._writers: dict[tuple[str, str], Converter | None] = {}
        self._inputs: dict[str, Converter] = {}
        self._outputs: dict[str, Converter] = {}

    def reader(self, shape: Shape) -> Converter | None:
        """JSON value -> boto3 value for ``shape``, converted in place; None where they are the same."""
        return self._build(shape, self._readers, _reader_leaf, _read_struct)

    def writer(self, shape: Shape) -> Converter | None:
        """boto3 value -> JSON value for ``shape``; None where they are the same."""
        return self._build(shape, self._writers, _writer_leaf, _write_struct)

    def read_input(self, operation: OperationModel) -> Converter:
        """The request body's JSON object -> the operation's keyword arguments."""
        conv = self._inputs.get(operation.name)
        if conv is None:
            shape = operation.input_shape
            inner = self.reader(shape) if shape is not None else None
            conv = inner if inner is not None else _identity
            self._inputs[operation.name] = conv
        return conv

    def write_output(self, operation: OperationModel) -> Converter:
        """The Python API's answer -> the reply's JSON object: the output shape's members only."""
        conv = self._outputs.get(operation.name)
        if conv is None:
            shape = operation.output_shape
            if shape is None or not isinstance(shape, StructureShape):
                conv = _empty
            else:
                members = [(name, _wire_name(name, m), self.writer(m)) for name, m in shape.members.items()]
                conv = _top_level_writer(members)
            self._outputs[operation.name] = conv
        return conv

    def _build(
        self,
        shape: Shape,
        memo: dict[tuple[str, str], Converter | None],
        leaf: Callable[[Shape], Converter],
        struct: Callable[[list[tuple[str, str, Converter]]], Converter],
    ) -> Converter | None:
        if shape.type_name in _LEAVES:
            return leaf(shape)
        if shape.name not in self._needs:
            return None
        key = (shape.name, _timestamp_format(shape))
        if key in memo:
            return memo[key]
        # A recursive shape meets itself while being built: it is called through this cell, which
        # holds the finished converter by the time any value reaches it.
        cell: list[Converter] = []
        memo[key] = lambda value: cell[0](value)
        built: Converter
        if isinstance(shape, StructureShape):
            members = [
                (name, _wire_name(name, m), conv)
                for name, m in shape.members.items()
                if (conv := self._build(m, memo, leaf, struct)) is not None
            ]
            built = struct(members)
        elif isinstance(shape, ListShape):
            item = self._build(shape.member, memo, leaf, struct)
            assert item is not None
            built = _list(item)
        else:
            assert isinstance(shape, MapShape)
            value = self._build(shape.value, memo, leaf, struct)
            assert value is not None
            built = _map(value)
        cell.append(built)
        memo[key] = built
        return built


def _identity(value: Any) -> Any:
    return value


def _empty(value: Any) -> dict[str, Any]:
    return {}


def _read_struct(members: list[tuple[str, str, Converter]]) -> Converter:
    # Converts in place: the value is a request's own JSON, just decoded and held by nobody else, and
    # copying every structure of a 100-partition batch cost more than converting its two timestamps.
    def read(value: Any) -> Any:
        if not isinstance(value, dict):
            return value
        for name, wire, conv in members:
            item = value.get(wire)
            if item is not None:
                value[name] = conv(item)
        return value

    return read


def _write_struct(members: list[tuple[str, str, Converter]]) -> Converter:
    def write(value: Any) -> Any:
        if not isinstance(value, dict):
            return value
        out = dict(value)
        for name, wire, conv in members:
            item = value.get(name)
            if item is not None:
                out[wire] = conv(item)
        return out

    return write


def _top_level_writer(members: list[tuple[str, str, Converter | None]]) -> Converter:
    def write(value: dict[str, Any]) -> dict[str, Any]:
        out = {}
        for name, wire, conv in members:
            item = value.get(name)
            if item is not None:
                out[wire] = item if conv is None else conv(item)
        return out

    return write


def _list(item: Converter) -> Converter:
    def convert(value: Any) -> Any:
        if not isinstance(value, list):
            return value
        return [None if v is None else item(v) for v in value]

    return convert


def _map(item: Converter) -> Converter:
    def convert(value: Any) -> Any:
        if not isinstance(value, dict):
            return value
        return {k: None if v is None else item(v) for k, v in value.items()}

    return convert
