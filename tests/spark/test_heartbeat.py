"""The heartbeat that keeps running jobs' Lake Formation transactions alive."""

from __future__ import annotations

import threading
import time
from typing import Any

from gluecat.errors import InternalServiceException, TransactionCanceledException
from gluecat.spark.governed import _Heartbeat


class FakeLakeFormation:
    """Transactions ``ended`` are over; ``flaky`` ones fail to extend once, then extend."""

    transaction_timeout = 0.3

    def __init__(self, ended: set[str], flaky: set[str]) -> None:
        self.ended, self.flaky = ended, set(flaky)
        self.extended: list[str] = []
        self.lock = threading.Lock()

    def extend_transaction(self, TransactionId: str) -> dict[str, Any]:
        with self.lock:
            self.extended.append(TransactionId)
            if TransactionId in self.ended:
                raise TransactionCanceledException(f"Transaction {TransactionId} has been canceled.")
            if TransactionId in self.flaky:
                self.flaky.discard(TransactionId)
                raise InternalServiceException("try again")
        return {}


def test_the_heartbeat_lets_go_of_transactions_that_ended_and_keeps_the_others() -> None:
    """A transaction canceled or aborted by another while its job runs is no longer asked to be kept
    alive (a driver running many jobs would otherwise go on for its life with each); a passing failure
    to extend one is tried again."""
    lf = FakeLakeFormation(ended={f"gone{i}" for i in range(50)}, flaky={"live"})
    beat = _Heartbeat()
    for i in range(50):
        beat.add(lf, f"gone{i}")  # type: ignore[arg-type]
    beat.add(lf, "live")  # type: ignore[arg-type]
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and (len(beat._due) > 1 or lf.extended.count("live") < 2):
        time.sleep(0.05)
    assert set(beat._due) == {"live"}
    assert lf.extended.count("live") >= 2
    beat.remove("live")


def test_a_stopped_heartbeat_beats_no_more_and_its_thread_ends() -> None:
    """At the interpreter's exit (gluecat/catalog/background.py) the heartbeat is stopped: a beat cut
    off by the finalisation inside the object store's client would abort the process. The beat under
    way ends, none follows, and a job begun after starts none."""
    lf = FakeLakeFormation(ended=set(), flaky=set())
    beat = _Heartbeat()
    beat.add(lf, "job")  # type: ignore[arg-type]
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not lf.extended:
        time.sleep(0.01)
    thread = beat._thread
    beat.stop()
    assert thread is not None and not thread.is_alive()
    beats = len(lf.extended)
    time.sleep(3 * lf.transaction_timeout / 3)  # three beats' time
    beat.add(lf, "later")  # type: ignore[arg-type]
    assert len(lf.extended) == beats and beat._thread is None
