"""Whether a Glue table's data is external, one answer for every door (shared by the Spark shim and the
Hive endpoint).

Glue keeps two records of it that can disagree: ``TableType`` (what Glue, Athena and Spark's Hive client
read) and the parameter ``EXTERNAL=TRUE`` (what Hive writes beside it and what Hive's DROP TABLE reads).
Crawlers and awswrangler write EXTERNAL_TABLE without the parameter; ``ALTER TABLE SET TBLPROPERTIES
('EXTERNAL'='TRUE')`` makes a managed table external in Hive. A table is external if either record says
so, so that no door deletes data another door was told is not the catalog's.
"""

from __future__ import annotations

from typing import Any

# The types whose data belongs to the catalog unless the EXTERNAL parameter says otherwise.
_MANAGED_TYPES = ("MANAGED_TABLE", "GOVERNED")


def is_external(table: dict[str, Any]) -> bool:
    """Whether a table's data is not the catalog's: anything but a MANAGED_TABLE or a GOVERNED table, or
    one whose Parameters say EXTERNAL=TRUE (in any case, as Hive's drop compares it).

    >>> is_external({"TableType": "MANAGED_TABLE", "Parameters": {"EXTERNAL": "TRUE"}})
    True
    >>> is_external({"TableType": "EXTERNAL_TABLE", "Parameters": {"EXTERNAL": "FALSE"}})
    True
    >>> is_external({"TableType": "MANAGED_TABLE"})
    False
    """
    if str((table.get("Parameters") or {}).get("EXTERNAL", "")).upper() == "TRUE":
        return True
    return table.get("TableType") not in _MANAGED_TYPES
