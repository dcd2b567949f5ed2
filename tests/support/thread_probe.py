"""Records torch's thread count in the thread that ran each tier-1 task (``--include`` it).

Connected to Celery's ``task_postrun`` signal, which a worker sends in the thread that ran the
task, right after it: what torch would use for that thread's next computation. Each record is
one line ``<pid> <threads>`` appended to the file named by ``EVALQ_TEST_THREAD_PROBE``, so a
test can read what prefork children (other processes) saw.
"""

from __future__ import annotations

import os
from typing import Any

from celery.signals import task_postrun

from evalq.workers.names import TIER_TASKS

PROBE_FILE = "EVALQ_TEST_THREAD_PROBE"


@task_postrun.connect
def _record_threads(sender: Any = None, **_: Any) -> None:
    if getattr(sender, "name", None) != TIER_TASKS["text"] or PROBE_FILE not in os.environ:
        return
    import torch

    with open(os.environ[PROBE_FILE], "a", encoding="utf-8") as probe:
        probe.write(f"{os.getpid()} {torch.get_num_threads()}\n")
