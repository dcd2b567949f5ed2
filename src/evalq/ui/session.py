"""Browser sessions signed with the API key that opened them.

A session cookie is ``PAYLOAD.SIGNATURE``: the payload names the key (its name, never its
secret), when it was issued and a random nonce; the signature is an HMAC-SHA256 of the payload
under the key's stored digest. Any process over the same store can check it (no server-side
session table, no shared secret to configure), a revoked key ends its sessions at once, and the
cookie holds nothing that signs in anywhere else. The CSRF token of a session is a second HMAC of
the same payload, so it cannot be made without the cookie's key either.

The sign-in form has a token of its own, before there is a session: a random value held in a
pre-session cookie (`LOGIN_COOKIE`, SameSite=Strict) and posted back by the form (a double-submit
token). A page of another site can neither read the cookie nor make the browser send it, so it
cannot sign a visitor in with a key of its choosing (login CSRF; docs/ui.md).

Whoever can read the ``api_keys`` table can sign a session for any key: the same people who can
read every stored run already.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import secrets
import time
from dataclasses import dataclass

from sqlalchemy.orm import Session

from evalq.store.keys import authenticate
from evalq.store.models import ApiKeyRow

COOKIE = "evalq_session"
LOGIN_COOKIE = "evalq_login"
"""The sign-in form's pre-session cookie: the token the form must post back."""
MAX_AGE_S = 12 * 3600
"""A session lasts 12 hours; then the key is asked for again."""
_LOGIN_TOKEN = re.compile(r"[A-Za-z0-9_-]{32}")


@dataclass(frozen=True)
class Viewer:
    """The signed-in key as a page sees it: its name, scopes and the session's CSRF token."""

    name: str
    scopes: tuple[str, ...]
    csrf: str

    def can(self, scope: str) -> bool:
        """Whether the key holds ``scope``."""
        return scope in self.scopes


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _mac(key_hash: str, payload: str, purpose: str) -> str:
    digest = hmac.new(key_hash.encode("ascii"), f"{purpose}\n{payload}".encode(), hashlib.sha256)
    return _b64(digest.digest())


def sign_in(session: Session, *, api_key: str, now: float | None = None) -> str | None:
    """The cookie value of a new session for ``api_key``; None for an unknown or revoked key."""
    key = authenticate(session, key=api_key)
    if key is None:
        return None
    row = session.get(ApiKeyRow, key.name)
    assert row is not None  # authenticate found it
    issued = int(time.time() if now is None else now)
    payload = _b64(f"{key.name}\n{issued}\n{secrets.token_urlsafe(12)}".encode())
    return f"{payload}.{_mac(row.key_hash, payload, 'session')}"


def viewer_of(session: Session, cookie: str | None, *, now: float | None = None) -> Viewer | None:
    """The viewer a cookie signs in, or None: malformed, forged, expired, or its key revoked."""
    if not cookie or cookie.count(".") != 1 or len(cookie) > 512:
        return None
    payload, signature = cookie.split(".")
    try:
        name, issued, _nonce = _unb64(payload).decode().split("\n")
        age = (time.time() if now is None else now) - int(issued)
    except (ValueError, UnicodeDecodeError):
        return None
    if not 0 <= age < MAX_AGE_S:
        return None
    row = session.get(ApiKeyRow, name)
    if row is None or row.revoked_at is not None:
        return None
    if not hmac.compare_digest(signature, _mac(row.key_hash, payload, "session")):
        return None
    csrf = _mac(row.key_hash, payload, "csrf")
    return Viewer(name=row.name, scopes=tuple(row.scopes.split(",")), csrf=csrf)


def _same(expected: str, given: str | None) -> bool:
    """``given == expected`` in constant time (any text: a posted field may be non-ASCII)."""
    return given is not None and hmac.compare_digest(expected.encode(), given.encode())


def csrf_ok(viewer: Viewer, token: str | None) -> bool:
    """Whether a form's token is this session's CSRF token (compared in constant time)."""
    return _same(viewer.csrf, token)


def login_token(cookie: str | None) -> str:
    """The sign-in form's token: the browser's `LOGIN_COOKIE` when it holds one (a second open
    sign-in tab keeps the first one's form valid), else a new random one."""
    if cookie and _LOGIN_TOKEN.fullmatch(cookie):
        return cookie
    return secrets.token_urlsafe(24)


def login_token_ok(cookie: str | None, token: str | None) -> bool:
    """Whether the posted sign-in form carries the token of the browser's `LOGIN_COOKIE`."""
    if cookie is None or _LOGIN_TOKEN.fullmatch(cookie) is None:
        return False
    return _same(cookie, token)
