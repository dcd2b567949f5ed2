"""Test-only worker module (``evalq worker --include tests.drills.slow``): a slow tier 1.

Tier 1 of a submission whose id starts with ``slow-`` takes ``SLOW_S`` seconds longer. It waits
inside the computation, after the task has counted its delivery in the tier row, so a drill that
sees such a task among a worker's active tasks can kill the worker while it is certainly mid-task
(a real tier 1 on the drills' short texts is over in tens of milliseconds, about as long as a
``celery inspect`` round trip). Production code holds no such delay: only the drills import this.
"""

from __future__ import annotations

import time

from evalq.core.results import TierOutcome
from evalq.store.queries import Job
from evalq.tasks import tiers

SLOW_PREFIX = "slow-"
SLOW_S = 3.0
_compute_text = tiers.compute_text


def _slow_compute_text(job: Job) -> TierOutcome:
    if job.submission.id.startswith(SLOW_PREFIX):
        time.sleep(SLOW_S)
    return _compute_text(job)


tiers.compute_text = _slow_compute_text  # looked up by `tier_text` at call time
