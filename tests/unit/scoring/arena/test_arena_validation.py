"""validate_evaluation: the spec's range and plausibility rules."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable

import pytest

from evalq.core.profile import ArenaProfile
from evalq.core.schemas import Evidence, Task
from evalq.scoring.arena import ArenaRun, ArenaScore, Baseline, score_run, validate_evaluation

TASK = Task(id="t1", category="debugging")


@pytest.fixture
def scored(
    make_run: Callable[..., ArenaRun], make_baseline: Callable[..., Baseline], arena: ArenaProfile
) -> tuple[ArenaScore, ArenaRun]:
    run = make_run(total_tokens=3000, tool_calls=7, execution_time=600.0, cost_usd=0.1)
    return score_run(run, TASK, Evidence(), make_baseline(), arena), run


def test_sound_evaluation_has_no_problems(scored: tuple[ArenaScore, ArenaRun]) -> None:
    score, run = scored
    assert validate_evaluation(score, run) == []


@pytest.mark.parametrize("field", ["overall", "efficiency", "speed", "cost", "correctness"])
@pytest.mark.parametrize("value", [-0.1, 100.5, math.nan])
def test_out_of_range(scored: tuple[ArenaScore, ArenaRun], field: str, value: float) -> None:
    score, run = scored
    problems = validate_evaluation(dataclasses.replace(score, **{field: value}), run)
    assert problems == [f"{field}_score out of range: {value}"]


def test_efficiency_and_speed_both_above_95(scored: tuple[ArenaScore, ArenaRun]) -> None:
    score, run = scored
    both = dataclasses.replace(score, efficiency=95.5, speed=96.0)
    assert validate_evaluation(both, run) == [
        "Suspicious: Both efficiency and speed scores are extremely high"
    ]
    # exactly 95 is not above 95
    assert validate_evaluation(dataclasses.replace(score, efficiency=95.0, speed=100.0), run) == []


def test_low_token_count(scored: tuple[ArenaScore, ArenaRun]) -> None:
    score, run = scored
    assert validate_evaluation(score, dataclasses.replace(run, total_tokens=9)) == [
        "Suspiciously low token count"
    ]
    assert validate_evaluation(score, dataclasses.replace(run, total_tokens=10)) == []


def test_score_of_another_run(scored: tuple[ArenaScore, ArenaRun]) -> None:
    score, run = scored
    assert len(validate_evaluation(score, dataclasses.replace(run, submission_id="s9"))) == 1
