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


def test_a_body_length_that_could_be_read_two_ways_is_refused() -> None:
    """Repeated Content-Lengths that differ, or one that is not plain digits (``1_0``, ``+3``, which
    Python's int takes), are 400 and reach no handler: a proxy in front reading the length another way
    would otherwise see the body as a request of its own (request smuggling)."""
    seen: list[str] = []

    def recording(request: Request) -> Response:
        seen.append(request.target)
        return Response(200, b"ok\n")

    server = HttpServer(listening(), recording)
    thread = threading.Thread(target=server.serve_forever)
    thread.start()
    try:
        for head, body in [
            (b"Content-Length: 0\r\nContent-Length: 37", b"GET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n"),
            (b"Content-Length: 1_0", b"0123456789"),
            (b"Content-Length: +3", b"abc"),
        ]:
            with socket.create_connection(server.sock.getsockname(), timeout=10) as client:
                client.sendall(b"POST /a HTTP/1.1\r\nHost: x\r\n" + head + b"\r\n\r\n" + body)
                reply = b""
                while chunk := client.recv(4096):
                    reply += chunk
            assert reply.startswith(b"HTTP/1.1 400 "), (head, reply)
        with socket.create_connection(server.sock.getsockname(), timeout=10) as client:
            client.sendall(
                b"POST /ok HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nhi"
            )
            assert client.recv(4096).startswith(b"HTTP/1.1 200 ")
        assert seen == ["/ok"]
    finally:
        server.stop()
        thread.join(timeout=10)
