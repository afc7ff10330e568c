"""Runs the data-driven cases of cases.txt (its header explains the format)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from gluecat.errors import InvalidInputException
from gluecat.expressions import (
    Index,
    Plan,
    bind,
    evaluate_arrow,
    evaluate_row,
    explain,
    index_sort_indices,
    parse,
    plan,
    plan_mask,
    predicate_text,
    range_mask,
    range_slice,
)

CASES = Path(__file__).with_name("cases.txt")


@dataclass
class Table:
    name: str
    keys: list[tuple[str, str]]
    indexes: list[Index] = field(default_factory=list)
    rows: dict[str, dict[str, str | None]] = field(default_factory=dict)

    def arrow(self) -> pa.Table:
        return pa.table({k: pa.array([r[k] for r in self.rows.values()], pa.string()) for k, _ in self.keys})


@dataclass
class Case:
    line: int
    table: Table
    expression: str
    expectations: list[str]


def _split_keys(spec: str) -> list[tuple[str, str]]:
    keys = []
    for part in spec.split(", "):
        name, glue_type = part.strip().split(" ", 1)
        keys.append((name, glue_type.strip()))
    return keys


def load_cases() -> list[Case]:
    cases: list[Case] = []
    table: Table | None = None
    for number, raw in enumerate(CASES.read_text().splitlines(), start=1):
        line = raw.rstrip("\n")
        if not line.strip() or line.startswith("#"):
            continue
        if "=>" not in line:
            head, _, rest = line.partition(":")
            kind, _, name = head.partition(" ")
            if kind == "table":
                table = Table(name, _split_keys(rest.strip()))
            elif kind == "index" and table is not None:
                table.indexes.append(Index(name, [k.strip() for k in rest.split(",")]))
            elif kind == "row" and table is not None:
                values = [v.strip() for v in rest.split(", ")]
                assert len(values) == len(table.keys), f"cases.txt:{number}: {len(values)} values"
                table.rows[name] = {
                    k: None if v == "NULL" else v for (k, _), v in zip(table.keys, values, strict=True)
                }
            else:
                raise AssertionError(f"cases.txt:{number}: cannot read {line!r}")
            continue
        assert table is not None, f"cases.txt:{number}: a case before any table"
        expression, *expectations = line.split("=>")
        # A blank expression keeps its whitespace: it is a case of its own.
        expression = expression.strip() or expression
        cases.append(Case(number, table, expression, [e.strip() for e in expectations]))
    return cases


ALL_CASES = load_cases()


def _matching(table: Table, mask: pa.Array) -> list[str]:
    return [name for name, hit in zip(table.rows, mask.to_pylist(), strict=True) if hit]


def _sorted_lookup(table: Table, p: Plan) -> list[str]:
    """The store's way: partitions sorted by the index keys, each range's slice, then the exact filters."""
    names = list(table.rows)
    order = index_sort_indices(table.arrow(), table.keys, p.index_keys)
    data = table.arrow().take(order)
    keep = pc.and_(
        range_mask(p.ranges, data, table.keys, p.index_keys), evaluate_arrow(p.residual, data, table.keys)
    ).to_pylist()
    found = []
    for r in p.ranges:
        start, stop = range_slice(r, data, table.keys, p.index_keys)
        found += [names[order[pos].as_py()] for pos in range(start, stop) if keep[pos]]
    return found


@pytest.mark.parametrize(
    "case", ALL_CASES, ids=[f"L{c.line}:{c.table.name}:{c.expression.strip()}" for c in ALL_CASES]
)
def test_case(case: Case) -> None:
    table = case.table
    errors = [e for e in case.expectations if e.startswith("error ")]
    if errors:
        with pytest.raises(InvalidInputException) as info:
            bind(parse(case.expression, [name for name, _ in table.keys]), table.keys)
        assert errors[0].removeprefix("error ") in info.value.message
        return

    bound = bind(parse(case.expression), table.keys)
    data = table.arrow()
    full = _matching(table, evaluate_arrow(bound, data, table.keys))
    reference = [name for name, values in table.rows.items() if evaluate_row(bound, values, table.keys)]
    p = plan(bound, table.indexes)
    planned = _matching(table, plan_mask(p, data, table.keys))
    assert full == reference, "bulk evaluation disagrees with the reference evaluator"
    assert planned == full, "index ranges + residual disagree with full evaluation"
    if p.index_name is not None:
        assert sorted(_sorted_lookup(table, p)) == sorted(full), "lookup on index-sorted partitions disagrees"

    for expectation in case.expectations:
        kind, _, rest = expectation.partition(" ")
        if kind == "rows":
            assert full == rest.split()
        elif kind == "plan":
            index, scan, residual = (s.strip() for s in rest.split("|"))
            described = explain(p)
            assert (described["Index"] or "-") == index
            scans = [r["Text"] for r in described["Ranges"]]
            if index == "-":
                assert scan == "-" and not scans
            else:
                assert scans == ([] if scan == "nothing" else [scan])
            assert described["Residual"] == residual
            assert predicate_text(p.residual) == residual
        else:
            raise AssertionError(f"cases.txt:{case.line}: unknown expectation {expectation!r}")
