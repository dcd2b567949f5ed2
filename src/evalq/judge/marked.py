"""Judging a run whose output carries instructions to its evaluator: never above the same run
without them.

The fences (`evalq.judge.prompts`) tell the judge that the output is data; a model may still
obey it. So where sentences of the output are marked (`evalq.scoring.injection`), the run is
judged twice, on the output as written and on the output without the marked sentences, and
each rubric keeps the lower of its two scores (`lower_judgment`). An instruction that steered
the judge upward is then worth nothing; one that made an honest judge mark the run down still
counts; a sentence marked by mistake can lower a rubric, never raise it.

A rubric that one judgment could not score takes that judgment's record (failed, or skipped
for the budget): the rubric is then missing, which makes the composite partial (ranked below
complete ones), never the other judgment's possibly steered score. When nothing is left of the
output once the marked sentences are gone, a rubric that has no review to read without them
scores 0: an output that is all instruction has no review in it. The panel, agreement, cascade
and identity records are those of the judgment of the output as written; the cost is both.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Protocol

from evalq.core.results import InjectionMark, JudgeResult, RubricResult
from evalq.core.schemas import Submission, Task


class Judges(Protocol):
    """A judge, panel or cascade: what tier 2 calls."""

    def evaluate(self, submission: Submission, task: Task, *, deadline_s: float) -> JudgeResult:
        """Judge ``submission`` within ``deadline_s`` seconds."""
        ...


def judge_marked(
    judge: Judges,
    submission: Submission,
    task: Task,
    *,
    marks: Sequence[InjectionMark],
    clean: str,
    deadline_s: float,
) -> JudgeResult:
    """``judge``'s result for ``submission``; with ``marks``, the lower, rubric by rubric, of
    its judgments of the output as written and of ``clean`` (the output without them), both
    within ``deadline_s``."""
    started = time.monotonic()
    written = judge.evaluate(submission, task, deadline_s=deadline_s)
    if not marks:
        return written
    left = max(0.0, deadline_s - (time.monotonic() - started))
    without = judge.evaluate(submission.model_copy(update={"output": clean}), task, deadline_s=left)
    return lower_judgment(written, without, marks, nothing_left=not clean.strip())


def lower_judgment(
    written: JudgeResult,
    without: JudgeResult,
    marks: Sequence[InjectionMark],
    *,
    nothing_left: bool = False,
) -> JudgeResult:
    """Each rubric's lower result of two judgments (the module docstring says which record
    a rubric keeps when one side has no score), with ``marks`` recorded."""
    rubrics = tuple(
        _lower(rubric, _find(without, rubric.rubric), nothing_left) for rubric in written.rubrics
    )
    costs = (written.cost_usd, without.cost_usd)
    return written.model_copy(
        update={
            "scores": {r.rubric: r.score for r in rubrics},
            "rubrics": rubrics,
            "failed": any(r.status == "failed" for r in rubrics),
            "errors": tuple(
                r.error.model_copy(update={"rubric": r.rubric})
                for r in rubrics
                if r.status == "failed" and r.error
            ),
            "cost_usd": None if None in costs else sum(c for c in costs if c is not None),
            "injection": tuple(marks),
        }
    )


def _find(result: JudgeResult, name: str) -> RubricResult | None:
    return next((r for r in result.rubrics if r.rubric == name), None)


def _lower(written: RubricResult, without: RubricResult | None, nothing_left: bool) -> RubricResult:
    if without is None or written.score is None:
        return written
    if without.score is not None:
        return without if without.score < written.score else written
    if nothing_left and without.status == "skipped" and without.skip_reason != "budget":
        return written.model_copy(update={"score": 0.0, "criteria": {}})
    return without
