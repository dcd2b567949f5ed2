"""GET /v1/compare: groups of submissions compared over the tasks or scenarios they share."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query

from evalq.producer.api.auth import require
from evalq.producer.api.deps import SessionDep, SettingsDep
from evalq.producer.api.errors import ERROR_RESPONSES
from evalq.producer.api.reports import CompareReport
from evalq.read.compare import compare
from evalq.scoring.comparison import Correction

router = APIRouter(prefix="/v1", tags=["compare"])


@router.get("/compare", dependencies=[Depends(require("read"))], responses=ERROR_RESPONSES)
def get_compare(
    session: SessionDep,
    settings: SettingsDep,
    tasks: Annotated[
        str,
        Query(
            min_length=1,
            max_length=1000,
            description="A task id, ids separated by commas, or globs (arena-*).",
        ),
    ],
    by: Annotated[str, Query(max_length=200, description="model, tool, variant or metadata.KEY.")],
    values: Annotated[
        list[str],
        Query(
            max_length=50,
            description="The groups, the reference first; repeat the parameter "
            "(values=A&values=B). By variant: every variant when omitted.",
        ),
    ] = [],  # noqa: B006 - FastAPI copies query defaults per request
    correction: Annotated[
        Correction, Query(description="Correction of several comparisons.")
    ] = "holm",
    seed: Annotated[int, Query(ge=0, le=2**32 - 1, description="Seed of every draw.")] = 0,
) -> CompareReport:
    """Is B better than A on these tasks, by how much, how sure (docs/statistics.md).

    Each group is compared with the first over the tasks (or a suite's scenarios) both were
    scored on, by the tasks' own ranking score: a paired bootstrap interval of the difference,
    Wilcoxon's signed-rank test, McNemar's exact test on pass/fail, Cliff's delta; unpaired
    (Mann-Whitney U, labelled) where they share fewer than two. A single Scylla task compared
    by variant also carries the variant analysis (uplift intervals, worth-it verdicts).
    """
    result = compare(
        session,
        tasks=tasks,
        by=by,
        values=values,
        correction=correction,
        seed=seed,
        settings=settings,
    )
    return CompareReport.model_validate(result.to_dict())
