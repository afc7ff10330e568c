"""The reliability battery's engines, shared by the suite's bounded runs (tests/reliability/) and the
longer soak (bench/soak.py): each takes its sizes and a seed and returns counts of outcomes by kind,
with every failure described (an empty ``failures`` list is a pass).

Seeds: ``seed_from_env`` takes GLUECAT_TEST_SEED if set, else draws one; every failure message
carries it, so a failing run can be repeated exactly.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import gluecat
from gluecat import Catalog, GlueError
from gluecat.errors import StorageError
from gluecat.store import layout, maintenance, placement
from gluecat.store import store as store_module
from gluecat.store.fsck import check

WORKER = Path(__file__).with_name("worker.py")
PYTHON_DIR = Path(gluecat.__file__).resolve().parents[1]
ROOT_DIR = PYTHON_DIR.parent


def seed_from_env() -> int:
    seed = int(os.environ.get("GLUECAT_TEST_SEED", random.randrange(1 << 30)))
    print(f"seed {seed} (rerun with GLUECAT_TEST_SEED={seed})")
    return seed


@dataclass
class Outcomes:
    """What a battery run tried and what came of it."""

    seed: int
    tried: int = 0
    kinds: Counter[str] = field(default_factory=Counter)
    failures: list[str] = field(default_factory=list)

    def fail(self, what: str) -> None:
        self.failures.append(f"{what} (seed {self.seed}, rerun with GLUECAT_TEST_SEED={self.seed})")


def worker(*args: object) -> subprocess.Popen[str]:
    """A worker process (tests/reliability/worker.py) importing the same gluecat as this one."""
    return subprocess.Popen(
        [sys.executable, str(WORKER), *map(str, args)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": f"{PYTHON_DIR}{os.pathsep}{ROOT_DIR}"},
    )


def finish(proc: subprocess.Popen[str], timeout: float = 300) -> list[dict[str, Any]]:
    out, err = proc.communicate(timeout=timeout)
    if proc.returncode != 0:
        raise AssertionError(f"worker {proc.args} exited {proc.returncode}:\n{err[-3000:]}")
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


def table_input(name: str, description: str = "") -> dict[str, Any]:
    return {
        "Name": name,
        "Description": description,
        "StorageDescriptor": {"Columns": [{"Name": "id", "Type": "bigint"}], "Location": f"s3://b/{name}/"},
        "PartitionKeys": [{"Name": "dt", "Type": "string"}, {"Name": "h", "Type": "int"}],
    }


def every(call: Any, key: str, **kwargs: Any) -> list[Any]:
    out: list[Any] = []
    token = None
    while True:
        page = call(**kwargs, **({"NextToken": token} if token else {}))
        out.extend(page[key])
        token = page.get("NextToken")
        if not token:
            return out


def answers(warehouse: str) -> str:
    """Everything a fresh process reads back, as canonical text: databases, tables, their versions,
    partition indexes and partitions."""
    glue = Catalog(warehouse, background_merges=False)
    out: dict[str, Any] = {"version": glue.warehouse_version()}
    for db in sorted(every(glue.get_databases, "DatabaseList"), key=lambda d: d["Name"]):
        name = db["Name"]
        out[f"db {name}"] = db
        for t in sorted(every(glue.get_tables, "TableList", DatabaseName=name), key=lambda t: t["Name"]):
            key = f"{name}.{t['Name']}"
            out[f"table {key}"] = t
            out[f"versions {key}"] = every(
                glue.get_table_versions, "TableVersions", DatabaseName=name, TableName=t["Name"]
            )
            out[f"indexes {key}"] = glue.get_partition_indexes(DatabaseName=name, TableName=t["Name"])[
                "PartitionIndexDescriptorList"
            ]
            parts = every(glue.get_partitions, "Partitions", DatabaseName=name, TableName=t["Name"])
            out[f"partitions {key}"] = sorted(parts, key=lambda p: p["Values"])
    glue.close()
    return json.dumps(out, default=str, sort_keys=True)


# -- corruptions ---------------------------------------------------------------------------------

KINDS = ("truncate", "flip1", "flip8", "empty", "delete")


def build_warehouse(warehouse: str, rng: random.Random, partitions: int = 400) -> tuple[str, dict[str, str]]:
    """A warehouse with every kind of file: records files, inline and file segments, a merged segment,
    checkpoints, stubs of expired entries, entries after the newest checkpoint, and tables' own logs.
    Returns the answers before its last commit (what deleting that commit's entry rolls back to), and
    by table, the answers before the last commit to its own log."""
    before_table: dict[str, str] = {}
    small = store_module.INLINE_SEGMENT_BYTES
    store_module.INLINE_SEGMENT_BYTES = 4096  # so that bigger batches are files of their own
    try:
        glue = Catalog(warehouse, background_merges=False)
        glue.create_database(DatabaseInput={"Name": "db", "Description": "first"})
        glue.create_database(DatabaseInput={"Name": "other"})
        for t in range(3):
            glue.create_table(DatabaseName="db", TableInput=table_input(f"t{t}", "v1"))
        glue.create_partition_index(
            DatabaseName="db",
            TableName="t0",
            PartitionIndex={"IndexName": "by_dt", "Keys": ["dt", "h"]},
        )

        def batch(table: str, start: int, n: int) -> None:
            inputs = [
                {
                    "Values": [f"2024-{1 + i // 672:02d}-{1 + (i // 24) % 28:02d}", str(i % 24)],
                    "StorageDescriptor": {"Location": f"s3://b/{table}/{i}/{rng.getrandbits(64):016x}"},
                    "Parameters": {"n": str(i)},
                }
                for i in range(start, start + n)
            ]
            if n > 100:  # past BatchCreatePartition's limit: one commit all the same
                glue.commit_partitions(DatabaseName="db", TableName=table, Add=inputs)
            else:
                glue.batch_create_partition(DatabaseName="db", TableName=table, PartitionInputList=inputs)

        batch("t0", 0, partitions // 2)  # a file segment
        for k in range(9):  # inline segments, then merged
            batch("t0", partitions // 2 + k * 5, 5)
        glue._ctx.rows.merger.maybe_merge(("db", "t0"))
        batch("t1", 0, partitions // 4)
        glue.update_table(DatabaseName="db", TableInput=table_input("t1", "v2"))
        glue.store.checkpoint()
        later = datetime.now(UTC) + timedelta(seconds=1)
        maintenance.expire(glue.store, retain=timedelta(0), grace=timedelta(0), dry_run=False, now=later)
        glue.update_table(DatabaseName="db", TableInput=table_input("t2", "v2"))
        before_table["t2"] = answers(warehouse)
        batch("t2", 0, 20)
        before_table["t0"] = answers(warehouse)
        glue.batch_delete_partition(
            DatabaseName="db",
            TableName="t0",
            PartitionsToDelete=[{"Values": ["2024-01-01", str(h)]} for h in range(3)],
        )
        glue.store.checkpoint()
        before_table["t1"] = answers(warehouse)
        batch("t1", 1000, 7)
        glue.update_database(Name="db", DatabaseInput={"Name": "db", "Description": "second"})
        before_last = answers(warehouse)
        glue.create_table(DatabaseName="other", TableInput=table_input("last", "v1"))
        glue.close()
    finally:
        store_module.INLINE_SEGMENT_BYTES = small
    return before_last, before_table


def without_last_commit_of(expected: str, before: str, table: str) -> str:
    """The answers with one table as it was before the last commit to its own log (and every other as
    it is): what deleting that commit's entry, the newest of the table's log, rolls back to."""
    now, then = json.loads(expected), json.loads(before)
    for key in list(now):
        if key.endswith(f" db.{table}"):
            now[key] = then[key]
    return json.dumps(now, sort_keys=True)


def corrupt(path: str, kind: str, rng: random.Random) -> str:
    """Damage one file; returns what was done."""
    size = os.path.getsize(path)
    if kind == "delete":
        os.unlink(path)
        return "deleted"
    if kind == "empty" or size == 0:
        open(path, "wb").close()
        return "emptied"
    data = bytearray(Path(path).read_bytes())
    if kind == "truncate":
        cut = rng.randrange(size)
        Path(path).write_bytes(bytes(data[:cut]))
        return f"truncated to {cut} of {size} bytes"
    width = 1 if kind == "flip1" else min(8, size)
    at = rng.randrange(size - width + 1)
    for i in range(at, at + width):
        data[i] ^= rng.randrange(1, 256)
    Path(path).write_bytes(bytes(data))
    return f"{width} byte(s) flipped at {at} of {size}"


def names_file(message: str, rel: str) -> bool:
    """Whether an error message names the damaged file (a checkpoint may be named by its version)."""
    base = rel.rsplit("/", 1)[-1]
    return base in message or ("/checkpoints/" in rel and base.split(".")[0] in message)


def run_corruptions(trials: int, seed: int, partitions: int = 400) -> Outcomes:
    """Single corruptions of the files of a warehouse, each on a fresh copy: every answer must be the
    uncorrupted warehouse's, or a StorageError naming the damaged file (deleting the newest entry rolls
    the log back by that commit, which is indistinguishable from it never having been made: then the
    answer must be exactly the state before it)."""
    rng = random.Random(seed)
    result = Outcomes(seed)
    with tempfile.TemporaryDirectory() as tmp:
        pristine = f"{tmp}/pristine"
        before_last, before_table = build_warehouse(pristine, rng, partitions)
        expected = answers(pristine)
        newest = layout.log_path(json.loads(expected)["version"])
        # The newest entry of a table's own log, likewise: deleting it rolls that table back by it.
        rolled_back: dict[str, str] = {}
        for table, before in before_table.items():
            where = layout.table_log(placement.log_name(("db", table)))
            top = max(int(n[:20]) for n in os.listdir(f"{pristine}/{where.log_dir}") if n.endswith(".json"))
            rolled_back[where.log_path(top)] = without_last_commit_of(expected, before, table)
        # Lock files hold nothing (writers of one machine take turns on them): not corrupted.
        files = sorted(
            str(p.relative_to(pristine))
            for p in Path(pristine).rglob("*")
            if p.is_file() and p.name not in ("publish.lock", "lock")
        )
        for trial in range(trials):
            rel = files[trial % len(files)] if trial < len(files) else rng.choice(files)
            kind = KINDS[trial % len(KINDS)] if trial < len(files) else rng.choice(KINDS)
            copy = f"{tmp}/t{trial}"
            shutil.copytree(pristine, copy)
            what = corrupt(f"{copy}/{rel}", kind, rng)
            result.tried += 1
            try:
                got = answers(copy)
            except StorageError as e:
                failed_read = True
                if names_file(e.message, rel):
                    result.kinds["StorageError naming the file"] += 1
                else:
                    result.kinds["StorageError naming another file"] += 1
                    result.fail(f"{rel} {what}: the error does not name it: {e.message}")
            except Exception as e:
                result.kinds[f"raw {type(e).__name__}"] += 1
                result.fail(f"{rel} {what}: raw {type(e).__name__}: {e}")
                failed_read = True
            else:
                failed_read = False
                if got == expected:
                    result.kinds["the right answer"] += 1
                elif rel == newest and kind == "delete" and got == before_last:
                    result.kinds["newest commit rolled back (deleted entry)"] += 1
                elif kind == "delete" and json.loads(got) == json.loads(rolled_back.get(rel, "null")):
                    result.kinds["a table's newest commit rolled back (deleted entry)"] += 1
                else:
                    result.kinds["a wrong answer"] += 1
                    result.fail(f"{rel} {what}: a different answer and no error")
            # fsck verifies every file: it must name any file whose bytes changed, and any whose
            # loss made the read fail.
            flagged = any(f.damage and names_file(f.path, rel) for f in check(copy).findings)
            if flagged:
                result.kinds["fsck named the file"] += 1
            elif kind != "delete" or failed_read:
                result.fail(f"{rel} {what}: fsck did not name it")
            shutil.rmtree(copy)
    return result


# -- expiry with stale processes, concurrent writers and concurrent compactions --------------------


def run_expiry_race(
    writers: int, tables: int, pause: float, compactors: int, seed: int, warehouse: str | None = None
) -> Outcomes:
    """Writers create tables (one pausing mid-way, holding its open catalog) while compactions expire
    everything behind them: every acknowledged table must be there afterwards, once, and fsck clean.
    ``warehouse``: a new warehouse's URI (an object store's, its client settings in the environment);
    by default a temporary folder."""
    result = Outcomes(seed)
    with tempfile.TemporaryDirectory() as tmp:
        wh = warehouse or f"{tmp}/wh"
        glue = Catalog(wh)
        glue.create_database(DatabaseInput={"Name": "db"})
        glue.close()
        procs = [
            worker("writer", wh, f"w{w}", tables, tables // 3 if w == 0 else -1, pause, seed + w)
            for w in range(writers)
        ]
        stop = f"{tmp}/stop"
        comps = [worker("compactor", wh, stop, seed + 100 + c) for c in range(compactors)]
        acked: list[dict[str, Any]] = []
        for p in procs:
            acked.extend(finish(p))
        Path(stop).touch()
        compactions = sum(1 for c in comps for o in finish(c) if "compaction" in o)
        errors = [a for a in acked if a.get("ok") is False]
        if errors:
            result.fail(f"writers were refused: {errors[:3]}")
        names = {a["table"] for a in acked if a.get("ok")}
        batches = {(a["partitions"], a["batch"]) for a in acked if "partitions" in a}
        result.tried = len(names) + len(batches)
        result.kinds["compactions"] = compactions
        present = {t["Name"] for t in every(Catalog(wh).get_tables, "TableList", DatabaseName="db")}
        lost = sorted(names - present)
        result.kinds["acknowledged writes"] = len(names)
        result.kinds["lost"] = len(lost)
        if lost:
            result.fail(f"{len(lost)} of {len(names)} acknowledged tables lost, e.g. {lost[:5]}")
        extra = sorted(present - names)
        if extra:
            result.fail(f"tables nobody acknowledged: {extra[:5]}")
        result.kinds["acknowledged partition batches"] = len(batches)
        reader = Catalog(wh)
        for table in sorted({t for t, _ in batches}):
            parts = every(reader.get_partitions, "Partitions", DatabaseName="db", TableName=table)
            found = Counter(int(p["Values"][0]) for p in parts)
            wanted = {b for t, b in batches if t == table}
            if set(found) != wanted or any(n != 10 for n in found.values()):
                result.fail(f"{table}: partition batches {sorted(wanted - set(found))[:5]} lost or in part")
        report = check(wh)
        if report.damaged:
            result.fail(f"fsck found damage: {[f for f in report.findings if f.damage][:3]}")
    return result


# -- kill -9 ---------------------------------------------------------------------------------------


def run_kills(kills: int, seed: int) -> Outcomes:
    """Writers of partition batches, and compactions, killed with SIGKILL at random moments: every
    acknowledged batch is there whole, no batch is there in part, and the warehouse verifies clean."""
    rng = random.Random(seed)
    result = Outcomes(seed)
    with tempfile.TemporaryDirectory() as tmp:
        wh = f"{tmp}/wh"
        glue = Catalog(wh)
        glue.create_database(DatabaseInput={"Name": "db"})
        glue.create_table(DatabaseName="db", TableInput=table_input("t"))
        glue.close()
        acked: set[int] = set()
        for run in range(kills):
            kind = "compactor" if run % 3 == 2 else "batches"
            args = (
                ("compactor", wh, f"{tmp}/never", seed + run) if kind == "compactor" else ("batches", wh, run)
            )
            proc = worker(*args)
            assert proc.stdout is not None
            ready = proc.stdout.readline()
            if '"ready"' not in ready:
                result.fail(f"worker did not start: {ready!r} {proc.stderr.read() if proc.stderr else ''}")
                return result
            time.sleep(rng.uniform(0.0, 0.5))
            proc.kill()
            out, _ = proc.communicate(timeout=60)
            result.tried += 1
            result.kinds[f"kills of a {kind} process"] += 1
            acked.update(json.loads(line)["batch"] for line in out.splitlines() if '"batch"' in line)
            try:
                parts = every(Catalog(wh).get_partitions, "Partitions", DatabaseName="db", TableName="t")
            except GlueError as e:
                result.fail(f"after kill {run + 1} the warehouse does not read: {e}")
                return result
            batches = Counter(int(p["Values"][0]) for p in parts)
            half = {b: n for b, n in batches.items() if n != BATCH}
            if half:
                result.fail(f"after kill {run + 1}: batches present in part: {half}")
            lost = acked - set(batches)
            if lost:
                result.fail(f"after kill {run + 1}: acknowledged batches lost: {sorted(lost)[:5]}")
        result.kinds["acknowledged batches"] = len(acked)
        report = check(wh)
        if report.damaged:
            result.fail(f"fsck after the kills: {[f for f in report.findings if f.damage][:3]}")
    return result


BATCH = 25
"""Partitions in each batch the kill test's writers commit."""


