"""The sign-in form's origin check: a post from another site's page is told apart by its headers."""

from __future__ import annotations

import pytest
from starlette.datastructures import Headers

from evalq.ui.security import posted_from_here


@pytest.mark.parametrize(
    ("host", "sent"),
    [
        ("127.0.0.1:8000", {"origin": "http://127.0.0.1:8000"}),
        ("evalq.example", {"origin": "https://evalq.example"}),  # TLS ended by a proxy
        ("evalq.example:443", {"origin": "https://EVALQ.example"}),
        ("evalq.example", {"referer": "https://evalq.example/ui/login?next=%2F"}),
        ("evalq.example", {}),  # not a browser: the form's token decides
    ],
)
def test_a_post_from_this_site_passes(host: str, sent: dict[str, str]) -> None:
    assert posted_from_here(Headers({"host": host, **sent}))


@pytest.mark.parametrize(
    "sent",
    [
        {"origin": "https://attacker.example"},
        {"origin": "https://team.evalq.example"},  # a sibling subdomain could toss a cookie
        {"origin": "https://evalq.example:8443"},
        {"origin": "null"},  # a sandboxed frame or a data: page
        {"referer": "https://attacker.example/evalq.example"},
        {"origin": "https://attacker.example", "referer": "https://evalq.example/"},
        {"referer": "javascript:evalq.example"},
    ],
)
def test_a_post_from_another_origin_is_refused(sent: dict[str, str]) -> None:
    assert not posted_from_here(Headers({"host": "evalq.example", **sent}))
