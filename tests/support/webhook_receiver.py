"""A webhook receiver on 127.0.0.1 for tests: verifies each POST with standardwebhooks' own
`Webhook.verify`, answers as the test scripts it, and keeps every request it saw."""

from __future__ import annotations

import socket
import ssl
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from standardwebhooks import Webhook
from standardwebhooks.webhooks import WebhookVerificationError


@dataclass
class Received:
    """One POST: its headers, its body, and what verifying it with the secret gave."""

    headers: dict[str, str]
    body: bytes
    verified: Any = None
    error: str | None = None


@dataclass
class Receiver:
    """What the test controls: the secret to verify with, the answers, and what arrived.

    Attributes:
        url: where to register the webhook.
        secret: set it from the registration's answer before any event can arrive.
        statuses: the status of each successive answer; the last one repeats.
        hold: while clear, every request waits (a receiver that hangs) until it is set.
        connections: TCP connections accepted, whether or not a request followed.
    """

    url: str
    secret: str | None = None
    statuses: list[int] = field(default_factory=lambda: [204])
    hold: threading.Event = field(default_factory=threading.Event)
    received: list[Received] = field(default_factory=list)
    connections: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def answer(self, headers: dict[str, str], body: bytes) -> int:
        """Verify and record one request; the status to answer with."""
        item = Received(headers, body)
        try:
            assert self.secret is not None, "no secret set yet"
            item.verified = Webhook(self.secret).verify(body, headers)
        except (WebhookVerificationError, AssertionError) as error:
            item.error = f"{type(error).__name__}: {error}"
        with self.lock:
            self.received.append(item)
            index = min(len(self.received), len(self.statuses)) - 1
        return self.statuses[index]

    def ids(self) -> list[str]:
        """The ``webhook-id`` of each request, in arrival order."""
        with self.lock:
            return [r.headers.get("webhook-id", "") for r in self.received]


@contextmanager
def webhook_receiver(
    *,
    statuses: list[int] | None = None,
    hold: bool = False,
    tls: ssl.SSLContext | None = None,
) -> Iterator[Receiver]:
    """A threaded HTTP server on a free loopback port for the duration of the block.

    Args:
        statuses: successive answer statuses (default 204 always); the last one repeats.
        hold: make every request wait until ``receiver.hold`` is set (set on exit).
        tls: serve HTTPS with this server context (``receiver.url`` is then https://).
    """
    receiver: Receiver

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("content-length", "0")))
            receiver.hold.wait(120)
            status = receiver.answer({k.lower(): v for k, v in self.headers.items()}, body)
            self.send_response(status)
            self.send_header("content-length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:  # quiet
            pass

    class Server(ThreadingHTTPServer):
        def verify_request(self, request: Any, client_address: Any) -> bool:
            with receiver.lock:
                receiver.connections += 1
            return True

    server = Server(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    if tls is not None:
        server.socket = tls.wrap_socket(server.socket, server_side=True)
    scheme = "http" if tls is None else "https"
    receiver = Receiver(f"{scheme}://127.0.0.1:{server.server_port}/hooks/evalq")
    receiver.statuses = statuses or [204]
    if not hold:
        receiver.hold.set()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield receiver
    finally:
        receiver.hold.set()
        server.shutdown()
        server.server_close()
        thread.join(10)


TEST_WEBHOOK_KEY = "dGVzdC13ZWJob29rLWtleS0zMi1ieXRlcy1sb25nISE="
"""A Fernet key (32 bytes, URL-safe base64) for EVALQ_WEBHOOK_KEY in tests."""


@dataclass
class Hostile:
    """A receiver that answers badly on purpose, and what it managed to send."""

    url: str
    sent: int = 0
    """Bytes of its answer written before it finished or the client hung up."""
    hung_up: bool = False
    """The client closed the connection before the whole answer was written."""
    done: threading.Event = field(default_factory=threading.Event)


@contextmanager
def hostile_receiver(
    *, trickle_s: float | None = None, body_bytes: int = 0, head_bytes: int = 0
) -> Iterator[Hostile]:
    """A raw HTTP/1.1 receiver on a free loopback port that reads the request, then answers:

    - ``trickle_s``: ``204 No Content``, one byte every ``trickle_s`` seconds;
    - ``body_bytes``: ``200 OK`` and a body of that many bytes, generated as it is written
      (zeros, 64 KiB a write), never stored;
    - ``head_bytes``: ``200 OK`` and header lines of that many bytes that never end.
    """
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    hostile = Hostile(f"http://127.0.0.1:{port}/hooks/evalq")
    stop = threading.Event()

    def answer(connection: socket.socket) -> None:
        with connection:
            _read_request(connection)
            try:
                if trickle_s is not None:
                    for byte in b"HTTP/1.1 204 No Content\r\ncontent-length: 0\r\n\r\n":
                        connection.sendall(bytes([byte]))
                        hostile.sent += 1
                        if stop.wait(trickle_s):
                            return
                elif head_bytes:
                    connection.sendall(b"HTTP/1.1 200 OK\r\n")
                    line = b"x-padding: " + b"a" * 1000 + b"\r\n"
                    while hostile.sent < head_bytes and not stop.is_set():
                        connection.sendall(line)
                        hostile.sent += len(line)
                else:
                    connection.sendall(
                        f"HTTP/1.1 200 OK\r\ncontent-length: {body_bytes}\r\n\r\n".encode()
                    )
                    chunk = bytes(64 * 1024)
                    while hostile.sent < body_bytes and not stop.is_set():
                        part = chunk[: body_bytes - hostile.sent]
                        connection.sendall(part)
                        hostile.sent += len(part)
            except OSError:  # the client hung up
                hostile.hung_up = True
            finally:
                hostile.done.set()

    def serve() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                connection, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            threading.Thread(target=answer, args=(connection,), daemon=True).start()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield hostile
    finally:
        stop.set()
        thread.join(10)
        listener.close()


def _read_request(connection: socket.socket) -> None:
    """Read one request (its head, then ``content-length`` bytes of body)."""
    data = b""
    while b"\r\n\r\n" not in data:
        more = connection.recv(65536)
        if not more:
            return
        data += more
    head, _, body = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    while len(body) < length:
        more = connection.recv(65536)
        if not more:
            return
        body += more
