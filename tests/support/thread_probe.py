"""Records torch's thread count inside each tier-1 computation (``--include`` it in a worker).

It wraps `evalq.metrics.semantic.SemanticScorer.score_many` (what the tier-1 batcher runs in
its compute slot, `evalq.metrics.score_batcher`), so a record is made in the thread that
computes, at the moment it computes: what torch uses for that computation. A tier-1 delivery
that finds its row already final computes nothing and records nothing (a probe on Celery's
``task_postrun`` recorded those too, at the thread's uncapped count, when an earlier test's
worker in the same process picked one up).
Each record is one line ``<pid> <threads>`` appended to the file named by
``EVALQ_TEST_THREAD_PROBE``, so a test can read what prefork children (other processes) saw.
"""

from __future__ import annotations

import os
from typing import Any

from evalq.metrics.semantic import SemanticScorer

PROBE_FILE = "EVALQ_TEST_THREAD_PROBE"
_score_many = SemanticScorer.score_many


def _recorded_score_many(*args: Any, **kwargs: Any) -> Any:
    if PROBE_FILE in os.environ:
        import torch

        with open(os.environ[PROBE_FILE], "a", encoding="utf-8") as probe:
            probe.write(f"{os.getpid()} {torch.get_num_threads()}\n")
    return _score_many(*args, **kwargs)


SemanticScorer.score_many = _recorded_score_many  # type: ignore[method-assign]
