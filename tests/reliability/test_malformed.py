"""Random junk in every argument of every operation of the Python API: a Glue error (or a result),
never a raw Python exception, and a refused call changes nothing."""

from __future__ import annotations

from tests.reliability.battery import run_malformed, seed_from_env


def test_junk_arguments_give_glue_errors_and_change_nothing() -> None:
    result = run_malformed(calls_per_operation=60, seed=seed_from_env())
    print(dict(result.kinds))
    assert result.failures == [], "\n".join(result.failures[:20])
    assert result.kinds["InvalidInputException"] > result.tried // 3
