"""The gateway's readiness probe: a port that answers something other than HTTP is "not
ready yet", so the launcher goes on to report why the gateway did not come up instead of
dying with a traceback from http.client."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from services.launcher.probes import HttpReady


@contextmanager
def _answering(reply: bytes) -> Iterator[int]:
    """A TCP server on 127.0.0.1 that writes `reply` to each connection and closes it."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    server.settimeout(0.2)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            with conn:
                conn.recv(4096)
                conn.sendall(reply)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield int(server.getsockname()[1])
    finally:
        stop.set()
        thread.join(timeout=2)
        server.close()


def test_a_port_that_answers_http_200_is_ready() -> None:
    with _answering(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok") as port:
        assert HttpReady().ready("127.0.0.1", port) is True


def test_a_port_that_answers_binary_frames_is_not_ready_rather_than_an_error() -> None:
    # What a gRPC server writes first: an HTTP/2 SETTINGS frame.
    frames = b"\x00\x00\x12\x04\x00\x00\x00\x00\x00\x00\x03\x7f\xff\xff\xff\x00\x04\x00@\x00\x00"
    with _answering(frames) as port:
        assert HttpReady().ready("127.0.0.1", port) is False


def test_a_port_nobody_listens_on_is_not_ready() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = int(probe.getsockname()[1])
    assert HttpReady().ready("127.0.0.1", port) is False
