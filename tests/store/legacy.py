"""Warehouses as gluecat made them before format 6, for tests of reading and upgrading them: every
table's partitions and records in the root log (no layout record in version 0)."""

from __future__ import annotations

import json
import os
import secrets
import uuid
from datetime import UTC, datetime

from gluecat.store import codec, layout


def legacy_warehouse(path: str) -> str:
    """A new warehouse at ``path`` whose version 0 is a format 3 entry, as gluecat 0.x wrote it: commits
    made to it afterwards keep every table in the root log, as they always did."""
    for d in (layout.LOG_DIR, layout.DATA_DIR, layout.CHECKPOINT_DIR):
        os.makedirs(os.path.join(path, d), exist_ok=True)
    genesis = {
        "format": 3,
        "version": 0,
        "commit_id": uuid.uuid4().hex,
        "timestamp_us": codec.to_micros(datetime.now(UTC)),
        "operation": "CreateWarehouse",
        "actions": [],
        "secret": secrets.token_hex(32),
    }
    with open(os.path.join(path, layout.log_path(0)), "w") as f:
        json.dump(genesis, f)
    return path
