"""gluecat's own operations on the Glue wire: what a client that changes tables as it reads them (the
Spark plugin over a catalog service) needs and Glue's API lacks.

They travel as Glue's do (JSON 1.1, ``X-Amz-Target: AWSGlue.<Operation>``, signed for ``glue``), each an
ordinary named operation on a database or table, so whatever checks a Glue call (Signature V4, a
permissions layer) checks them by the same resource. A client uses them only after GetGluecatInfo
answered, that is when the server is gluecat; another Glue answers UnknownOperationException to them.

- ``GetGluecatInfo``: that the server is gluecat, its version, and its warehouse (where tables made
  without a location go, ``<warehouse>/<db>.db/<table>``).
- ``CommitPartitions``: partitions added and dropped in one atomic commit (a Spark write's new
  partitions, DROP PARTITION, PARTITION ... RENAME TO); its version.
- ``UpdateTableAsRead`` / ``DeleteTableAsRead``: UpdateTable / DeleteTable of a table as it was read
  (its VersionId and CreateTime): not of one updated, or dropped and made again, since.
- ``RenameTable``: Glue has no rename; one commit makes the table under its new name with its
  partitions, indexes and column statistics and drops the old one (``MovedFolder``: partitions inside
  the table's folder follow it to its new folder).

The model is botocore's format: the server merges it into Glue's model (``glue_with_extensions``), a
client loads it as a service of its own (``write_client_model``), whose requests are Glue requests.
"""

from __future__ import annotations

import copy
import functools
import json
from pathlib import Path
from typing import Any

from botocore.model import ServiceModel

from gluecat.api import model

SERVICE = "gluecat"
"""The name a client's botocore knows this model by (its requests are Glue's: same target, signing)."""

_IDENTITY = {
    "type": "structure",
    "required": ["DatabaseName", "Name", "VersionId", "CreateTime"],
    "members": {
        "DatabaseName": {"shape": "NameString"},
        "Name": {"shape": "NameString"},
        "VersionId": {"shape": "VersionString"},
        # ISO 8601, so that the microseconds a table's identity holds cross both ways exactly.
        "CreateTime": {"shape": "GluecatTimestamp"},
    },
    "documentation": "A table as GetTable returned it: ConcurrentModificationException if it is no "
    "longer that table (another VersionId, or dropped and made again: another CreateTime).",
}

_SHAPES: dict[str, dict[str, Any]] = {
    "GluecatTimestamp": {"type": "timestamp", "timestampFormat": "iso8601"},
    "GluecatTableIdentity": _IDENTITY,
    "GluecatPartitionInputList": {"type": "list", "member": {"shape": "PartitionInput"}},
    "GluecatValuesList": {"type": "list", "member": {"shape": "ValueStringList"}},
    "GluecatNames": {"type": "list", "member": {"shape": "GenericString"}},
    "GluecatMovedFolder": {
        "type": "structure",
        "required": ["From", "To"],
        "members": {"From": {"shape": "LocationString"}, "To": {"shape": "LocationString"}},
    },
    "GluecatInfo": {
        "type": "structure",
        "members": {
            "Version": {"shape": "GenericString"},
            "Warehouse": {"shape": "GenericString"},
            "Operations": {"shape": "GluecatNames"},
        },
    },
    "GetGluecatInfoRequest": {"type": "structure", "members": {}},
    "GetGluecatInfoResponse": {"type": "structure", "members": {"Gluecat": {"shape": "GluecatInfo"}}},
    "CommitPartitionsRequest": {
        "type": "structure",
        "required": ["DatabaseName", "TableName"],
        "members": {
            "DatabaseName": {"shape": "NameString"},
            "TableName": {"shape": "NameString"},
            "Add": {"shape": "GluecatPartitionInputList"},
            "Drop": {"shape": "GluecatValuesList"},
            "IfNotExists": {"shape": "Boolean"},
            "IfExists": {"shape": "Boolean"},
        },
    },
    "CommitPartitionsResponse": {"type": "structure", "members": {"CommitVersion": {"shape": "GluecatLong"}}},
    "GluecatLong": {"type": "long"},
    "UpdateTableAsReadRequest": {
        "type": "structure",
        "required": ["Table", "TableInput"],
        "members": {
            "Table": {"shape": "GluecatTableIdentity"},
            "TableInput": {"shape": "TableInput"},
            "SkipArchive": {"shape": "Boolean"},
            "DropColumnStatistics": {"shape": "Boolean"},
        },
    },
    "DeleteTableAsReadRequest": {
        "type": "structure",
        "required": ["Table"],
        "members": {"Table": {"shape": "GluecatTableIdentity"}},
    },
    "RenameTableRequest": {
        "type": "structure",
        "required": ["Table", "NewDatabaseName", "TableInput"],
        "members": {
            "Table": {"shape": "GluecatTableIdentity"},
            "NewDatabaseName": {"shape": "NameString"},
            "TableInput": {"shape": "TableInput"},
            "MovedFolder": {"shape": "GluecatMovedFolder"},
        },
    },
    "GluecatEmptyResponse": {"type": "structure", "members": {}},
}

