"""What every producer client answers a submit with, and the statuses a wait ends on.

Kept apart from `evalq.service.client` (which needs Celery and SQLAlchemy) so the HTTP client
returns the same type without importing either.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import get_args

from evalq.core.status import EvaluationStatus

FINAL_STATUSES: frozenset[EvaluationStatus] = frozenset(get_args(EvaluationStatus))
"""A submission in one of these is evaluated: its result will not change but by a re-score."""


@dataclass(frozen=True)
class Submitted:
    """The answer to one submit: the id, and whether it was new (False: sent before)."""

    id: str
    created: bool
