"""Browser sessions: signed per API key, no secret in the cookie, ended by revoking the key."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from pathlib import Path

import pytest

from evalq.store.db import session_scope
from evalq.store.keys import create_key, revoke_key
from evalq.ui.session import (
    MAX_AGE_S,
    csrf_ok,
    login_token,
    login_token_ok,
    sign_in,
    viewer_of,
)
from tests.support.databases import migrate_store

NOW = 1_800_000_000.0


@pytest.fixture
def store(tmp_path: Path) -> Iterator[str]:
    url = f"sqlite:///{tmp_path / 'evalq.db'}"
    migrate_store(url)
    yield url


def keys(url: str) -> dict[str, str]:
    with session_scope(url) as session:
        return {
            "rw": create_key(session, name="rw", scopes=["read", "write"]),
            "ro": create_key(session, name="ro", scopes=["read"]),
        }


def test_a_cookie_names_its_key_and_holds_no_secret(store: str) -> None:
    secret = keys(store)["rw"]
    with session_scope(store) as session:
        cookie = sign_in(session, api_key=secret, now=NOW)
        assert cookie is not None
        viewer = viewer_of(session, cookie, now=NOW + 60)
    assert secret not in cookie and secret[4:20] not in cookie
    assert viewer is not None and viewer.name == "rw" and viewer.scopes == ("read", "write")
    assert viewer.can("write") and csrf_ok(viewer, viewer.csrf)
    assert not csrf_ok(viewer, None) and not csrf_ok(viewer, viewer.csrf[:-1] + "x")


def test_unknown_keys_forgeries_other_keys_and_old_cookies_are_refused(store: str) -> None:
    secrets = keys(store)
    with session_scope(store) as session:
        assert sign_in(session, api_key="evq_nothing", now=NOW) is None
        cookie = sign_in(session, api_key=secrets["ro"], now=NOW)
        assert cookie is not None
        payload, signature = cookie.split(".")
        # the payload of a read key relabelled as the rw key: its signature no longer fits
        text = base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)).decode()
        relabelled = base64.urlsafe_b64encode(("rw" + text[2:]).encode()).decode().rstrip("=")
        for forged in (f"{relabelled}.{signature}", f"{payload}.{signature[::-1]}", "x", ""):
            assert viewer_of(session, forged, now=NOW) is None, forged
        assert viewer_of(session, cookie, now=NOW + MAX_AGE_S + 1) is None  # expired
        assert viewer_of(session, cookie, now=NOW - 10) is None  # from the future
        viewer = viewer_of(session, cookie, now=NOW + 1)
        assert viewer is not None and not viewer.can("write")


def test_revoking_the_key_ends_its_sessions(store: str) -> None:
    secret = keys(store)["rw"]
    with session_scope(store) as session:
        cookie = sign_in(session, api_key=secret, now=NOW)
    with session_scope(store) as session:
        revoke_key(session, name="rw")
    with session_scope(store) as session:
        assert viewer_of(session, cookie, now=NOW + 1) is None


def test_two_sessions_of_one_key_have_different_csrf_tokens(store: str) -> None:
    secret = keys(store)["rw"]
    with session_scope(store) as session:
        one = viewer_of(session, sign_in(session, api_key=secret, now=NOW), now=NOW)
        two = viewer_of(session, sign_in(session, api_key=secret, now=NOW), now=NOW)
    assert one is not None and two is not None and one.csrf != two.csrf


def test_a_posted_token_of_any_text_is_compared_not_raised_on(store: str) -> None:
    secret = keys(store)["rw"]
    with session_scope(store) as session:
        viewer = viewer_of(session, sign_in(session, api_key=secret, now=NOW), now=NOW)
    assert viewer is not None
    assert not csrf_ok(viewer, "é" * len(viewer.csrf))  # was a TypeError: a 500 for a form post


def test_the_sign_in_forms_token_is_its_pre_session_cookie() -> None:
    fresh = login_token(None)
    assert len(fresh) == 32 and login_token(None) != fresh
    assert login_token(fresh) == fresh  # a second tab keeps the first one's token
    assert login_token("short") != "short" and login_token("é" * 32) != "é" * 32
    assert login_token_ok(fresh, fresh)
    for cookie, token in ((None, fresh), (fresh, None), (fresh, ""), (fresh, "é" * 32), ("", "")):
        assert not login_token_ok(cookie, token), (cookie, token)
