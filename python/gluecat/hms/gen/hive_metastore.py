"""``ttypes``, ``constants`` and ``ThriftHiveMetastore`` of hive_metastore.thrift, with the names and
behaviour of the Apache Thrift compiler's Python output (``ThriftHiveMetastore.Client``,
``ThriftHiveMetastore.get_table_args``, ``ttypes.Table``, ...), built from the IDL by hms/idl.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gluecat.hms import idl

_IDL = idl.load(Path(__file__).resolve().parent.parent / "hive_metastore.thrift")

# Built at run time, so to a type checker every class in them is Any.
ttypes: Any = _IDL.ttypes
constants: Any = _IDL.constants
ThriftHiveMetastore: Any = _IDL.services["ThriftHiveMetastore"]
