"""The patterns the OpenAPI document states agree with the checks the code makes: every value a
pattern allows, the code accepts (a schema-valid request is never refused for a hidden rule)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalq.core.errors import InvalidInput
from evalq.core.webhooks import URL_PATTERN, is_http_url
from evalq.read.compare import BY_PATTERN, TASKS_PATTERN, check_by


@settings(max_examples=1000)
@given(st.from_regex(URL_PATTERN, fullmatch=True))
def test_every_url_the_pattern_allows_is_a_webhook_url(url: str) -> None:
    assert is_http_url(url)


@settings(max_examples=500)
@given(st.from_regex(BY_PATTERN, fullmatch=True) | st.text(max_size=80))
def test_the_by_pattern_is_the_by_rule(by: str) -> None:
    allowed = re.fullmatch(BY_PATTERN, by) is not None
    try:
        check_by(by)
    except InvalidInput:
        assert not allowed, by
    else:
        assert allowed, by


@pytest.mark.parametrize(
    ("tasks", "allowed"),
    [
        ("a1", True),
        ("a1,arena-*", True),
        ("a1, b2", True),
        ("", False),
        ("a1,", False),
        (" , a1", False),
        (",", False),
    ],
)
def test_the_tasks_pattern_refuses_empty_names(tasks: str, allowed: bool) -> None:
    assert (re.fullmatch(TASKS_PATTERN, tasks) is not None) is allowed


@pytest.mark.parametrize("url", ["HTTP://0.0.0.00", "http://1.2.3", "http://256.1.1.1/"])
def test_the_url_pattern_refuses_a_numeric_host_that_is_no_address(url: str) -> None:
    # a little narrower than the code, never wider: "0.0.0.00" is one httpx cannot send to
    assert re.fullmatch(URL_PATTERN, url) is None
    assert url != "HTTP://0.0.0.00" or not is_http_url(url)