# -- many processes racing ----------------------------------------------------------------------


def run_races(processes: int, names: int, increments: int, seed: int) -> Outcomes:
    """Processes race to create the same tables (exactly one may win each) and to increment one
    counter with read-check-write on VersionId (no increment may be lost)."""
    result = Outcomes(seed)
    with tempfile.TemporaryDirectory() as tmp:
        wh = f"{tmp}/wh"
        glue = Catalog(wh)
        glue.create_database(DatabaseInput={"Name": "db"})
        glue.create_table(DatabaseName="db", TableInput={**table_input("counter"), "Parameters": {"n": "0"}})
        glue.close()
        go = f"{tmp}/go"
        procs = [worker("race", wh, go, names, increments, seed + p) for p in range(processes)]
        time.sleep(0.2)
        Path(go).touch()
        outcomes = [o for p in procs for o in finish(p)]
        result.tried = len(outcomes)
        wins = Counter(o["table"] for o in outcomes if o.get("table") and o["result"] == "ok")
        result.kinds.update(o["result"] for o in outcomes)
        for n in range(names):
            if wins[f"r{n}"] != 1:
                result.fail(f"table r{n} was created {wins[f'r{n}']} times")
        counter = Catalog(wh).get_table(DatabaseName="db", Name="counter")["Table"]
        done = sum(1 for o in outcomes if o.get("increment"))
        if int(counter["Parameters"]["n"]) != done:
            result.fail(f"counter is {counter['Parameters']['n']} after {done} acknowledged increments")
        if int(counter["VersionId"]) != done + 1:
            result.fail(f"counter VersionId {counter['VersionId']} after {done} increments")
    return result


