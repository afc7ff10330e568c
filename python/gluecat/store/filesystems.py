"""Which file system a warehouse is on, from how it is named: a local folder, an object store, or any
other file system pyarrow opens."""

from __future__ import annotations

import os

import pyarrow.fs as pafs

from gluecat.store.fs import LocalFS, PyArrowFS, WarehouseFS

OBJECT_STORE_SCHEMES = ("s3", "s3a", "s3n", "gs", "gcs", "az", "azure", "abfs", "abfss")


def open_fs(
    warehouse: str,
    *,
    single_writer: bool = False,
    fsync: bool = True,
    filesystem: pafs.FileSystem | None = None,
) -> WarehouseFS:
    """A local path, a ``file:`` URI, an object store URI (``s3://bucket/prefix``, ``gs://...``,
    ``az://container/prefix``, ``abfss://container@account.dfs.core.windows.net/prefix``), or
    ``filesystem`` (any pyarrow file system) with ``warehouse`` a path in it."""
    if filesystem is not None:
        return PyArrowFS(filesystem, warehouse.rstrip("/"), single_writer=single_writer)
    scheme = warehouse.split("://", 1)[0].lower() if "://" in warehouse else ""
    if scheme in OBJECT_STORE_SCHEMES:
        from gluecat.store.object_store import ObjectStoreFS  # obstore only where it is used

        return ObjectStoreFS.at(warehouse)
    if scheme in ("", "file"):
        path = warehouse
        if scheme == "file":
            _, path = pafs.FileSystem.from_uri(warehouse)
        return LocalFS(os.path.abspath(path).rstrip("/") or "/", fsync=fsync)
    fs, root = pafs.FileSystem.from_uri(warehouse)
    return PyArrowFS(fs, root.rstrip("/"), single_writer=single_writer)
