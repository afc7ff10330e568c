"""The real Hive Metastore 2.3.10 that pyspark's jars contain, started on 127.0.0.1 with Derby.

gluecat uses it as the reference its endpoint is compared with (tests/hms, bench/hms.py).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from pathlib import Path
from types import TracebackType
from typing import Any

HIVE_SITE = """<?xml version="1.0"?>
<configuration>
  <property><name>javax.jdo.option.ConnectionURL</name><value>jdbc:derby:;databaseName={dir}/metastore_db;create=true</value></property>
  <property><name>datanucleus.schema.autoCreateAll</name><value>true</value></property>
  <property><name>hive.metastore.schema.verification</name><value>false</value></property>
  <property><name>hive.metastore.warehouse.dir</name><value>file://{dir}/warehouse</value></property>
  <property><name>hive.async.log.enabled</name><value>false</value></property>
</configuration>
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class ReferenceMetastore:
    """``with ReferenceMetastore(folder) as hms: hms.client()`` (binary Thrift over TCP)."""

    def __init__(self, folder: Path, *, heap: str = "1g", start_timeout: float = 120.0) -> None:
        self.folder = folder
        self.heap = heap
        self.start_timeout = start_timeout
        self.port = free_port()
        self._proc: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> ReferenceMetastore:
        import pyspark

        java = shutil.which("java")
        if java is None:
            raise RuntimeError("a JDK (java) is needed to run the Hive Metastore")
        self.folder.mkdir(parents=True, exist_ok=True)
        (self.folder / "hive-site.xml").write_text(HIVE_SITE.format(dir=self.folder))
        jars = Path(pyspark.__file__).parent / "jars"
        log = open(self.folder / "hms.log", "wb")
        self._proc = subprocess.Popen(
            [
                java,
                f"-Xmx{self.heap}",
                # Its asynchronous logging needs a jar pyspark does not ship.
                "-Dlog4j2.contextSelector=org.apache.logging.log4j.core.selector.ClassLoaderContextSelector",
                "-cp",
                f"{self.folder}{os.pathsep}{jars}/*",
                "org.apache.hadoop.hive.metastore.HiveMetaStore",
                "-p",
                str(self.port),
            ],
            cwd=self.folder,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        log.close()
        deadline = time.monotonic() + self.start_timeout
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return self
            except OSError:
                if self._proc.poll() is not None or time.monotonic() > deadline:
                    self.__exit__(None, None, None)
                    tail = (self.folder / "hms.log").read_text(errors="replace")[-2000:]
                    raise RuntimeError(f"the Hive Metastore did not start:\n{tail}") from None
                time.sleep(0.5)

    @property
    def pid(self) -> int:
        assert self._proc is not None
        return self._proc.pid

    def client(self) -> Any:
        """A ThriftHiveMetastore client on a new connection (close it with ``client._iprot.trans.close()``)."""
        from thrift.protocol import TBinaryProtocol
        from thrift.transport import TSocket, TTransport

        from gluecat.hms.gen.hive_metastore import ThriftHiveMetastore

        transport = TTransport.TBufferedTransport(TSocket.TSocket("127.0.0.1", self.port))
        transport.open()
        return ThriftHiveMetastore.Client(TBinaryProtocol.TBinaryProtocolAccelerated(transport))

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._proc is not None:
            self._proc.terminate()
            try:
                self._proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
            self._proc = None
