"""Human labels on the wire: what a person records about a run, and the stored view of it.

A label is one person's judgment of one run: a 1-5 score per judge rubric (the judge's own
scale, docs/judge.md), and/or the task's decision (a PeerRead recommendation, a pass or a fail),
with an optional note. Several labellers may label one run; the same labeller labelling it again
replaces their label (so importing a file twice stores it once). Labels are what the judge's
scores are checked against (`evalq.judge.validation`).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError

from evalq.core.errors import MAX_PROBLEMS, InvalidInput
from evalq.core.profile import Recommendation
from evalq.core.schemas import (
    Flag,
    RubricName,
    Storable,
    Strict,
    SubmissionId,
    invalid_input,
)

MAX_LABELS = 1000
"""Most labels one request (or one file) carries."""
MAX_NOTE_CHARS = 2000
SCORE_RULE = "a score is an integer from 1 (poor) to 5 (excellent)"
EMPTY_RULE = "a label needs at least one of: scores, recommendation, passed"
TWICE_RULE = "labels the same run as an earlier item of this batch; one label per labeller and run"


def _score(value: object) -> object:
    # Strict: True, 4.0 and "4" are errors, never coerced (the judge's own rule, rubrics.py).
    if type(value) is not int or not 1 <= value <= 5:
        raise ValueError(SCORE_RULE)
    return value


HumanScore = Annotated[int, Field(ge=1, le=5), BeforeValidator(_score)]
Labeller = Annotated[
    str,
    Field(min_length=1, max_length=100, pattern=r"^[A-Za-z0-9][A-Za-z0-9._@:\-]*$"),
    Storable,
]
"""Who labelled: an id of letters, digits and ``._@:-`` (an e-mail address fits)."""
Note = Annotated[str, Field(max_length=MAX_NOTE_CHARS), Storable]


NOT_EMPTY: dict[str, Any] = {
    "anyOf": [
        {"required": ["scores"], "properties": {"scores": {"minProperties": 1}}},
        {
            "required": ["recommendation"],
            "properties": {"recommendation": {"not": {"type": "null"}}},
        },
        {"required": ["passed"], "properties": {"passed": {"type": "boolean"}}},
    ]
}
"""`EMPTY_RULE` in the OpenAPI document."""


class LabelRequest(Strict):
    """One person's judgment of one run (the body's items of ``POST /v1/labels``): at least one
    of scores, recommendation, passed."""

    model_config = ConfigDict(json_schema_extra=NOT_EMPTY)

    submission_id: SubmissionId = Field(description="The run labelled; it must exist.")
    labeller: Labeller = Field(description="Who labelled it (e.g. an e-mail address).")
    scores: dict[RubricName, HumanScore] = Field(
        default_factory=dict,
        description="Rubric -> 1-5 score on the judge's scale (1 poor ... 5 excellent).",
    )
    recommendation: Recommendation | None = Field(
        default=None, description="The task's decision for a PeerRead review task."
    )
    passed: Flag | None = Field(default=None, description="The task's decision: pass or fail.")
    note: Note | None = Field(default=None, description="Free text for people.")


class LabelBatch(Strict):
    """The body of ``POST /v1/labels``: every label is stored, or none is."""

    labels: list[LabelRequest] = Field(
        min_length=1, max_length=MAX_LABELS, description=f"At most {MAX_LABELS}."
    )


class Label(BaseModel):
    """A stored label as every reader sees it."""

    submission_id: str
    task_id: str
    labeller: str
    scores: dict[RubricName, int]
    recommendation: Recommendation | None
    passed: bool | None
    note: str | None
    created_at: datetime
    updated_at: datetime = Field(description="Later than created_at when the label was replaced.")


class LabelList(BaseModel):
    """Labels, ordered by run and then labeller."""

    labels: list[Label]


class LabelCandidate(BaseModel):
    """A run the judge cascade asks a person to label."""

    submission_id: str
    task_id: str
    reason: Literal["judge uncertain", "audit"] = Field(
        description="'judge uncertain': no level was confident enough; 'audit': drawn for the "
        "audit share (every level judged it, so its label calibrates them all)."
    )
    labellers: list[str] = Field(description="Who labelled it already (oldest label first).")


class LabelQueue(BaseModel):
    """Runs waiting for people's labels: 'judge uncertain' first, then audited; by run id."""

    candidates: list[LabelCandidate]


def parse_label(data: Any) -> LabelRequest:
    """One valid label, or `InvalidInput` naming each bad field and its rule."""
    if isinstance(data, LabelRequest):
        return data
    try:
        label = LabelRequest.model_validate(data)
    except ValidationError as error:
        raise invalid_input(error) from None
    if not label.scores and label.recommendation is None and label.passed is None:
        raise InvalidInput([("scores", EMPTY_RULE)])
    return label


def parse_labels(items: Iterable[LabelRequest | Any]) -> list[LabelRequest]:
    """Validate a batch: nothing is returned unless every item is valid.

    Raises:
        InvalidInput: each bad item's problems, named ``[INDEX].field``; an item labelling the
            same run as an earlier one by the same labeller is refused on ``labeller``.
    """
    parsed: list[LabelRequest] = []
    problems: list[tuple[str, str]] = []
    seen: set[tuple[str, str]] = set()
    total = 0
    for index, item in enumerate(items):
        if index == MAX_LABELS:
            problems.append(("(root)", f"holds more than {MAX_LABELS} labels"))
            total += 1
            break
        try:
            label = parse_label(item)
        except InvalidInput as error:
            problems += [(f"[{index}].{field}", rule) for field, rule in error.problems]
            total += error.total
            continue
        if (label.submission_id, label.labeller) in seen:
            problems.append((f"[{index}].labeller", TWICE_RULE))
            total += 1
        seen.add((label.submission_id, label.labeller))
        parsed.append(label)
    if problems:
        raise InvalidInput(problems[:MAX_PROBLEMS], total=total)
    if not parsed:
        raise InvalidInput([("labels", "holds no label; send at least one")])
    return parsed


def unknown_run_rule(submission_id: str) -> str:
    """The rule broken by a label of a run that is not stored."""
    return f"no run {submission_id!r} is stored; only stored runs can be labelled"
