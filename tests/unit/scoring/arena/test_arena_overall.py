"""score_arena_run: category weights, normalisation, difficulty, imputation, rounding at the
edge."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from evalq.core.errors import InvalidInput
from evalq.core.profile import ArenaProfile
from evalq.core.schemas import Evidence, Task
from evalq.scoring.arena import ArenaRun, Baseline, dimension_weights, score_arena_run

Run = Callable[..., ArenaRun]
Base = Callable[..., Baseline]


def task(category: str = "backend_development", difficulty: str = "beginner") -> Task:
    return Task.model_validate(
        {
            "id": "t1",
            "category": category,
            "difficulty": difficulty,
            "success_criteria": [{"type": "no_errors"}, {"type": "tests_pass"}],
        }
    )


def run_fields() -> dict[str, Any]:
    # tokens 75, tool calls 70, iterations 85 -> efficiency 75.5 (see test_arena_dimensions)
    # no time -> speed 0, not reported (the worst value); cost 0.06 -> 75
    return {"total_tokens": 2000, "tool_calls": 5, "iterations": 2, "cost_usd": 0.06}


EVIDENCE = Evidence()  # no_errors passes, tests_pass fails (no tests): correctness 50


def test_backend_development_hand_computed(
    make_run: Run, make_baseline: Base, arena: ArenaProfile
) -> None:
    score = score_arena_run(make_run(**run_fields()), task(), EVIDENCE, make_baseline(), arena)
    # backend weights .35 / .30 / .20 / .15:
    # 0.35 * 75.5 + 0.30 * 0 + 0.20 * 75 + 0.15 * 50 = 26.425 + 0 + 15 + 7.5 = 48.925
    assert (
        score.efficiency_score,
        score.speed_score,
        score.cost_score,
        score.correctness_score,
    ) == pytest.approx((75.5, 0.0, 75.0, 50.0))
    assert score.unadjusted_score == pytest.approx(48.925)
    assert score.overall_score == pytest.approx(48.925)
    assert score.difficulty_factor == 1.0
    assert score.not_reported == ("speed",)
    assert [(c.type, c.passed) for c in score.criteria] == [
        ("no_errors", True),
        ("tests_pass", False),
    ]
    assert not score.baseline_is_default


def test_category_changes_the_weights(
    make_run: Run, make_baseline: Base, arena: ArenaProfile
) -> None:
    score = score_arena_run(
        make_run(**run_fields()), task("frontend_development"), EVIDENCE, make_baseline(), arena
    )
    # frontend .30 / .25 / .15 / .30: 22.65 + 0 + 11.25 + 15 = 48.9
    assert score.overall_score == pytest.approx(48.9)


def test_missing_category_falls_back_to_the_general_weights(
    make_run: Run, make_baseline: Base
) -> None:
    profile = ArenaProfile(category_weights={})
    score = score_arena_run(make_run(**run_fields()), task(), EVIDENCE, make_baseline(), profile)
    # .35 / .25 / .20 / .20: 26.425 + 0 + 15 + 10 = 51.425
    assert score.breakdown == pytest.approx(
        {
            "efficiency_weight": 0.35,
            "speed_weight": 0.25,
            "cost_weight": 0.20,
            "correctness_weight": 0.20,
        }
    )
    assert score.overall_score == pytest.approx(51.425)


def test_a_task_without_a_category_uses_the_general_weights(
    make_run: Run, make_baseline: Base, arena: ArenaProfile
) -> None:
    uncategorised = Task.model_validate({"id": "t1", "success_criteria": [{"type": "no_errors"}]})
    assert uncategorised.category is None
    score = score_arena_run(
        make_run(**run_fields()), uncategorised, EVIDENCE, make_baseline(), arena
    )
    assert score.breakdown == pytest.approx(
        {
            "efficiency_weight": 0.35,
            "speed_weight": 0.25,
            "cost_weight": 0.20,
            "correctness_weight": 0.20,
        }
    )


def test_weights_are_normalised_by_their_sum(make_run: Run, make_baseline: Base) -> None:
    weights = {"efficiency": 1.0, "speed": 1.0, "cost": 1.0, "correctness": 1.0}
    profile = ArenaProfile(weights=weights, category_weights={})
    score = score_arena_run(make_run(**run_fields()), task(), EVIDENCE, make_baseline(), profile)
    # equal weights summing to 4 = the plain mean: (75.5 + 0 + 75 + 50) / 4 = 50.125
    assert score.overall_score == pytest.approx(50.125)
    assert sum(score.breakdown.values()) == pytest.approx(1.0)


@pytest.mark.parametrize(
    ("difficulty", "expected"),
    [("beginner", 48.925), ("intermediate", 53.8175), ("advanced", 58.71)],
    # 48.925 * 1.1 = 53.8175; 48.925 * 1.2 = 58.71
)
def test_difficulty_adjusts_the_overall_only(
    make_run: Run, make_baseline: Base, arena: ArenaProfile, difficulty: str, expected: float
) -> None:
    score = score_arena_run(
        make_run(**run_fields()), task(difficulty=difficulty), EVIDENCE, make_baseline(), arena
    )
    assert score.overall_score == pytest.approx(expected)
    assert score.unadjusted_score == pytest.approx(48.925)
    assert score.efficiency_score == pytest.approx(75.5)


def test_difficulty_bonus_is_capped_at_100(
    make_run: Run, make_baseline: Base, arena: ArenaProfile
) -> None:
    perfect = make_run(total_tokens=500, tool_calls=1, execution_time=10.0, cost_usd=0.001)
    evidence = Evidence(tests=[{"name": "a", "passed": True}])  # type: ignore[list-item]
    score = score_arena_run(perfect, task(difficulty="advanced"), evidence, make_baseline(), arena)
    assert score.unadjusted_score == pytest.approx(100.0)
    assert score.overall_score == 100.0
    slower = make_run(total_tokens=500, tool_calls=1, execution_time=930.0, cost_usd=0.001)
    # time halfway through 60..1800 s: speed 100 * 0.5 ** 0.7 = 61.5572
    # backend: 0.35 * 100 + 0.30 * 61.5572 + 0.20 * 100 + 0.15 * 100 = 88.4672; x 1.2 -> 100
    adjusted = score_arena_run(
        slower, task(difficulty="advanced"), evidence, make_baseline(), arena
    )
    assert adjusted.unadjusted_score == pytest.approx(70 + 0.30 * 100 * 0.5**0.7)
    assert adjusted.overall_score == 100.0


def test_unlisted_difficulty_has_no_adjustment(make_run: Run, make_baseline: Base) -> None:
    profile = ArenaProfile(difficulty={"beginner": 1.0})
    score = score_arena_run(
        make_run(**run_fields()), task(difficulty="advanced"), EVIDENCE, make_baseline(), profile
    )
    assert score.difficulty_factor == 1.0 and score.overall_score == pytest.approx(48.925)


def test_not_reported_names_both_missing_dimensions_and_scores_them_worst(
    make_run: Run, make_baseline: Base, arena: ArenaProfile
) -> None:
    score = score_arena_run(make_run(), task(), EVIDENCE, make_baseline(), arena)
    assert score.not_reported == ("speed", "cost")
    assert (score.speed_score, score.cost_score) == (0.0, 0.0)
    measured = score_arena_run(
        make_run(execution_time=100.0, cost_usd=0.1), task(), EVIDENCE, make_baseline(), arena
    )
    assert measured.not_reported == ()


def test_rounding_only_at_the_edge(make_run: Run, make_baseline: Base, arena: ArenaProfile) -> None:
    run = make_run(**{**run_fields(), "execution_time": 495.0})
    score = score_arena_run(run, task(), EVIDENCE, make_baseline(), arena)
    # speed 0.75 ** 0.7 * 100 = 81.76037..., kept whole inside, 81.76 when written
    assert score.speed_score == pytest.approx(81.76037681770133)
    data = score.model_dump(mode="json")
    assert data["speed_score"] == 81.76
    # overall: 26.425 + 0.30 * 81.76038 + 15 + 7.5 = 73.45311 -> 73.45
    assert data["overall_score"] == 73.45
    assert data["breakdown"]["speed_weight"] == pytest.approx(0.30)
    assert data["not_reported"] == []
    assert data["criteria"][1] == {
        "type": "tests_pass",
        "passed": False,
        "reason": "no tests reported",
    }


def test_run_of_another_task_rejected(
    make_run: Run, make_baseline: Base, arena: ArenaProfile
) -> None:
    with pytest.raises(InvalidInput):
        score_arena_run(make_run(task_id="other"), task(), EVIDENCE, make_baseline(), arena)


def test_weights_without_any_dimension_rejected() -> None:
    profile = ArenaProfile(weights={"elegance": 1.0}, category_weights={})
    with pytest.raises(InvalidInput):
        dimension_weights(task(), profile)
