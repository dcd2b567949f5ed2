"""GET /v1/judge/agreement: does the judge agree with people's labels?"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query

from evalq.core.judge_validation import JudgeAgreement
from evalq.producer.api.auth import require
from evalq.producer.api.deps import ClientDep
from evalq.producer.api.errors import ERROR_RESPONSES
from evalq.read.compare import TASKS_PATTERN

router = APIRouter(prefix="/v1/judge", tags=["judge"])


@router.get("/agreement", dependencies=[Depends(require("read"))], responses=ERROR_RESPONSES)
def get_judge_agreement(
    client: ClientDep,
    tasks: Annotated[
        str,
        Query(
            min_length=1,
            max_length=1000,
            description="A task id, ids separated by commas, or globs (peerread-*); no name "
            "empty, each names at least one task.",
            json_schema_extra={"pattern": TASKS_PATTERN},
        ),
    ],
    seed: Annotated[int, Query(ge=0, le=2**32 - 1, description="Seed of the bootstrap.")] = 0,
) -> JudgeAgreement:
    """Judge-human agreement per task, rubric and judge model (and pooled over the tasks).

    For each: Krippendorff's alpha (ordinal) between the judge's rubric scores (on the 1-5
    scale) and people's labels with a 95% bootstrap interval over runs, the mean signed
    difference judge - person (bias), n, and the agreement between people (the ceiling). A
    rubric's judge is ``validated`` once its labelled pairs reach the profile's
    ``judge.min_labels`` and its alpha ``judge.min_alpha`` (docs/judge.md).
    """
    return client.judge_agreement(tasks, seed=seed)
