"""The catalog contexts of this process's open ``gluecat.Catalog``s, by warehouse: a LakeFormation
opened on the warehouse of a live Catalog (with the same options) shares its store and context."""

from __future__ import annotations

import os
import weakref

from gluecat.catalog.context import Context

_OPEN: weakref.WeakValueDictionary[tuple[str, bool, bool], Context] = weakref.WeakValueDictionary()


def register(warehouse: str, single_writer: bool, fsync: bool, ctx: Context) -> None:
    """Remember a Catalog's context, so that a LakeFormation opened on its warehouse shares it."""
    _OPEN[(_where(warehouse), single_writer, fsync)] = ctx


def shared(warehouse: str, single_writer: bool, fsync: bool) -> Context | None:
    """The context of a live Catalog opened on ``warehouse`` with these options, if there is one."""
    return _OPEN.get((_where(warehouse), single_writer, fsync))


def _where(warehouse: str) -> str:
    return warehouse if "://" in warehouse else os.path.abspath(warehouse)
