"""``python -m gluecat.spark.bridge``: the Python catalog of a JVM-only Spark process (spark-sql, spark-shell).

Started by the shim (io.gluecat.spark.Bridge) with the Py4J port, the per-process secret, the catalog's options
and its key in its environment. It connects back to the JVM on 127.0.0.1, opens its callback server, registers a
Backend for the catalog (a warehouse, or a catalog service over the Glue API: gluecat.spark.catalogs), and
serves until its stdin (a pipe from the JVM) closes, that is until the JVM is gone.
"""

from __future__ import annotations

import json
import os
import sys

from py4j.java_gateway import CallbackServerParameters, GatewayParameters, JavaGateway, JavaObject

from gluecat.spark.backend import Backend
from gluecat.spark.catalogs import open_catalog


def main() -> int:
    port = int(os.environ["GLUECAT_BRIDGE_PORT"])
    secret = os.environ["GLUECAT_BRIDGE_SECRET"]
    options = json.loads(os.environ["GLUECAT_CATALOG"])
    key = os.environ["GLUECAT_KEY"]
    backend = Backend(open_catalog(options))  # before connecting: a catalog that cannot open says why
    gateway = JavaGateway(
        gateway_parameters=GatewayParameters(
            address="127.0.0.1", port=port, auth_token=secret, auto_convert=True
        ),
        callback_server_parameters=CallbackServerParameters(
            address="127.0.0.1", port=0, auth_token=secret, daemonize=True, daemonize_connections=True
        ),
    )
    callback_port = gateway.get_callback_server().get_listening_port()
    # The JVM built its callback client for port 0; point it at the port this process actually got.
    server = JavaObject("GATEWAY_SERVER", gateway._gateway_client)
    server.resetCallbackClient(server.getCallbackClient().getAddress(), callback_port)
    gateway.jvm.io.gluecat.spark.Registry.register(key, backend)
    print(f"gluecat bridge: serving {key} (pid {os.getpid()})", flush=True)
    sys.stdin.read()  # EOF when the JVM exits
    gateway.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
