"""API keys of the HTTP API: creating, listing, revoking and checking them.

A key is shown once, when it is created; the store keeps only its SHA-256 digest. Keys are
high-entropy random strings, so a plain (unsalted) digest is enough to make the table useless to
whoever reads it.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Literal, get_args

from sqlalchemy import select
from sqlalchemy.orm import Session

from evalq.core.errors import Conflict, InvalidInput, NotFound
from evalq.store.models import ApiKeyRow, utcnow

Scope = Literal["read", "write"]
SCOPES: tuple[Scope, ...] = get_args(Scope)
KEY_PREFIX = "evq_"


@dataclass(frozen=True)
class ApiKey:
    """A stored key as callers see it (never the secret)."""

    name: str
    scopes: tuple[str, ...]
    created_at: datetime
    revoked_at: datetime | None

    @classmethod
    def of(cls, row: ApiKeyRow) -> ApiKey:
        """The public view of a row."""
        return cls(row.name, tuple(row.scopes.split(",")), row.created_at, row.revoked_at)


def digest(key: str) -> str:
    """SHA-256 hex digest of a key, the form the store keeps."""
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()


def parse_scopes(text: str | Iterable[str]) -> tuple[Scope, ...]:
    """Scopes from ``"read,write"`` (or an iterable); `InvalidInput` on an unknown or empty set."""
    names = [s.strip() for s in (text.split(",") if isinstance(text, str) else text)]
    names = [n for n in names if n]
    unknown = sorted(set(names) - set(SCOPES))
    if unknown or not names:
        raise InvalidInput([("scopes", f"must be a non-empty subset of {', '.join(SCOPES)}")])
    return tuple(s for s in SCOPES if s in names)


def create_key(session: Session, *, name: str, scopes: Iterable[str]) -> str:
    """Store a new key and return its secret (the only time it is visible).

    Raises:
        InvalidInput: an empty or too long name, or bad scopes.
        Conflict: a key with this name exists (revoked keys keep their names).
    """
    if not 0 < len(name) <= 100:
        raise InvalidInput([("name", "must be 1 to 100 characters")])
    granted = parse_scopes(scopes)
    if session.get(ApiKeyRow, name) is not None:
        raise Conflict(f"an API key named {name!r} exists; choose another name")
    secret = KEY_PREFIX + secrets.token_urlsafe(32)
    session.add(ApiKeyRow(name=name, key_hash=digest(secret), scopes=",".join(granted)))
    session.flush()
    return secret


def list_keys(session: Session) -> list[ApiKey]:
    """Every key, revoked ones included, by name."""
    return [ApiKey.of(row) for row in session.scalars(select(ApiKeyRow).order_by(ApiKeyRow.name))]


def revoke_key(session: Session, *, name: str) -> None:
    """Revoke a key for good; `NotFound` when there is no key of that name."""
    row = session.get(ApiKeyRow, name)
    if row is None:
        raise NotFound(f"no API key named {name!r}")
    if row.revoked_at is None:
        row.revoked_at = utcnow()


def authenticate(session: Session, *, key: str) -> ApiKey | None:
    """The live key whose secret is ``key``; None for an unknown or revoked key.

    The row is found by its digest, and the digests are compared again in constant time, so the
    comparison never leaks how much of a guess was right.
    """
    wanted = digest(key)
    row = session.scalars(select(ApiKeyRow).where(ApiKeyRow.key_hash == wanted)).first()
    if row is None or not hmac.compare_digest(row.key_hash, wanted) or row.revoked_at is not None:
        return None
    return ApiKey.of(row)
