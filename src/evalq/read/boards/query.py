"""What a door asks of a board, parsed once and passed whole: `BoardQuery`.

The API, the Python client, the CLI and the UI each build one from what they were given and hand
it to the one reader (`evalq.read.served.board`); none of them spells the filters out again.

A page of a live board is read at a version of the task (`evalq.store.versions.task_version`:
it moves with every merge, review decision, baseline and definition). Offset paging over a board
that moves between two pages lists a run twice or not at all, each page right in itself. So a
paged read hands back a **cursor** for the next page (`BoardQuery.next_cursor`): the version
the page was read at, where the next page starts, and which query it belongs to. The next read
with that cursor serves the next page and says whether the board moved in between
(`LeaderboardReport.board_moved`): when it did, runs may repeat or be missed across the two
pages, and the first page (a read without the cursor) is the board as it stands.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, NamedTuple

from evalq.core.errors import InvalidInput

CURSOR_RULE = (
    "must be a next_cursor of an earlier page of this board, read with the same filters and "
    "limit (read again without it for the first page)"
)
CURSOR_WITH_OFFSET = "must not be given with a cursor: the cursor says where its page starts"
MAX_CURSOR = 200
"""Longest cursor a door accepts (one is ~80 characters)."""


class Cursor(NamedTuple):
    """Where the next page starts, the board's version when the page before it was read, and
    the digest of the query it continues (`BoardQuery.key`)."""

    version: str
    offset: int
    query: str

    def encode(self) -> str:
        raw = json.dumps([self.version, self.offset, self.query], separators=(",", ":"))
        return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def decode(token: str) -> Cursor:
    """The cursor ``token`` names.

    Raises:
        InvalidInput: on ``cursor``, when it is not one this reader handed out.
    """
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        version, offset, query = json.loads(raw)
    except (binascii.Error, UnicodeDecodeError, ValueError, TypeError):
        raise InvalidInput([("cursor", CURSOR_RULE)]) from None
    valid = isinstance(version, str) and isinstance(query, str)
    if not valid or not isinstance(offset, int) or isinstance(offset, bool) or offset < 0:
        raise InvalidInput([("cursor", CURSOR_RULE)])
    return Cursor(version, offset, query)


@dataclass(frozen=True)
class BoardQuery:
    """A board read: the task, its filters (each selects rows, none changes the ranking), and
    the page (``limit`` entries from ``offset``, or from where ``cursor`` says)."""

    task_id: str
    tool: str | None = None
    model: str | None = None
    variant: str | None = None
    metadata: Mapping[str, str] = field(default_factory=dict)
    include_held: bool = False
    status: str | None = None
    limit: int | None = None
    offset: int = 0
    cursor: str | None = None

    def filters(self) -> dict[str, Any]:
        """The filters and the page as `evalq.read.leaderboard.leaderboard` takes them."""
        return {
            "task_id": self.task_id,
            "tool": self.tool,
            "model": self.model,
            "variant": self.variant,
            "metadata": dict(self.metadata),
            "include_held": self.include_held,
            "status": self.status,
            "limit": self.limit,
            "offset": self.offset,
        }

    def key(self) -> str:
        """A digest of everything but the page's start: what a cursor must be used with."""
        asked = self.filters() | {"offset": None, "metadata": sorted(self.metadata.items())}
        return hashlib.sha256(json.dumps(asked, sort_keys=True).encode()).hexdigest()[:16]

    def resolved(self) -> tuple[BoardQuery, Cursor | None]:
        """This query with the page's start taken from its cursor, and the cursor (None
        without one).

        Raises:
            InvalidInput: ``offset`` given beside a cursor, or a ``cursor`` that is not one
                this reader handed out for these filters and this limit.
        """
        if self.cursor is None:
            return self, None
        if self.offset:
            raise InvalidInput([("offset", CURSOR_WITH_OFFSET)])
        cursor = decode(self.cursor)
        if cursor.query != self.key():
            raise InvalidInput([("cursor", CURSOR_RULE)])
        return replace(self, offset=cursor.offset, cursor=None), cursor

    def next_cursor(self, *, version: str, total: int) -> str | None:
        """The cursor of the page after this one, read at ``version`` of a board of ``total``
        entries; None when this page is the last (or the read is not paged)."""
        if self.limit is None or self.offset + self.limit >= total:
            return None
        return Cursor(version, self.offset + self.limit, self.key()).encode()
