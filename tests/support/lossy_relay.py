"""A TCP relay to a local server that loses the answer to the first request it carries.

The first connection's request reaches the server whole, the server answers, and the relay
closes the connection without passing the answer on: what a client sees when a network drops a
reply, after the server acted. Later connections are relayed both ways untouched.
"""

from __future__ import annotations

import contextlib
import socket
import threading


class LossyRelay:
    """Listens on 127.0.0.1:``port`` and relays to 127.0.0.1:``target``."""

    def __init__(self, target: int) -> None:
        self.target = target
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = int(self.listener.getsockname()[1])
        self.connections = 0
        self.lost_answers: list[bytes] = []
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def close(self) -> None:
        self.listener.close()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:  # closed
                return
            self.connections += 1
            upstream = socket.create_connection(("127.0.0.1", self.target))
            if self.connections == 1:
                threading.Thread(target=self._lose_answer, args=(conn, upstream)).start()
            else:
                for source, sink in ((conn, upstream), (upstream, conn)):
                    threading.Thread(target=_pipe, args=(source, sink), daemon=True).start()

    def _lose_answer(self, conn: socket.socket, upstream: socket.socket) -> None:
        with conn, upstream:
            upstream.sendall(_one_request(conn))
            self.lost_answers.append(upstream.recv(65536))  # the server has answered


def _one_request(conn: socket.socket) -> bytes:
    """One HTTP/1.1 request with a Content-Length body, read whole."""
    data = b""
    while b"\r\n\r\n" not in data:
        data += conn.recv(65536)
    head, _, body = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    while len(body) < length:
        body += conn.recv(65536)
    return head + b"\r\n\r\n" + body


def _pipe(source: socket.socket, sink: socket.socket) -> None:
    try:
        while chunk := source.recv(65536):
            sink.sendall(chunk)
    except OSError:
        pass
    finally:
        for end in (source, sink):
            with contextlib.suppress(OSError):
                end.shutdown(socket.SHUT_RDWR)
