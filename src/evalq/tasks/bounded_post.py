"""One POST to a webhook receiver that the receiver cannot hold up or flood.

HTTP clients time each socket operation: a receiver that trickles its answer a byte every few
seconds never trips a read timeout, and one that streams gigabytes is read whole by a client
that reads the body. Here every socket operation of the POST (connect, TLS handshake, each
write and read) gets at most what is left of one total deadline, and at most ``max_bytes`` of
the answer are ever read: the status line and headers. The body is never read; the connection
is closed once the status is known. Enforced in the code of the delivery, not by the worker's
pool, so it holds on prefork, threads and solo alike (Celery's threads pool has no time limit).
"""

from __future__ import annotations

import time
import typing
from dataclasses import dataclass

import httpcore
import httpx

from evalq.core.receivers import IPAddress


class DeadlinePassed(httpcore.TimeoutException):
    """The receiver did not answer within the delivery's total deadline."""


class AnswerTooLarge(httpcore.ReadError):
    """The receiver's answer head (status line and headers) is longer than evalq reads."""


@dataclass
class Budget:
    """What one POST may still spend: time until ``deadline`` and bytes read of the answer."""

    deadline: float
    """`time.monotonic` at which the POST fails, whatever it is doing."""
    limit_s: float
    max_bytes: int
    read: int = 0

    def timeout(self, asked: float | None) -> float:
        """The timeout of the next socket operation: what is left, never more than ``asked``."""
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise DeadlinePassed(f"no complete answer within {self.limit_s:g} s")
        return left if asked is None else min(asked, left)

    def take(self, asked: int) -> int:
        """How many bytes the next read may take (at most ``asked``)."""
        left = self.max_bytes - self.read
        if left <= 0:
            raise AnswerTooLarge(f"the answer's head is longer than {self.max_bytes} bytes")
        return min(asked, left)


class BoundedStream(httpcore.NetworkStream):
    """A connection whose every operation is held to the POST's `Budget`."""

    def __init__(self, stream: httpcore.NetworkStream, budget: Budget) -> None:
        self.stream = stream
        self.budget = budget

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        """Read what arrived, at most what the budget leaves, within the time it leaves."""
        size = self.budget.take(max_bytes)
        try:
            data = self.stream.read(size, self.budget.timeout(timeout))
        except httpcore.ReadTimeout:
            self.budget.timeout(0)  # past the deadline: say so, not "timed out"
            raise
        self.budget.read += len(data)
        return data

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        """Write ``buffer`` within the time left."""
        self.stream.write(buffer, self.budget.timeout(timeout))

    def close(self) -> None:
        """Close the connection."""
        self.stream.close()

    def start_tls(
        self,
        ssl_context: typing.Any,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.NetworkStream:
        """The TLS connection over this one, held to the same budget."""
        wrapped = self.stream.start_tls(ssl_context, server_hostname, self.budget.timeout(timeout))
        return BoundedStream(wrapped, self.budget)

    def get_extra_info(self, info: str) -> typing.Any:
        """As the wrapped connection answers."""
        return self.stream.get_extra_info(info)


class BoundedBackend(httpcore.NetworkBackend):
    """httpcore's own sockets, each connection held to one `Budget`."""

    def __init__(self, budget: Budget) -> None:
        self.budget = budget
        self.backend = httpcore.SyncBackend()

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: typing.Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.NetworkStream:
        """Connect within the time left."""
        stream = self.backend.connect_tcp(
            host, port, self.budget.timeout(timeout), local_address, socket_options
        )
        return BoundedStream(stream, self.budget)

    def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: typing.Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.NetworkStream:  # pragma: no cover - receivers are URLs
        """Never used: a receiver is an http(s) URL."""
        raise httpcore.UnsupportedProtocol("webhook receivers are reached over TCP only")

    def sleep(self, seconds: float) -> None:  # pragma: no cover - no retries are configured
        """Wait, as httpcore's retries would (none are configured)."""
        time.sleep(seconds)


POST_ERRORS = (httpcore.TimeoutException, httpcore.NetworkError, httpcore.ProtocolError)
"""What a POST may raise about the receiver or the network (httpcore's own classes)."""


def post_pinned(
    url: str,
    addresses: list[IPAddress],
    body: str,
    headers: dict[str, str],
    *,
    limit_s: float,
    max_bytes: int,
) -> int:
    """POST to ``url`` over a connection to one of ``addresses``; the answer's status.

    The whole POST, every address tried included, ends within ``limit_s`` seconds
    (`DeadlinePassed`), and at most ``max_bytes`` of the answer are read (`AnswerTooLarge`).
    Redirects are never followed. The addresses are tried in order, the next one only when
    connecting to one fails; the Host header and TLS server name are the URL's host.
    """
    budget = Budget(time.monotonic() + limit_s, limit_s, max_bytes)
    target = httpx.URL(url)
    head = [*headers.items(), ("host", target.netloc.decode("ascii"))]
    extensions = {"sni_hostname": target.raw_host.decode("ascii")}  # TLS: the name, not the IP
    tls = httpx.create_ssl_context() if target.scheme == "https" else None
    content = body.encode()
    with httpcore.ConnectionPool(ssl_context=tls, network_backend=BoundedBackend(budget)) as pool:

        def post(address: IPAddress) -> int:
            pinned = target.copy_with(host=str(address))
            where = httpcore.URL(
                scheme=pinned.raw_scheme,
                host=pinned.raw_host,
                port=pinned.port,
                target=pinned.raw_path,
            )
            with pool.stream(
                "POST", where, headers=head, content=content, extensions=extensions
            ) as response:
                return response.status  # the body is never read: closing drops the connection

        *others, last = addresses
        for address in others:
            try:
                return post(address)
            except httpcore.ConnectError:
                continue
        return post(last)
