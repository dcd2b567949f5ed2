"""Recording a submission's evaluation: what a merge writes, in its caller's transaction.

Two callers: the chord's merge task (`evalq.tasks.merge`), once its tiers are stored, and the
intake (`settle_at_intake`), for a submission with nothing to fan out: every tier skipped, or
the only one left among `INLINE_TIERS` (the trace's graph tier: a few milliseconds of pure
computation, against ~200 ms of task time through the queue), computed where it was submitted.
Both write the same rows the same way: the tier rows, the evaluation (an upsert: a second merge
replaces it), the submission's status, its standing, the review flag, the claim of the
task's next baseline refresh and one pending delivery per webhook of the task (the events'
outbox: `evalq.tasks.webhooks`); after the commit, both send those events and the refresh
(`announce`). An event the broker does not take then is sent by the event sweep: delayed,
never dropped.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from celery import Celery
from sqlalchemy.orm import Session

from evalq.core.applicable import NO_TRACE
from evalq.core.results import TierOutcome
from evalq.core.schemas import Tier
from evalq.core.sessions import session_of
from evalq.core.settings import Settings, get_settings
from evalq.core.status import EvaluationStatus
from evalq.read.baseline import CurrentBaseline, current_baselines
from evalq.read.boards import projector
from evalq.read.view import TaskContext
from evalq.scoring.evaluation import evaluate_submission
from evalq.scoring.evaluation_event import EvaluationEvent, evaluation_event
from evalq.service.results_out import emit_results
from evalq.store import queries, sessions, tallies, webhooks
from evalq.store.queries import Job
from evalq.workers.chords import schedule_refresh
from evalq.workers.names import EVENT_TASK, ROUTES

log = logging.getLogger(__name__)

INLINE_TIERS: frozenset[Tier] = frozenset({"graph"})
"""Tiers cheap enough to compute where the submission is stored, when no other tier needs a
worker: graph metrics are pure functions of a trace of at most a few hundred steps."""


@dataclass(frozen=True)
class Recorded:
    """A merged submission: its status and what must be announced once it is committed."""

    submission_id: str
    task_id: str
    status: EvaluationStatus
    refresh: bool
    """This merge claimed the task's next baseline refresh (`queries.claim_refresh`)."""
    events: list[str] = field(default_factory=list)
    """The webhook deliveries this merge stored, to send once committed."""
    result_event: EvaluationEvent | None = None
    """The evaluation as a ``gen_ai.evaluation.result`` event, sent once committed (results
    out, `evalq.service.results_out`), when EVALQ_OTEL_RESULTS_ENDPOINT is set."""
    refresh_also: tuple[str, ...] = ()
    """Other tasks whose refresh this merge claimed: the Arena tasks of the agents whose
    standing it moved (their baselines read it); on the batch's first record only."""


def record_evaluation(
    session: Session,
    job: Job,
    tiers: Mapping[Tier, TierOutcome],
    current: CurrentBaseline,
    *,
    claim_refresh: bool = True,
    settings: Settings | None = None,
) -> Recorded:
    """Score ``job`` from its final ``tiers`` against ``current`` and store the evaluation,
    status, standing, review flag and webhook events; claim the task's baseline refresh if
    ``claim_refresh``."""
    [recorded] = record_evaluations(
        session, [(job, tiers, current)], claim_refresh=claim_refresh, settings=settings
    )
    return recorded


Scored = tuple[Job, Mapping[Tier, TierOutcome], CurrentBaseline]
"""A job with its final tier outcomes and the baseline it is scored against."""


