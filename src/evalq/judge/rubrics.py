"""The three rubrics of spec 001 tier 2: validated verdict types and one module-level Agent each.

A criterion score is an integer 1-5 declared as an enum (``Literal[1, 2, 3, 4, 5]``): JSON-schema
grammars such as llama.cpp's honour ``enum`` but not ``minimum``/``maximum``, so the constraint
holds even for small local models, and pydantic rejects anything else. The model is passed per
call (`Judge`), never bound here.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model, field_validator
from pydantic_ai import Agent

from evalq.core.schemas import RubricName

Score = Literal[1, 2, 3, 4, 5]
RATIONALE_CHARS = 400


class Criterion(BaseModel):
    """One criterion's judgment: a 1-5 score and the reason for it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    score: Score = Field(description="1 = poor, 2 = weak, 3 = adequate, 4 = good, 5 = excellent.")
    rationale: Annotated[str, Field(min_length=1, max_length=RATIONALE_CHARS)] = Field(
        description=f"Why this score, citing the evaluated text; at most {RATIONALE_CHARS} chars."
    )

    @field_validator("score", mode="before")
    @classmethod
    def _exact_integer(cls, value: object) -> object:
        # Literal[1..5] alone would take True as 1 and 5.0 as 5; a judge must answer an integer.
        if type(value) is not int:
            raise ValueError("score must be an integer from 1 to 5")
        return value


class Verdict(BaseModel):
    """Base of the rubric answers: one `Criterion` per field, nothing else."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    def criteria(self) -> dict[str, Criterion]:
        """The criterion judgments by name, in field order (other fields, such as a stated
        probability, left out)."""
        return {
            name: value
            for name in type(self).model_fields
            if isinstance(value := getattr(self, name), Criterion)
        }


@functools.cache
def with_stated_probability(verdict: type[Verdict]) -> type[Verdict]:
    """``verdict`` with one more field: the model's probability that its scores are right.

    A cascade level whose confidence is ``stated`` asks for this type; the verdict stored and
    scored is the plain one (`Verdict.criteria` leaves the probability out).
    """
    return create_model(
        f"{verdict.__name__}WithProbability",
        __base__=verdict,
        probability=(
            float,
            Field(
                ge=0,
                le=1,
                description="Your probability (0 to 1) that a careful expert would give the same "
                "score on every criterion.",
            ),
        ),
    )


class TechnicalAccuracyVerdict(Verdict):
    """Technical accuracy of a review against the paper it reviews."""

    factual_correctness: Criterion = Field(
        description="Are the review's claims supported by the paper?"
    )
    methodology_understanding: Criterion = Field(
        description="Does the reviewer grasp the paper's experimental approach?"
    )
    domain_knowledge: Criterion = Field(description="Is technical terminology used appropriately?")


class ConstructivenessVerdict(Verdict):
    """Constructiveness of a review's feedback to the authors."""

    actionable_feedback: Criterion = Field(description="Specific, implementable suggestions?")
    balanced_critique: Criterion = Field(description="Are both strengths and weaknesses noted?")
    improvement_guidance: Criterion = Field(description="Clear next steps for the authors?")


class PlanningRationalityVerdict(Verdict):
    """Rationality of an agent's plan, judged from a summary of its execution trace."""

    logical_flow: Criterion = Field(description="Do the steps progress coherently?")
    decision_quality: Criterion = Field(description="Were the choices at decision points apt?")
    resource_efficiency: Criterion = Field(description="Were tools and agents used economically?")


_COMMON = (
    "You are a strict, impartial evaluator. Score each criterion from 1 (poor) to 5 (excellent) "
    "and give a short rationale that cites the evaluated text. Answer only with the requested JSON."
)


@dataclass(frozen=True)
class Rubric:
    """A rubric: its verdict type, its agent, the input fields it reads, its version.

    ``version`` is part of the cache key: change it whenever the instructions or the verdict
    type change meaning, so old cached judgments are not reused.
    """

    name: RubricName
    version: str
    verdict: type[Verdict]
    instructions: str
    agent: Agent[None, Verdict]
    fields: tuple[str, ...]

    @property
    def criteria(self) -> tuple[str, ...]:
        """The criterion names, in order."""
        return tuple(self.verdict.model_fields)


def _rubric(
    name: RubricName, version: str, verdict: type[Verdict], task: str, fields: tuple[str, ...]
) -> Rubric:
    instructions = f"{_COMMON}\n{task}"
    agent: Agent[None, Verdict] = Agent(output_type=verdict, instructions=instructions, name=name)
    return Rubric(name, version, verdict, instructions, agent, fields)


TECHNICAL_ACCURACY = _rubric(
    "technical_accuracy",
    "1",
    TechnicalAccuracyVerdict,
    "Evaluate the technical accuracy of the REVIEW of the PAPER excerpt.",
    ("paper", "review"),
)
CONSTRUCTIVENESS = _rubric(
    "constructiveness",
    "1",
    ConstructivenessVerdict,
    "Evaluate the constructiveness of this academic REVIEW.",
    ("review",),
)
PLANNING_RATIONALITY = _rubric(
    "planning_rationality",
    "1",
    PlanningRationalityVerdict,
    "Evaluate the planning rationality of the agent run summarised in EXECUTION_SUMMARY.",
    ("execution_summary",),
)
RUBRICS: tuple[Rubric, ...] = (TECHNICAL_ACCURACY, CONSTRUCTIVENESS, PLANNING_RATIONALITY)
