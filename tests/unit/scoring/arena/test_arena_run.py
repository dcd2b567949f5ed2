"""ArenaRun: extraction from a submission, pricing, missing figures, validation."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import pytest

from evalq.core.errors import InvalidInput
from evalq.core.profile import Profile
from evalq.core.schemas import Submission
from evalq.scoring.arena import ArenaRun


def submission(**usage: Any) -> Submission:
    return Submission.model_validate(
        {"id": "s1", "task_id": "t1", "tool": "cli", "model": "gpt-4o", "usage": usage}
    )


def test_reported_cost_is_used(profile: Profile) -> None:
    sub = submission(
        input_tokens=1000, output_tokens=2000, tool_calls=4, iterations=2,
        execution_time=12.5, cost_usd=0.5,
    )  # fmt: skip
    run = ArenaRun.from_submission(sub, profile)
    assert run == ArenaRun("s1", "t1", 3000, 4, 2, 12.5, 0.5, "cli", "gpt-4o")


def test_cost_priced_from_profile_when_absent(profile: Profile) -> None:
    # gpt-4o: $5 / Mtok in, $15 / Mtok out -> (1000 * 5 + 2000 * 15) / 1e6 = 0.035
    run = ArenaRun.from_submission(submission(input_tokens=1000, output_tokens=2000), profile)
    assert run.cost_usd == pytest.approx(0.035)


def test_cost_none_without_token_split_or_price(profile: Profile) -> None:
    assert ArenaRun.from_submission(submission(total_tokens=3000), profile).cost_usd is None
    unpriced = submission(input_tokens=1, output_tokens=2).model_copy(update={"model": "mystery"})
    assert ArenaRun.from_submission(unpriced, profile).cost_usd is None


def test_zero_time_is_missing(profile: Profile) -> None:
    run = ArenaRun.from_submission(submission(total_tokens=10, execution_time=0.0), profile)
    assert run.execution_time is None
    assert run.measured_time is None


def test_zero_figures_count_as_missing(make_run: Callable[..., ArenaRun]) -> None:
    run = make_run(execution_time=0.0, cost_usd=0.0)
    assert run.measured_time is None and run.measured_cost is None
    run = make_run(execution_time=3.0, cost_usd=0.02)
    assert run.measured_time == 3.0 and run.measured_cost == 0.02


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("iterations", 0),
        ("total_tokens", -1),
        ("tool_calls", -1),
        ("execution_time", -1.0),
        ("execution_time", math.nan),
        ("cost_usd", math.inf),
    ],
)
def test_invalid_figures_rejected(
    make_run: Callable[..., ArenaRun], field: str, value: float
) -> None:
    with pytest.raises(InvalidInput) as error:
        make_run(**{field: value})
    assert error.value.problems[0][0] == field
