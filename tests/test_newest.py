"""gluecat.newest.Newest: a memo that keeps only the entries put or looked at last."""

from __future__ import annotations

import sys
import threading

from gluecat.newest import Newest


def test_it_keeps_the_newest_entries_and_lets_the_oldest_go() -> None:
    kept: Newest[int, str] = Newest(most=3)
    for v in range(5):
        kept[v] = f"v{v}"
    assert list(kept.items()) == [(2, "v2"), (3, "v3"), (4, "v4")]


def test_putting_or_touching_an_entry_makes_it_the_newest() -> None:
    kept: Newest[str, int] = Newest(most=3)
    kept["a"], kept["b"], kept["c"] = 1, 2, 3
    assert kept.touch("a") == 1
    kept["b"] = 20
    kept["d"] = 4
    assert list(kept) == ["a", "b", "d"]  # "c" was the one least recently used
    assert kept.touch("c") is None


def test_setdefault_and_update_are_bounded_too() -> None:
    kept: Newest[int, int] = Newest(most=2)
    assert kept.setdefault(1, 10) == 10
    assert kept.setdefault(1, 11) == 10
    kept.update({2: 20, 3: 30})
    assert dict(kept) == {2: 20, 3: 30}


def test_threads_putting_and_touching_at_once_neither_fail_nor_overfill_it() -> None:
    kept: Newest[int, int] = Newest(most=8)

    def churn(seed: int) -> None:
        for i in range(50_000):
            kept[(seed * 7 + i) % 32] = i
            kept.touch((seed + i) % 32)

    failed: list[BaseException] = []

    def churning(seed: int) -> None:
        try:
            churn(seed)
        except BaseException as e:
            failed.append(e)

    switching = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # threads switch between any two steps of a call
    try:
        threads = [threading.Thread(target=churning, args=(s,)) for s in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(switching)
    assert failed == []
    assert len(kept) <= 8
