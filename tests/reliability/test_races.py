"""Processes racing on one warehouse: exactly one wins each create, and no increment of a shared
counter (read, then update with the VersionId read) is lost."""

from __future__ import annotations

from tests.reliability.battery import run_races, seed_from_env


def test_each_create_race_has_one_winner_and_no_update_is_lost() -> None:
    result = run_races(processes=4, names=15, increments=10, seed=seed_from_env())
    print(dict(result.kinds))
    assert result.failures == []
