"""The catalog's background threads end before the interpreter finalises (catalog/background.py): a
merge cut off inside pyarrow by the finalisation aborts a process that did all its work. (The
transactions' janitor: tests/catalog/test_transactions.py.)"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import gluecat
from gluecat import Catalog
from gluecat.catalog.rows import merging
from tests.int_partitions import segments

PYTHON_DIR = Path(gluecat.__file__).resolve().parents[1]
REPO = PYTHON_DIR.parent

CHILD = textwrap.dedent(
    """
    import gc, sys, time
    from pathlib import Path
    from gluecat import Catalog
    from gluecat.catalog.rows import merging
    from tests.int_partitions import add, make

    warehouse, marker = sys.argv[1], Path(sys.argv[2])
    real_merge = merging.merge

    def slow_merge(*args, **kwargs):
        time.sleep(0.5)  # still merging when the main thread reaches the end of the script
        merged = real_merge(*args, **kwargs)
        marker.write_text(str(merged))
        return merged

    merging.merge = slow_merge
    glue = make(Catalog(warehouse))
    for w in range(merging.MERGE_WIDTH):
        add(glue, *range(w * 40, w * 40 + 40))  # a run worth a merge, started on the merge thread
    del glue  # its engine goes with it; the merge thread goes on
    gc.collect()
    """
)


@pytest.mark.slow
def test_a_process_exits_after_its_last_merge_even_with_its_catalog_let_go(
    warehouse: str, tmp_path: Path
) -> None:
    marker = tmp_path / "merged"
    done = subprocess.run(
        [sys.executable, "-c", CHILD, warehouse, str(marker)],
        cwd=REPO,
        env={"PYTHONPATH": f"{PYTHON_DIR}:{REPO}", "PATH": ""},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert marker.read_text() == "True"  # the merge ran to its end and committed
    glue = Catalog(warehouse)
    assert len(segments(glue)) == 1
    assert not merging.run_to_merge(glue.store, segments(glue))


LATE = textwrap.dedent(
    """
    import sys
    from gluecat.catalog import background

    class Owner:
        def __init__(self, name, then=None):
            self.name, self.then = name, then
            background.stop_at_exit(self)

        def stop(self):
            print("stopped", self.name, flush=True)
            if self.then:
                kept.append(Owner(self.then))  # its last work starts another's

    kept = [Owner("merge", then="refold")]
    """
)


def test_what_a_stopping_thread_starts_at_exit_is_stopped_too() -> None:
    done = subprocess.run(
        [sys.executable, "-c", LATE],
        env={"PYTHONPATH": f"{PYTHON_DIR}:{REPO}", "PATH": ""},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["stopped merge", "stopped refold"]
