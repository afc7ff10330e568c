"""The HTTP server's life cycle: a server stopped at any moment of its start ends quietly."""

from __future__ import annotations

import socket
import threading

from gluecat.serving.http import HttpServer, Request, Response


def listening() -> socket.socket:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    return sock


def answer(request: Request) -> Response:
    return Response(200, b"ok\n")


def test_a_server_stopped_before_it_runs_serves_nothing_and_leaves_its_socket_closed() -> None:
    server = HttpServer(listening(), answer)
    server.stop()
    server.serve_forever()  # returns at once, without touching the closed socket
    assert server.sock.fileno() == -1


def test_a_server_stopped_while_its_thread_starts_ends_without_an_error() -> None:
    # stop() used to close the socket between serve_forever's check and its first use of the socket
    # (EBADF in the server's thread); each round here stops a server while its thread starts.
    for _ in range(200):
        server = HttpServer(listening(), answer)
        failures: list[BaseException] = []

        def run(server: HttpServer = server, failures: list[BaseException] = failures) -> None:
            try:
                server.serve_forever()
            except BaseException as e:
                failures.append(e)

        thread = threading.Thread(target=run)
        thread.start()
        server.stop()
        thread.join(timeout=10)
        assert not thread.is_alive()
        assert failures == []
