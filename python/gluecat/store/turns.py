"""Writers of one busy log on an object store, taking turns.

On an object store the writer that has just published a version publishes its next one a round trip
later, while a writer that lost the race needs two: it reads the entry that won, then publishes. Left
alone, a process committing back to back wins every version and the others' commits wait until they
give up (Store.commit_seconds). So a writer that knows others wait offers them the next version: after
a win it waits about a loser's two round trips, then reads the version after its own before it builds
again (one request). If a waiting writer took it, the writer goes on after it, and the two alternate.
If no one did by the third look, no one waits, and it commits at full speed again.

A writer learns that others wait by losing a race itself, or from a note that losing writers leave
beside the log (``LogLayout.note_path``, new content each time). A writer that keeps winning never
loses, so it reads the note every CHECK_EVERY seconds while it writes, alongside a publication: a
note changed since its last look was left by a writer still losing.

Only the order of publications changes: every commit is still a put-if-absent after the entries it
read, checked as before. A disk has no need of this; its writers queue on one machine (WarehouseFS.queued).
"""

from __future__ import annotations

import random
import secrets
import time
from collections.abc import Callable
from concurrent.futures import Future

CHECK_EVERY = 0.25
"""How often a writer that keeps winning reads the note (seconds): how long another process's writer
may lose before this one starts to offer it turns."""
BACK_TO_BACK = 1.0
"""A writer whose last win is older than this (seconds) is not committing back to back, and reads no
note: it cannot keep others from winning. What a writer learnt of others longer ago is forgotten."""
NOTE_AFTER = 0.1
"""How long a writer loses before it leaves a note (seconds): between writers taking turns, a loss is
one race among those waiting, and the next is theirs."""
NOTE_EVERY = 0.1
"""A losing writer leaves a note at most this often (seconds): the note is one request."""
ROUND_TRIP_WEIGHT = 0.2
"""The weight of the newest publication's time in the round trip kept (an exponential average)."""
LONGEST_WAIT = 0.25
"""The longest a winner waits before it looks for a waiting writer's version (seconds): a slow request
must not stall the log."""

TURN = 2.0
"""How long a winner waits, in round trips, before each look for a waiting writer's version: a loser
reads what won, then publishes."""
MISSES = 3
"""Looks that find no other writer's version before a writer that offered the next version takes it
itself, and goes on alone."""
MOST_AHEAD = 8
"""The most versions a losing writer reads ahead (Turns.ahead)."""

_UNREAD = object()


class Turns:
    """What one process knows of the other writers of one log: whether they wait, how long a request
    takes. This process's writers of the log take turns among themselves (Store._table_turn): one at a
    time calls it, and it takes the result of a note's read (made on another thread) when it next asks."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self.round_trip = 0.0
        """How long a request of a commit takes, a winning publication or a look (seconds; 0 until one
        was timed)."""
        self.others = False
        """Whether other processes' writers are known to wait for the log."""
        self.ahead = 0
        """How many versions after the one a publication lost to to read with it (Log._read_ahead):
        twice as many as last time if it found all it read, else as many as it found."""
        self._won = False
        self._misses = 0
        self._won_at = float("-inf")
        self._seen_others = float("-inf")
        self._losing_since: float | None = None
        self._losses = 0
        self._noted = float("-inf")
        self._checked = float("-inf")
        self._own_note: bytes | None = None
        self._note: object = _UNREAD
        self._reading: Future[bytes | None] | None = None

    def wait(self) -> float:
        """How long to wait, before building the next commit, for a waiting writer to publish the next
        version (0: build now). After waiting, ``Log.peek`` and ``looked``."""
        self._take_read()
        if self.others and self._clock() - self._seen_others > BACK_TO_BACK:
            self.others = False  # what it knew is old: those writers are done, or commit now and then
        if not (self.others and self._won):
            return 0.0
        self._misses = 0
        return self._turn()

    def _turn(self) -> float:
        return min(TURN * self.round_trip, LONGEST_WAIT)

    def _met_others(self) -> None:
        self.others = True
        self._seen_others = self._clock()

    def looked(self, found: bool, seconds: float) -> float:
        """After a wait: whether another process had published the version after this one's, and how
        long the look took. How long to wait before looking again (0: build now). A writer slow on a
        busy machine may take a few turns' time to publish, so the offer stands for MISSES looks;
        after that nobody waits, and this writer goes on alone."""
        self._time(seconds)
        self._won = False
        if found:
            self._met_others()
            return 0.0
        self._misses += 1
        if self._misses < MISSES:
            return self._turn()
        self.others = False
        return 0.0

    def _time(self, seconds: float) -> None:
        weight = ROUND_TRIP_WEIGHT if self.round_trip else 1.0
        self.round_trip += weight * (seconds - self.round_trip)

    def published(self, seconds: float, won: bool) -> None:
        """A publication took ``seconds`` and won (or lost) its version. Only a win is timed: a lost one
        also reads back what took the name (Log.publish)."""
        if won:
            self._time(seconds)
            self._losing_since = None
            self._losses = 0
            self._won_at = self._clock()
        else:
            self._met_others()
            self._losses += 1
            if self._losing_since is None:
                self._losing_since = self._clock()
        self._won = won

    def backoff(self) -> float:
        """How long a writer that lost again waits before it publishes again: the writers waiting for
        a turn all race for the next version, and all but one lose."""
        return random.uniform(0, self.round_trip) if self._losses > 1 else 0.0

    def read_ahead(self, found: int) -> None:
        """A lost publication's read found ``found`` versions after the one it lost to, of ``ahead``."""
        self.ahead = min(max(1, 2 * found), MOST_AHEAD) if found >= self.ahead else found

    def note_due(self) -> bytes | None:
        """After a lost race: the note to leave, or None. A writer notes that it waits once it has lost
        for NOTE_AFTER (losses among writers that take turns are brief), at most every NOTE_EVERY."""
        now = self._clock()
        if (
            self._losing_since is None
            or now - self._losing_since < NOTE_AFTER
            or now - self._noted < NOTE_EVERY
        ):
            return None
        self._noted = now
        self._own_note = secrets.token_hex(16).encode()
        return self._own_note

    def check_due(self) -> bool:
        """Before a publication by a writer that won the last version and does not know of others:
        whether to read the note now (``reading``). A writer that commits now and then reads none."""
        if self.others or not self._won or self._reading is not None:
            return False
        now = self._clock()
        if now - self._checked < CHECK_EVERY or now - self._won_at > BACK_TO_BACK:
            return False
        self._checked = now
        return True

    def reading(self, future: Future[bytes | None]) -> None:
        """The note's read (its content, None if there is none), under way."""
        self._reading = future

    def _take_read(self) -> None:
        future = self._reading
        if future is None or not future.done():
            return
        self._reading = None
        try:
            note = future.result()
        except Exception:  # a hint not read: the next check reads it again
            return
        if self._note is not _UNREAD and note != self._note and note != self._own_note:
            self._met_others()
        self._note = note
