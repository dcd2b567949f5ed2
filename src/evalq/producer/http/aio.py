"""`AsyncHttpClient`: `HttpClient` for asyncio code, call for call."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from types import TracebackType
from typing import Any

import httpx

from evalq.core.audit import TaskAudit
from evalq.core.errors import InvalidInput
from evalq.core.judge_series import JudgeHistory
from evalq.core.judge_validation import JudgeAgreement
from evalq.core.labels import Label, LabelList, LabelQueue, LabelRequest, parse_label
from evalq.core.monitors import PAGE_DEFAULT, PAGE_MAX, Monitor, MonitorList, MonitorRequest
from evalq.core.power import PowerPlan
from evalq.core.review_decisions import ReviewDecided
from evalq.core.schemas import Submission, Task
from evalq.core.sessions import SessionBoard, SessionResult
from evalq.core.tickets import PlanList, PlanRequest, RegisteredPlan
from evalq.core.trace_rules import Backfilled, TraceRule, TraceRuleOf
from evalq.core.webhooks import (
    DeliveryInfo,
    DeliveryList,
    WebhookCreated,
    WebhookInfo,
    WebhookList,
)
from evalq.producer.http import wire
from evalq.producer.importers.answer import ImportAnswer
from evalq.service.submitted import FINAL_STATUSES, Submitted


class AsyncHttpClient:
    """Define tasks, submit runs, wait and read results through an evalq HTTP API.

    The same calls, idempotency and errors as `evalq.service.client.Client`, without the
    database or broker credentials: invalid input is `InvalidInput` (checked here first, then by
    the server), a reused id with other content `Conflict`, an unknown id `NotFound`, a refused
    key `Unauthorized`, a broker the server cannot reach `BrokerUnavailable`.

    Every call is idempotent (reads, a task PUT, submits keyed by their ids), so a transport
    failure (connection refused or reset, a timeout) is retried ``retries`` times with backoff;
    a submit that reached the server before its answer was lost then reads ``created=False``.
    Error answers (4xx, 503) are never retried. Afterwards `UpstreamFailure` says the API is
    unreachable.

    Args:
        base_url: where the API listens, e.g. ``https://evalq.example.com``.
        api_key: an evalq API key (``evalq keys create``); read and write scopes to submit.
        timeout: seconds per request.
        retries: transport failures retried per call.
        transport: an httpx transport, for proxies or custom TLS.
    """

    def __init__(
        self,
        base_url: str,
        api_key: str | None = None,
        *,
        timeout: float = 30.0,
        retries: int = wire.RETRIES,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.retries = retries
        self._http = httpx.AsyncClient(
            base_url=self.base_url,
            headers=wire.headers(api_key),
            timeout=timeout,
            transport=transport,
        )

    async def __aenter__(self) -> AsyncHttpClient:
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        await self.close()

    async def close(self) -> None:
        """Close the connection pool."""
        await self._http.aclose()

    async def _send(self, call: wire.Call) -> Any:
        for attempt in range(self.retries + 1):
            try:
                response = await self._http.request(call.method, call.path, **call.request())
            except httpx.TransportError as error:
                if attempt == self.retries:
                    raise wire.unreachable(self.base_url, error, attempt + 1) from error
                await asyncio.sleep(wire.backoff(attempt + 1))
                continue
            return wire.checked(response, call)
        raise AssertionError("unreachable")

    async def put_task(self, task: Task | Mapping[str, Any]) -> Task:
        """Create or replace a task definition; returns it as stored (defaults filled in)."""
        call, _ = wire.put_task_call(task)
        return Task.model_validate((await self._send(call))["task"])

    async def submit(self, submission: Submission | Mapping[str, Any]) -> Submitted:
        """Validate, store and enqueue one submission; idempotent on its id."""
        return wire.accepted(await self._send(wire.submit_call([submission], batch=False)))[0]

    async def submit_many(
        self, submissions: Iterable[Submission | Mapping[str, Any]]
    ) -> list[Submitted]:
        """Submit several in one request: all are stored, or none is (at most the server's
        EVALQ_API_MAX_BATCH)."""
        return wire.accepted(await self._send(wire.submit_call(submissions, batch=True)))

    async def import_otlp(
        self,
        data: bytes | str | Mapping[str, Any],
        *,
        task_id: str | None = None,
        tool: str | None = None,
        model: str | None = None,
        variant: str | None = None,
    ) -> list[Submitted]:
        """Submit OpenTelemetry traces through POST /v1/traces: one submission per trace.

        ``data`` as `evalq.service.client.Client.import_otlp` takes it (protobuf or OTLP/JSON
        bytes, text, or a decoded OTLP/JSON object); the answers and errors are the same.
        """
        call = wire.otlp_call(data, task_id=task_id, tool=tool, model=model, variant=variant)
        return wire.accepted(await self._send(call))

    async def import_file(
        self,
        format: str,
        data: bytes,
        *,
        columns: Mapping[str, Any] | None = None,
        apply: bool = False,
    ) -> ImportAnswer:
        """Import another tool's results file through POST /v1/imports/{format}.

        The answer and the errors are `evalq.producer.importers.apply.import_file`'s (and
        `evalq import`'s): a dry run unless ``apply``; ``columns`` for jsonl and csv only.
        """
        call = wire.import_call(format, data, columns=columns, apply=apply)
        return ImportAnswer.model_validate(await self._send(call))

    async def status(self, submission_id: str) -> str:
        """The submission's lifecycle status."""
        return str((await self.get_result(submission_id))["status"])

    async def get_result(self, submission_id: str) -> dict[str, Any]:
        """Status, metadata, scores, tier outcomes and baseline version (GET /v1/submissions)."""
        result: dict[str, Any] = await self._send(wire.result_call(submission_id))
        return result

    async def wait(
        self,
        ids: Sequence[str],
        *,
        timeout: float = 600.0,
        poll: float = 0.5,
        on_progress: Callable[[dict[str, str]], None] | None = None,
    ) -> dict[str, str]:
        """Poll until every id is done, degraded or failed; returns their statuses.

        Raises:
            TimeoutError: some submissions were not finished after ``timeout`` seconds.
            NotFound: an id names no submission.
        """
        deadline = time.monotonic() + timeout
        statuses: dict[str, str] = {}
        while True:
            for submission_id in dict.fromkeys(ids):
                if statuses.get(submission_id) not in FINAL_STATUSES:
                    statuses[submission_id] = await self.status(submission_id)
            if on_progress is not None:
                on_progress(dict(statuses))
            pending = sorted(i for i, s in statuses.items() if s not in FINAL_STATUSES)
            if not pending:
                return statuses
            if time.monotonic() > deadline:
                raise TimeoutError(f"{len(pending)} submissions unfinished, e.g. {pending[:5]}")
            await asyncio.sleep(poll)

    async def tasks(self) -> dict[str, Any]:
        """Every task (GET /v1/tasks) as its JSON body: kind, runs by status, last activity
        and who leads its board."""
        found: dict[str, Any] = await self._send(wire.tasks_call())
        return found

    async def leaderboard(
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
        """The task's leaderboard (GET /v1/tasks/{id}/leaderboard) as its JSON body.

        ``metadata`` keeps the rows whose metadata holds every ``key: value`` (compared as
        strings); like the other filters it selects rows and never changes the ranking.

        ``status`` keeps the done or the degraded evaluations; ``limit`` lists at most that many
        entries from ``offset`` (ranks and figures stay the whole board's; ``total`` counts
        them). A paged answer's ``next_cursor``, passed as ``cursor`` with the same filters and
        limit, reads the next page and says whether the board moved since (``board_moved``).
        """
        call = wire.leaderboard_call(
            task_id,
            tool=tool,
            model=model,
            variant=variant,
            metadata=metadata,
            include_held=include_held,
            status=status,
            limit=limit,
            offset=offset,
            cursor=cursor,
        )
        board: dict[str, Any] = await self._send(call)
        return board

    async def compare(
        self,
        tasks: str,
        *,
        by: str,
        values: Sequence[str] = (),
        correction: str = "holm",
        seed: int = 0,
        include_held: bool = False,
    ) -> dict[str, Any]:
        """Groups compared over the tasks they share (GET /v1/compare) as its JSON body.

        ``tasks`` is a task id, ids separated by commas, or a glob; ``by`` is model, tool,
        variant or metadata.KEY; ``values`` the groups, the reference first (docs/statistics.md).
        """
        call = wire.compare_call(
            tasks,
            by=by,
            values=values,
            correction=correction,
            seed=seed,
            include_held=include_held,
        )
        result: dict[str, Any] = await self._send(call)
        return result

    async def plan(self, task_id: str, *, detect: float | None = None) -> PowerPlan:
        """Runs per variant or agent needed to detect ``detect`` (GET /v1/tasks/{id}/plan)."""
        return PowerPlan.model_validate(await self._send(wire.plan_call(task_id, detect=detect)))

    async def register_plan(
        self, task_id: str, plan: PlanRequest | Mapping[str, Any]
    ) -> RegisteredPlan:
        """Register a variant's runs before they happen (POST /v1/tasks/{id}/plans): the plan
        with one ticket per run. Errors as `Client.register_plan`; a bad plan is refused here,
        before it is sent."""
        answer = await self._send(wire.register_plan_call(task_id, plan))
        return RegisteredPlan.model_validate(answer)

    async def registered_plans(self, task_id: str, *, with_tickets: bool = False) -> PlanList:
        """The task's registered plans, the newest first (GET /v1/tasks/{id}/plans)."""
        answer = await self._send(wire.plans_call(task_id, with_tickets=with_tickets))
        return PlanList.model_validate(answer)

    async def judge_history(self, task_id: str, *, detect: float | None = None) -> JudgeHistory:
        """The task's judge series, breaks and bridges (GET /v1/tasks/{id}/judges)."""
        call = wire.judges_call(task_id, detect=detect)
        return JudgeHistory.model_validate(await self._send(call))

    async def audit_task(self, task_id: str) -> TaskAudit:
        """Probe the task's checks now and store the result (POST /v1/tasks/{id}/audit)."""
        return TaskAudit.model_validate(await self._send(wire.audit_call(task_id)))

    async def gate(
        self,
        tasks: str,
        *,
        by: str,
        baseline: str,
        candidate: str,
        margin: float = 0.0,
        too_few: str = "fail",
        seed: int = 0,
        include_held: bool = False,
    ) -> dict[str, Any]:
        """A candidate gated against a baseline (GET /v1/gate) as its JSON body: ``verdict``,
        ``exit_status`` (0 pass, 1 regression, 3 too few) and each task's figures."""
        call = wire.gate_call(
            tasks,
            by=by,
            baseline=baseline,
            candidate=candidate,
            margin=margin,
            too_few=too_few,
            seed=seed,
            include_held=include_held,
        )
        result: dict[str, Any] = await self._send(call)
        return result

    async def add_webhook(self, task_id: str, webhook: Mapping[str, Any]) -> WebhookCreated:
        """Register a receiver of the task's evaluation events (POST /v1/tasks/{id}/webhooks);
        the answer holds its signing secret, shown this once. Errors as `Client.add_webhook`."""
        answer = await self._send(wire.add_webhook_call(task_id, webhook))
        return WebhookCreated.model_validate(answer)

    async def webhooks(self, task_id: str) -> list[WebhookInfo]:
        """The task's webhooks, oldest first (never their secrets). `NotFound`: no such task."""
        answer = await self._send(wire.webhooks_call(task_id))
        return WebhookList.model_validate(answer).webhooks

    async def remove_webhook(self, task_id: str, webhook_id: str) -> None:
        """Remove a webhook and its delivery records. `NotFound`: no such webhook of the task."""
        await self._send(wire.remove_webhook_call(task_id, webhook_id))

    async def set_monitor(self, name: str, monitor: MonitorRequest | Mapping[str, Any]) -> Monitor:
        """Create or replace a monitor and check it at once (PUT /v1/monitors/{name}): each
        watched task's state. Errors as `Client.set_monitor`."""
        answer = await self._send(wire.put_monitor_call(name, monitor))
        return Monitor.model_validate(answer)

    async def monitors(self) -> list[Monitor]:
        """Every monitor with each watched task's state, by name (read a page at a time)."""
        found: list[Monitor] = []
        after: str | None = None
        while True:
            page = await self.monitor_page(after=after, limit=PAGE_MAX)
            found += page.monitors
            if page.next is None:
                return found
            after = page.next

    async def monitor_page(
        self, *, after: str | None = None, limit: int = PAGE_DEFAULT
    ) -> MonitorList:
        """A page of monitors (GET /v1/monitors): those after the name ``after``, at most
        ``limit``; ``next`` is the ``after`` of the next page."""
        answer = await self._send(wire.monitor_page_call(after, limit))
        return MonitorList.model_validate(answer)

    async def monitor(self, name: str) -> Monitor:
        """One monitor with its tasks' states. `NotFound`: no such monitor."""
        return Monitor.model_validate(await self._send(wire.monitor_call(name)))

    async def remove_monitor(self, name: str) -> None:
        """Remove a monitor and its states. `NotFound`: no such monitor."""
        await self._send(wire.monitor_call(name, "DELETE"))

    async def put_trace_rule(
        self, task_id: str, rule: TraceRule | Mapping[str, Any]
    ) -> TraceRuleOf:
        """Create or replace the task's trace rule (PUT /v1/tasks/{id}/trace-rule).
        Errors as `Client.put_trace_rule`."""
        answer = await self._send(wire.put_trace_rule_call(task_id, rule))
        return TraceRuleOf.model_validate(answer)

    async def session(self, session_id: str, *, task_id: str | None = None) -> SessionResult:
        """A session (docs/sessions.md). `NotFound`: no such session."""
        answer = await self._send(wire.session_call(session_id, task_id=task_id))
        return SessionResult.model_validate(answer)

    async def session_board(self, task_id: str, *, limit: int = 100) -> SessionBoard:
        """The task's session board, best first. `NotFound`: no such task."""
        answer = await self._send(wire.session_board_call(task_id, limit=limit))
        return SessionBoard.model_validate(answer)

    async def trace_rule(self, task_id: str) -> TraceRuleOf:
        """The task's trace rule. `NotFound`: no such task, or it has no rule."""
        answer = await self._send(wire.trace_rule_call(task_id))
        return TraceRuleOf.model_validate(answer)

    async def remove_trace_rule(self, task_id: str) -> None:
        """Remove the task's trace rule. `NotFound`: no such task, or it has no rule."""
        await self._send(wire.trace_rule_call(task_id, "DELETE"))

    async def backfill_traces(
        self, task_id: str, *, since: datetime, until: datetime
    ) -> Backfilled:
        """Apply the task's rule to the stored untaken traces that started in [since, until)."""
        answer = await self._send(wire.backfill_call(task_id, since=since, until=until))
        return Backfilled.model_validate(answer)

    async def webhook_deliveries(
        self, task_id: str, webhook_id: str, *, limit: int = 100
    ) -> list[DeliveryInfo]:
        """The webhook's deliveries, newest first, each with its attempts."""
        call = wire.deliveries_call(task_id, webhook_id, limit=limit)
        return DeliveryList.model_validate(await self._send(call)).deliveries

    async def add_label(self, label: LabelRequest | Mapping[str, Any]) -> Label:
        """Store one person's label of a run (POST /v1/labels). Errors as `Client.add_label`."""
        parsed = parse_label(label)
        try:
            return (await self.add_labels([parsed]))[0]
        except InvalidInput as error:
            raise wire.single(error) from None

    async def add_labels(self, labels: Iterable[LabelRequest | Mapping[str, Any]]) -> list[Label]:
        """Store a batch of labels, all or none (POST /v1/labels). Errors as
        `Client.add_labels`."""
        answer = await self._send(wire.add_labels_call(labels))
        return LabelList.model_validate(answer).labels

    async def labels(
        self,
        *,
        task_id: str | None = None,
        submission_id: str | None = None,
        labeller: str | None = None,
    ) -> list[Label]:
        """Stored labels (GET /v1/labels); each filter given narrows the list."""
        call = wire.labels_call(task_id=task_id, submission_id=submission_id, labeller=labeller)
        return LabelList.model_validate(await self._send(call)).labels

    async def label_queue(self, task_id: str, *, unlabelled_only: bool = True) -> LabelQueue:
        """Runs the judge cascade asks people to label (GET /v1/labels/queue), as
        `Client.label_queue`."""
        call = wire.label_queue_call(task_id, unlabelled_only=unlabelled_only)
        return LabelQueue.model_validate(await self._send(call))

    async def judge_agreement(self, tasks: str, *, seed: int = 0) -> JudgeAgreement:
        """The judge's agreement with people on ``tasks`` (GET /v1/judge/agreement), as
        `Client.judge_agreement`."""
        answer = await self._send(wire.judge_agreement_call(tasks, seed=seed))
        return JudgeAgreement.model_validate(answer)

    async def accept_review(self, submission_id: str, *, reason: str) -> ReviewDecided:
        """Accept a submission held for review, saying why (POST .../review/accept); the API
        records the key's name as who accepted. Errors as `Client.accept_review`."""
        call = wire.review_call(submission_id, "accept", reason=reason)
        return ReviewDecided.model_validate(await self._send(call))

    async def unaccept_review(self, submission_id: str, *, reason: str) -> ReviewDecided:
        """Undo an accept, saying why (POST .../review/unaccept): the run is held again.
        Errors as `Client.unaccept_review`."""
        call = wire.review_call(submission_id, "unaccept", reason=reason)
        return ReviewDecided.model_validate(await self._send(call))
