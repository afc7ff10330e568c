"""Typed changes to a Glue table, applied to a model of its TableInput (as Iceberg applies Spark's
TableChanges through UpdateSchema): ALTER TABLE's column and property changes, for any caller.

A change names what it does (AddColumn, RenameColumn, ...); ``apply_changes`` checks each against the table
as the earlier changes left it and answers the new TableInput, or raises InvalidInputException /
AlreadyExistsException naming the column and the rule, having changed nothing.

Data files keep the columns they were written with, so what is safe depends on how the table's format
finds a column in a file (``Layout``):

- BY_NAME (Parquet, ORC, JSON): a data column cannot be renamed (its values would read as NULL under the
  new name), and a dropped column's name is remembered (``DROPPED_COLUMNS``) and cannot come back, since
  the files still hold its old values.
- BY_POSITION (CSV, text): columns are the fields of a line in order, so a column can be renamed but only
  the last one dropped, and new columns go last.

Partition keys are values in the catalog, not in the files: they can be renamed and retyped, not dropped.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from gluecat.errors import AlreadyExistsException, InvalidInputException

# Where gluecat once kept Spark's column order for a table partitioned by a column in the middle. Tables
# now read in Glue's order (columns, then partition keys), as in Spark's built-in catalog, EMR and Athena;
# the parameter is ignored, and dropped at a table's next change.
COLUMN_ORDER = "gluecat.spark.column_order"
# A column's DEFAULT, in its Parameters under Spark's names for it: the SQL that INSERT fills an omitted
# column with, and the value that rows written before the column was added read as.
CURRENT_DEFAULT = "CURRENT_DEFAULT"
EXISTS_DEFAULT = "EXISTS_DEFAULT"
# The data columns dropped from a table whose files find columns by name: their values are still in
# the files, so a new column of the same name would bring them back.
DROPPED_COLUMNS = "gluecat.dropped_columns"


class Layout(enum.Enum):
    """How the table's data files find a column."""

    BY_NAME = "by name"
    BY_POSITION = "by position"


@dataclass(frozen=True)
class SetParameter:
    key: str
    value: str


@dataclass(frozen=True)
class RemoveParameter:
    key: str


@dataclass(frozen=True)
class SetDescription:
    description: str | None


@dataclass(frozen=True)
class SetOwner:
    owner: str


@dataclass(frozen=True)
class SetLocation:
    location: str


@dataclass(frozen=True)
class AddColumn:
    name: str
    type: str
    comment: str | None = None
    first: bool = False
    after: str | None = None
    default: str | None = None
    exists_default: str | None = None


@dataclass(frozen=True)
class UpdateColumnDefault:
    """SET DEFAULT (``default``, its SQL) or DROP DEFAULT (None); rows already written keep their values."""

    name: str
    default: str | None


@dataclass(frozen=True)
class RenameColumn:
    name: str
    new_name: str


@dataclass(frozen=True)
class UpdateColumnType:
    name: str
    type: str


@dataclass(frozen=True)
class UpdateColumnComment:
    name: str
    comment: str


@dataclass(frozen=True)
class DeleteColumn:
    name: str
    if_exists: bool = False


TableChange = (
    SetParameter
    | RemoveParameter
    | SetDescription
    | SetOwner
    | SetLocation
    | AddColumn
    | RenameColumn
    | UpdateColumnType
    | UpdateColumnComment
    | UpdateColumnDefault
    | DeleteColumn
)


class TableModel:
    """A table's TableInput taken apart for changing: columns, partition keys, parameters, the rest."""

    def __init__(self, table_input: dict[str, Any], layout: Layout) -> None:
        self.input = {k: v for k, v in table_input.items() if k not in ("StorageDescriptor", "Parameters")}
        self.sd = dict(table_input.get("StorageDescriptor") or {})
        self.columns = [dict(c) for c in self.sd.get("Columns", [])]
        self.keys = [dict(k) for k in table_input.get("PartitionKeys", [])]
        self.params = dict(table_input.get("Parameters") or {})
        self.layout = layout
        self.params.pop(COLUMN_ORDER, None)
        self.dropped: list[str] = json.loads(self.params.get(DROPPED_COLUMNS, "[]"))

    @property
    def name(self) -> str:
        return str(self.input["Name"])

    def find(self, name: str) -> tuple[list[dict[str, Any]], int] | None:
        for group in (self.columns, self.keys):
            for i, c in enumerate(group):
                if c["Name"].lower() == name.lower():
                    return group, i
        return None

    def existing(self, name: str) -> tuple[list[dict[str, Any]], int]:
        found = self.find(name)
        if found is None:
            raise InvalidInputException(f"Column {name} does not exist in {self.name}")
        return found

    def _check_new_name(self, name: str) -> None:
        if self.find(name) is not None:
            raise AlreadyExistsException(f"Column {name} already exists in {self.name}")
        if name.lower() in (d.lower() for d in self.dropped):
            raise InvalidInputException(
                f"Column {name} was dropped from {self.name}, and its values are still in the table's "
                f"data files, which find columns {self.layout.value}: a new column {name} would bring them "
                "back. Choose another name"
            )

    def to_input(self) -> dict[str, Any]:
        params = dict(self.params)
        if self.dropped:
            params[DROPPED_COLUMNS] = json.dumps(self.dropped)
        return {
            **self.input,
            "StorageDescriptor": {**self.sd, "Columns": self.columns},
            "PartitionKeys": self.keys,
            "Parameters": params,
        }


