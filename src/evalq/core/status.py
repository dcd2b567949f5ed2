"""A submission's statuses: the fixed sets, and the lists derived from them.

Imports nothing (not even pydantic), so the lightest modules of the front doors (the CLI's
start-up, `evalq.service.submitted`) use the same names as the store and the wire models.
"""

from __future__ import annotations

from typing import Literal, get_args

PendingStatus = Literal["queued", "running"]
"""Not evaluated yet: waiting for a worker, or with tiers under way."""
EvaluationStatus = Literal["done", "degraded", "failed"]
"""Evaluated: the result will not change but by a re-score."""
Status = Literal[PendingStatus, EvaluationStatus]
"""Every status a submission has, in the order it goes through them."""

STATUSES: tuple[Status, ...] = get_args(Status)
PENDING_STATUSES: tuple[PendingStatus, ...] = get_args(PendingStatus)
FINAL_STATUSES: tuple[EvaluationStatus, ...] = get_args(EvaluationStatus)
