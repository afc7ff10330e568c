"""Writers of partition batches and compactions killed with SIGKILL at random moments: nothing
acknowledged is lost, no batch is half there, and fsck finds no damage."""

from __future__ import annotations

from tests.reliability.battery import run_kills, seed_from_env


def test_kill_9_of_writers_and_compactions_loses_nothing_and_leaves_no_half_batch() -> None:
    result = run_kills(kills=9, seed=seed_from_env())
    print(dict(result.kinds))
    assert result.failures == []
