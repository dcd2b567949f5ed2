"""A power plan: how many runs per group a comparison needs (served by GET /v1/tasks/{id}/plan).

Computed by `evalq.read.power`; kept here, with no dependency, so the HTTP clients return it.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Spread = Literal["within groups", "across runs", "none"]


class PowerPlan(BaseModel):
    """Body of GET /v1/tasks/{id}/plan: runs per group needed to detect ``detect``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    task_id: str
    score: str = Field(description="The ranking score the runs are compared by.")
    groups_by: Literal["variant", "agent"] = Field(
        description="What a group is: a variant (Scylla) or an agent (tool and model)."
    )
    detect: float = Field(description="The difference to detect, in the score's units.")
    detect_source: Literal["request", "profile", "default"]
    alpha: float = Field(description="Two-sided level: 1 - the profile's confidence level.")
    power: float
    runs_counted: int = Field(description="Runs the noise was measured on.")
    groups: int = Field(description="Groups among them.")
    spread: Spread = Field(
        description="within groups: pooled over groups of two or more runs; across runs: no "
        "group had two, the spread of all runs stands in (overstates the count); none: "
        "fewer than two runs, no plan."
    )
    sd: float | None = Field(description="Standard deviation of one run's score.")
    sd_difference: float | None = Field(description="sqrt(2) * sd: one pair's difference.")
    runs: int | None = Field(
        description="Runs per group (pairs) needed; null when the noise is unknown or more "
        "than 100,000 would be needed."
    )
    floor: int = Field(description="Fewest pairs at which the test can reject at alpha.")
    note: str
