"""The Python API producers use: define tasks, submit runs, wait, read results."""

from __future__ import annotations

import atexit
import logging
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import ExitStack
from datetime import datetime
from types import TracebackType
from typing import TYPE_CHECKING, Any

from celery import Celery
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from evalq.core.applicable import remaining_tiers, skipped_tiers
from evalq.core.audit import TaskAudit
from evalq.core.errors import BrokerUnavailable, InvalidInput, NotFound
from evalq.core.judge_series import JudgeHistory
from evalq.core.labels import (
    Label,
    LabelQueue,
    LabelRequest,
    parse_label,
    parse_labels,
    unknown_run_rule,
)
from evalq.core.monitors import (
    PAGE_DEFAULT,
    PAGE_MAX,
    Monitor,
    MonitorList,
    MonitorRequest,
    every_monitor,
)
from evalq.core.power import PowerPlan
from evalq.core.pricing import quote_submission
from evalq.core.profile import profile_named
from evalq.core.receivers import check_receiver
from evalq.core.results import TierOutcome
from evalq.core.review_decisions import ReviewAction, ReviewDecided, checked_decision
from evalq.core.schemas import (
    Submission,
    Task,
    Tier,
    parse_submission,
    parse_submissions,
    parse_task,
)
from evalq.core.sessions import SessionBoard, SessionResult
from evalq.core.settings import Settings, get_settings
from evalq.core.status import PENDING_STATUSES
from evalq.core.tickets import PlanList, PlanRequest, RegisteredPlan, parse_plan_request
from evalq.core.trace_rules import Backfilled, TraceRule, TraceRuleOf, parse_trace_rule
from evalq.core.webhooks import (
    DeliveryInfo,
    WebhookCreated,
    WebhookInfo,
    parse_webhook_request,
)
from evalq.metrics.graph.integrity import submission_integrity
from evalq.read import monitors as watched
from evalq.read import served, sessions
from evalq.read.audit import audit_task
from evalq.read.boards import projector
from evalq.read.boards.query import BoardQuery
from evalq.service import evaluated
from evalq.service.submitted import FINAL_STATUSES, Submitted
from evalq.store import intake, queries, webhooks
from evalq.store import labels as label_store
from evalq.store import tickets as ticket_store
from evalq.store import traces as trace_store
from evalq.store.db import in_transaction, read_scope, session_scope
from evalq.store.models import utcnow
from evalq.store.queries import Job
from evalq.workers.app import make_app
from evalq.workers.chords import enqueue_many
from evalq.workers.names import EVENT_TASK, ROUTES
from evalq.workers.policy import REFRESH_ATTEMPTS

if TYPE_CHECKING:  # scipy.stats comes with it: only `compare` needs it, when it runs
    from evalq.core.judge_validation import JudgeAgreement
    from evalq.judge.calibration import Calibration, PlannedLevel
    from evalq.read.gate import TooFew
    from evalq.stats.comparison import Correction

FIRST_ATTEMPT = 1

log = logging.getLogger(__name__)


