"""The pure parts of webhooks: the URL rule, the stable event id, the envelope, the key."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from evalq.core.errors import InvalidInput
from evalq.core.settings import Settings
from evalq.core.webhooks import (
    EVENT_TYPE,
    URL_RULE,
    envelope,
    is_http_url,
    message_id,
    parse_webhook_request,
    shown_url,
)


@pytest.mark.parametrize(
    "url",
    [
        "https://hooks.example.com/evalq",
        "http://127.0.0.1:8080/hook?token=abc",
        "https://[2001:db8::1]:8443/x",
        "http://localhost/",
    ],
)
def test_http_urls_with_a_host_are_accepted(url: str) -> None:
    assert is_http_url(url)
    assert parse_webhook_request({"url": url}).url == url


@pytest.mark.parametrize(
    "url",
    [
        "ftp://hooks.example.com/",
        "file:///etc/passwd",
        "gopher://127.0.0.1:6379/_FLUSHALL",
        "//hooks.example.com/x",
        "http:///path-only",
        "https://hooks.example.com/#frag",
        "http://hooks.example.com:0/",
        "http://[::1/",
        "http://a b/",
        "http://ex\u00e4mple..com/",  # not a valid IDNA name
        "",
    ],
)
def test_other_urls_are_refused_naming_url(url: str) -> None:
    assert not is_http_url(url)
    with pytest.raises(InvalidInput) as caught:
        parse_webhook_request({"url": url})
    assert caught.value.problems == [("url", URL_RULE)]


def test_a_url_with_a_nul_is_refused_naming_url_and_the_nul_rule() -> None:
    # urlsplit takes it, httpx (which POSTs) does not; PostgreSQL cannot store it (issue 45)
    assert not is_http_url("http://a\x00b/")
    with pytest.raises(InvalidInput) as caught:
        parse_webhook_request({"url": "http://a\x00b/"})
    assert caught.value.problems == [("url", "string must not contain NUL characters")]


def test_the_event_id_is_stable_per_webhook_submission_and_outcome() -> None:
    first = message_id("wh_1", "s1", "done")
    assert first == message_id("wh_1", "s1", "done") and first.startswith("msg_")
    others = {message_id("wh_2", "s1", "done"), message_id("wh_1", "s2", "done")}
    others.add(message_id("wh_1", "s1", "degraded"))
    assert first not in others and len(others) == 3


def test_the_envelope_carries_the_result_and_the_event_time() -> None:
    at = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
    body = envelope({"id": "s1", "status": "done"}, timestamp=at)
    assert body == {
        "type": EVENT_TYPE,
        "timestamp": "2026-12-01T12:00:00+00:00",
        "data": {"id": "s1", "status": "done"},
    }


@pytest.mark.parametrize(
    "key", ["short", "A" * 44, "not base64 at all, but forty-four chars long!"]
)
def test_a_webhook_key_that_is_not_a_fernet_key_is_refused(key: str) -> None:
    with pytest.raises(ValueError, match="webhook_key"):
        Settings(webhook_key=key)


def test_several_keys_rotate() -> None:
    old, new = "a" * 43 + "=", "b" * 43 + "="
    assert Settings(webhook_key=f"{new}, {old}").webhook_key is not None


def test_a_listed_receiver_shows_no_credentials() -> None:
    assert shown_url("https://ci:hunter22@hooks.example/evalq?token=abc&v=2&flag") == (
        "https://***@hooks.example/evalq?token=***&v=***&flag"
    )
    assert shown_url("http://127.0.0.1:9000/hook") == "http://127.0.0.1:9000/hook"
