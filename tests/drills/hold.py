"""Test-only worker module (``evalq worker --include tests.drills.hold``): a long tier 1.

Tier 1 of a submission whose id starts with ``hold-`` takes ``HOLD_S`` seconds longer on its
first enqueue attempt only (task id ``<id>:text:1``): long enough that a worker is certainly
mid-task when a drill kills it, and that a live worker's tier runs past EVALQ_LOST_AFTER_S while
the recovery sweep looks. A re-enqueued attempt runs at the ordinary speed, so the drill measures
the sweep, not the hold. It waits inside the computation, after the delivery is counted.
Production code holds no such delay: only the drills import this.

A drill that names a file in ``DRILL_HOLD_RELEASE`` ends the hold when it creates that file
(after what it checks while the tiers run), so a slow machine lengthens the wait, not the
outcome; ``HOLD_S`` times `PATIENCE` then bounds the hold in case the drill fails first.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from celery import current_task

from evalq.core.results import TierOutcome
from evalq.store.queries import Job
from evalq.tasks import tiers
from tests.support.processes import PATIENCE

HOLD_PREFIX = "hold-"
HOLD_S = 150.0
RELEASE = "DRILL_HOLD_RELEASE"
_compute_text = tiers.compute_text


def _held_compute_text(job: Job) -> TierOutcome:
    if job.submission.id.startswith(HOLD_PREFIX) and _first_attempt():
        _hold()
    return _compute_text(job)


def _first_attempt() -> bool:
    """Whether this is a tier task's first enqueue attempt; False outside a Celery task (a
    test process that imported this module calls tier 1 directly: `current_task` is then a
    proxy to nothing, which no ``is None`` test sees)."""
    request = getattr(current_task, "request", None)
    return request is not None and str(request.id).endswith(":1")


def _hold() -> None:
    release = os.environ.get(RELEASE)
    if release is None:
        time.sleep(HOLD_S)
        return
    deadline = time.monotonic() + HOLD_S * PATIENCE
    while time.monotonic() < deadline and not Path(release).exists():
        time.sleep(0.5)


tiers.compute_text = _held_compute_text  # looked up by `tier_text` at call time
