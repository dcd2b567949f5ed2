"""Test-only worker module (``evalq worker --include tests.drills.hold``): a long tier 1.

Tier 1 of a submission whose id starts with ``hold-`` takes ``HOLD_S`` seconds longer on its
first enqueue attempt only (task id ``<id>:text:1``): long enough that a worker is certainly
mid-task when a drill kills it, and that a live worker's tier runs past EVALQ_LOST_AFTER_S while
the recovery sweep looks. A re-enqueued attempt runs at the ordinary speed, so the drill measures
the sweep, not the hold. It waits inside the computation, after the delivery is counted.
Production code holds no such delay: only the drills import this.
"""

from __future__ import annotations

import time

from celery import current_task

from evalq.core.results import TierOutcome
from evalq.store.queries import Job
from evalq.tasks import tiers

HOLD_PREFIX = "hold-"
HOLD_S = 150.0
_compute_text = tiers.compute_text


def _held_compute_text(job: Job) -> TierOutcome:
    first_attempt = current_task is not None and str(current_task.request.id).endswith(":1")
    if job.submission.id.startswith(HOLD_PREFIX) and first_attempt:
        time.sleep(HOLD_S)
    return _compute_text(job)


tiers.compute_text = _held_compute_text  # looked up by `tier_text` at call time