_ERRORS = [
    "EntityNotFoundException",
    "InvalidInputException",
    "AlreadyExistsException",
    "ConcurrentModificationException",
    "InternalServiceException",
    "OperationTimeoutException",
    "ResourceNumberLimitExceededException",
]

_OPERATIONS = {
    "GetGluecatInfo": ("GetGluecatInfoRequest", "GetGluecatInfoResponse"),
    "CommitPartitions": ("CommitPartitionsRequest", "CommitPartitionsResponse"),
    "UpdateTableAsRead": ("UpdateTableAsReadRequest", "GluecatEmptyResponse"),
    "DeleteTableAsRead": ("DeleteTableAsReadRequest", "GluecatEmptyResponse"),
    "RenameTable": ("RenameTableRequest", "GluecatEmptyResponse"),
}
OPERATIONS = tuple(_OPERATIONS)


def _operations() -> dict[str, Any]:
    return {
        name: {
            "name": name,
            "http": {"method": "POST", "requestUri": "/"},
            "input": {"shape": request},
            "output": {"shape": response},
            "errors": [{"shape": e} for e in _ERRORS],
        }
        for name, (request, response) in _OPERATIONS.items()
    }


@functools.cache
def _glue_model() -> dict[str, Any]:
    return dict(model._session().get_component("data_loader").load_service_model("glue", "service-2"))


def _referenced(shapes: dict[str, Any], names: list[str]) -> dict[str, Any]:
    """The shapes ``names`` and every shape they refer to, from ``shapes``."""
    out: dict[str, Any] = {}
    pending = list(names)
    while pending:
        name = pending.pop()
        if name in out:
            continue
        shape = shapes[name]
        out[name] = shape
        refs = [m["shape"] for m in shape.get("members", {}).values()]
        refs += [shape[k]["shape"] for k in ("member", "key", "value") if k in shape]
        pending.extend(refs)
    return out


@functools.cache
def glue_with_extensions() -> ServiceModel:
    """Glue's model with gluecat's operations added: what the AWS endpoint serves."""
    glue = copy.deepcopy(_glue_model())
    glue["operations"] = {**glue["operations"], **_operations()}
    glue["shapes"] = {**glue["shapes"], **_SHAPES}
    return ServiceModel(glue, service_name="glue")


def client_model() -> dict[str, Any]:
    """gluecat's operations alone, as a service of their own for a client's botocore: Glue's metadata
    (target prefix, signing name, protocol), so its requests are Glue requests."""
    glue = _glue_model()
    shapes = {**glue["shapes"], **_SHAPES}
    roots = [shape for pair in _OPERATIONS.values() for shape in pair] + _ERRORS
    metadata = {**glue["metadata"], "serviceId": "Gluecat", "uid": "gluecat-2017-03-31"}
    metadata["serviceFullName"] = "gluecat extensions of AWS Glue"
    return {
        "version": "2.0",
        "metadata": metadata,
        "operations": _operations(),
        "shapes": _referenced(shapes, roots),
    }


def write_client_model(folder: Path) -> Path:
    """The client model as botocore's loader finds it, under ``folder`` (a data path to add to a
    botocore session's loader); answers ``folder``."""
    version = str(_glue_model()["metadata"]["apiVersion"])
    target = folder / SERVICE / version / "service-2.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(client_model()))
    return folder