def record_evaluations(
    session: Session,
    items: Sequence[Scored],
    *,
    claim_refresh: bool = True,
    settings: Settings | None = None,
) -> list[Recorded]:
    """`record_evaluation` for many jobs, in a fixed number of statements: one upsert of the
    evaluations, one UPDATE per status, one read of the stored pairs, one upsert of the
    standings, one read of the tasks' webhooks and one insert of their events; a flag per run
    held for review and a claim per task."""
    results = [
        evaluate_submission(
            job.submission,
            job.task,
            tiers,
            current.baseline,
            job.profile,
            cost_usd=job.cost_usd,
            priced_by=job.priced_by,
        )
        for job, tiers, current in items
    ]
    queries.save_evaluations(
        session,
        evaluations=[
            queries.EvaluationValues(
                submission_id=job.submission.id,
                task_id=job.task.id,
                status=result.status,
                scores=result.scores,
                missing_tiers=result.missing,
                baseline_version=current.version,
                profile_hash=job.profile.hash,
            )
            for (job, _, current), result in zip(items, results, strict=True)
        ],
    )
    plain: dict[EvaluationStatus, list[str]] = defaultdict(list)
    for (job, _, _), result in zip(items, results, strict=True):
        if result.error is None:
            plain[result.status].append(job.submission.id)
        else:
            error = result.error.model_dump(mode="json")
            queries.set_status(
                session, submission_id=job.submission.id, status=result.status, error=error
            )
    for status, ids in plain.items():
        queries.set_statuses(session, status=status, ids=ids)
    queries.set_judged_as_written(
        session,
        counts={
            job.submission.id: result.judged_as_written
            for (job, _, _), result in zip(items, results, strict=True)
        },
    )
    # The board's read model, in the same transaction as the evaluations it is read from.
    ids = [job.submission.id for job, _, _ in items]
    stored = queries.evaluations_of(session, submission_ids=ids)
    contexts = {job.task.id: TaskContext(job.task, job.profile, c) for job, _, c in items}
    # Too good to be true: kept out of the task's baseline until a person accepts it.
    held = [sid for sid, result in zip(ids, results, strict=True) if result.scores.review.flags]
    moved = projector.project_runs(session, contexts, [stored[sid] for sid in ids], held=held)
    # Runs that are turns of a conversation open their session (again): docs/sessions.md.
    turns = [
        sessions.Turn(job.task.id, conversation, job.submission.id)
        for job, _, _ in items
        if (conversation := session_of(job.submission.metadata)) is not None
    ]
    if turns:
        sessions.note_turns(session, turns=turns)
    # An agent's first evaluated run on a task (or its last one gone) changes how many tasks
    # it ran, which the robust and agent-weighted baselines of its other Arena tasks read (the
    # crowd, the new names): they are refreshed too, once each (a claim), and only then.
    others = (
        tallies.arena_tasks_of(session, moved, besides=contexts) if claim_refresh and moved else []
    )
    # Every claim in the order of the tasks' ids: two merges claim the rows of the tasks they
    # share in one order, never each one the other waits for.
    claims = {
        task_id: claim_refresh and queries.claim_refresh(session, task_id=task_id)
        for task_id in sorted({*contexts, *others})
    }
    claimed = {task_id: claims[task_id] for task_id in contexts}
    also = [task_id for task_id in others if claims[task_id]]
    hooks = webhooks.webhooks_of(session, task_ids=list(contexts))
    events = webhooks.add_evaluation_events(
        session,
        events=[
            (hook, job.submission.id, result.status)
            for (job, _, _), result in zip(items, results, strict=True)
            for hook in hooks[job.task.id]
        ],
        settings=settings or get_settings(),
    )
    settings = settings or get_settings()
    recorded: list[Recorded] = []
    for (job, _, _), result in zip(items, results, strict=True):
        task_id = job.task.id
        count = len(hooks[task_id])
        mine, events = events[:count], events[count:]
        out = None
        if settings.otel_results_endpoint is not None:
            out = evaluation_event(
                submission_id=job.submission.id,
                task_id=task_id,
                status=result.status,
                scores=result.scores,
                missing=result.missing,
                metadata=job.submission.metadata,
            )
        recorded.append(
            Recorded(
                job.submission.id,
                task_id,
                result.status,
                claimed[task_id],
                mine,
                out,
                refresh_also=() if recorded else tuple(also),
            )
        )
        claimed[task_id] = False  # announced once per task
    return recorded


def inline_outcomes(job: Job, remaining: Sequence[Tier]) -> list[TierOutcome]:
    """The outcomes of ``remaining``, computed here, where the submission already is, when
    every one is among `INLINE_TIERS`; otherwise none (a chord runs anyway, and its tiers run
    in their workers). A tier whose computation raised is left out: it goes through the
    queue, whose tier task retries and records failures as it always does."""
    if not remaining or not INLINE_TIERS.issuperset(remaining):
        return []
    try:
        return [graph_outcome(job)]
    except Exception:
        log.warning("graph tier of %s left to a worker", job.submission.id, exc_info=True)
        return []


def graph_outcome(job: Job) -> TierOutcome:
    """Tier 3 as the graph worker computes it (`evalq.tasks.tiers.compute_graph`; a test holds
    the two equal)."""
    from evalq.metrics.graph import graph_metrics  # networkx and scipy: only for a trace

    if job.submission.trace is None:
        return TierOutcome(tier="graph", status="skipped", reason=NO_TRACE)
    result = graph_metrics(
        job.submission.trace,
        job.task,
        tool_efficiency_weights=job.profile.graph.tool_efficiency_weights,
        coordination_quality_weights=job.profile.graph.coordination_quality_weights,
    )
    return TierOutcome(tier="graph", status="ok", result=result)


def settle_at_intake(
    session: Session, jobs: Sequence[tuple[Job, Sequence[TierOutcome]]]
) -> list[Recorded]:
    """Merge new submissions whose every tier is final (``jobs``: each with its final tier
    outcomes, already stored), in the intake's transaction (`record_evaluations`).

    Each task's baseline and webhooks are read once, however many of its submissions the
    batch holds.
    """
    if not jobs:
        return []
    profiles = {job.task.id: job.profile for job, _ in jobs}
    baselines = current_baselines(session, profiles=profiles)
    return record_evaluations(
        session,
        [
            (job, {outcome.tier: outcome for outcome in outcomes}, baselines[job.task.id])
            for job, outcomes in jobs
        ],
    )


def announce(app: Celery, recorded: Sequence[Recorded], settings: Settings) -> None:
    """After the commit: send each merged submission's webhook events, its evaluation event
    (results out, best effort) and the baseline refreshes its merge claimed.

    Never raises: an event is never worth an evaluation, and none is lost: one the broker
    does not take now waits in the store for the event sweep. A refresh that could not be
    sent gives its claim back, so the task's next merge schedules it.
    """
    refreshes = sorted(
        {r.task_id for r in recorded if r.refresh} | {t for r in recorded for t in r.refresh_also}
    )
    emit_results([r.result_event for r in recorded if r.result_event is not None], settings)
    try:
        for r in recorded:
            for delivery_id in r.events:
                app.send_task(EVENT_TASK, args=[delivery_id], queue=ROUTES[EVENT_TASK]["queue"])
        for task_id in refreshes:
            schedule_refresh(app, task_id, countdown=settings.baseline_refresh_debounce_s)
    except Exception as error:  # one line: the broker being down is not a bug of ours
        log.warning(
            "could not announce %d merged submission(s): %s", len(recorded), type(error).__name__
        )
        from evalq.store.db import session_scope

        with session_scope(settings.database_url) as session:
            for task_id in refreshes:
                queries.release_refresh(session, task_id=task_id)
