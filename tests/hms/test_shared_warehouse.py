"""Hive Metastore clients (hmsclient, binary Thrift on TCP) of two `gluecat serve` processes on one S3
warehouse, as behind a load balancer: each server's answer takes in what the other committed, and
clients adding the same partitions at once through different servers add each one exactly once."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from hmsclient import hmsclient
from hmsclient.genthrift.hive_metastore import ttypes

from tests.aws_wire import make_credentials, sales_orders, serve_processes
from tests.object_stores.fixtures import use

pytestmark = pytest.mark.slow


def test_hive_clients_of_two_servers_on_one_s3_warehouse(
    moto_bucket: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    warehouse = use(monkeypatch, moto_bucket)
    lake = sales_orders(warehouse, f"{moto_bucket.url}/lake/orders")
    lake.close()
    with serve_processes(
        warehouse, make_credentials(tmp_path / "users"), 2, tmp_path, thrift=True
    ) as servers:
        ports = [s.thrift_port for s in servers]
        with (
            hmsclient.HMSClient(host="127.0.0.1", port=ports[0]) as a,
            hmsclient.HMSClient(host="127.0.0.1", port=ports[1]) as b,
        ):
            for i, (writer, reader) in enumerate([(a, b), (b, a), (a, b)]):
                writer.add_partition(writer.get_table("sales", "orders"), [f"2024-01-0{i + 1}"])
                listed = reader.get_partitions("sales", "orders", -1)
                assert sorted(p.values[0] for p in listed) == [f"2024-01-0{j + 1}" for j in range(i + 1)]

        values = [f"2024-02-{d:02d}" for d in range(1, 21)]
        together = threading.Barrier(2)

        def add_every_one(port: int) -> list[str]:
            added = []
            with hmsclient.HMSClient(host="127.0.0.1", port=port) as client:
                table = client.get_table("sales", "orders")
                together.wait(timeout=60)
                for value in values:
                    try:
                        client.add_partition(table, [value])
                    except ttypes.AlreadyExistsException:
                        continue
                    added.append(value)
            return added

        with ThreadPoolExecutor(2) as pool:
            added = list(pool.map(add_every_one, ports))
        assert sorted(added[0] + added[1]) == values, added  # each once: never both, never neither
        for port in ports:
            with hmsclient.HMSClient(host="127.0.0.1", port=port) as client:
                assert len(client.get_partitions("sales", "orders", -1)) == 3 + len(values)
