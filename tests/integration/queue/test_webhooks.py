"""Webhook deliveries through the real queue: Redis broker, a real store, an embedded worker,
and a receiver on 127.0.0.1 that checks every signature with standardwebhooks' own verifier.

A receiver on 127.0.0.1 is what the default refuses, so the tests that deliver to it set the
local-development setting (EVALQ_WEBHOOK_ALLOW_PRIVATE); the others show the default."""

from __future__ import annotations

import logging
import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import redis
from sqlalchemy import select
from tests.support.pipeline import TASK, Pipeline, submission
from tests.support.processes import PATIENCE, free_port, wait_until
from tests.support.settings import configure
from tests.support.tls import self_signed, server_context
from tests.support.webhook_receiver import TEST_WEBHOOK_KEY, webhook_receiver

from evalq.core.errors import InvalidInput
from evalq.core.receivers import PRIVATE_RULE, UNRESOLVED_RULE
from evalq.core.webhooks import EVENT_TYPE, DeliveryInfo
from evalq.store.db import session_scope
from evalq.store.models import WebhookRow
from evalq.workers.embedded import embedded_worker

pytestmark = pytest.mark.both_databases  # the database matters here (tests/conftest.py)

ALLOW_PRIVATE = {"webhook_allow_private": "true"}
TOKEN = "tok-4f1c9a7e2b"


def settled(p: Pipeline, webhook_id: str, count: int) -> Callable[[], list[DeliveryInfo]]:
    """A predicate: the webhook's deliveries once ``count`` of them are no longer pending."""

    def check() -> list[DeliveryInfo]:
        found = p.client.webhook_deliveries(TASK.id, webhook_id)
        done = [d for d in found if d.status != "pending"]
        return found if len(done) == count else []

    return check


def redis_contents(url: str) -> str:
    """Every key and value of the test's Redis database, as one text."""
    readers: dict[str, Callable[[redis.Redis, bytes], object]] = {
        "string": lambda client, key: client.get(key),
        "list": lambda client, key: client.lrange(key, 0, -1),
        "hash": lambda client, key: client.hgetall(key),
        "set": lambda client, key: client.smembers(key),
        "zset": lambda client, key: client.zrange(key, 0, -1),
    }
    parts: list[object] = []
    with redis.Redis.from_url(url) as client:
        for key in client.scan_iter():
            read = readers.get(client.type(key).decode())
            parts += [key, read(client, key) if read else None]
    assert parts, "the broker's database is empty: nothing was checked"
    return repr(parts)


