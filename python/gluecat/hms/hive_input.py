"""Hive Metastore Thrift structures as Glue inputs (DatabaseInput, TableInput, PartitionInput): the
reverse of hms/mapping.py, for the write calls.

Hive's own normalisations are kept: column and partition key names lower-cased, and the table type
decided by the EXTERNAL parameter as Hive 2.3's ObjectStore decides it (a MANAGED_TABLE saying
EXTERNAL=TRUE is external, an EXTERNAL_TABLE not saying so is managed). A type Glue has and Hive does
not, shown to Hive clients as the parameter ``glue.table_type`` (hms/mapping.py), comes back as that
type, so a Hive client's ALTER TABLE does not turn a GOVERNED table into an external one.
"""

from __future__ import annotations

from typing import Any


def _some(**fields: Any) -> dict[str, Any]:
    """The fields that were given (Thrift's unset optional fields are None)."""
    return {k: v for k, v in fields.items() if v is not None}


def column(f: Any) -> dict[str, Any]:
    return _some(Name=(f.name or "").lower(), Type=f.type, Comment=f.comment or None)


def storage_descriptor(sd: Any) -> dict[str, Any]:
    if sd is None:
        return {}
    serde = sd.serdeInfo
    skewed = sd.skewedInfo
    out = _some(
        Columns=[column(c) for c in sd.cols] if sd.cols is not None else None,
        Location=sd.location or None,
        InputFormat=sd.inputFormat,
        OutputFormat=sd.outputFormat,
        Compressed=sd.compressed,
        NumberOfBuckets=sd.numBuckets,
        BucketColumns=list(sd.bucketCols) if sd.bucketCols else None,
        SortColumns=[{"Column": o.col, "SortOrder": o.order} for o in sd.sortCols] if sd.sortCols else None,
        Parameters=dict(sd.parameters) if sd.parameters else None,
        StoredAsSubDirectories=sd.storedAsSubDirectories,
    )
    if serde is not None:
        out["SerdeInfo"] = _some(
            Name=serde.name,
            SerializationLibrary=serde.serializationLib,
            Parameters=dict(serde.parameters) if serde.parameters else None,
        )
    if skewed is not None and skewed.skewedColNames:
        out["SkewedInfo"] = {
            "SkewedColumnNames": list(skewed.skewedColNames),
            "SkewedColumnValues": [",".join(v) for v in skewed.skewedColValues or []],
        }
    return out


def database(db: Any) -> dict[str, Any]:
    return _some(
        Name=db.name,
        Description=db.description or None,
        LocationUri=db.locationUri or None,
        Parameters=dict(db.parameters) if db.parameters else None,
    )


def table(t: Any) -> dict[str, Any]:
    parameters = dict(t.parameters or {})
    glue_type = parameters.pop("glue.table_type", None)
    table_type = t.tableType
    external = parameters.get("EXTERNAL", "").upper() == "TRUE"
    if table_type == "MANAGED_TABLE" and external:
        table_type = "EXTERNAL_TABLE"
    elif table_type == "EXTERNAL_TABLE" and not external:
        table_type = "MANAGED_TABLE"
    if glue_type is not None:
        table_type = glue_type
        if parameters.get("EXTERNAL") == "TRUE":
            del parameters["EXTERNAL"]  # mapping.table's addition for a type Hive does not know
    comment = parameters.get("comment")
    return _some(
        Name=t.tableName,
        Owner=t.owner,
        Description=comment if comment and len(comment) <= 2048 else None,
        Retention=t.retention if t.retention and t.retention > 0 else None,
        StorageDescriptor=storage_descriptor(t.sd) if t.sd is not None else None,
        PartitionKeys=[column(k) for k in t.partitionKeys] if t.partitionKeys is not None else None,
        TableType=table_type,
        Parameters=parameters or None,
        ViewOriginalText=t.viewOriginalText,
        ViewExpandedText=t.viewExpandedText,
    )


def partition(p: Any) -> dict[str, Any]:
    return _some(
        Values=list(p.values) if p.values is not None else None,
        StorageDescriptor=storage_descriptor(p.sd) if p.sd is not None else None,
        Parameters=dict(p.parameters) if p.parameters else None,
    )
