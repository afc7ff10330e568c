"""The model test of tests/catalog/test_catalog_model.py with its second Catalog in a process of its
own: each write is made through either process and every read through either, so that a process whose
caches (snapshots, partition views, their typed columns and index lookups) were filled before another
process's writes must still answer as the model does. Nothing is shared but the warehouse's files.
"""

from __future__ import annotations

from typing import Any

from hypothesis.stateful import precondition, rule, run_state_machine_as_test

from gluecat.catalog.rows import latest, merging
from gluecat.store import store
from tests.catalog import test_catalog_model as model
from tests.catalog.catalog_worker import Remote


class ProcessesMachine(model.CatalogMachine):
    def client(self, writer: str) -> Any:
        if writer == "other" and self.other is None:
            self.other = Remote(self.warehouse, _child_settings())
        return super().client(writer)

    def teardown(self) -> None:
        if isinstance(self.other, Remote):
            self.other.close()
            self.other = None
        super().teardown()

    @rule(writer=model.writer_st, db=model.db_st, name=model.table_st, whole=model.st.booleans())
    def merge_segments(self, writer: str, db: str, name: str, whole: bool) -> None:
        glue = self.client(writer)
        if isinstance(glue, Remote):
            glue.run("compact" if whole else "merge", db, name)
        else:
            super().merge_segments(writer, db, name, whole)

    @rule(writer=model.writer_st)
    def checkpoint(self, writer: str) -> None:
        glue = self.client(writer)
        if isinstance(glue, Remote):
            glue.run("checkpoint")
        else:
            super().checkpoint(writer)

    @rule(writer=model.writer_st)
    def expire_now(self, writer: str) -> None:
        super().expire_now("main")

    @rule()
    def compact_dry_run(self) -> None:
        other, self.other = self.other, None  # (the child process merges nothing on its own)
        try:
            super().compact_dry_run()
        finally:
            self.other = other

    @rule()
    @precondition(lambda self: self.other is not None)
    def forget_other(self) -> None:
        super().forget_other()


def _child_settings() -> dict[str, Any]:
    """What the small_merges fixture and the machine set in the test's process, for the child's."""
    return {
        "merging": {"MERGE_WIDTH": merging.MERGE_WIDTH, "MIN_MERGE_ROWS": merging.MIN_MERGE_ROWS},
        "latest": {"MAX_DELTA_ROWS": latest.MAX_DELTA_ROWS, "MAX_DELTA_SEGMENTS": latest.MAX_DELTA_SEGMENTS},
        "checkpoint_interval": 7,
        "store": {"COMMIT_SETTLE": store.COMMIT_SETTLE},
    }


small_merges = model.small_merges


def test_a_catalog_in_another_process_answers_as_the_model_of_glue_does(small_merges: None) -> None:
    """A bounded, derandomized run; GLUECAT_MODEL_* as for test_catalog_model.py to explore."""
    run_state_machine_as_test(ProcessesMachine, settings=model.run_settings(8, 40))
