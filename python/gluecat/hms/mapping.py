"""Glue objects (boto3-shaped dicts) as Hive Metastore Thrift structures (partition names: api/partition_names.py).

Times become i32 seconds since the epoch (0 when Glue has none). A Glue table's type is passed on as
Hive knows it: EXTERNAL_TABLE (with the parameter EXTERNAL=TRUE that Hive expects), MANAGED_TABLE,
VIRTUAL_VIEW; a Lake Formation GOVERNED table, or any type Hive does not know, is shown as an
EXTERNAL_TABLE with its Glue type in the parameter ``glue.table_type``, so Hive clients can read it.
Whether a table is external is decided as for every door (api/table_kinds.py), and Hive's two records
of it then agree: a MANAGED_TABLE whose parameters say EXTERNAL=TRUE is an EXTERNAL_TABLE, as Hive
stores it, and an external table's EXTERNAL parameter says TRUE.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from gluecat.api.partition_names import partition_name
from gluecat.api.table_kinds import is_external
from gluecat.hms.gen.hive_metastore import ttypes

HIVE_TABLE_TYPES = {"EXTERNAL_TABLE", "MANAGED_TABLE", "VIRTUAL_VIEW", "MATERIALIZED_VIEW"}


def seconds(ts: datetime | None) -> int:
    return int(ts.timestamp()) if ts is not None else 0


def field_schema(column: dict[str, Any]) -> Any:
    # Hive stores column and partition key names lower-cased (ObjectStore normalises identifiers), and
    # its clients rely on it: a partition name (country=US, keys lower-cased) is matched back to the
    # table's partitionKeys by name.
    return ttypes.FieldSchema(
        name=column["Name"].lower(), type=column.get("Type", "string"), comment=column.get("Comment")
    )


def _columns(columns: list[dict[str, Any]], memo: dict[Any, Any] | None) -> list[Any]:
    if memo is None:
        return [field_schema(c) for c in columns]
    key = tuple((c["Name"], c.get("Type"), c.get("Comment")) for c in columns)
    found = memo.get(key)
    if found is None:
        found = memo[key] = [field_schema(c) for c in columns]
    return found


def storage_descriptor(
    sd: dict[str, Any] | None,
    fallback_columns: list[dict[str, Any]] | None = None,
    memo: dict[Any, Any] | None = None,
) -> Any:
    """``memo``: where the column lists of many descriptors of one reply are built once and shared
    (a thousand partitions have the same few); their structures are then read, never changed."""
    sd = sd or {}
    serde = sd.get("SerdeInfo") or {}
    skewed = sd.get("SkewedInfo") or {}
    given = sd.get("Columns")
    columns: list[dict[str, Any]] = given if given is not None else (fallback_columns or [])
    sort = sd.get("SortColumns")
    return ttypes.StorageDescriptor(
        cols=_columns(columns, memo),
        location=sd.get("Location"),
        inputFormat=sd.get("InputFormat"),
        outputFormat=sd.get("OutputFormat"),
        compressed=bool(sd.get("Compressed", False)),
        numBuckets=sd.get("NumberOfBuckets", -1),
        serdeInfo=_shared(memo, _serde, serde),
        bucketCols=list(sd.get("BucketColumns") or ()),
        sortCols=[ttypes.Order(col=o["Column"], order=o["SortOrder"]) for o in sort] if sort else [],
        parameters=dict(sd.get("Parameters") or ()),
        skewedInfo=_shared(memo, _skewed, skewed),
        storedAsSubDirectories=bool(sd.get("StoredAsSubDirectories", False)),
    )


def _serde(serde: dict[str, Any]) -> Any:
    return ttypes.SerDeInfo(
        name=serde.get("Name"),
        serializationLib=serde.get("SerializationLibrary"),
        parameters=dict(serde.get("Parameters") or ()),
    )


def _skewed(skewed: dict[str, Any]) -> Any:
    return ttypes.SkewedInfo(
        skewedColNames=list(skewed.get("SkewedColumnNames") or ()),
        skewedColValues=[[v] for v in skewed.get("SkewedColumnValues") or ()],
        skewedColValueLocationMaps={},
    )


def _shared(memo: dict[Any, Any] | None, build: Any, doc: dict[str, Any]) -> Any:
    """``build(doc)``, built once per reply for equal ``doc``s when there is a memo."""
    if memo is None:
        return build(doc)
    try:
        key = (build, repr(sorted(doc.items())))
    except TypeError:
        return build(doc)
    found = memo.get(key)
    if found is None:
        found = memo[key] = build(doc)
    return found


def database(db: dict[str, Any]) -> Any:
    return ttypes.Database(
        name=db["Name"],
        description=db.get("Description"),
        locationUri=db.get("LocationUri"),
        parameters=dict(db.get("Parameters") or {}),
    )


def table(t: dict[str, Any]) -> Any:
    parameters = dict(t.get("Parameters") or {})
    glue_type = t.get("TableType") or "EXTERNAL_TABLE"
    table_type = glue_type if glue_type in HIVE_TABLE_TYPES else "EXTERNAL_TABLE"
    if glue_type != table_type:
        parameters["glue.table_type"] = glue_type
    if glue_type in ("MANAGED_TABLE", "EXTERNAL_TABLE"):
        # Hive clients read either record (Spark's Hive client the type, Hive's DROP TABLE the
        # parameter), so both say what gluecat's own doors act on: data never deleted by one door that
        # another treats as external.
        table_type = "EXTERNAL_TABLE" if is_external(t) else "MANAGED_TABLE"
    if table_type == "EXTERNAL_TABLE":
        parameters["EXTERNAL"] = "TRUE"
    if t.get("Description"):
        # Hive has no description field: a table's comment is its parameter "comment" (what Hive's
        # DESCRIBE, Spark's Hive catalog and Trino read), unless the parameters carry one already.
        parameters.setdefault("comment", t["Description"])
    return ttypes.Table(
        tableName=t["Name"],
        dbName=t["DatabaseName"],
        owner=t.get("Owner"),
        createTime=seconds(t.get("CreateTime")),
        lastAccessTime=seconds(t.get("LastAccessTime")),
        retention=t.get("Retention", 0),
        sd=storage_descriptor(t.get("StorageDescriptor")),
        partitionKeys=[field_schema(k) for k in t.get("PartitionKeys") or []],
        parameters=parameters,
        viewOriginalText=t.get("ViewOriginalText"),
        viewExpandedText=t.get("ViewExpandedText"),
        tableType=table_type,
        # As Hive 2.3 writes a stored table (and the document's get_table example shows it): field 15,
        # rewriteEnabled, set to false; field 14, temporary, left unset (Hive keeps no temporary
        # tables in the metastore; a reader sees its default, false).
        temporary=None,
        rewriteEnabled=False,
    )


def effective_partition_sd(p: dict[str, Any], table_doc: dict[str, Any]) -> dict[str, Any]:
    """A partition's descriptor as gluecat's Spark catalog reads the partition: Glue lets a partition
    leave out its format, SerDe and location (BatchCreatePartition with Values only, or a Location
    only); the table's format and SerDe then apply, and its folder is the Hive path under the table's
    location. A Hive client must be told the same, not an empty SerDe or no location."""
    table_sd = table_doc.get("StorageDescriptor") or {}
    sd = dict(p.get("StorageDescriptor") or ())
    for field in ("InputFormat", "OutputFormat", "SerdeInfo"):
        if not sd.get(field) and table_sd.get(field):
            sd[field] = table_sd[field]
    if not sd.get("Location") and table_sd.get("Location"):
        keys = [k["Name"] for k in table_doc.get("PartitionKeys") or []]
        sd["Location"] = f"{str(table_sd['Location']).rstrip('/')}/{partition_name(keys, list(p['Values']))}"
    return sd


def partition(p: dict[str, Any], table_doc: dict[str, Any], memo: dict[Any, Any] | None = None) -> Any:
    columns = (table_doc.get("StorageDescriptor") or {}).get("Columns")
    return ttypes.Partition(
        values=list(p["Values"]),
        dbName=p["DatabaseName"],
        tableName=p["TableName"],
        createTime=seconds(p.get("CreationTime")),
        lastAccessTime=seconds(p.get("LastAccessTime")),
        sd=storage_descriptor(effective_partition_sd(p, table_doc), fallback_columns=columns, memo=memo),
        parameters=dict(p.get("Parameters") or {}),
    )


def partitions(parts: list[dict[str, Any]], table_doc: dict[str, Any]) -> list[Any]:
    """``partition`` of each, for one reply. The partitions of a table mostly have one descriptor but
    for its location: each distinct rest is built once, and each partition's descriptor is a shallow
    copy of it with its own location (their structures are then read and encoded, never changed)."""
    memo: dict[Any, Any] = {}
    templates: dict[str, Any] = {}
    columns = (table_doc.get("StorageDescriptor") or {}).get("Columns")
    new_sd = ttypes.StorageDescriptor.__new__
    sd_class = ttypes.StorageDescriptor
    out = []
    last_doc: dict[str, Any] | None = None
    template: Any = None
    for p in parts:
        sd_doc = effective_partition_sd(p, table_doc)
        location = sd_doc.pop("Location", None)
        # Neighbours mostly share the rest: one comparison (in C) instead of a key each.
        if sd_doc != last_doc:
            key = repr(sd_doc)
            template = templates.get(key)
            if template is None:
                template = templates[key] = storage_descriptor(sd_doc, fallback_columns=columns, memo=memo)
            last_doc = sd_doc
        sd = new_sd(sd_class)
        sd.__dict__.update(template.__dict__)
        sd.location = location
        parameters = p.get("Parameters")
        out.append(
            ttypes.Partition(
                values=list(p["Values"]),
                dbName=p["DatabaseName"],
                tableName=p["TableName"],
                createTime=seconds(p.get("CreationTime")),
                lastAccessTime=seconds(p.get("LastAccessTime")),
                sd=sd,
                parameters=dict(parameters) if parameters else {},
            )
        )
    return out