class Client:
    """Producer-side entry point. Validates, stores first, then enqueues (docs/architecture.md).

    With a broker configured (``EVALQ_BROKER_URL``) workers elsewhere evaluate what it enqueues.
    With none, the client evaluates in this process, as `evalq demo` does: an in-process worker
    starts on `wait` (or on entering ``with Client() as client:``) and stops on `close`.

    Args:
        settings: defaults to the process Settings (``EVALQ_*``).
        app: a Celery app; built from ``settings`` when omitted.
    """

    def __init__(self, settings: Settings | None = None, app: Celery | None = None) -> None:
        self.settings = settings or get_settings()
        self.url = self.settings.database_url
        self.in_process = app is None and not self.settings.broker_url
        self._app = app
        self._worker: ExitStack | None = None

    @property
    def app(self) -> Celery:
        """The Celery app enqueues go through, built on first use.

        In-process, it is the worker's own app: the in-memory result store a chord counts its
        tiers in belongs to one app, so producer and worker must share it.
        """
        if self._app is None:
            if self.in_process:
                from evalq.workers.bootstrap import worker_app  # imports the tier code

                self._app = worker_app(self.settings)
            else:
                self._app = make_app(self.settings, producer=True)
        return self._app

    def __enter__(self) -> Client:
        self.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()

    def start(self) -> None:
        """With no broker configured, start the in-process worker (once); otherwise nothing."""
        if not self.in_process or self._worker is not None:
            return
        from evalq.workers.embedded import embedded_worker

        stack = ExitStack()
        stack.enter_context(embedded_worker(self.app))
        self._worker = stack
        # Stop it before the interpreter freezes its daemon threads: a worker stopped later
        # (by garbage collection at exit) waits on them forever.
        atexit.register(self.close)

    def close(self) -> None:
        """Stop the in-process worker, if one runs; the client can start it again."""
        if self._worker is not None:
            atexit.unregister(self.close)
            worker, self._worker = self._worker, None
            worker.close()

    def put_task(self, task: Task | Mapping[str, Any]) -> Task:
        """Create or replace a task definition.

        Raises:
            InvalidInput: the task is invalid, or names a profile these settings do not know.
        """
        parsed = task if isinstance(task, Task) else parse_task(task)
        with session_scope(self.url) as session:
            served.define_task(session, task=parsed, settings=self.settings)
        return parsed

    def audit_task(self, task_id: str) -> TaskAudit:
        """Probe the task's checks now (an empty output, its text echoed, a refusal, other
        tasks' best runs) and store the result, as POST /v1/tasks/{id}/audit (docs/audit.md).

        Raises:
            NotFound: no such task.
        """
        with session_scope(self.url) as session:
            return audit_task(session, task_id=task_id, settings=self.settings)

    def submit(
        self, submission: Submission | Mapping[str, Any], *, collected_by: str | None = None
    ) -> Submitted:
        """Validate, store and enqueue one submission; idempotent on its id.

        The same id with the same content returns the existing job without enqueueing it again;
        the same id with different content raises `evalq.core.errors.Conflict`. Invalid input raises
        `evalq.core.errors.InvalidInput` and stores nothing; its fields are named as the HTTP
        API names them for one submission (``output``, not ``[0].output``). ``collected_by``
        as `submit_many`'s.
        """
        parsed = submission if isinstance(submission, Submission) else parse_submission(submission)
        return self.submit_many([parsed], collected_by=collected_by)[0]

    def unknown_tasks(self, task_ids: Iterable[str]) -> dict[str, str]:
        """Each of ``task_ids`` that names no stored task, with the rule `submit` would report.

        Lets a caller holding many submissions (``evalq submit FILE``) name every one whose task
        is undefined, rather than learn of the first from `submit_many`.
        """
        with session_scope(self.url) as session:
            missing = queries.missing_tasks(session, task_ids=set(task_ids))
        return {task_id: queries.unknown_task_rule(task_id) for task_id in sorted(missing)}

    def submit_many(
        self,
        submissions: Iterable[Submission | Mapping[str, Any]],
        *,
        collected_by: str | None = None,
    ) -> list[Submitted]:
        """Validate all, then store and enqueue each. Nothing is stored if any is invalid.

        The batch is stored in one transaction with a fixed number of statements whatever its
        size (`evalq.store.intake`), and its chords are published in one round trip
        (`evalq.workers.chords.enqueue_many`). An unknown task or a conflicting id rejects
        the whole batch before anything reaches the broker.

        ``collected_by`` is for the OTLP intake alone (`evalq.service.trace_sweep`): the name of
        the API key whose spans it assembled these runs from. A run whose task trusts that key
        (``trusted_trace_keys``) is stored with a collected trace, any other with its own trace
        (`evalq.core.provenance`); None, as every front door passes, for runs submitted as they
        are. A run already stored keeps the provenance it was stored with.
        """
        parsed = parse_submissions(submissions)
        hashes = [submission.content_hash() for submission in parsed]
        new, recorded, pending, attempts = in_transaction(
            lambda session: self._store_batch(session, parsed, hashes, collected_by), self.url
        )
        if recorded:
            evaluated.announce(self.app, recorded, self.settings)
        self._publish(pending, attempts)
        return [Submitted(s.id, created) for s, created in zip(parsed, new, strict=True)]

    def _store_batch(
        self,
        session: Session,
        parsed: list[Submission],
        hashes: list[str],
        collected_by: str | None,
    ) -> tuple[list[bool], list[evaluated.Recorded], dict[str, list[Tier]], dict[str, int]]:
        """`submit_many`'s transaction: the new runs stored, those with nothing left to compute
        merged, and what to publish (each run's remaining tiers and attempt); run again from
        the start when PostgreSQL ends it for a concurrent merge or refresh (`in_transaction`)."""
        tasks = intake.tasks_named(session, task_ids={s.task_id for s in parsed})
        known = intake.known_submissions(session, ids={s.id for s in parsed})
        new = intake.new_in_batch(parsed, hashes, tasks=tasks, known=known)
        fresh = [s for s, created in zip(parsed, new, strict=True) if created]
        ticket_store.check_tickets(session, fresh)
        runs, settled = self._new_runs(parsed, hashes, new, tasks, collected_by)
        intake.insert_new(session, runs=runs)
        ticket_store.use_tickets(session, fresh)
        # Nothing to fan out: merged here, in this transaction, with no message at all.
        recorded = evaluated.settle_at_intake(session, settled)
        merged = {r.submission_id for r in recorded}
        pending = {
            run.submission.id: remaining_tiers([*run.skipped, *run.computed])
            for run in runs
            if run.submission.id not in merged
        }
        unsent = [sid for sid, row in known.items() if row.enqueue_count == 0]
        claimed = intake.claim_unsent(session, ids=unsent) if unsent else []
        attempts = dict.fromkeys([*pending, *claimed], FIRST_ATTEMPT)
        if self.in_process:  # nothing outside this process can be evaluating them
            attempts |= self._resend_unfinished(session, [i for i in known if i not in attempts])
        resent = [sid for sid in attempts if sid not in pending]
        if resent:
            pending |= queries.pending_tiers(session, ids=resent)
        return new, recorded, pending, attempts

    def _new_runs(
        self,
        parsed: list[Submission],
        hashes: list[str],
        new: list[bool],
        tasks: dict[str, Task],
        collected_by: str | None = None,
    ) -> tuple[list[intake.NewSubmission], list[tuple[Job, list[TierOutcome]]]]:
        """The new items of a batch, priced, with the tiers that cannot apply to them and their
        trace's provenance; and those with nothing to fan out (every tier skipped, or computed
        here: `evaluated.inline_outcomes`), each as its job with every tier outcome, to be
        merged at intake."""
        profiles = {tid: profile_named(task.profile, self.settings) for tid, task in tasks.items()}
        judge_configured = self.settings.judge_model is not None
        runs, settled = [], []
        for submission, digest, created in zip(parsed, hashes, new, strict=True):
            if not created:
                continue
            task = tasks[submission.task_id]
            quote = quote_submission(submission, profiles[submission.task_id])
            cost_usd = None if quote is None else quote.cost_usd
            priced_by = None if quote is None else quote.source
            skipped = skipped_tiers(submission, task, judge_configured=judge_configured)
            job = Job(submission, task, profiles[task.id], cost_usd, priced_by)
            computed = evaluated.inline_outcomes(job, remaining_tiers(skipped))
            if not remaining_tiers([*skipped, *computed]):
                settled.append((job, [*skipped, *computed]))
            runs.append(
                intake.NewSubmission(
                    integrity=tuple(submission_integrity(submission, task)),
                    submission=submission,
                    content_hash=digest,
                    cost_usd=cost_usd,
                    skipped=skipped,
                    priced_by=priced_by,
                    computed=tuple(computed),
                    sent_by=collected_by,
                    trusted_keys=tuple(task.trusted_trace_keys),
                )
            )
        return runs, settled

    @staticmethod
    def _resend_unfinished(session: Session, ids: list[str]) -> dict[str, int]:
        """In-process only: the next attempt of each of ``ids`` still queued or running.

        With no broker, their queue died with the process that sent them (an interrupted
        `evalq submit` or demo), so sending them again is the only way they finish.
        """
        statuses = queries.status_counts(session, ids=ids)
        return {
            sid: queries.begin_enqueue(session, submission_id=sid)
            for sid in ids
            if statuses.get(sid) in PENDING_STATUSES
        }

    def import_otlp(
        self,
        data: bytes | str | Mapping[str, Any],
        *,
        task_id: str | None = None,
        tool: str | None = None,
        model: str | None = None,
        variant: str | None = None,
    ) -> list[Submitted]:
        """Submit OpenTelemetry traces: one submission per trace, as `submit_many` does.

        ``data`` is OTLP trace data: bytes in protobuf (the OTLP/HTTP body) or OTLP/JSON (one
        request, or one per line as the Collector's file exporter writes them), the same as
        text, or a decoded OTLP/JSON object. ``task_id``, ``tool``, ``model`` and ``variant``
        are for traces whose spans and resources do not carry ``evalq.*`` attributes
        (docs/traces.md). A trace without ``evalq.submission_id`` becomes ``otlp-<trace id>``,
        so importing it again creates nothing.

        Raises:
            InvalidInput: a trace cannot be mapped (naming the span and the attribute) or names
                an undefined task (naming where its id came from); nothing is stored.
        """
        from evalq import traces

        if isinstance(data, Mapping):
            request = traces.parse_json(dict(data))
        else:
            request = traces.parse_export(data.encode() if isinstance(data, str) else data)
        defaults = traces.TraceDefaults(task_id=task_id, tool=tool, model=model, variant=variant)
        imported = traces.submissions_from_otlp(request, defaults)
        unknown = self.unknown_tasks(t.submission.task_id for t in imported)
        problems = traces.unknown_task_problems(imported, unknown)
        if problems:
            raise InvalidInput(problems)
        return self.submit_many([t.submission for t in imported])

    def _publish(self, pending: dict[str, list[Tier]], attempts: dict[str, int]) -> None:
        """Enqueue each stored submission in ``pending`` with its tiers to run, as attempt
        ``attempts[id]`` (1 for a first send).

        Raises:
            BrokerUnavailable: the broker could not be reached; the submissions are released,
                so that sending them again enqueues them (those a failed batch delivered after
                all are then sent twice, with the same ids, as a redelivery would be).
        """
        ids = list(pending)
        if self.in_process and self._worker is None and ids:
            log.warning(
                "no broker configured (EVALQ_BROKER_URL): %d submission(s) are evaluated in this "
                "process once Client.wait() runs or inside `with Client() as client:`",
                len(ids),
            )
        try:
            enqueue_many(self.app, {sid: (attempts[sid], pending[sid]) for sid in ids})
        except BrokerUnavailable as error:
            with session_scope(self.url) as session:
                queries.release_unsent(session, ids=ids)
            raise BrokerUnavailable(error.reason, ids) from None

    def accept_review(
        self, submission_id: str, *, reason: str, by: str | None = None
    ) -> ReviewDecided:
        """Accept a submission flagged for review: its task's baseline counts it again, and
        the decision (who, when, why) is recorded and shown with the run.

        The baseline is refreshed here and now (no worker needed). Accepting an accepted
        submission again changes nothing and records nothing.

        Args:
            reason: why (required; 1 to 500 characters).
            by: who decides; defaults to ``EVALQ_ACTOR`` (`Settings.actor`).

        Raises:
            NotFound: no such submission.
            InvalidInput: on ``reason`` or ``by`` when missing or too long; on ``review`` when
                the submission is not flagged for review. Nothing is stored.
        """
        return self._decide(submission_id, "accept", reason=reason, by=by)

    def unaccept_review(
        self, submission_id: str, *, reason: str, by: str | None = None
    ) -> ReviewDecided:
        """Undo an accept: the submission is held for review again, out of its task's
        baseline, which is refreshed as `accept_review` refreshes it; the decision is recorded
        beside the accept it undoes. Un-accepting a held run changes nothing.

        Raises:
            NotFound: no such submission.
            InvalidInput: on ``reason`` or ``by`` as `accept_review`; on ``review`` when the
                submission was never flagged for review. Nothing is stored.
        """
        return self._decide(submission_id, "unaccept", reason=reason, by=by)

    def _decide(
        self, submission_id: str, action: ReviewAction, *, reason: str, by: str | None
    ) -> ReviewDecided:
        """Change the review, record the decision (one transaction), refresh the task."""
        text, name = checked_decision(reason, self.settings.actor if by is None else by)
        change = queries.accept_review if action == "accept" else queries.unaccept_review
        with session_scope(self.url) as session:
            task_id = queries.get_submission_row(session, submission_id=submission_id).task_id
            # the tallies move with the decision (`projector.project_review`): a board read
            # before the refresh below counts the run where the decision put it
            changed = projector.project_review(
                session, submission_id, lambda: change(session, submission_id=submission_id)
            )
            if changed:
                queries.record_decision(
                    session, submission_id=submission_id, action=action, by=name, reason=text
                )
        version = self._refresh(task_id)
        with session_scope(self.url) as session:
            review = queries.get_submission_row(session, submission_id=submission_id).review
            latest = queries.review_decisions(session, submission_id=submission_id, action=action)
        return ReviewDecided(
            submission_id=submission_id,
            task_id=task_id,
            review=review,
            changed=changed,
            decision=latest[0] if latest else None,
            baseline_version=version,
        )

    def _refresh(self, task_id: str) -> int:
        """`served.refresh_task` in a transaction of its own, tried again when a concurrent
        refresh stored the same version first; returns the baseline version."""
        for attempt in range(1, REFRESH_ATTEMPTS + 1):
            try:
                with session_scope(self.url) as session:
                    return served.refresh_task(session, task_id=task_id, settings=self.settings)
            except IntegrityError:  # a concurrent refresh stored this version: read again
                if attempt == REFRESH_ATTEMPTS:
                    raise
        raise AssertionError("unreachable")

    def status(self, submission_id: str) -> str:
        """The submission's lifecycle status."""
        with session_scope(self.url) as session:
            return queries.get_submission_row(session, submission_id=submission_id).status

    def wait(
        self,
        ids: Sequence[str],
        *,
        timeout: float = 600.0,
        poll: float = 0.2,
        on_progress: Callable[[dict[str, str]], None] | None = None,
    ) -> dict[str, str]:
        """Poll the store until every id is done, degraded or failed; returns their statuses.

        With no broker configured this starts the in-process worker first (`start`).

        Raises:
            TimeoutError: some submissions were not finished after ``timeout`` seconds.
        """
        self.start()
        deadline = time.monotonic() + timeout
        while True:
            with session_scope(self.url) as session:
                statuses = queries.status_counts(session, ids=list(ids))
            if on_progress is not None:
                on_progress(statuses)
            if len(statuses) == len(set(ids)) and FINAL_STATUSES.issuperset(statuses.values()):
                return statuses
            if time.monotonic() > deadline:
                pending = sorted(i for i in ids if statuses.get(i) not in FINAL_STATUSES)
                raise TimeoutError(f"{len(pending)} submissions unfinished, e.g. {pending[:5]}")
            time.sleep(poll)

    def add_webhook(
        self, task_id: str, webhook: Mapping[str, Any], *, created_by: str | None = None
    ) -> WebhookCreated:
        """Register a receiver of the task's evaluation events; the answer holds its signing
        secret, which is never shown again.

        ``webhook`` is ``{"url": ..., "description": ...}`` (`WebhookRequest`).

        Raises:
            InvalidInput: a bad ``url`` or ``description`` (nothing is stored); a ``url`` whose
                host does not resolve, or resolves to a non-public address, unless
                EVALQ_WEBHOOK_ALLOW_PRIVATE is set (`evalq.core.receivers`).
            NotFound: no such task.
            NotConfigured: EVALQ_WEBHOOK_KEY is unset, so secrets cannot be stored.
        """
        request = parse_webhook_request(webhook)
        webhooks.cipher(self.settings)  # unconfigured: say so before resolving anything
        check_receiver(request.url, allow_private=self.settings.webhook_allow_private)
        with session_scope(self.url) as session:
            queries.get_task(session, task_id=task_id)
            return webhooks.add_webhook(
                session,
                task_id=task_id,
                request=request,
                settings=self.settings,
                created_by=created_by,
            )

    def webhooks(self, task_id: str) -> list[WebhookInfo]:
        """The task's webhooks, oldest first (never their secrets). `NotFound`: no such task."""
        with session_scope(self.url) as session:
            queries.get_task(session, task_id=task_id)
            return webhooks.list_webhooks(session, task_id=task_id)

    def remove_webhook(self, task_id: str, webhook_id: str) -> None:
        """Remove a webhook and its delivery records. `NotFound`: no such webhook of the task."""
        with session_scope(self.url) as session:
            webhooks.remove_webhook(session, task_id=task_id, webhook_id=webhook_id)

    def webhook_deliveries(
        self, task_id: str, webhook_id: str, *, limit: int = 100
    ) -> list[DeliveryInfo]:
        """The webhook's deliveries, newest first, each with its attempts."""
        with session_scope(self.url) as session:
            return webhooks.deliveries(session, task_id=task_id, webhook_id=webhook_id, limit=limit)

    def set_monitor(
        self,
        name: str,
        monitor: MonitorRequest | Mapping[str, Any],
        *,
        created_by: str | None = None,
    ) -> Monitor:
        """Create or replace the monitor ``name`` (docs/monitors.md) and check it at once: the
        answer holds each watched task's state (``no data`` before enough runs). An event the
        first check decides (a task already below a threshold) is sent to the task's webhooks.

        Raises:
            InvalidInput: a bad name or definition, naming the field and the rule (nothing
                stored).
        """
        with session_scope(self.url) as session:
            found, due = watched.set_monitor(
                session, name=name, data=monitor, settings=self.settings, created_by=created_by
            )
        for delivery_id in due:
            try:
                self.app.send_task(
                    EVENT_TASK, args=[delivery_id], queue=ROUTES[EVENT_TASK]["queue"]
                )
            except Exception:  # stored: the event sweep sends it later; the monitor is set
                log.exception("could not send the monitor event %s", delivery_id)
        return found

    def monitors(self) -> list[Monitor]:
        """Every monitor with each watched task's state, by name (read a page at a time)."""
        return every_monitor(lambda after: self.monitor_page(after=after, limit=PAGE_MAX))

    def monitor_page(self, *, after: str | None = None, limit: int = PAGE_DEFAULT) -> MonitorList:
        """The monitors after the name ``after`` (from the first when None), at most
        ``limit``, with their tasks' states; ``next`` is the ``after`` of the next page."""
        with session_scope(self.url) as session:
            return watched.list_monitors(session, after=after, limit=limit)

    def monitor(self, name: str) -> Monitor:
        """One monitor with its tasks' states. `NotFound`: no such monitor."""
        with session_scope(self.url) as session:
            return watched.get_monitor(session, name=name)

    def remove_monitor(self, name: str) -> None:
        """Remove a monitor and its states. `NotFound`: no such monitor."""
        with session_scope(self.url) as session:
            watched.remove_monitor(session, name=name)

    def put_trace_rule(self, task_id: str, rule: TraceRule | Mapping[str, Any]) -> TraceRuleOf:
        """Create or replace the rule by which the task takes traces that name no task
        (online evaluation; docs/traces.md). Only traces finished from now on are offered to
        it; `backfill_traces` applies it to stored ones.

        Raises:
            InvalidInput: a bad rule (nothing is stored).
            NotFound: no such task.
        """
        parsed = rule if isinstance(rule, TraceRule) else parse_trace_rule(rule)
        with session_scope(self.url) as session:
            queries.get_task(session, task_id=task_id)
            trace_store.put_rule(session, task_id=task_id, rule=parsed)
        return TraceRuleOf(task_id=task_id, rule=parsed)

    def session(self, session_id: str, *, task_id: str | None = None) -> SessionResult:
        """A session: the runs sharing a conversation id, their order and the session's scores
        (docs/sessions.md).

        Raises:
            NotFound: no such session.
            InvalidInput: on ``task_id`` when several tasks have a session of that id.
        """
        with session_scope(self.url) as session:
            return sessions.session_result(session, session_id=session_id, task_id=task_id)

    def session_board(self, task_id: str, *, limit: int = 100) -> SessionBoard:
        """The task's session board, best first.

        Raises:
            NotFound: no such task.
            InvalidInput: on ``limit`` outside 1..1000.
        """
        with session_scope(self.url) as session:
            return sessions.session_board(session, task_id=task_id, limit=limit)

    def trace_rule(self, task_id: str) -> TraceRuleOf:
        """The task's trace rule. `NotFound`: no such task, or it has no rule."""
        with session_scope(self.url) as session:
            queries.get_task(session, task_id=task_id)
            rule = trace_store.get_rule(session, task_id=task_id)
        if rule is None:
            raise NotFound(f"task {task_id!r} has no trace rule")
        return TraceRuleOf(task_id=task_id, rule=rule)

    def remove_trace_rule(self, task_id: str) -> None:
        """Remove the task's trace rule. `NotFound`: no such task, or it has no rule."""
        with session_scope(self.url) as session:
            queries.get_task(session, task_id=task_id)
            if not trace_store.delete_rule(session, task_id=task_id):
                raise NotFound(f"task {task_id!r} has no trace rule")

    def backfill_traces(self, task_id: str, *, since: datetime, until: datetime) -> Backfilled:
        """Apply the task's rule to the stored untaken traces that started in [since, until):
        each one it takes becomes a submission of the task (evaluated as any other).

        Raises:
            InvalidInput: a bound before 1678 or after 2262 (span times are int64
                nanoseconds), ``until`` not after ``since``, or a range holding more untaken
                traces than ``trace_backfill_max_traces``; nothing is taken.
            NotFound: no such task, or it has no trace rule.
        """
        from evalq.service.trace_sweep import backfill

        return backfill(self, task_id, since=since, until=until)

    def add_label(self, label: LabelRequest | Mapping[str, Any]) -> Label:
        """Store one person's label of a run (`evalq.core.labels.LabelRequest`).

        The same labeller labelling the same run again replaces their earlier label.

        Raises:
            InvalidInput: a bad field (a score outside 1-5, an unknown rubric, an empty
                label), or ``submission_id`` naming no stored run; nothing is stored.
        """
        parsed = parse_label(label)
        try:
            return self.add_labels([parsed])[0]
        except InvalidInput as error:  # named as for one label: submission_id, not [0]....
            raise InvalidInput(
                [(field.removeprefix("[0]."), rule) for field, rule in error.problems]
            ) from None

    def add_labels(self, labels: Iterable[LabelRequest | Mapping[str, Any]]) -> list[Label]:
        """Store a batch of labels: all of them, or none when one is invalid.

        Raises:
            InvalidInput: each bad item's problems, named ``[INDEX].field`` (an unknown run on
                ``[INDEX].submission_id``); nothing is stored.
        """
        parsed = parse_labels(labels)
        with session_scope(self.url) as session:
            return label_store.add_labels(session, labels=parsed)

    def unknown_runs(self, submission_ids: Iterable[str]) -> dict[str, str]:
        """Each of ``submission_ids`` that names no stored run, with the rule `add_labels`
        would report.

        Lets a caller holding a file of labels (``evalq labels import FILE``) name every label
        of an unknown run beside the file's other bad rows, in one pass.
        """
        wanted = set(submission_ids)
        with session_scope(self.url) as session:
            known = intake.known_submissions(session, ids=wanted)
        return {run: unknown_run_rule(run) for run in sorted(wanted - set(known))}

    def labels(
        self,
        *,
        task_id: str | None = None,
        submission_id: str | None = None,
        labeller: str | None = None,
    ) -> list[Label]:
        """Stored labels, by task, run and labeller; each filter given narrows the list.

        Raises:
            NotFound: ``task_id`` or ``submission_id`` names nothing stored.
        """
        with session_scope(self.url) as session:
            if task_id is not None:
                queries.get_task(session, task_id=task_id)
            if submission_id is not None:
                queries.get_submission_row(session, submission_id=submission_id)
            return label_store.list_labels(
                session,
                task_ids=None if task_id is None else [task_id],
                submission_id=submission_id,
                labeller=labeller,
            )

    def label_queue(self, task_id: str, *, unlabelled_only: bool = True) -> LabelQueue:
        """The task's runs the judge cascade asks people to label: 'judge uncertain' first,
        then the audited ones; by default only those nobody labelled yet.

        Raises:
            NotFound: no such task.
        """
        from evalq.read.judge_agreement import label_queue

        with session_scope(self.url) as session:
            queries.get_task(session, task_id=task_id)
            return label_queue(session, task_ids=[task_id], unlabelled_only=unlabelled_only)

    def judge_agreement(self, tasks: str, *, seed: int = 0) -> JudgeAgreement:
        """How well the judge agrees with people's labels on ``tasks`` (an id, ids separated by
        commas, or globs): per task, rubric and judge model, and pooled when several tasks.

        Raises:
            InvalidInput: on ``tasks`` when a name or glob matches no task.
        """
        from evalq.read.judge_agreement import task_judge_agreement

        with session_scope(self.url) as session:
            return task_judge_agreement(session, tasks=tasks, settings=self.settings, seed=seed)

    def calibrate_cascade(
        self,
        tasks: str,
        *,
        alpha: float,
        delta: float,
        reference: str = "human",
        start_share: float | None = None,
    ) -> Calibration:
        """Calibrate the judge cascade's thresholds on the audited runs of ``tasks`` (the audit
        share, drawn like live traffic; not the runs escalated to the top, which are the hard
        ones): against people's labels, or with
        ``reference="top judge"`` against the top level's verdicts.

        ``start_share`` moves where each level's threshold search starts
        (`evalq.judge.calibration.START_SHARE` when None).

        Raises:
            InvalidInput: on ``tasks`` (no such task), ``reference``, ``alpha`` / ``delta``,
                ``start_share``, or ``labels`` when there are too few labelled items, naming how
                many are needed.
        """
        from evalq.judge.calibration import START_SHARE, Judgment, calibrate
        from evalq.read.judge_agreement import calibration_items

        if reference not in ("human", "top judge"):
            raise InvalidInput([("reference", "must be 'human' or 'top judge'")])
        with session_scope(self.url) as session:
            items = calibration_items(session, tasks=tasks, reference=reference)  # type: ignore[arg-type]
        judged = [[Judgment(c, a) for c, a in item] for item in items]
        return calibrate(
            judged,
            alpha=alpha,
            delta=delta,
            reference=reference,  # type: ignore[arg-type]
            start_share=START_SHARE if start_share is None else start_share,
        )

    def cascade_search_plan(
        self, tasks: str, *, alpha: float, delta: float, start_share: float | None = None
    ) -> list[PlannedLevel]:
        """Where each cascade level's threshold search would start on the audited runs of
        ``tasks``, and how many of them it may decide: from the confidences alone (no label is
        read), before anyone labels (`evalq.judge.calibration.search_plan`).

        Raises:
            InvalidInput: on ``tasks`` (no such task), ``alpha`` / ``delta``, ``start_share``.
        """
        from evalq.judge.calibration import START_SHARE, search_plan
        from evalq.read.judge_agreement import calibration_items

        with session_scope(self.url) as session:
            items = calibration_items(session, tasks=tasks, reference="top judge")
        return search_plan(
            [[confidence for confidence, _ in item] for item in items],
            alpha=alpha,
            delta=delta,
            start_share=START_SHARE if start_share is None else start_share,
        )

    def tasks(self) -> dict[str, Any]:
        """Every task as GET /v1/tasks serves it (its JSON body): kind, runs by status, last
        activity and who leads its board."""
        with read_scope(self.settings) as session:
            return served.task_list(session).model_dump(mode="json")

    def leaderboard(
        self,
        task_id: str,
        *,
        tool: str | None = None,
        model: str | None = None,
        variant: str | None = None,
        metadata: Mapping[str, str] | None = None,
        include_held: bool = False,
        status: str | None = None,
        limit: int | None = None,
        offset: int = 0,
        cursor: str | None = None,
    ) -> dict[str, Any]:
        """The task's leaderboard as GET /v1/tasks/{id}/leaderboard serves it (its JSON body).

        ``metadata`` keeps the rows whose metadata holds every ``key: value`` (compared as
        strings); like the other filters it selects rows and never changes the ranking. Runs
        held for review are listed last, unranked, unless ``include_held``.

        ``status`` keeps the done or the degraded evaluations; ``limit`` lists at most that many
        entries from ``offset`` (ranks and figures stay the whole board's; ``total`` counts
        them). A paged answer's ``next_cursor``, passed as ``cursor`` with the same filters and
        limit, reads the next page and says whether the board moved since (``board_moved``).

        Raises:
            NotFound: no such task.
            InvalidInput: a metadata key that cannot be a filter, or a cursor not handed out
                for these filters and this limit.
        """
        query = BoardQuery(
            task_id=task_id,
            tool=tool,
            model=model,
            variant=variant,
            metadata=dict(metadata or {}),
            include_held=include_held,
            status=status,
            limit=limit,
            offset=offset,
            cursor=cursor,
        )
        with read_scope(self.settings) as session:
            board = served.board(session, query, settings=self.settings)
            return board.model_dump(mode="json")

    def compare(
        self,
        tasks: str,
        *,
        by: str,
        values: Sequence[str] = (),
        correction: Correction = "holm",
        seed: int = 0,
        include_held: bool = False,
    ) -> dict[str, Any]:
        """Groups compared over the tasks they share, as GET /v1/compare serves it.

        ``tasks`` is a task id, ids separated by commas, or a glob; ``by`` is model, tool,
        variant or metadata.KEY; ``values`` the groups, the reference first (docs/statistics.md).
        Runs held for review are left out (counted in ``left_out``) unless ``include_held``.

        Raises:
            InvalidInput: naming the parameter and the rule (an unknown ``by``, no tasks, ...).
        """
        with read_scope(self.settings) as session:
            result = served.comparison(
                session,
                tasks=tasks,
                by=by,
                values=values,
                correction=correction,
                seed=seed,
                settings=self.settings,
                include_held=include_held,
            )
            return result.model_dump(mode="json")

    def plan(self, task_id: str, *, detect: float | None = None) -> PowerPlan:
        """Runs per variant or agent the task's noise needs to detect ``detect`` with 80% power
        at its alpha, as GET /v1/tasks/{id}/plan serves it (docs/power.md).

        Raises:
            NotFound: no such task.
            InvalidInput: on ``detect`` (a number above 0).
        """
        from evalq.read.power import task_plan

        with session_scope(self.url) as session:
            return task_plan(session, task_id=task_id, detect=detect, settings=self.settings)

    def register_plan(
        self,
        task_id: str,
        plan: PlanRequest | Mapping[str, Any],
        *,
        issued_by: str | None = None,
    ) -> RegisteredPlan:
        """Register a variant's runs before they happen: one ticket per run (with its seed, if
        given), due by the plan's deadline, as POST /v1/tasks/{id}/plans (docs/scoring.md,
        "Pre-registered runs"). Send each run with its ticket (``ticket``); once a variant has
        tickets only its ticketed runs count for it, and a ticket with no run by the deadline
        counts as a failure at the task's worst cost. ``issued_by``: the API key's name.

        (`plan` is the power plan: how many runs a comparison needs.)

        Raises:
            NotFound: no such task.
            InvalidInput: naming the field and its rule (``variant``, ``runs``, ``seeds``,
                ``deadline``); nothing is stored.
        """
        with session_scope(self.url) as session:
            queries.get_task(session, task_id=task_id)
            request = parse_plan_request(plan, now=utcnow())
            return ticket_store.issue_plan(
                session, task_id=task_id, request=request, issued_by=issued_by
            )

    def registered_plans(self, task_id: str, *, with_tickets: bool = False) -> PlanList:
        """The task's registered plans, the newest first, each with its used, unused (pending)
        and expired tickets counted (and its tickets, ``with_tickets``), as GET
        /v1/tasks/{id}/plans.

        Raises:
            NotFound: no such task.
        """
        with session_scope(self.url) as session:
            queries.get_task(session, task_id=task_id)
            return ticket_store.plans_of(session, task_id=task_id, with_tickets=with_tickets)

    def judge_history(self, task_id: str, *, detect: float | None = None) -> JudgeHistory:
        """The task's judge series, its breaks and each break's bridge, as GET
        /v1/tasks/{id}/judges serves it (docs/judge.md, "Judge changes").

        Raises:
            NotFound: no such task.
            InvalidInput: on ``detect`` (a number above 0, at most 1).
        """
        from evalq.read.judge_series import judge_history

        with session_scope(self.url) as session:
            return judge_history(session, task_id=task_id, detect=detect, settings=self.settings)

    def rejudge(
        self, task_id: str, *, runs: int | None = None, detect: float | None = None, seed: int = 0
    ) -> JudgeHistory:
        """Judge the task's runs again with the configured judge as a new series beside their
        scores (never replacing them): ``runs`` of them, or (None) the bridging sample the
        break needs; returns the judge history with its bridge (`evalq.service.rejudge`).

        Raises:
            NotFound: no such task.
            InvalidInput: on ``runs`` or ``detect``; no judge model configured.
        """
        from evalq.service.rejudge import rejudge

        return rejudge(
            self.url, task_id=task_id, settings=self.settings, runs=runs, detect=detect, seed=seed
        )

    def gate(
        self,
        tasks: str,
        *,
        by: str,
        baseline: str,
        candidate: str,
        margin: float = 0.0,
        too_few: TooFew = "fail",
        seed: int = 0,
        include_held: bool = False,
    ) -> dict[str, Any]:
        """A candidate gated against a baseline, as GET /v1/gate serves it (docs/ci.md).

        Raises:
            InvalidInput: naming the parameter and the rule, as `compare`.
        """
        with session_scope(self.url) as session:
            result = served.gate_report(
                session,
                tasks=tasks,
                by=by,
                baseline=baseline,
                candidate=candidate,
                margin=margin,
                too_few=too_few,
                seed=seed,
                settings=self.settings,
                include_held=include_held,
            )
            return result.model_dump(mode="json")

    def get_result(self, submission_id: str) -> dict[str, Any]:
        """Status, scores, tier outcomes (errors included) and the baseline version used.

        The Arena scores are against the task's current baseline (as on its leaderboard); the
        score as merged is under ``merged`` (`evalq.read.submission.submission_result`).
        """
        with session_scope(self.url) as session:
            found = served.run_result(session, submission_id=submission_id, settings=self.settings)
            return found.model_dump(mode="json", exclude_unset=True)


__all__ = ["Client", "NotFound", "Submitted"]
