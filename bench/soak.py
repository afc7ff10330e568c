"""The reliability battery of tests/reliability/, run longer: a soak that prints what it tried and what
came of it, by kind.

    python bench/soak.py [--seed N] [--corruptions 3000] [--kills 60] [--writers 3] [--tables 1000]
                         [--pause 5] [--compactors 2] [--processes 8] [--names 100] [--increments 50]
                         [--malformed 300]

Every figure in docs/reliability.md comes from a run of this script; the suite runs the same engines
with small sizes. A failure is printed with the seed that reproduces it, and the exit code is 1.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.reliability import battery


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--seed", type=int, default=random.randrange(1 << 30))
    parser.add_argument("--corruptions", type=int, default=3000)
    parser.add_argument("--partitions", type=int, default=400)
    parser.add_argument("--kills", type=int, default=60)
    parser.add_argument("--writers", type=int, default=3)
    parser.add_argument("--tables", type=int, default=1000, help="tables each writer creates")
    parser.add_argument("--pause", type=float, default=5.0, help="seconds the stale writer pauses")
    parser.add_argument("--compactors", type=int, default=2)
    parser.add_argument("--processes", type=int, default=8)
    parser.add_argument("--names", type=int, default=100)
    parser.add_argument("--increments", type=int, default=50, help="counter increments per process")
    parser.add_argument("--malformed", type=int, default=300, help="calls per operation")
    args = parser.parse_args()
    seed = args.seed
    print(f"seed {seed}")
    runs: list[tuple[str, Callable[[], battery.Outcomes]]] = [
        ("corruptions", lambda: battery.run_corruptions(args.corruptions, seed, args.partitions)),
        (
            "expiry races",
            lambda: battery.run_expiry_race(args.writers, args.tables, args.pause, args.compactors, seed),
        ),
        ("kill -9", lambda: battery.run_kills(args.kills, seed)),
        ("process races", lambda: battery.run_races(args.processes, args.names, args.increments, seed)),
        ("malformed inputs", lambda: battery.run_malformed(args.malformed, seed)),
    ]
    failed = False
    rows = []
    for name, run in runs:
        print(f"{name} ...", flush=True)
        start = time.perf_counter()
        result = run()
        rows.append((name, result, time.perf_counter() - start))
        failed |= bool(result.failures)
        for f in result.failures[:20]:
            print(f"  FAILURE {f}")
    print()
    print(f"{'battery':<18}{'tried':>8}{'failures':>10}{'seconds':>9}  outcomes")
    for name, result, seconds in rows:
        outcomes = ", ".join(f"{k}: {v:,}" for k, v in sorted(result.kinds.items()))
        print(f"{name:<18}{result.tried:>8,}{len(result.failures):>10}{seconds:>9.1f}  {outcomes}")
    print(f"\nreproduce: python bench/soak.py --seed {seed} (with the same sizes)")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
