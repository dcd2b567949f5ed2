"""validate_evaluation: the spec's range and plausibility rules."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable

import pytest

from evalq.core.profile import ArenaProfile
from evalq.core.results import ArenaScores
from evalq.core.schemas import Evidence, Task
from evalq.scoring.arena import ArenaRun, Baseline, score_arena_run, validate_evaluation

TASK = Task(id="t1", category="debugging")


@pytest.fixture
def scored(
    make_run: Callable[..., ArenaRun], make_baseline: Callable[..., Baseline], arena: ArenaProfile
) -> tuple[ArenaScores, ArenaRun]:
    run = make_run(total_tokens=3000, tool_calls=7, execution_time=600.0, cost_usd=0.1)
    return score_arena_run(run, TASK, Evidence(), make_baseline(), arena), run


def test_sound_evaluation_has_no_problems(scored: tuple[ArenaScores, ArenaRun]) -> None:
    score, run = scored
    assert validate_evaluation(score, run) == []


@pytest.mark.parametrize("field", ["overall", "efficiency", "speed", "cost", "correctness"])
@pytest.mark.parametrize("value", [-0.1, 100.5, math.nan])
def test_out_of_range(scored: tuple[ArenaScores, ArenaRun], field: str, value: float) -> None:
    score, run = scored
    problems = validate_evaluation(score.model_copy(update={f"{field}_score": value}), run)
    assert problems == [f"{field}_score out of range: {value}"]


def test_efficiency_and_speed_both_above_95(scored: tuple[ArenaScores, ArenaRun]) -> None:
    score, run = scored
    both = score.model_copy(update={"efficiency_score": 95.5, "speed_score": 96.0})
    assert validate_evaluation(both, run) == [
        "Suspicious: Both efficiency and speed scores are extremely high"
    ]
    # exactly 95 is not above 95
    assert (
        validate_evaluation(
            score.model_copy(update={"efficiency_score": 95.0, "speed_score": 100.0}), run
        )
        == []
    )


def test_low_token_count(scored: tuple[ArenaScores, ArenaRun]) -> None:
    score, run = scored
    assert validate_evaluation(score, dataclasses.replace(run, total_tokens=9)) == [
        "Suspiciously low token count"
    ]
    assert validate_evaluation(score, dataclasses.replace(run, total_tokens=10)) == []


def test_score_of_another_run(scored: tuple[ArenaScores, ArenaRun]) -> None:
    score, run = scored
    assert len(validate_evaluation(score, dataclasses.replace(run, submission_id="s9"))) == 1
