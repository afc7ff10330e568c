"""The store's hot paths at two commits of this repository, taking turns in fresh processes so that both
see the same machine: partition creation (batch_create_partition, 100 a call), a one-record commit
(CreateTable-sized, through Store.commit), and latest() when nothing changed.

    python bench/ab_commits.py [--before main] [--after HEAD] [--rounds 8] [--fsync]

Each side is checked out with ``git archive`` into a temporary folder and imported from there.
Medians over the rounds; the spread is printed too, as a loaded machine makes single runs vary twofold.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

CHILD = r"""
import json, sys, tempfile, time
from gluecat import Catalog
from gluecat.store.snapshot import Changes
from gluecat.store.store import Store

fsync = sys.argv[1] == "1"
root = tempfile.mkdtemp()
glue = Catalog(root + "/a", fsync=fsync)
glue.create_database(DatabaseInput={"Name": "db"})
glue.create_table(DatabaseName="db", TableInput={"Name": "t", "PartitionKeys": [
    {"Name": "a", "Type": "string"}, {"Name": "b", "Type": "int"}]})
t = time.perf_counter()
for c in range(300):
    glue.batch_create_partition(DatabaseName="db", TableName="t", PartitionInputList=[
        {"Values": [f"k{c}", str(i)], "StorageDescriptor": {"Location": f"s3://b/t/k{c}/{i}/"}}
        for i in range(100)])
parts = 30_000 / (time.perf_counter() - t)
store = Store(root + "/b", fsync=fsync, checkpoint_interval=10**9)

def put(i):
    def build(snap):
        changes = Changes()
        changes.put("table", ("db", f"t{i}"), {"Name": f"t{i}", "Parameters": {"a": "b" * 50}})
        return changes, None
    return build

for i in range(200):
    store.commit("CreateTable", put(i))
t = time.perf_counter()
for i in range(200, 2200):
    store.commit("CreateTable", put(i))
commit = (time.perf_counter() - t) / 2000 * 1e6
t = time.perf_counter()
for _ in range(20_000):
    store.latest()
latest = (time.perf_counter() - t) / 20_000 * 1e6
print(json.dumps({"partitions/s": parts, "one-record commit (us)": commit, "latest() (us)": latest}))
"""


def checkout(ref: str, into: str) -> str:
    archive = subprocess.run(["git", "-C", str(REPO), "archive", ref], capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", into], input=archive.stdout, check=True)
    return f"{into}/python"


def measure(python_dir: str, fsync: bool) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, "1" if fsync else "0"],
        env={**os.environ, "PYTHONPATH": python_dir},
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    result: dict[str, float] = json.loads(out.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--before", default="main")
    parser.add_argument("--after", default="HEAD")
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--fsync", action="store_true", help="commit with fsync (the default of a catalog)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        sides = {}
        for name, ref in (("before", args.before), ("after", args.after)):
            os.makedirs(f"{tmp}/{name}")
            sides[name] = checkout(ref, f"{tmp}/{name}")
        runs: dict[str, list[dict[str, float]]] = {"before": [], "after": []}
        for r in range(args.rounds):
            for name in ("before", "after") if r % 2 == 0 else ("after", "before"):
                runs[name].append(measure(sides[name], args.fsync))
    print(
        f"{args.before} (before) and {args.after} (after), {args.rounds} rounds taking turns, fsync {args.fsync}"
    )
    print(f"{'':28}{'before':>10}{'after':>10}{'after/before':>14}   spread before | after")
    for key in runs["before"][0]:
        b = [x[key] for x in runs["before"]]
        a = [x[key] for x in runs["after"]]
        mb, ma = statistics.median(b), statistics.median(a)
        print(
            f"{key:28}{mb:10.1f}{ma:10.1f}{ma / mb:14.3f}   "
            f"{min(b):.1f}-{max(b):.1f} | {min(a):.1f}-{max(a):.1f}"
        )


if __name__ == "__main__":
    main()
