"""The FastAPI application factory (`evalq api` serves it with uvicorn)."""

from __future__ import annotations

import asyncio
import copy
import logging
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta
from typing import Any

from fastapi import FastAPI
from pydantic.json_schema import models_json_schema
from starlette.concurrency import run_in_threadpool

from evalq import __version__
from evalq.core.labels import LabelBatch
from evalq.core.profile import profile_names
from evalq.core.redact import install_log_redaction
from evalq.core.review_decisions import DecisionRequest
from evalq.core.schemas import Submission, Task
from evalq.core.settings import Settings, get_settings
from evalq.core.tickets import PlanRequest
from evalq.core.trace_rules import BackfillRequest
from evalq.core.webhooks import WebhookRequest
from evalq.producer.api import errors, metrics
from evalq.producer.api.body import BodyLimit
from evalq.producer.api.models import SubmissionBatch
from evalq.producer.api.params import StorableParams
from evalq.producer.api.routes import (
    compare,
    gate,
    health,
    imports,
    judge,
    labels,
    monitors,
    sessions,
    submissions,
    tasks,
    trace_rules,
    traces,
    webhooks,
)
from evalq.service.client import Client
from evalq.ui import mount as ui

log = logging.getLogger(__name__)

DESCRIPTION = """Enqueue evaluations of AI-agent runs and read their results.

Every route but `/healthz` needs `Authorization: Bearer <key>` (`evalq keys create`); reads need
the `read` scope, writes the `write` scope. See docs/api.md."""


PLAN_NEEDS_VARIANT = {
    "if": {"required": ["planned_runs"], "properties": {"planned_runs": {"type": "integer"}}},
    "then": {"required": ["variant"], "properties": {"variant": {"type": "string"}}},
}
"""What `Submission` checks across two fields, stated in the document: a run plan is a
variant's (``planned_runs`` needs a ``variant``)."""
TICKET_NEEDS_VARIANT = {
    "if": {"required": ["ticket"], "properties": {"ticket": {"type": "string"}}},
    "then": {"required": ["variant"], "properties": {"variant": {"type": "string"}}},
}
"""As `PLAN_NEEDS_VARIANT`: a run ticket is a variant's (``ticket`` needs a ``variant``)."""


def create_app(settings: Settings | None = None) -> FastAPI:
    """The API over the store and broker of ``settings`` (the process Settings by default).

    uvicorn has configured logging by the time it calls this factory, so its handlers (and the
    last-resort one evalq's warnings reach) get the secret redaction here.
    """
    settings = settings or get_settings()
    install_log_redaction(settings)
    app = FastAPI(
        title="evalq",
        version=__version__,
        description=DESCRIPTION,
        openapi_url="/openapi.json",
        docs_url="/docs",
        redoc_url=None,
        lifespan=_lifespan,
    )
    app.state.settings = settings
    app.state.client = Client(settings)
    app.state.compare_slots = asyncio.Semaphore(settings.compare_concurrency)
    app.add_middleware(BodyLimit, limit=settings.api_max_body_bytes)
    errors.install(app)
    app.include_router(health.router)
    app.include_router(submissions.router)
    app.include_router(tasks.router)
    app.include_router(compare.router)
    app.include_router(gate.router)
    app.include_router(traces.router)
    app.include_router(imports.router)
    app.include_router(trace_rules.router)
    app.include_router(sessions.router)
    app.include_router(metrics.router)
    app.include_router(webhooks.router)
    app.include_router(monitors.router)
    ui.install(app)
    app.add_middleware(StorableParams)  # outside the UI's live polls, which read the store
    app.include_router(labels.router)
    app.include_router(judge.router)
    app.openapi = lambda: _openapi(app)  # type: ignore[method-assign]
    return app


@asynccontextmanager
async def _lifespan(app: FastAPI) -> AsyncIterator[None]:
    """With no broker configured, evaluate in this process while it serves (as `Client` does)."""
    client: Client = app.state.client
    sweep: TraceSweep | None = None
    if client.in_process:
        await run_in_threadpool(_start_in_process, client)
        sweep = TraceSweep(client)
        sweep.start()
    try:
        yield
    finally:
        if sweep is not None:
            await run_in_threadpool(sweep.stop)
        await run_in_threadpool(client.close)


