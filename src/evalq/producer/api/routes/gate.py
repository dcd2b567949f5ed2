"""GET /v1/gate: does a candidate group regress against a baseline group (`evalq gate`)."""

from __future__ import annotations

import asyncio
from typing import Annotated

from fastapi import APIRouter, Depends, Query, Request
from fastapi.concurrency import run_in_threadpool

from evalq.core.metadata import KEY_RULE, MAX_KEY_CHARS
from evalq.producer.api.auth import require
from evalq.producer.api.deps import SettingsDep
from evalq.producer.api.errors import ERROR_RESPONSES
from evalq.read import served
from evalq.read.compare import BY_PATTERN, BY_RULE, TASKS_PATTERN
from evalq.read.gate import GateReport, TooFew
from evalq.stats.comparison import Correction
from evalq.store.db import session_scope

router = APIRouter(prefix="/v1", tags=["compare"])


@router.get("/gate", dependencies=[Depends(require("read"))], responses=ERROR_RESPONSES)
async def get_gate(
    request: Request,
    settings: SettingsDep,
    tasks: Annotated[
        str,
        Query(
            min_length=1,
            max_length=1000,
            description="A task id, ids separated by commas, or globs (arena-*).",
            json_schema_extra={"pattern": TASKS_PATTERN},
        ),
    ],
    by: Annotated[
        str,
        Query(
            max_length=len("metadata.") + MAX_KEY_CHARS,
            description=f"{BY_RULE} (a metadata key: {KEY_RULE}).",
            json_schema_extra={"pattern": BY_PATTERN},
        ),
    ],
    baseline: Annotated[str, Query(min_length=1, max_length=1000, description="Gated against.")],
    candidate: Annotated[str, Query(min_length=1, max_length=1000, description="Gated.")],
    margin: Annotated[
        float, Query(ge=0, description="The drop allowed, on the score's scale.")
    ] = 0.0,
    too_few: Annotated[TooFew, Query(description="The gate's verdict on too few data.")] = "fail",
    correction: Annotated[Correction, Query(description="Correction over the tasks.")] = "holm",
    seed: Annotated[int, Query(ge=0, le=2**32 - 1, description="Seed of every draw.")] = 0,
    include_held: Annotated[bool, Query(description="Gate the runs held for review too.")] = False,
) -> GateReport:
    """Gate a candidate against a baseline with compare's tests (docs/ci.md): ``verdict`` and
    ``exit_status`` (0 pass, 1 regression, 3 too few), each task's figures. Refused (422)
    as GET /v1/compare is, under the same limits, and run in the same concurrency slots."""

    def run() -> GateReport:
        with session_scope(settings.database_url) as session:
            return served.gate_report(
                session,
                tasks=tasks,
                by=by,
                baseline=baseline,
                candidate=candidate,
                margin=margin,
                too_few=too_few,
                correction=correction,
                seed=seed,
                settings=settings,
                include_held=include_held,
            )

    slots: asyncio.Semaphore = request.app.state.compare_slots
    async with slots:
        return await run_in_threadpool(run)
