"""Single corruptions of every kind of file (truncated, 1 and 8 bytes flipped, emptied, deleted): each
gives the uncorrupted warehouse's answers or a StorageError naming the damaged file, never another
answer. Every file of the warehouse is corrupted at least once, each kind in turn."""

from __future__ import annotations

from tests.reliability.battery import run_corruptions, seed_from_env

TRIALS = 160


def test_every_single_corruption_is_the_right_answer_or_an_error_naming_the_file() -> None:
    result = run_corruptions(TRIALS, seed_from_env(), partitions=200)
    print(dict(result.kinds))
    assert result.failures == []
    assert result.kinds["StorageError naming the file"] > TRIALS // 4  # the battery does reach damage