def test_a_receiver_that_fails_twice_gets_the_third_delivery_signed(
    pipeline: Callable[..., Pipeline], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    p = pipeline(webhook_key=TEST_WEBHOOK_KEY, webhook_backoff_s="0.2", **ALLOW_PRIVATE)
    with webhook_receiver(statuses=[500, 503, 204]) as receiver:
        url = f"{receiver.url}?token={TOKEN}"
        hook = p.client.add_webhook(TASK.id, {"url": url, "description": "ci"})
        receiver.secret = hook.secret
        with embedded_worker(p.app, concurrency=4):
            p.client.submit(submission("s1"))
            assert p.client.wait(["s1"], timeout=120 * PATIENCE) == {"s1": "done"}
            wait_until(settled(p, hook.id, 1), timeout=60, what="the delivery to settle")
    # three POSTs of one event: the same webhook-id each time, each signature verified
    ids = receiver.ids()
    assert len(ids) == 3 and len(set(ids)) == 1 and ids[0].startswith("msg_")
    assert [r.error for r in receiver.received] == [None, None, None]
    event = receiver.received[-1].verified
    assert event["type"] == EVENT_TYPE
    assert event["data"]["id"] == "s1" and event["data"]["status"] == "done"
    assert event["data"]["scores"]["peerread"] == p.client.get_result("s1")["scores"]["peerread"]
    assert event == receiver.received[0].verified | {"data": event["data"]}  # same envelope
    [delivery] = p.client.webhook_deliveries(TASK.id, hook.id)
    assert delivery.id == ids[0] and delivery.submission_id == "s1"
    assert delivery.status == "delivered" and delivery.attempts == 3
    assert delivery.last_status_code == 204 and delivery.last_error is None
    assert [a.status_code for a in delivery.history] == [500, 503, 204]
    assert [a.error for a in delivery.history] == ["HTTP 500", "HTTP 503", None]
    # exponential backoff with jitter: at least half of 0.2 s, then of 0.4 s, between attempts
    gaps = [
        (b.at - a.at).total_seconds()
        for a, b in zip(delivery.history, delivery.history[1:], strict=False)
    ]
    assert gaps[0] >= 0.1 and gaps[1] >= 0.2, gaps
    # the secret is in no answer after the first, no log, no Redis key or value, no stored column
    assert hook.secret not in repr(p.client.webhooks(TASK.id))
    assert hook.secret not in repr(p.client.webhook_deliveries(TASK.id, hook.id))
    assert hook.secret not in caplog.text
    # the receiver's token is in no log line either (httpx logs each request's URL at INFO)
    assert TOKEN not in caplog.text
    assert f"{receiver.url}?token=***" in caplog.text
    assert hook.secret not in redis_contents(p.redis_url)
    with session_scope(p.db_url) as session:
        stored = session.scalars(select(WebhookRow.secret_encrypted)).one()
    assert hook.secret not in stored and hook.secret.removeprefix("whsec_") not in stored


def test_hanging_and_dead_receivers_hold_up_no_evaluation(
    pipeline: Callable[..., Pipeline],
) -> None:
    p = pipeline(
        webhook_key=TEST_WEBHOOK_KEY,
        webhook_backoff_s="0.1",
        webhook_max_attempts="2",
        webhook_timeout_s="60",
        **ALLOW_PRIVATE,
    )
    ids = ["h1", "h2", "h3"]
    with webhook_receiver(hold=True, statuses=[500]) as hanging:
        slow = p.client.add_webhook(TASK.id, {"url": hanging.url})
        hanging.secret = slow.secret
        dead = p.client.add_webhook(TASK.id, {"url": f"http://127.0.0.1:{free_port()}/gone"})
        with embedded_worker(p.app, concurrency=8):
            for sid in ids:
                p.client.submit(submission(sid))
            # every evaluation ends while the hanging receiver has answered nothing at all
            assert p.client.wait(ids, timeout=120 * PATIENCE) == dict.fromkeys(ids, "done")
            assert all(d.status == "pending" for d in p.client.webhook_deliveries(TASK.id, slow.id))
            # the dead receiver's deliveries give up after their attempts, on their own
            failed = wait_until_value(settled(p, dead.id, 3), what="the dead receiver's deliveries")
            assert {d.status for d in failed} == {"failed"}
            assert {d.attempts for d in failed} == {2}
            assert all(d.last_status_code is None for d in failed)
            assert all("ConnectError" in (d.last_error or "") for d in failed)
            hanging.hold.set()  # now it answers: 500 every time
            answered = wait_until_value(settled(p, slow.id, 3), what="the hanging receiver")
    assert {d.status for d in answered} == {"failed"}
    assert {(d.attempts, d.last_status_code) for d in answered} == {(2, 500)}
    assert {d.submission_id for d in answered} == set(ids)
    assert all(r.error is None for r in hanging.received)  # each attempt was signed correctly


def test_a_removed_webhook_gets_no_events(pipeline: Callable[..., Pipeline]) -> None:
    p = pipeline(webhook_key=TEST_WEBHOOK_KEY, **ALLOW_PRIVATE)
    with webhook_receiver() as receiver:
        hook = p.client.add_webhook(TASK.id, {"url": receiver.url})
        kept = p.client.add_webhook(TASK.id, {"url": receiver.url})
        receiver.secret = kept.secret
        p.client.remove_webhook(TASK.id, hook.id)
        with embedded_worker(p.app, concurrency=4):
            p.client.submit(submission("r1"))
            p.client.wait(["r1"], timeout=120 * PATIENCE)
            wait_until(settled(p, kept.id, 1), timeout=60, what="the delivery to settle")
    assert len(receiver.received) == 1 and receiver.received[0].error is None
    assert [w.id for w in p.client.webhooks(TASK.id)] == [kept.id]


def wait_until_value(
    probe: Callable[[], list[DeliveryInfo]], *, what: str, timeout: float = 90
) -> list[DeliveryInfo]:
    """``probe()`` once it returns something non-empty."""
    found: list[list[DeliveryInfo]] = []
    wait_until(lambda: found.append(probe()) or found[-1], timeout=timeout, what=what)
    return found[-1]


def test_by_default_private_and_unresolvable_receivers_are_refused(
    pipeline: Callable[..., Pipeline],
) -> None:
    p = pipeline(webhook_key=TEST_WEBHOOK_KEY)
    with webhook_receiver() as receiver:
        port = urlsplit(receiver.url).port
        for url in [
            receiver.url,
            f"http://localhost:{port}/hooks",
            f"http://2130706433:{port}/hooks",  # 127.0.0.1 in decimal
            f"http://0x7f000001:{port}/hooks",  # ... in hex
            f"http://[::ffff:127.0.0.1]:{port}/hooks",
            "http://169.254.169.254/latest/meta-data",
        ]:
            with pytest.raises(InvalidInput) as caught:
                p.client.add_webhook(TASK.id, {"url": url})
            assert caught.value.problems == [("url", PRIVATE_RULE)], url
        with pytest.raises(InvalidInput) as unresolved:
            p.client.add_webhook(TASK.id, {"url": "https://no-such-host.invalid/hooks"})
        assert unresolved.value.problems == [("url", UNRESOLVED_RULE)]
    assert p.client.webhooks(TASK.id) == [] and receiver.connections == 0


def test_a_receiver_registered_while_allowed_is_refused_at_delivery_unconnected(
    pipeline: Callable[..., Pipeline], monkeypatch: pytest.MonkeyPatch
) -> None:
    p = pipeline(webhook_key=TEST_WEBHOOK_KEY, **ALLOW_PRIVATE)
    with webhook_receiver() as receiver:
        url = receiver.url.replace("127.0.0.1", "localhost")
        hook = p.client.add_webhook(TASK.id, {"url": url})
        configure(monkeypatch, webhook_allow_private="false")  # the worker runs on the default
        with embedded_worker(p.app, concurrency=4):
            p.client.submit(submission("p1"))
            assert p.client.wait(["p1"], timeout=120 * PATIENCE) == {"p1": "done"}
            [delivery] = wait_until_value(settled(p, hook.id, 1), what="the refused delivery")
    assert delivery.status == "failed" and delivery.attempts == 1  # refused: no retries
    assert delivery.last_error == f"url: {PRIVATE_RULE}" and delivery.last_status_code is None
    assert [a.error for a in delivery.history] == [delivery.last_error]
    assert receiver.connections == 0 and receiver.received == []


PUBLIC = "93.184.215.14"
"""A global address the rebinding test's name resolves to first (never really connected to)."""


def rebinding_network(
    monkeypatch: pytest.MonkeyPatch, name: str
) -> tuple[list[str], list[tuple[str, int]]]:
    """DNS rebinding, in this process: ``name`` resolves to `PUBLIC` the first time and to
    127.0.0.1 after that; a connection to `PUBLIC` is refused locally (nothing leaves the
    machine). Every other name and address resolves and connects as usual.

    Returns:
        The answers given for ``name``, and the connections attempted to `PUBLIC`.
    """
    answers: list[str] = []
    connects: list[tuple[str, int]] = []
    real_getaddrinfo, real_connect = socket.getaddrinfo, socket.create_connection

    def getaddrinfo(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        if host != name:
            return real_getaddrinfo(host, port, *args, **kwargs)
        answers.append("127.0.0.1" if answers else PUBLIC)
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (answers[-1], port or 0))]

    def create_connection(address: tuple[str, int], *args: Any, **kwargs: Any) -> Any:
        if address[0] != PUBLIC:
            return real_connect(address, *args, **kwargs)
        connects.append(address)
        raise ConnectionRefusedError(111, "Connection refused (the test's network)")

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    monkeypatch.setattr(socket, "create_connection", create_connection)
    return answers, connects