# -- malformed inputs to the Python API ---------------------------------------------------------

PLAUSIBLE: dict[str, list[Any]] = {
    "DatabaseName": ["db", "missing", "DB"],
    "Name": ["db", "t", "missing"],
    "TableName": ["t", "missing"],
    "CatalogId": [None, "123456789012"],
    "DatabaseInput": [{"Name": "db2"}, {"Name": "db"}],
    "TableInput": [table_input("t"), table_input("t2")],
    "PartitionInput": [{"Values": ["2024-01-01", "1"]}],
    "PartitionValues": [["2024-01-01", "1"], ["x"]],
    "PartitionInputList": [[{"Values": ["2024-01-02", "2"]}]],
    "Expression": ["dt = '2024-01-01'", "h > 1", "t*"],
    "VersionId": ["1", "2"],
    "IndexName": ["by_dt"],
    "PartitionIndex": [{"IndexName": "by_dt", "Keys": ["dt"]}],
    "MaxResults": [1, 100],
    "ColumnNames": [["id"]],
}
_NOT_OPERATIONS = {"close", "warehouse_version", "can_paginate", "get_paginator", "get_waiter"}
"""boto3's client helpers, which take operation names, not requests (boto3's own raise on junk too)."""


def junk(rng: random.Random, depth: int = 0) -> Any:
    """A value of any JSON-ish type, often of the wrong one, often at or past a limit."""
    pick = rng.randrange(16 if depth < 2 else 12)
    if pick == 0:
        return None
    if pick == 1:
        return rng.choice([True, False])
    if pick == 2:
        return rng.choice([0, -1, 1, 2**31, 2**63, -(2**63) - 1, 10**100])
    if pick == 3:
        return rng.choice([0.5, -0.0, float("nan"), float("inf"), 1e308])
    if pick in (4, 5, 6):
        return rng.choice(
            ["", "a", "*", "%", "..", "\x00", "\ud800", "é\u2028\u0301", "'", "(", "a b"]
        ) * rng.choice([1, 2, 255, 256, 2049])
    if pick == 7:
        return rng.choice([b"", b"\xff\xfe", bytearray(b"x")])
    if pick == 8:
        return datetime(rng.choice([1, 1970, 9999]), 1, 1, tzinfo=rng.choice([None, UTC]))
    if pick in (9, 10, 11):
        name = rng.choice(list(PLAUSIBLE))
        return rng.choice(PLAUSIBLE[name])
    if pick in (12, 13):
        return [junk(rng, depth + 1) for _ in range(rng.choice([0, 1, 3, 101]))]
    keys = list(PLAUSIBLE) + [
        "Values",
        "Keys",
        "Columns",
        "Type",
        "Parameters",
        "StorageDescriptor",
        "",
        "$t",
    ]
    return {rng.choice(keys): junk(rng, depth + 1) for _ in range(rng.choice([0, 1, 3]))}


