"""GET /v1/compare: groups of submissions compared over the tasks or scenarios they share."""

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
from evalq.read.compare import BY_PATTERN, BY_RULE, TASKS_PATTERN, CompareReport
from evalq.stats.comparison import Correction
from evalq.store.db import read_scope

router = APIRouter(prefix="/v1", tags=["compare"])


@router.get("/compare", dependencies=[Depends(require("read"))], responses=ERROR_RESPONSES)
async def get_compare(
    request: Request,
    settings: SettingsDep,
    tasks: Annotated[
        str,
        Query(
            min_length=1,
            max_length=1000,
            description="A task id, ids separated by commas, or globs (arena-*); no name "
            "empty, each names at least one task.",
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
    values: Annotated[
        list[str],
        Query(
            description="The groups, the reference first; repeat the parameter "
            "(values=A&values=B). By variant: every variant when omitted. At most "
            "EVALQ_COMPARE_MAX_GROUPS (20).",
        ),
    ] = [],  # noqa: B006 - FastAPI copies query defaults per request
    correction: Annotated[
        Correction, Query(description="Correction of several comparisons.")
    ] = "holm",
    seed: Annotated[int, Query(ge=0, le=2**32 - 1, description="Seed of every draw.")] = 0,
    include_held: Annotated[
        bool,
        Query(
            description="Compare the runs held for review (flagged outliers not yet accepted) "
            "too; by default they are left out and counted in left_out."
        ),
    ] = False,
) -> CompareReport:
    """Is B better than A on these tasks, by how much, how sure (docs/statistics.md).

    Each group is compared with the first over the tasks (or a suite's scenarios) both were
    scored on, by the tasks' own ranking score: a paired bootstrap interval of the difference,
    Wilcoxon's signed-rank test, McNemar's exact test on pass/fail, Cliff's delta; unpaired
    (Mann-Whitney U, labelled) where they share fewer than two. A single Scylla task compared
    by variant also carries the variant analysis (uplift intervals, worth-it verdicts).

    The request is refused (422, naming the limit and its setting) before anything is loaded
    when it names more than ``EVALQ_COMPARE_MAX_TASKS`` tasks or ``EVALQ_COMPARE_MAX_GROUPS``
    groups, or its tasks hold more than ``EVALQ_COMPARE_MAX_SUBMISSIONS`` evaluated
    submissions; before any statistic, when it pairs more than ``EVALQ_COMPARE_MAX_UNITS``
    units. ``EVALQ_COMPARE_CONCURRENCY`` comparisons run at once; others wait their turn.
    """

    def run() -> CompareReport:
        with read_scope(settings) as session:
            return served.comparison(
                session,
                tasks=tasks,
                by=by,
                values=values,
                correction=correction,
                seed=seed,
                settings=settings,
                include_held=include_held,
            )

    # Waiting for a turn holds no thread: other requests keep the thread pool.
    slots: asyncio.Semaphore = request.app.state.compare_slots
    async with slots:
        return await run_in_threadpool(run)
