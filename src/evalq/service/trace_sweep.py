"""The trace sweep: finished traces become submissions, exactly once each.

A trace is finished when its root span has ended (a root span is only exported once it ends)
and either no span of it arrived for EVALQ_TRACE_QUIET_S, or one of its spans carries
``evalq.trace.end`` = true. The sweep runs as a beat entry with a broker (`evalq.tasks.traces`)
and as a thread of `evalq api` without one; both call `sweep_traces`. Each trace is claimed by a
conditional UPDATE before it is converted, so concurrent sweeps and retries make one submission;
a sweep that dies after claiming leaves the claim to be taken again once it is
EVALQ_LOST_AFTER_S old, and the submission's id (``otlp-<trace id>``, or the trace's own
``evalq.submission_id``) makes that second attempt find the first one's submission.

A trace that names no task (no ``evalq.task_id``, no ``task_id`` with its requests) goes to the
first task (by id) whose rule takes it (`evalq.traces.rules`); with none it is kept ``untaken``
for EVALQ_TRACE_RETENTION_S, so a rule added later can take it (`backfill`), then dropped.

A run is submitted with the name of the key that opened its trace, so a task that trusts that key
(``trusted_trace_keys``) stores the run's trace as collected (`evalq.core.provenance`).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from sqlalchemy.exc import InterfaceError, OperationalError

from evalq.core.errors import Conflict, InvalidInput, NotFound, UpstreamFailure
from evalq.core.settings import Settings
from evalq.core.storable import printable
from evalq.core.trace_rules import Backfilled, TraceRuleOf, parse_backfill, sampled
from evalq.service.client import Client
from evalq.service.sessions import TranscriptJudge, sweep_sessions
from evalq.store import queries
from evalq.store import traces as stored
from evalq.store.db import session_scope
from evalq.traces import TraceDefaults, names
from evalq.traces.convert import imported
from evalq.traces.otlp import spans_of
from evalq.traces.rules import matches, taking_task
from evalq.traces.spans_in import request_of
from evalq.traces.tree import trees_of

log = logging.getLogger(__name__)


def sweep_traces(
    client: Client, settings: Settings | None = None, *, judge: TranscriptJudge | None = None
) -> list[str]:
    """Finalise every finished trace, drop the untaken traces past their retention, then
    evaluate the sessions that became quiet (`evalq.service.sessions`; ``judge`` over their
    transcripts when a judge is configured).

    Returns:
        The ids of the submissions made.
    """
    settings = settings or client.settings
    made = finalise_due_traces(client, settings)
    with session_scope(client.url) as session:
        stored.drop_untaken(session, older_than=timedelta(seconds=settings.trace_retention_s))
    # Sessions are complete as traces are, after a quiet period: the same sweep takes them.
    sweep_sessions(client.url, settings, judge=judge)
    return made


SWEEP_MOST = 500
"""Most traces one sweep examines; the next sweep takes the rest."""
SWEEP_ROUND = 50
"""Traces read per round: the due traces are read again after each round, so a trace that
became due meanwhile waits at most one round, whatever the backlog."""
TRANSIENT = (UpstreamFailure, OperationalError, InterfaceError)
"""Failures of the broker or the database, not of the trace: its claim is left for a later
sweep (taken again once EVALQ_LOST_AFTER_S old)."""


@dataclass(frozen=True)
class Finalised:
    """What finalising one trace did: its submission, or why it failed (neither: untaken)."""

    submission_id: str | None = None
    failure: str | None = None


def finalise_due_traces(client: Client, settings: Settings | None = None) -> list[str]:
    """Turn the finished traces into their submissions; the ids of the submissions made.

    The due traces are served in turns of their senders (`evalq.store.traces.due_traces`), a
    round at a time, so one key's backlog delays another key's run by one round at most. A
    trace that cannot be made a submission ends ``failed`` with its reason and the sweep goes
    on; the traces that failed are logged in one line per sweep.
    """
    settings = settings or client.settings
    quiet = timedelta(seconds=settings.trace_quiet_s)
    reclaim = timedelta(seconds=max(settings.lost_after_s, 10))
    rules: list[TraceRuleOf] | None = None
    made: list[str] = []
    failures: dict[str, str] = {}
    examined = 0
    try:
        while examined < SWEEP_MOST:
            with session_scope(client.url) as session:
                due = stored.due_traces(
                    session,
                    quiet=quiet,
                    reclaim_after=reclaim,
                    limit=min(SWEEP_ROUND, SWEEP_MOST - examined),
                )
                if due and rules is None:
                    rules = stored.all_rules(session)
            if not due:
                break
            examined += len(due)
            for trace_id in due:
                with session_scope(client.url) as session:
                    if not stored.claim(
                        session, trace_id=trace_id, quiet=quiet, reclaim_after=reclaim
                    ):
                        continue
                outcome = finalise(client, trace_id, rules=rules or [])
                if outcome.submission_id is not None:
                    made.append(outcome.submission_id)
                if outcome.failure is not None:
                    failures[trace_id] = outcome.failure
    finally:
        log_failures(failures)
    return made


def log_failures(failures: dict[str, str]) -> None:
    """One line for every trace a sweep found unable to become a submission (none: none)."""
    if not failures:
        return
    trace_id, why = next(iter(failures.items()))
    more = f" (and {len(failures) - 1} more traces)" if len(failures) > 1 else ""
    log.warning(
        "%d trace(s) cannot become a submission and are marked failed (GET /v1/traces/{id} "
        "says why), e.g. trace %s: %s%s",
        len(failures),
        trace_id,
        why[:300],
        more,
    )


def finalise(
    client: Client,
    trace_id: str,
    *,
    rules: list[TraceRuleOf],
    task_id: str | None = None,
) -> Finalised:
    """Convert a claimed trace and submit it.

    ``task_id`` (a backfill's) is the task when the trace names none; otherwise ``rules`` decide.
    A trace that cannot be mapped (or names an undefined task, or an id taken by another run,
    or fails in any way of its own) is marked ``failed`` with the problems, at once: it is not
    claimed again. One no rule takes is marked ``untaken``. A broker or database that is down
    (`TRANSIENT`) leaves the claim in place for a later sweep, and the error is raised.
    """
    with session_scope(client.url) as session:
        row, spans = stored.claimed_spans(session, trace_id=trace_id)
        defaults = TraceDefaults(**{k: v for k, v in row.defaults.items() if v is not None})
        owner = row.owner
    try:
        [tree] = trees_of(spans_of(request_of(spans)))
        if defaults.task_id is None and tree.first(names.EVALQ_TASK_ID) is None:
            taker = task_id or taking_task(rules, tree)
            if taker is None:
                with session_scope(client.url) as session:
                    stored.untake(session, trace_id=trace_id)
                return Finalised()
            defaults = replace(defaults, task_id=taker)
        made = imported(tree, defaults)
        unknown = client.unknown_tasks([made.submission.task_id])
        if unknown:
            raise InvalidInput([(made.source("task_id"), unknown[made.submission.task_id])])
        # the key that sent its spans: the run's trace is collected if its task trusts that key
        client.submit(made.submission, collected_by=owner)
    except InvalidInput as error:
        return _failed(client, trace_id, list(error.problems))
    except Conflict as error:
        return _failed(client, trace_id, [("(trace)", str(error))])
    except TRANSIENT:
        raise
    except Exception as error:  # the trace's own failure (a bug it triggers): recorded on it
        log.debug("trace %s failed", trace_id, exc_info=True)
        why = f"cannot be made a submission: {type(error).__name__}: {printable(str(error))}"
        return _failed(client, trace_id, [("(trace)", why[:500])])
    with session_scope(client.url) as session:
        stored.finish(session, trace_id=trace_id, submission_id=made.submission.id)
    return Finalised(submission_id=made.submission.id)


def _failed(client: Client, trace_id: str, problems: list[tuple[str, str]]) -> Finalised:
    with session_scope(client.url) as session:
        stored.fail(session, trace_id=trace_id, problems=problems)
    return Finalised(failure="; ".join(f"{field}: {rule}" for field, rule in problems[:3]))


def backfill(client: Client, task_id: str, *, since: datetime, until: datetime) -> Backfilled:
    """Apply the task's rule to the untaken traces that started in [since, until).

    Each trace the rule matches and samples is claimed (one backfill or sweep wins it) and made
    a submission of the task, as the sweep would have made it. A range holding more untaken
    traces than ``trace_backfill_max_traces`` is refused whole rather than done in part: a
    backfill either examines every trace of its range or none.

    Raises:
        NotFound: the task does not exist, or has no trace rule.
        InvalidInput: a bound outside the stored times (`parse_backfill`), ``until`` not after
            ``since``, or a range of more traces than the setting allows.
    """
    window = parse_backfill({"since": since, "until": until})
    most = client.settings.trace_backfill_max_traces
    with session_scope(client.url) as session:
        queries.get_task(session, task_id=task_id)
        rule = stored.get_rule(session, task_id=task_id)
        if rule is None:
            raise NotFound(f"task {task_id!r} has no trace rule")
        candidates = stored.untaken_traces(
            session, start_ns=window.start_ns, end_ns=window.end_ns, limit=most + 1
        )
    if len(candidates) > most:
        raise InvalidInput([("until", _too_many(most))])
    taken: list[str] = []
    failures: dict[str, str] = {}
    for trace_id in candidates:
        if not sampled(trace_id, rule.sample_rate):
            continue
        with session_scope(client.url) as session:
            _, spans = stored.claimed_spans(session, trace_id=trace_id)
        try:
            [tree] = trees_of(spans_of(request_of(spans)))
        except InvalidInput:
            continue
        if not matches(rule, tree):
            continue
        with session_scope(client.url) as session:
            if not stored.claim_untaken(session, trace_id=trace_id):
                continue
        outcome = finalise(client, trace_id, rules=[], task_id=task_id)
        if outcome.submission_id is not None:
            taken.append(outcome.submission_id)
        if outcome.failure is not None:
            failures[trace_id] = outcome.failure
    log_failures(failures)
    return Backfilled(task_id=task_id, examined=len(candidates), taken=taken)


def _too_many(most: int) -> str:
    return (
        f"the range holds more than {most:,} untaken traces; at most {most:,} per backfill "
        "(trace_backfill_max_traces, EVALQ_TRACE_BACKFILL_MAX_TRACES): backfill shorter ranges"
    )
