"""The secret redaction: which secrets it knows from Settings, what it replaces, what it leaves."""

from __future__ import annotations

import base64
import io
import logging

import pytest

from evalq.core.redact import (
    MARKER,
    MIN_SECRET_CHARS,
    RedactingFilter,
    Redactor,
    install_log_redaction,
    redact_url,
)
from evalq.core.settings import Settings

KEY = "sk-judge-key-0123456789"
SETTINGS = Settings(
    judge_api_key=KEY,
    judge_base_url="https://proxy-user:url-pass-4242@llm.example/v1?api_key=query-key-777&v=2",
    database_url="postgresql+psycopg://evalq:db%40pass-9999@db:5432/evalq",
    broker_url="redis://:broker-pass-31337@redis:6379/0",
    result_backend="redis://backend-token-5555@redis:6379/1",
    flower_password="flower-pass-2024",
)


@pytest.mark.parametrize(
    "secret",
    [
        KEY,
        "url-pass-4242",
        "query-key-777",
        "db%40pass-9999",  # as written in the URL
        "db@pass-9999",  # as a driver would print it
        "broker-pass-31337",
        "backend-token-5555",  # a lone user name is a token
        "flower-pass-2024",
        base64.b64encode(b"proxy-user:url-pass-4242").decode(),  # what basic auth sends
    ],
)
def test_every_configured_secret_is_replaced_in_free_text(secret: str) -> None:
    text = f"upstream said: invalid credential '{secret}' (request 12)"
    assert (
        Redactor.of(SETTINGS).text(text)
        == f"upstream said: invalid credential '{MARKER}' (request 12)"
    )


def test_what_is_not_a_secret_stays() -> None:
    redactor = Redactor.of(SETTINGS)
    text = "evalq user proxy-user on db:5432 with v=2; mail ops@example.com"
    assert redactor.text(text) == text  # user names beside a password, hosts, other params


def test_the_userinfo_of_any_url_is_replaced_even_unconfigured_and_short() -> None:
    text = "connecting to redis://:pw@other:6379/0 and https://u:p@h/x failed"
    assert Redactor().text(text) == (
        f"connecting to redis://{MARKER}@other:6379/0 and https://{MARKER}@h/x failed"
    )


def test_short_and_empty_secrets_are_not_searched_for() -> None:
    settings = Settings(judge_api_key="", flower_password="evalq", broker_url="redis://:ab@r/0")
    redactor = Redactor.of(settings)
    assert redactor.secrets == ()
    text = "evalq ran: ab testing, tab, grab"
    assert redactor.text(text) == text
    assert len("evalq") < MIN_SECRET_CHARS


def test_a_secret_that_contains_another_is_replaced_whole() -> None:
    redactor = Redactor(("secret-part", "secret-part-and-more"))
    assert redactor.text("x secret-part-and-more y") == f"x {MARKER} y"


def test_data_is_redacted_in_every_string_keys_included() -> None:
    redactor = Redactor.of(SETTINGS)
    data = {"errors": [{"message": f"bad {KEY}"}], KEY: 1, "n": 2.5, "ok": None}
    assert redactor.data(data) == {
        "errors": [{"message": f"bad {MARKER}"}],
        MARKER: 1,
        "n": 2.5,
        "ok": None,
    }


def test_a_url_shown_or_used_as_a_key_loses_userinfo_and_query_values() -> None:
    assert redact_url(SETTINGS.judge_base_url or "") == (
        f"https://{MARKER}@llm.example/v1?api_key={MARKER}&v={MARKER}"
    )
    plain = "http://127.0.0.1:8080/v1"
    assert redact_url(plain) == plain  # unchanged, so existing cache keys stay valid


def test_the_log_filter_redacts_message_arguments_and_traceback() -> None:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.addFilter(RedactingFilter(Redactor.of(SETTINGS)))
    logger = logging.getLogger("evalq.test_redact")
    logger.addHandler(handler)
    logger.propagate = False
    try:
        try:
            raise RuntimeError(f"refused {KEY}")
        except RuntimeError:
            logger.exception("task failed with %s at %s", KEY, "redis://:x@h/0")
    finally:
        logger.removeHandler(handler)
    written = stream.getvalue()
    assert KEY not in written
    assert f"task failed with {MARKER} at redis://{MARKER}@h/0" in written
    assert f"RuntimeError: refused {MARKER}" in written  # the traceback is there, redacted


def _formatted(formatter: logging.Formatter, msg: str, args: tuple[object, ...]) -> str:
    """What ``formatter`` writes for one INFO record once the redacting filter has seen it."""
    record = logging.LogRecord("uvicorn.access", logging.INFO, __file__, 1, msg, args, None)
    assert RedactingFilter(Redactor.of(SETTINGS)).filter(record)
    return formatter.format(record)


def test_the_log_filter_keeps_the_arguments_uvicorn_access_lines_are_made_of() -> None:
    from uvicorn.logging import AccessFormatter

    access = AccessFormatter('%(client_addr)s - "%(request_line)s" %(status_code)s')
    template = '%s - "%s %s HTTP/%s" %d'
    clean = ("127.0.0.1:5000", "GET", "/v1/tasks", "1.1", 200)
    assert _formatted(access, template, clean) == '127.0.0.1:5000 - "GET /v1/tasks HTTP/1.1" 200 OK'
    secret = ("127.0.0.1:5000", "GET", f"/v1/x?q={KEY}", "1.1", 401)
    line = _formatted(access, template, secret)
    assert line == f'127.0.0.1:5000 - "GET /v1/x?q={MARKER} HTTP/1.1" 401 Unauthorized'


def test_a_secret_the_arguments_cannot_hide_collapses_the_record() -> None:
    class Holder:  # not a string: its text appears only when the message is formatted
        def __str__(self) -> str:
            return f"holder of {KEY}"

    plain = logging.Formatter("%(message)s")
    assert _formatted(plain, "got %s", (Holder(),)) == f"got holder of {MARKER}"
    half = len(KEY) // 2  # a secret split between the template and an argument
    assert _formatted(plain, "key " + KEY[:half] + "%s", (KEY[half:],)) == f"key {MARKER}"


def test_installing_twice_leaves_one_filter_per_handler() -> None:
    handler = logging.StreamHandler(io.StringIO())
    logging.root.addHandler(handler)
    try:
        install_log_redaction(SETTINGS)
        install_log_redaction(SETTINGS)
        assert sum(isinstance(f, RedactingFilter) for f in handler.filters) == 1
    finally:
        logging.root.removeHandler(handler)


def test_the_redactor_never_shows_its_secrets() -> None:
    assert KEY not in repr(Redactor.of(SETTINGS))
