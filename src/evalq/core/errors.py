"""One root error and a shallow tree that says whose fault it is."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

MAX_PROBLEMS = 50
"""Most problems an `InvalidInput` lists; the rest are only counted (docs/api.md, 'Errors')."""


class EvalqError(Exception):
    """Root of every error evalq raises on purpose."""


class InvalidInput(EvalqError):
    """The caller sent something evalq cannot accept; nothing was stored or enqueued.

    A hostile body can break a rule millions of times; listing every one made a 4.77 MiB
    request answer with a 261 MB error. So only the first `MAX_PROBLEMS` are kept, and ``total``
    says how many there were.

    Attributes:
        problems: ``(field, rule)`` pairs, fields in dotted form; at most `MAX_PROBLEMS`.
        total: how many problems were found (``len(problems)`` unless some were left out).
    """

    def __init__(self, problems: Sequence[tuple[str, str]], *, total: int | None = None) -> None:
        self.problems = list(problems[:MAX_PROBLEMS])
        self.total = max(len(problems) if total is None else total, len(self.problems))
        listed = "; ".join(f"{field}: {rule}" for field, rule in self.problems)
        super().__init__(listed + (f"; and {self.more} more problems" if self.more else ""))

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as its problems (it crosses from the in-process worker's tier-1 helper
        processes, `evalq.workers.text_helpers`): the default would rebuild it from its
        message."""
        return (type(self), (self.problems,), {"total": self.total})

    @property
    def more(self) -> int:
        """How many problems were found but not listed."""
        return self.total - len(self.problems)


class Conflict(EvalqError):
    """The same submission id was sent before with different content."""


class NotFound(EvalqError):
    """A task or submission that does not exist was asked for."""


class Unauthorized(EvalqError):
    """The HTTP API refused the API key: missing, unknown or revoked (401), or it lacks the
    scope the call needs (403). Only `evalq.producer.http` raises it; nothing was changed.

    Attributes:
        status: the HTTP status, 401 or 403.
    """

    def __init__(self, message: str, *, status: int) -> None:
        self.status = status
        super().__init__(message)


class NotConfigured(EvalqError):
    """The request needs a setting this deployment lacks (the operator's to set, not the
    caller's: EVALQ_WEBHOOK_KEY for webhooks)."""


class UpstreamFailure(EvalqError):
    """A dependency evalq does not control failed (a judge model, the broker, the database)."""


class BrokerUnavailable(UpstreamFailure):
    """The broker could not be reached in time; what was stored stays stored, unsent.

    Attributes:
        reason: what failed, in one line (never a URL: it may hold credentials).
        unsent: ids of stored submissions that were not enqueued; sending them again enqueues
            them (`evalq.store.intake.claim_unsent`).
    """

    def __init__(self, reason: str, unsent: list[str] | None = None) -> None:
        self.reason = reason
        self.unsent = unsent or []
        stored = (
            f"; {len(self.unsent)} submission(s) are stored but not enqueued: "
            "send them again to enqueue them"
            if self.unsent
            else ""
        )
        super().__init__(f"the broker is unavailable ({reason}){stored}")
