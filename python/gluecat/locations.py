"""Locations (a table's folder, a partition's, an object's Uri) in one canonical form, for deciding
whether one lies inside another before anything is deleted.

The form is the place the file system would touch, so that no spelling of a location can stand for a
folder it does not seem to name: a ``file:`` URI is read as pyarrow reads it when it deletes
(percent-escapes decoded, query and fragment dropped), a local path is made absolute with ``..``,
``//`` and symbolic links resolved, ``s3a://`` and ``s3n://`` are ``s3://``, and no form ends in a
slash. Other URIs are compared as written (``..`` is an ordinary key segment in an object store).
"""

from __future__ import annotations

import os
from urllib.parse import unquote

import pyarrow.fs as pafs

from gluecat import s3_access


def _s3(location: str) -> str:
    """``location`` with Hadoop's ``s3a://`` and ``s3n://`` spelled ``s3://``, as pyarrow knows it."""
    for alias in ("s3a://", "s3n://"):
        if location.startswith(alias):
            return "s3://" + location[len(alias) :]
    return location


def _hadoop_local_path(location: str) -> str | None:
    """The local path of a ``file:`` location as Hadoop takes it (no percent-decoding); None for
    anything else."""
    if not location.startswith("file:"):
        return None
    path = location[5:]
    if path.startswith("//"):
        path = path[2:]
    return path if path.startswith("/") else None


def canonical(location: str) -> str:
    """``location`` in the canonical form described above."""
    loc = _s3(location)
    if loc.startswith("file:"):
        try:
            _, loc = pafs.FileSystem.from_uri(loc)
        except ValueError:
            return loc.rstrip("/") or "/"  # not a URI pyarrow can open: it cannot delete there either
    elif "://" in loc:
        return loc.rstrip("/") or "/"
    return os.path.realpath(loc).rstrip("/") or "/"


def _s3_path(location: str) -> str | None:
    """``<bucket>/<key>`` of an ``s3://`` location, its characters as they are; None for anything else."""
    if not location.startswith("s3://"):
        return None
    return location[len("s3://") :].rstrip("/")


def _s3_filesystem(path: str) -> tuple[pafs.FileSystem, str]:
    """S3, configured as gluecat.s3_access says (Spark's S3A settings, else the AWS chain)."""
    return s3_access.filesystem(path.split("/", 1)[0]), path


def filesystem(location: str) -> tuple[pafs.FileSystem, str]:
    """The file system and path that ``location`` names, read as ``canonical`` reads it: a URI (``file:``
    too) through pyarrow, percent-escapes decoded; a local path as it is, made absolute (a ``%2E%2E`` in
    it is a folder of that name, not its parent)."""
    location = _s3(location)
    s3 = _s3_path(location.split("?", 1)[0].split("#", 1)[0])
    if s3 is not None:
        return _s3_filesystem(unquote(s3))
    if "://" in location or location.startswith("file:"):
        return pafs.FileSystem.from_uri(location)
    return pafs.LocalFileSystem(), os.path.abspath(location)


def hadoop_filesystem(location: str) -> tuple[pafs.FileSystem, str]:
    """The file system and path of a location as Hadoop (Spark) reads it, where it writes a table's files:
    a ``file:`` URI's path, or an ``s3a://`` location's key, taken as it is (``k=a%3Ab`` is a folder of
    that name, as Spark names the folder of the value ``a:b``; ``k=a b`` is one too), otherwise as
    ``filesystem`` reads it."""
    path = _hadoop_local_path(location)
    if path is not None:
        return pafs.LocalFileSystem(), os.path.abspath(path)
    s3 = _s3_path(_s3(location))
    if s3 is not None:
        return _s3_filesystem(s3)
    return filesystem(location)


def literal(location: str) -> str:
    """A local location with its characters taken as they are (Hadoop's reading of a ``file:`` URI:
    no percent-decoding), in the canonical form otherwise; for a folder some table reads, which may be
    either place."""
    path = _hadoop_local_path(location)
    if path is not None:
        return os.path.realpath(path).rstrip("/") or "/"
    return canonical(location)


NAME_MAX = 255
"""The longest name of one file or folder, in bytes, on the file systems gluecat writes to (Linux's
NAME_MAX and HDFS's default component limit); a longer one fails with ENAMETOOLONG."""


def folder_name_problem(name: str) -> str | None:
    """Why ``name`` cannot be the name of one folder inside another, or None if it can. A table or a
    database without a location of its own gets such a folder, named after it: a '/' would put it
    inside another folder (another table's), '.' and '..' name the parent and its parent."""
    if "/" in name:
        return "it holds '/', which would make it a folder inside another folder"
    if name in (".", ".."):
        return f"'{name}' names the folder it would be in, or that folder's parent"
    size = len(name.encode("utf-8", "surrogatepass"))
    if size > NAME_MAX:
        return f"a folder's name is at most {NAME_MAX} bytes long, and it would be {size}"
    return None


def inside(child: str, parent: str) -> bool:
    """Whether the canonical location ``child`` is ``parent`` or lies in it."""
    return child == parent or child.startswith(parent.rstrip("/") + "/")


def moved(location: str, old: str, new: str) -> str:
    """``location`` with the folder ``old`` it lies in replaced by ``new`` (folders compared as
    ``literal`` reads them); unchanged if it lies outside ``old``."""
    key, old_key = literal(location), literal(old)
    if not inside(key, old_key):
        return location
    return new.rstrip("/") + key[len(old_key) :]
