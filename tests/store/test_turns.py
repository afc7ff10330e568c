"""Writers of one log on an object store take turns (gluecat/store/turns.py): what one process decides
from what it saw. The processes themselves, sharing a table on S3, are in test_object_store.py."""

from __future__ import annotations

from concurrent.futures import Future

import pytest

from gluecat.store import turns as turns_module
from gluecat.store.turns import Turns


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def note_read(content: bytes | None) -> Future[bytes | None]:
    done: Future[bytes | None] = Future()
    done.set_result(content)
    return done


@pytest.fixture
def clock() -> Clock:
    return Clock()


def test_a_writer_alone_never_waits(clock: Clock) -> None:
    turns = Turns(clock)
    for _ in range(5):
        assert turns.wait() == 0.0
        turns.published(0.02, won=True)
        clock.now += 0.02
    assert not turns.others


def win(turns: Turns, times: int = 1, seconds: float = 0.02) -> None:
    for _ in range(times):
        turns.published(seconds, won=True)


def test_after_a_lost_race_a_win_offers_the_next_version_for_two_round_trips(clock: Clock) -> None:
    turns = Turns(clock)
    win(turns)
    turns.published(0.5, won=False)  # a loss also reads back what won: not a round trip
    assert turns.round_trip == pytest.approx(0.02)
    assert turns.wait() == 0.0  # a loser publishes again at once
    win(turns)
    assert turns.wait() == pytest.approx(0.04)


def test_a_writer_builds_after_the_version_another_took_in_its_turn(clock: Clock) -> None:
    turns = Turns(clock)
    turns.published(0.02, won=False)
    win(turns)
    assert turns.wait() > 0
    assert turns.looked(True, 0.02) == 0.0  # build now, after it
    assert turns.others
    assert turns.wait() == 0.0
    win(turns)
    assert turns.wait() > 0  # and then offer the next again


def test_an_offer_stands_for_a_few_looks_then_the_writer_goes_on_alone(clock: Clock) -> None:
    turns = Turns(clock)
    turns.published(0.02, won=False)
    win(turns)
    assert turns.wait() == pytest.approx(0.04)
    for _ in range(turns_module.MISSES - 1):  # the waiting writer may be slow: wait and look again
        assert turns.looked(False, 0.02) == pytest.approx(0.04)
    assert turns.looked(False, 0.02) == 0.0  # nobody took it: nobody waits
    assert not turns.others
    win(turns)
    assert turns.wait() == 0.0


def test_a_slow_look_makes_a_winner_wait_longer(clock: Clock) -> None:
    """The other writer's turn takes a look and a publication: both are timed."""
    turns = Turns(clock)
    turns.published(0.02, won=False)
    win(turns)
    assert turns.wait() == pytest.approx(0.04)
    turns.looked(True, 0.07)
    win(turns)
    assert turns.round_trip == pytest.approx(0.028)  # 0.02, then 0.03 with the look, then 0.028


def test_what_a_writer_learnt_of_others_long_ago_does_not_make_it_wait(clock: Clock) -> None:
    turns = Turns(clock)
    turns.published(0.02, won=False)
    win(turns)
    clock.now += turns_module.BACK_TO_BACK + 1
    win(turns)
    assert turns.wait() == 0.0
    assert not turns.others


def test_a_slow_request_does_not_stall_the_log(clock: Clock) -> None:
    turns = Turns(clock)
    turns.published(5.0, won=False)
    win(turns, seconds=5.0)
    assert turns.wait() == turns_module.LONGEST_WAIT


def test_a_writer_that_keeps_winning_learns_of_a_waiting_one_from_a_changed_note(clock: Clock) -> None:
    turns = Turns(clock)
    assert not turns.check_due()  # no win yet: nothing to keep from anyone
    turns.published(0.02, won=True)
    assert turns.check_due()
    turns.reading(note_read(b"left long ago"))  # the first look only learns what the note says
    clock.now += turns_module.CHECK_EVERY / 2
    turns.published(0.02, won=True)
    assert turns.wait() == 0.0 and not turns.check_due()  # not yet time to look again
    clock.now += turns_module.CHECK_EVERY
    turns.published(0.02, won=True)
    assert turns.check_due()
    turns.reading(note_read(b"left just now"))
    assert turns.wait() == pytest.approx(0.04)
    assert turns.others


def test_a_note_unchanged_or_its_own_says_nobody_waits(clock: Clock) -> None:
    turns = Turns(clock)
    turns.published(0.02, won=False)
    clock.now += turns_module.NOTE_AFTER + 0.01
    own = turns.note_due()
    assert own is not None
    for _ in range(turns_module.MISSES):
        turns.looked(False, 0.02)  # it went on alone
    for content in (b"other", b"other", own):
        turns.published(0.02, won=True)
        clock.now += turns_module.CHECK_EVERY
        assert turns.check_due()
        turns.reading(note_read(content))
        assert turns.wait() == 0.0


def test_a_writer_committing_now_and_then_reads_no_note(clock: Clock) -> None:
    turns = Turns(clock)
    turns.published(0.02, won=True)
    clock.now += turns_module.BACK_TO_BACK + 1
    assert not turns.check_due()


def test_a_loser_leaves_a_note_once_it_has_lost_for_a_while_and_not_at_every_loss(clock: Clock) -> None:
    turns = Turns(clock)
    turns.published(0.02, won=False)
    assert turns.note_due() is None  # a loss among writers taking turns
    clock.now += turns_module.NOTE_AFTER + 0.01
    turns.published(0.02, won=False)
    first = turns.note_due()
    assert first is not None
    clock.now += turns_module.NOTE_EVERY / 2
    assert turns.note_due() is None
    clock.now += turns_module.NOTE_EVERY + 0.01
    second = turns.note_due()
    assert second is not None and second != first  # new content: a reader sees it change
    turns.published(0.02, won=True)
    clock.now += turns_module.NOTE_AFTER + 0.01
    turns.published(0.02, won=False)
    assert turns.note_due() is None  # a new run of losses


def test_a_loser_reads_further_ahead_while_it_finds_all_it_read(clock: Clock) -> None:
    turns = Turns(clock)
    assert turns.ahead == 0
    turns.read_ahead(0)
    assert turns.ahead == 1
    turns.read_ahead(1)
    assert turns.ahead == 2
    turns.read_ahead(2)
    assert turns.ahead == 4
    for _ in range(3):
        turns.read_ahead(turns.ahead)
    assert turns.ahead == turns_module.MOST_AHEAD
    turns.read_ahead(3)
    assert turns.ahead == 3
    turns.read_ahead(0)
    assert turns.ahead == 0


def test_only_a_loser_that_lost_again_backs_off(clock: Clock) -> None:
    turns = Turns(clock)
    turns.published(0.02, won=True)
    turns.published(0.02, won=False)
    assert turns.backoff() == 0.0
    turns.published(0.02, won=False)
    assert 0.0 <= turns.backoff() <= 0.02
