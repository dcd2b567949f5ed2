"""Records torch's thread count inside each tier-1 computation (``--include`` it in a worker).

It wraps `evalq.metrics.text.text_result` (which `evalq.tasks.tiers.compute_text` looks up at
call time), so a record is made in the thread that computes, at the moment it computes: what
torch uses for that computation. A tier-1 delivery that finds its row already final computes
nothing and records nothing (a probe on Celery's ``task_postrun`` recorded those too, at the
thread's uncapped count, when an earlier test's worker in the same process picked one up).
Each record is one line ``<pid> <threads>`` appended to the file named by
``EVALQ_TEST_THREAD_PROBE``, so a test can read what prefork children (other processes) saw.
"""

from __future__ import annotations

import os
from typing import Any

from evalq.metrics import text

PROBE_FILE = "EVALQ_TEST_THREAD_PROBE"
_text_result = text.text_result


def _recorded_text_result(*args: Any, **kwargs: Any) -> Any:
    if PROBE_FILE in os.environ:
        import torch

        with open(os.environ[PROBE_FILE], "a", encoding="utf-8") as probe:
            probe.write(f"{os.getpid()} {torch.get_num_threads()}\n")
    return _text_result(*args, **kwargs)


text.text_result = _recorded_text_result  # type: ignore[assignment]