class TraceSweep:
    """With no broker there is no beat: this thread runs the trace sweep in its place.

    Every EVALQ_TRACE_SWEEP_EVERY_S it makes submissions of the complete traces
    (`evalq.service.trace_sweep.sweep_traces`, the function the beat entry runs).
    """

    def __init__(self, client: Client) -> None:
        self.client = client
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._run, name="evalq-trace-sweep", daemon=True)

    def start(self) -> None:
        """Start sweeping."""
        self.thread.start()

    def stop(self) -> None:
        """Stop sweeping (after the sweep under way, if any)."""
        self.stopping.set()
        self.thread.join(30)

    def _run(self) -> None:
        from evalq.service.trace_sweep import sweep_traces
        from evalq.tasks.tiers import judge_transcript  # in-process: this process judges

        period = self.client.settings.trace_sweep_every_s
        while not self.stopping.wait(period):
            try:
                sweep_traces(self.client, judge=judge_transcript)
            except Exception:  # the next sweep tries again; spans stay stored meanwhile
                log.exception("the trace sweep failed")


def _start_in_process(client: Client) -> None:
    """Start the in-process worker and send it the runs, events and refreshes an earlier process
    left unfinished.

    Nothing else can be evaluating them: with no broker their messages died with that process.
    """
    from evalq.tasks.merge import resend_refreshes
    from evalq.tasks.recover import recover
    from evalq.tasks.webhooks import resend_events

    client.start()
    resent = recover(client.app, older_than=timedelta(0))
    events = resend_events(client.app, every_pending=True)
    refreshes = resend_refreshes(client.app)
    log.warning(
        "no broker configured (EVALQ_BROKER_URL): submissions are evaluated in this process; "
        "%d unfinished submission(s), %d pending webhook event(s) and %d scheduled refresh(es) "
        "from an earlier run sent again",
        len(resent),
        len(events),
        len(refreshes),
    )


def _openapi(app: FastAPI) -> dict[str, Any]:
    """FastAPI's document plus the wire models the routes read by hand (their request bodies).

    The ``profile`` of a task is the deployment's profile names, so the served document says
    what this API accepts (docs/openapi.json is generated with no EVALQ_PROFILE_DIR).
    """
    if app.openapi_schema is None:
        document = FastAPI.openapi(app)
        _, wire = models_json_schema(
            [
                (Submission, "validation"),
                (SubmissionBatch, "validation"),
                (Task, "validation"),
                (WebhookRequest, "validation"),
                (BackfillRequest, "validation"),
                (LabelBatch, "validation"),
                (DecisionRequest, "validation"),
                (PlanRequest, "validation"),
            ],
            ref_template="#/components/schemas/{model}",
        )
        schemas = document.setdefault("components", {}).setdefault("schemas", {})
        for name, schema in wire.get("$defs", {}).items():
            if schemas.setdefault(name, schema) != schema:  # two models of one name
                raise RuntimeError(f"the OpenAPI document has two schemas named {name!r}")
        profile = schemas["Task"]["properties"]["profile"]
        profile["enum"] = profile_names(app.state.settings)  # what put_task accepts, no more
        schemas["TaskBody"] = _task_body(schemas["Task"])
        schemas["Submission"].setdefault("allOf", []).extend(
            [PLAN_NEEDS_VARIANT, TICKET_NEEDS_VARIANT]
        )
        app.openapi_schema = document
    return app.openapi_schema


def _task_body(task: dict[str, Any]) -> dict[str, Any]:
    """The body of ``PUT /v1/tasks/{task_id}``: a `Task` whose ``id`` may be left out (the path
    names the task), as the route reads it."""
    body = copy.deepcopy(task)
    body["title"] = "TaskBody"
    body["required"] = [name for name in body.get("required", []) if name != "id"]
    body["properties"]["id"]["description"] = (
        "Optional: the path names the task; when given, it must equal the path's task id."
    )
    return body
