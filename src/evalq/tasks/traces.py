"""The trace sweep: complete traces become submissions, exactly once each.

A trace is complete when its root span has ended (a root span is only exported once it ends)
and either no span of it arrived for EVALQ_TRACE_QUIET_S, or one of its spans carries
``evalq.trace.end`` = true. The sweep runs as a beat entry with a broker and as a thread of
`evalq api` without one (`finalise_due_traces` is the same function in both). Each trace is
claimed by a conditional UPDATE before it is converted, so concurrent sweeps and retries make
one submission; a sweep that dies after claiming leaves the claim to be taken again once it is
EVALQ_LOST_AFTER_S old, and the submission's id (``otlp-<trace id>``, or the trace's own
``evalq.submission_id``) makes that second attempt find the first one's submission.
"""

from __future__ import annotations

import logging
from datetime import timedelta

from celery import shared_task

from evalq.core.errors import Conflict, InvalidInput
from evalq.core.settings import Settings, get_settings
from evalq.producer.client import Client
from evalq.store import traces as stored
from evalq.store.db import session_scope
from evalq.traces import TraceDefaults, submissions_from_otlp
from evalq.traces.spans_in import request_of
from evalq.workers.names import FINALISE_TRACES_TASK

log = logging.getLogger(__name__)


def finalise_due_traces(client: Client, settings: Settings | None = None) -> list[str]:
    """Turn every complete trace into its submission; the ids of the submissions made."""
    settings = settings or client.settings
    quiet = timedelta(seconds=settings.trace_quiet_s)
    reclaim = timedelta(seconds=max(settings.lost_after_s, 10))
    with session_scope(client.url) as session:
        due = stored.due_traces(session, quiet=quiet, reclaim_after=reclaim)
    made: list[str] = []
    for trace_id in due:
        with session_scope(client.url) as session:
            if not stored.claim(session, trace_id=trace_id, quiet=quiet, reclaim_after=reclaim):
                continue
        submission_id = finalise(client, trace_id)
        if submission_id is not None:
            made.append(submission_id)
    return made


def finalise(client: Client, trace_id: str) -> str | None:
    """Convert a claimed trace and submit it; its submission id, or None when it cannot be.

    A trace that cannot be mapped (or names an undefined task, or an id taken by another run)
    is marked ``failed`` with the problems; the broker being down leaves the claim in place for
    a later sweep.
    """
    with session_scope(client.url) as session:
        row, spans = stored.claimed_spans(session, trace_id=trace_id)
        defaults = TraceDefaults(**{k: v for k, v in row.defaults.items() if v is not None})
    try:
        [imported] = submissions_from_otlp(request_of(spans), defaults)
        unknown = client.unknown_tasks([imported.submission.task_id])
        if unknown:
            raise InvalidInput([(imported.source("task_id"), unknown[imported.submission.task_id])])
        client.submit(imported.submission)
    except InvalidInput as error:
        with session_scope(client.url) as session:
            stored.fail(session, trace_id=trace_id, problems=list(error.problems))
        log.warning("trace %s cannot become a submission: %s", trace_id, error.problems[:3])
        return None
    except Conflict as error:
        with session_scope(client.url) as session:
            stored.fail(session, trace_id=trace_id, problems=[("(trace)", str(error))])
        return None
    with session_scope(client.url) as session:
        stored.finish(session, trace_id=trace_id, submission_id=imported.submission.id)
    return imported.submission.id


@shared_task(name=FINALISE_TRACES_TASK)
def finalise_traces() -> int:
    """Beat entry: finalise the complete traces; how many submissions were made."""
    settings = get_settings()
    return len(finalise_due_traces(Client(settings), settings))
