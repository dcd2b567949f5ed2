"""One root error and a shallow tree that says whose fault it is."""

from __future__ import annotations


class EvalqError(Exception):
    """Root of every error evalq raises on purpose."""


class InvalidInput(EvalqError):
    """The caller sent something evalq cannot accept; nothing was stored or enqueued.

    Attributes:
        problems: one ``(field, rule)`` pair per violation, fields in dotted form.
    """

    def __init__(self, problems: list[tuple[str, str]]) -> None:
        self.problems = problems
        super().__init__("; ".join(f"{field}: {rule}" for field, rule in problems))


class Conflict(EvalqError):
    """The same submission id was sent before with different content."""


class NotFound(EvalqError):
    """A task or submission that does not exist was asked for."""


class UpstreamFailure(EvalqError):
    """A dependency evalq does not control failed (a judge model, the broker, the database)."""


class BrokerUnavailable(UpstreamFailure):
    """The broker could not be reached in time; what was stored stays stored, unsent.

    Attributes:
        reason: what failed, in one line (never a URL: it may hold credentials).
        unsent: ids of stored submissions that were not enqueued; sending them again enqueues
            them (`evalq.store.queries.claim_unsent`).
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
