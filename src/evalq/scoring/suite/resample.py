"""The final score of a resample of a run's scenarios (for rank intervals, `stats.rank_interval`).

A bootstrap resample draws scenarios with replacement, so one scenario may appear several
times, and each draw counts as one more scenario, as the bootstrap means it to. Each scenario's
facts (score, pass, weight, counts) are computed once (`scenario_facts`); a resample is only
their aggregation, the suite scorer's own (`aggregate`, `final_score`).
"""

from __future__ import annotations

from collections.abc import Sequence

from evalq.core.profile import SuiteProfile
from evalq.scoring.suite.aggregate import ScenarioFacts, aggregate
from evalq.scoring.suite.score import final_score


def resampled_final_score(facts: Sequence[ScenarioFacts], profile: SuiteProfile) -> float | None:
    """The final score (`final_score`) of a resample given by its scenarios' facts.

    The gate is not recomputed: whether a run passes is a decision about the scenarios it ran
    (a resample that leaves out a failed required scenario would pass it by chance).
    """
    return final_score(aggregate(facts, profile), profile).value
