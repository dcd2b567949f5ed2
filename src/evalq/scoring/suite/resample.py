"""The final score of a resample of a run's scenarios (for rank intervals, `scoring.rank_interval`).

A bootstrap resample draws scenarios with replacement, so one scenario may appear several times;
`suite_metrics` wants unique ids, so every repeat gets its own id (``CORE-001#2``) and counts as
one more scenario, as the bootstrap means it to. Everything else is the suite scorer's own code.
"""

from __future__ import annotations

from collections.abc import Sequence

from evalq.core.profile import SuiteProfile
from evalq.core.schemas import ScenarioResult
from evalq.scoring.suite.aggregate import suite_metrics
from evalq.scoring.suite.score import final_score


def distinct(scenarios: Sequence[ScenarioResult]) -> list[ScenarioResult]:
    """``scenarios`` with every repeat of an id renamed ``ID#n`` (n = 2, 3, ...)."""
    seen: dict[str, int] = {}
    renamed = []
    for scenario in scenarios:
        count = seen[scenario.id] = seen.get(scenario.id, 0) + 1
        renamed.append(
            scenario if count == 1 else scenario.model_copy(update={"id": f"{scenario.id}#{count}"})
        )
    return renamed


def resampled_final_score(
    scenarios: Sequence[ScenarioResult], profile: SuiteProfile
) -> float | None:
    """The final score (`final_score`) of a resample, repeats counted as further scenarios.

    The gate is not recomputed: whether a run passes is a decision about the scenarios it ran
    (a resample that leaves out a failed required scenario would pass it by chance).
    """
    return final_score(suite_metrics(distinct(scenarios), profile), profile).value
