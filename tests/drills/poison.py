"""Test-only worker module (``evalq worker --include tests.drills.poison``): a poisonous input.

Tier 1 kills its own process (SIGKILL, as a segfault in a native library would) while computing
a submission whose id starts with ``poison-``. The crash happens inside the computation, after
the task has counted its delivery in the tier row, as a real poisonous input would. Production
code holds no such trigger: this module is only ever imported by the fault drills.
"""

from __future__ import annotations

import os
import signal

from evalq.core.results import TierOutcome
from evalq.store.queries import Job
from evalq.tasks import tiers

POISON_PREFIX = "poison-"
_compute_text = tiers.compute_text


def _poisoned_compute_text(job: Job) -> TierOutcome:
    if job.submission.id.startswith(POISON_PREFIX):
        os.kill(os.getpid(), signal.SIGKILL)
    return _compute_text(job)


tiers.compute_text = _poisoned_compute_text  # looked up by `tier_text` at call time