def run_malformed(calls_per_operation: int, seed: int) -> Outcomes:
    """Every operation of the Python API called with random junk in its arguments (each present one
    plausible or junk): a GlueError (InvalidInputException, EntityNotFoundException, ...) or a result,
    never another exception, and a refused call changes nothing."""
    import inspect

    rng = random.Random(seed)
    result = Outcomes(seed)
    with tempfile.TemporaryDirectory() as tmp:
        glue = Catalog(f"{tmp}/wh", background_merges=False)
        glue.create_database(DatabaseInput={"Name": "db"})
        glue.create_table(DatabaseName="db", TableInput=table_input("t"))
        glue.create_partition(
            DatabaseName="db", TableName="t", PartitionInput={"Values": ["2024-01-01", "1"]}
        )
        operations = [
            (name, inspect.signature(fn))
            for name, fn in inspect.getmembers(Catalog, inspect.isfunction)
            if not name.startswith("_") and name not in _NOT_OPERATIONS
        ]
        for name, sig in operations:
            params = [p for p in sig.parameters.values() if p.name != "self"]
            for _ in range(calls_per_operation):
                kwargs: dict[str, Any] = {}
                for p in params:
                    required = p.default is inspect.Parameter.empty
                    if not required and rng.random() < 0.5:
                        continue
                    plausible = PLAUSIBLE.get(p.name)
                    kwargs[p.name] = rng.choice(plausible) if plausible and rng.random() < 0.5 else junk(rng)
                before = glue.warehouse_version()
                result.tried += 1
                try:
                    got = getattr(glue, name)(**kwargs)
                    if inspect.isgenerator(got):
                        list(got)
                except GlueError as e:
                    result.kinds[e.code] += 1
                    if glue.warehouse_version() != before:
                        result.fail(f"{name}({_short(kwargs)}) raised {e.code} but changed the warehouse")
                except Exception as e:
                    result.kinds[f"raw {type(e).__name__}"] += 1
                    result.fail(f"{name}({_short(kwargs)}): raw {type(e).__name__}: {str(e)[:200]}")
                else:
                    result.kinds["accepted"] += 1
        glue.close()
    return result


def _short(kwargs: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v!r:.60}" for k, v in kwargs.items())