def apply_changes(
    table_input: dict[str, Any], changes: Sequence[TableChange], layout: Layout
) -> dict[str, Any]:
    """The TableInput after ``changes``, in order; raises (changing nothing) at the first that breaks a rule."""
    model = TableModel(table_input, layout)
    for change in changes:
        _apply(model, change)
    return model.to_input()


def _apply(m: TableModel, change: TableChange) -> None:
    match change:
        case SetParameter(key, value):
            m.params[key] = value
        case RemoveParameter(key):
            m.params.pop(key, None)
        case SetDescription(description):
            if description is None:
                m.input.pop("Description", None)
            else:
                m.input["Description"] = description
        case SetOwner(owner):
            m.input["Owner"] = owner
        case SetLocation(location):
            m.sd["Location"] = location
        case AddColumn():
            _add_column(m, change)
        case RenameColumn(name, new_name):
            group, i = m.existing(name)
            if group is m.columns and m.layout is Layout.BY_NAME:
                raise InvalidInputException(
                    f"Column {name} of {m.name} cannot be renamed: the table's data files find columns by "
                    f"name, so its values would read as NULL under {new_name}. Add a new column and copy "
                    "the values instead"
                )
            m._check_new_name(new_name)
            group[i]["Name"] = new_name
        case UpdateColumnType(name, type_):
            group, i = m.existing(name)
            group[i]["Type"] = type_
        case UpdateColumnComment(name, comment):
            group, i = m.existing(name)
            group[i]["Comment"] = comment
        case UpdateColumnDefault(name, default):
            group, i = m.existing(name)
            params = dict(group[i].get("Parameters") or {})
            if default is None:
                params.pop(CURRENT_DEFAULT, None)
            else:
                params[CURRENT_DEFAULT] = default
            if params:
                group[i]["Parameters"] = params
            else:
                group[i].pop("Parameters", None)
        case DeleteColumn(name, if_exists):
            _delete_column(m, name, if_exists)


def _add_column(m: TableModel, change: AddColumn) -> None:
    m._check_new_name(change.name)
    col: dict[str, Any] = {"Name": change.name, "Type": change.type}
    if change.comment:
        col["Comment"] = change.comment
    defaults = {CURRENT_DEFAULT: change.default, EXISTS_DEFAULT: change.exists_default}
    if any(v is not None for v in defaults.values()):
        col["Parameters"] = {k: v for k, v in defaults.items() if v is not None}
    if m.layout is Layout.BY_POSITION and (change.first or change.after):
        raise InvalidInputException(
            f"Column {change.name} can only be added last to {m.name}: its data files find columns by "
            "position, so a column placed before others would read their values"
        )
    if change.first:
        m.columns.insert(0, col)
    elif change.after:
        group, i = m.existing(change.after)
        if group is m.keys:
            raise InvalidInputException("A data column cannot be placed after a partition column")
        m.columns.insert(i + 1, col)
    else:
        m.columns.append(col)


def _delete_column(m: TableModel, name: str, if_exists: bool) -> None:
    found = m.find(name)
    if found is None:
        if not if_exists:
            raise InvalidInputException(f"Column {name} does not exist in {m.name}")
        return
    group, i = found
    if group is m.keys:
        raise InvalidInputException(f"Partition column {name} cannot be dropped")
    if m.layout is Layout.BY_POSITION and i != len(m.columns) - 1:
        raise InvalidInputException(
            f"Column {name} of {m.name} cannot be dropped: the table's data files find columns by "
            "position, so the columns after it would read the wrong values (only the last column can be)"
        )
    if len(m.columns) == 1:
        raise InvalidInputException(
            f"Column {name} is the last data column of {m.name} and cannot be dropped"
        )
    if m.layout is Layout.BY_NAME:
        m.dropped.append(group[i]["Name"])
    del group[i]
