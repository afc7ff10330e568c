"""gc_paused: the cyclic collector is off while any thread is inside, and back as it was after."""

import gc
import threading
from collections.abc import Iterator

import pytest

from gluecat.gc_pause import gc_paused


@pytest.fixture(autouse=True)
def collector_on() -> Iterator[None]:
    was = gc.isenabled()
    gc.enable()
    yield
    if not was:
        gc.disable()


def test_the_collector_is_off_inside_and_on_again_after() -> None:
    with gc_paused():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_an_error_inside_still_turns_it_back_on() -> None:
    with pytest.raises(ValueError), gc_paused():
        raise ValueError("boom")
    assert gc.isenabled()


def test_a_program_that_turned_it_off_keeps_it_off() -> None:
    gc.disable()
    with gc_paused():
        pass
    assert not gc.isenabled()


def test_nested_pauses_end_with_the_outermost() -> None:
    with gc_paused():
        with gc_paused():
            pass
        assert not gc.isenabled()
    assert gc.isenabled()


def test_it_comes_back_on_when_the_last_of_several_threads_leaves() -> None:
    entered, release = threading.Event(), threading.Event()

    def other() -> None:
        with gc_paused():
            entered.set()
            release.wait(10)

    t = threading.Thread(target=other)
    t.start()
    assert entered.wait(10)
    with gc_paused():
        pass
    assert not gc.isenabled()  # the other thread is still inside
    release.set()
    t.join(10)
    assert gc.isenabled()