def test_the_delivery_connects_to_the_address_it_checked(
    pipeline: Callable[..., Pipeline], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A name that passes the check as a public address, then resolves to 127.0.0.1 when the
    connection is made (DNS rebinding), still gets no connection to 127.0.0.1."""
    p = pipeline(webhook_key=TEST_WEBHOOK_KEY, webhook_max_attempts="1", **ALLOW_PRIVATE)
    with webhook_receiver() as receiver:
        port = urlsplit(receiver.url).port
        assert port is not None
        hook = p.client.add_webhook(TASK.id, {"url": f"http://rebind.test:{port}/hooks/evalq"})
        configure(monkeypatch, webhook_allow_private="false")
        answers, connects = rebinding_network(monkeypatch, "rebind.test")
        with embedded_worker(p.app, concurrency=4):
            p.client.submit(submission("d1"))
            assert p.client.wait(["d1"], timeout=120 * PATIENCE) == {"d1": "done"}
            [delivery] = wait_until_value(settled(p, hook.id, 1), what="the delivery to settle")
    assert answers == [PUBLIC]  # resolved once, checked, and that address connected to
    assert connects == [(PUBLIC, port)]
    assert receiver.connections == 0 and receiver.received == []
    assert delivery.status == "failed" and "ConnectError" in (delivery.last_error or "")


def test_an_https_receiver_is_verified_against_its_name_not_the_address(
    pipeline: Callable[..., Pipeline], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The POST connects to the checked address, yet TLS checks the certificate against the
    URL's name (sent as SNI) and the Host header is the name."""
    cert, key = self_signed(tmp_path, "localhost")
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))  # trust the receiver's certificate
    server_names: list[str] = []
    p = pipeline(webhook_key=TEST_WEBHOOK_KEY, **ALLOW_PRIVATE)
    with webhook_receiver(tls=server_context(cert, key, server_names)) as receiver:
        port = urlsplit(receiver.url).port
        url = f"https://localhost:{port}/hooks/evalq"
        hook = p.client.add_webhook(TASK.id, {"url": url})
        receiver.secret = hook.secret
        with embedded_worker(p.app, concurrency=4):
            p.client.submit(submission("tls1"))
            assert p.client.wait(["tls1"], timeout=120 * PATIENCE) == {"tls1": "done"}
            [delivery] = wait_until_value(settled(p, hook.id, 1), what="the delivery to settle")
    assert delivery.status == "delivered" and delivery.last_error is None, delivery.last_error
    [received] = receiver.received
    assert received.error is None and received.headers["host"] == f"localhost:{port}"
    assert server_names == ["localhost"]
