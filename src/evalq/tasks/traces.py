"""The beat entry of the trace sweep (`evalq.service.trace_sweep`)."""

from __future__ import annotations

from celery import shared_task

from evalq.core.settings import get_settings
from evalq.service.client import Client
from evalq.service.trace_sweep import sweep_traces
from evalq.tasks.tiers import judge_transcript
from evalq.workers.names import FINALISE_TRACES_TASK


@shared_task(name=FINALISE_TRACES_TASK)
def finalise_traces() -> int:
    """Beat entry: make submissions of the finished traces; how many were made."""
    settings = get_settings()
    return len(sweep_traces(Client(settings), settings, judge=judge_transcript))
