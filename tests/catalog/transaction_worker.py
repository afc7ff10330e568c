"""A process that runs Lake Formation transactions on a warehouse, for tests/catalog/test_transaction_processes.py.

python -m tests.catalog.transaction_worker mix WAREHOUSE WORKER COUNT SEED
    COUNT transactions, each adding and deleting objects in one or two of a few partitions of db.t;
    prints one JSON line per transaction: its id, how it ended (COMMITTED, ABORTED by a conflict at
    commit, REFUSED when a write was refused and it was canceled) and its writes.
python -m tests.catalog.transaction_worker crash WAREHOUSE LOG
    transactions adding OBJECTS objects each, until killed; before each commit it appends the
    transaction's id and objects to LOG (synced), so that whoever kills it knows what may have landed.
"""

from __future__ import annotations

import json
import os
import random
import sys
from typing import Any

from botocore.exceptions import ClientError

from gluecat import LakeFormation

PARTITIONS = ["1", "2", "3", "4"]
OBJECTS = 5


def mix(warehouse: str, worker: int, count: int, seed: int) -> None:
    lf = LakeFormation(warehouse, fsync=False)
    rng = random.Random(seed * 1000 + worker)
    for i in range(count):
        tx = lf.start_transaction()["TransactionId"]
        ops: list[list[str]] = []
        for partition in rng.sample(PARTITIONS, rng.choice([1, 1, 2])):
            seen = lf.get_table_objects(
                DatabaseName="db", TableName="t", TransactionId=tx, PartitionPredicate=f"k = {partition}"
            )["Objects"]
            held = [o["Uri"] for group in seen for o in group["Objects"]]
            for uri in rng.sample(held, min(len(held), rng.choice([0, 1, 2]))):
                ops.append(["delete", partition, uri])
            for n in range(rng.choice([1, 2, 3])):
                ops.append(["add", partition, f"s3://lake/t/w{worker}-{i}-{n}"])
        outcome = "COMMITTED"
        try:
            lf.update_table_objects(
                DatabaseName="db", TableName="t", TransactionId=tx, WriteOperations=[_op(*op) for op in ops]
            )
        except ClientError as e:
            # Checked against the objects as they are now: another commit since this transaction's
            # start deleted one of them (a concurrent modification), or the call adds one Uri to two
            # partitions (its own mistake, InvalidInputException).
            code = e.response["Error"]["Code"]
            assert code == "ConcurrentModificationException" or "already holds" in str(e), e
            lf.cancel_transaction(TransactionId=tx)
            outcome = "REFUSED"
        if outcome == "COMMITTED":
            try:
                assert lf.commit_transaction(TransactionId=tx)["TransactionStatus"] == "COMMITTED"
            except ClientError as e:
                assert e.response["Error"]["Code"] == "ConcurrentModificationException", e
                outcome = "ABORTED"
        print(json.dumps({"tx": tx, "status": outcome, "ops": ops}), flush=True)


def _op(kind: str, partition: str, uri: str) -> dict[str, Any]:
    if kind == "add":
        return {"AddObject": {"Uri": uri, "ETag": "e", "Size": 1, "PartitionValues": [partition]}}
    return {"DeleteObject": {"Uri": uri, "PartitionValues": [partition]}}


def crash(warehouse: str, log_path: str) -> None:
    lf = LakeFormation(warehouse)
    with open(log_path, "a") as log:
        print("ready", flush=True)
        for i in range(1_000_000):
            tx = lf.start_transaction()["TransactionId"]
            uris = [f"s3://lake/t/{tx}-{n}" for n in range(OBJECTS)]
            lf.update_table_objects(
                DatabaseName="db",
                TableName="t",
                TransactionId=tx,
                WriteOperations=[_op("add", PARTITIONS[i % len(PARTITIONS)], u) for u in uris],
            )
            log.write(json.dumps({"tx": tx, "uris": uris}) + "\n")
            log.flush()
            os.fsync(log.fileno())
            lf.commit_transaction(TransactionId=tx)


if __name__ == "__main__":
    if sys.argv[1] == "mix":
        mix(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]))
    else:
        crash(sys.argv[2], sys.argv[3])
