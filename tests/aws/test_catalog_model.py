"""The model test of tests/catalog/test_catalog_model.py with its second Catalog behind the AWS endpoint:
that Catalog's calls are boto3's, over HTTPS to ``gluecat serve``'s endpoint serving a Catalog of its own
on the warehouse, so every read through it passes the endpoint's reply cache while the test's other
Catalog writes, and every write through it is one the other Catalog must see at once.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis.stateful import precondition, rule, run_state_machine_as_test

from gluecat import Catalog
from tests.aws_wire import Credentials, Served
from tests.catalog import test_catalog_model as model

SERVING: dict[str, Any] = {}
"""The users file and certificate the served Catalogs use (the package's fixtures)."""


class Through:
    """A boto3 Glue client of a served Catalog; a few of the model's steps reach into the Catalog itself
    (its own CommitPartitions, segment merges, checkpoints), as they do into the test's own."""

    def __init__(self, warehouse: str) -> None:
        self.catalog = Catalog(warehouse, fsync=False, background_merges=model.BACKGROUND)
        self.catalog.store.checkpoint_interval = 7
        self.served = Served(self.catalog, SERVING["credentials"], SERVING["certificate"])
        # The model sends empty partition values, which botocore's own checks refuse before sending.
        self.boto = self.served.client(parameter_validation=False)
        self._ctx = self.catalog._ctx
        self.store = self.catalog.store

    def __getattr__(self, name: str) -> Any:
        if name == "commit_partitions":  # gluecat's own call: no AWS operation
            return self.catalog.commit_partitions
        return getattr(self.boto, name)

    def close(self) -> None:
        self.catalog.close()


class EndpointMachine(model.CatalogMachine):
    def client(self, writer: str) -> Any:
        if writer == "other" and self.other is None:
            self.other = Through(self.warehouse)
        return super().client(writer)

    def teardown(self) -> None:
        other = self.other
        try:
            super().teardown()
        finally:
            if isinstance(other, Through):
                other.served.stop()

    @rule()
    @precondition(lambda self: self.other is not None)
    def forget_other(self) -> None:
        other = self.other
        super().forget_other()
        if isinstance(other, Through):
            other.served.stop()


@pytest.fixture
def serving(credentials: Credentials, certificate: tuple[Path, Path]) -> Iterator[None]:
    SERVING.update(credentials=credentials, certificate=certificate)
    yield
    SERVING.clear()


small_merges = model.small_merges


def test_a_catalog_behind_the_endpoint_answers_as_the_model_of_glue_does(
    serving: None, small_merges: None
) -> None:
    """A bounded, derandomized run; GLUECAT_MODEL_* as for tests/catalog/test_catalog_model.py."""
    run_state_machine_as_test(EndpointMachine, settings=model.run_settings(5, 40))
