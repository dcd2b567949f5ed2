"""The judge's agreement with people as it is served: per task, rubric and judge model.

Computed by `evalq.judge.validation.judge_agreement` (docs/judge.md, "Agreement with people");
here so that the HTTP clients read it without importing the judge.
"""

from __future__ import annotations

from pydantic import BaseModel, Field


class RubricAgreement(BaseModel):
    """Agreement on one rubric, for one judge model, over one scope (a task, or all tasks)."""

    task_id: str | None = Field(description="The task; None: pooled over every task asked for.")
    rubric: str
    model: str = Field(description="The judge model (a panel member counts on its own).")
    pairs: int = Field(description="(run, labeller) pairs the judge also scored: the n.")
    runs: int = Field(description="Runs among those pairs.")
    alpha: float | None = Field(
        description="Judge-human Krippendorff's alpha, ordinal; None when undefined."
    )
    alpha_ci: tuple[float, float] | None = Field(
        description="95% percentile bootstrap interval over runs; None with too few runs."
    )
    bias: float | None = Field(
        description="Mean of judge - person on the 1-5 scale (positive: the judge is kinder)."
    )
    human_alpha: float | None = Field(
        description="Human-human alpha over runs with two or more labellers (the ceiling)."
    )
    human_runs: int = Field(description="Runs with two or more labellers.")
    validated: bool = Field(description="pairs >= min_labels and alpha >= min_alpha.")
    note: str = Field(description="Why it is (not) validated, in words.")


class JudgeAgreement(BaseModel):
    """Judge-human agreement of a set of tasks (`evalq judge agreement`, its API route)."""

    tasks: list[str]
    min_labels: int = Field(description="The profile's judge.min_labels.")
    min_alpha: float = Field(description="The profile's judge.min_alpha.")
    rubrics: list[RubricAgreement] = Field(
        description="Per task, rubric and model; then pooled over the tasks when there are two "
        "or more."
    )

    def not_validated(self) -> list[RubricAgreement]:
        """The entries whose judge scores are not validated (the pooled ones when present)."""
        pooled = [entry for entry in self.rubrics if entry.task_id is None]
        return [entry for entry in pooled or self.rubrics if not entry.validated]
