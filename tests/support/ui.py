"""Signing an HTTP client in to the web UI as a browser does: open the form, post it back."""

from __future__ import annotations

import re

import httpx

TOKEN = re.compile(r'name="csrf" value="([^"]+)"')


def form_token(page: str) -> str:
    """The sign-in form's token in the page's HTML."""
    found = TOKEN.search(page)
    assert found is not None, page[:500]
    return found.group(1)


def sign_in(client: httpx.Client, key: str, next_url: str = "/") -> httpx.Response:
    """Sign ``client`` in with ``key`` through the sign-in form (its cookie jar then holds the
    session); the answer to the post (303 when the key is good)."""
    token = form_token(client.get("/ui/login").text)
    data = {"api_key": key, "next": next_url, "csrf": token}
    return client.post("/ui/login", data=data, follow_redirects=False)
