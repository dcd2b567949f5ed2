"""The judge's agreement with people as it is served: per task, rubric and judge model.

Computed by `evalq.judge.validation.judge_agreement` (docs/judge.md, "Agreement with people");
here so that the HTTP clients read it without importing the judge.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, Field


@dataclass(frozen=True)
class JudgedRun:
    """One judge model's rubric scores of one run, as stored (normalised to [0, 1])."""

    submission_id: str
    task_id: str
    model: str
    scores: Mapping[str, float | None]


@dataclass(frozen=True)
class HumanScore:
    """One person's 1-5 score of one rubric of one run."""

    submission_id: str
    labeller: str
    rubric: str
    score: int


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


class PeopleAgreement(BaseModel):
    """People's own agreement on one rubric over the asked tasks: the judge's ceiling."""

    rubric: str
    alpha: float | None = Field(
        description="Krippendorff's alpha (ordinal) among labellers over the runs two or more "
        "labelled; None when no run was labelled twice."
    )
    runs: int = Field(description="Runs with two or more labellers.")


class JudgeAgreement(BaseModel):
    """Judge-human agreement of a set of tasks (`evalq judge agreement`, its API route)."""

    tasks: list[str]
    min_labels: int = Field(description="The profile's judge.min_labels.")
    min_alpha: float = Field(description="The profile's judge.min_alpha.")
    rubrics: list[RubricAgreement] = Field(
        description="Per task, rubric and model; then pooled over the tasks when there are two "
        "or more."
    )
    people: list[PeopleAgreement] = Field(
        default_factory=list,
        description="Per rubric people labelled, their own agreement pooled over the tasks: "
        "known before any judge has scored.",
    )

    def not_validated(self) -> list[RubricAgreement]:
        """The entries whose judge scores are not validated (the pooled ones when present)."""
        pooled = [entry for entry in self.rubrics if entry.task_id is None]
        return [entry for entry in pooled or self.rubrics if not entry.validated]


class JudgeValidation(BaseModel):
    """Whether the judge scores shown beside it can be trusted: its agreement with people.

    Served as ``judge_validation`` by the leaderboard, a submission's detail, the comparison
    and the report, wherever the judge's scores appear, and wherever people labelled runs that
    no judge scored yet (status ``no judge scores``: then ``people`` says how well the
    labellers agree among themselves); absent when there is neither.
    """

    status: Literal["validated", "not validated", "no judge scores"] = Field(
        description="'validated' only when every rubric and judge model below is; 'no judge "
        "scores': people labelled runs that no judge scored."
    )
    rubrics: list[RubricAgreement] = Field(
        description="Per rubric and judge model: over the one task shown, or pooled over the "
        "tasks shown."
    )
    people: list[PeopleAgreement] = Field(
        default_factory=list,
        description="With status 'no judge scores': people's agreement per rubric they scored; "
        "absent otherwise.",
        exclude_if=lambda value: not value,
    )

    def lines(self) -> list[str]:
        """The judge's validation in words, one line per rubric and model (the CLI, the page)."""
        if self.status == "no judge scores":
            out = ["judge scores: none yet; people's labels agree among themselves as follows"]
            for person in self.people:
                alpha = "no run labelled by two people yet"
                if person.runs:
                    value = "-" if person.alpha is None else f"{person.alpha:.2f}"
                    alpha = f"alpha {value} over {person.runs} run(s) labelled by two or more"
                out.append(f"  {person.rubric} / people: {alpha}")
            return out
        out = [f"judge scores: {self.status} against people's labels"]
        for entry in self.rubrics:
            alpha = "alpha -" if entry.alpha is None else f"alpha {entry.alpha:.2f}"
            if entry.alpha_ci is not None:
                alpha += f" [{entry.alpha_ci[0]:.2f}, {entry.alpha_ci[1]:.2f}]"
            elif entry.alpha is not None:
                alpha += f" (no interval: {entry.runs} labelled run(s))"
            bias = "" if entry.bias is None else f", bias {entry.bias:+.2f}"
            out.append(
                f"  {entry.rubric} / {entry.model}: {alpha}{bias}, n {entry.pairs} ({entry.note})"
            )
        return out
