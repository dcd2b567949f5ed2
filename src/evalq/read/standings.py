"""The read model of the boards: each evaluated run's ranking inputs, stored when they change.

A board ranks by values that depend on the run (its stored scores, its evidence) and, for the
Arena dimensions, on the task's current baseline. Computing them at every read costs the whole
task in Python; here they are computed once and stored as plain columns (`StandingRow`):

- the merge writes a run's row (`write`) in the transaction that stores its evaluation;
- the baseline refresh scores the task's rows again against the new snapshot (`sync`): only the
  three baseline-dependent dimensions, from the submission's usage columns and the stored
  correctness (no payload is decoded);
- both through the projector (`evalq.read.boards.projector`), the read model's one writer; a
  board read never writes: it asks whether the rows are current (`current`: one statement of
  three index counts) and, when some are missing (a store older than the table, a merge that
  raced a refresh) or scored on another basis, ranks the whole task from its runs until the
  refresh; a quiet board's read skips the question (the refresh's figures say the rows are
  current: `evalq.read.leaderboard.current_figures`).

A run or evaluation stored under an older schema that no longer validates gets a row with its
``problem`` and no ranking value: its board lists it last, marked, instead of failing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pydantic import ValidationError
from sqlalchemy.orm import Session

from evalq.core.errors import InvalidInput
from evalq.core.schemas import canonical_hash
from evalq.core.weights import weighted_mean
from evalq.read.view import TaskContext
from evalq.scoring.arena.cost import cost_score
from evalq.scoring.arena.efficiency import efficiency_score
from evalq.scoring.arena.overall import dimension_weights
from evalq.scoring.arena.run import ArenaRun
from evalq.scoring.arena.scale import clamp_score
from evalq.scoring.arena.speed import speed_score
from evalq.store import standings as table
from evalq.store import task_kinds
from evalq.store.models import EvaluationRow, SubmissionRow
from evalq.store.queries import EVALUATED

CATEGORIES = ("efficiency", "speed", "cost", "correctness")
VALUE_DIGITS = 4
"""A kind's ranking value is compared rounded to this (`evalq.scoring.kinds.sort_key`)."""
CATEGORY_DIGITS = 2
"""An Arena category is ranked rounded to this, as it is displayed."""


def basis_of(context: TaskContext) -> tuple[str, str]:
    """What a row's Arena columns and correctness depend on: ``"<baseline version>:<profile
    hash>"`` and the hash of the task's definition."""
    basis = f"{context.current.version}:{context.profile.hash}"
    return basis, canonical_hash(context.task.model_dump(mode="json"))


class Scorer:
    """The Arena dimensions of runs against a context's baseline, by the functions
    `score_arena_run` uses (so a stored row equals the board's re-scored entry)."""

    def __init__(self, context: TaskContext) -> None:
        self.context = context
        self.weights = dimension_weights(context.task, context.profile.arena)

    def arena(self, run: ArenaRun, correctness: float) -> dict[str, Any]:
        """The row's Arena columns: the unrounded correctness, the rounded category keys and
        the overall before the difficulty factor, rounded as the board ranks it."""
        baseline, profile = self.context.current.baseline, self.context.profile.arena
        dims = (
            efficiency_score(run, baseline, profile).score,
            speed_score(run, baseline, profile).score,
            cost_score(run, baseline, profile).score,
            correctness,
        )
        mean = weighted_mean(dict(zip(CATEGORIES, dims, strict=True)), self.weights).value
        assert mean is not None  # dimension_weights guarantees a positive weight
        return {
            "correctness": correctness,
            "arena_key": round(clamp_score(mean), VALUE_DIGITS),
            **{
                f"{name}_key": round(value, CATEGORY_DIGITS)
                for name, value in zip(CATEGORIES, dims, strict=True)
            },
        }


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, VALUE_DIGITS)


def standing_of(
    context: TaskContext, sub_row: SubmissionRow, evaluation: EvaluationRow
) -> dict[str, Any]:
    """One evaluated run's row of `StandingRow` (its values as a board compares them), or a
    row marked with its ``problem`` when its stored payload or scores no longer validate."""
    basis, task_hash = basis_of(context)
    row: dict[str, Any] = {
        "submission_id": sub_row.id,
        "task_id": sub_row.task_id,
        "basis": basis,
        "task_hash": task_hash,
        "status": evaluation.status,
        "problem": None,
    }
    try:
        scored = context.scored(sub_row, evaluation)
    except (ValidationError, InvalidInput, ValueError, TypeError, KeyError) as broken:
        return row | blank_standing(problem_of(broken))
    scores, arena = scored.scores, scored.arena
    return row | {
        "partial": scored.values.partial,
        "correctness": arena.correctness_score,
        "arena_key": round(arena.unadjusted_score, VALUE_DIGITS),
        "efficiency_key": round(arena.efficiency_score, CATEGORY_DIGITS),
        "speed_key": round(arena.speed_score, CATEGORY_DIGITS),
        "cost_key": round(arena.cost_score, CATEGORY_DIGITS),
        "correctness_key": round(arena.correctness_score, CATEGORY_DIGITS),
        "peerread_key": _rounded(scored.values.peerread_composite),
        "scylla_key": _rounded(scored.values.scylla_composite),
        "suite_passed": scored.values.suite_passed,
        "suite_key": _rounded(scored.values.suite_final_score),
        "recommendation": scores.peerread.recommendation if scores.peerread else None,
        "unjudged": bool(scores.peerread and scores.peerread.note),
    }


def blank_standing(problem: str) -> dict[str, Any]:
    """The ranking columns of a run that cannot be read: no value (ranked last), zero
    categories, and why."""
    return {
        "problem": problem[:500],
        "partial": False,
        "correctness": 0.0,
        "arena_key": None,
        "efficiency_key": 0.0,
        "speed_key": 0.0,
        "cost_key": 0.0,
        "correctness_key": 0.0,
        "peerread_key": None,
        "scylla_key": None,
        "suite_passed": None,
        "suite_key": None,
        "recommendation": None,
        "unjudged": False,
    }


def problem_of(error: Exception) -> str:
    """What a reader is told of a stored run that no longer validates."""
    if isinstance(error, ValidationError):
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "the stored run"
        return f"stored under an older schema: {where}: {first['msg']}"
    return f"stored under an older schema: {type(error).__name__}: {error}"


def write(
    session: Session, context: TaskContext, sub_row: SubmissionRow, evaluation: EvaluationRow
) -> None:
    """Store the run's standing (the merge calls this with the evaluation it just saved); a
    ``failed`` evaluation has none."""
    write_all(session, {context.task.id: context}, [(sub_row, evaluation)])


def write_all(
    session: Session,
    contexts: Mapping[str, TaskContext],
    runs: Sequence[tuple[SubmissionRow, EvaluationRow]],
) -> None:
    """`write` for many runs (each scored in its task's context, ``contexts`` by task id):
    one upsert for their standings, one delete for the failed ones'; a task that names no kind
    has its stored kind moved forward by what these runs carry (`task_kinds.note_runs`)."""
    failed = [sub_row.id for sub_row, evaluation in runs if evaluation.status == "failed"]
    if failed:
        table.remove(session, submission_ids=failed)
    rows = [
        standing_of(contexts[sub_row.task_id], sub_row, evaluation)
        for sub_row, evaluation in runs
        if evaluation.status != "failed"
    ]
    table.upsert(session, rows)
    for task_id, context in contexts.items():
        mine = [row for row in rows if row["task_id"] == task_id]
        task_kinds.note_runs(
            session,
            context.task,
            variants=any(
                sub_row.variant is not None
                for sub_row, evaluation in runs
                if sub_row.task_id == task_id and evaluation.status in EVALUATED
            ),
            scenarios=any(row["suite_passed"] is not None for row in mine),
        )


def current(session: Session, context: TaskContext) -> bool:
    """Whether the task's standings are all on its current basis (`sync` would write none):
    one statement of three index counts; a reader ranks them only then."""
    basis, task_hash = basis_of(context)
    return table.is_current(session, task_id=context.task.id, basis=basis, task_hash=task_hash)


def sync(session: Session, context: TaskContext) -> int:
    """Bring the task's standings up to date with ``context``; returns how many rows it wrote.

    Current rows cost two index counts. Rows scored against another baseline or profile are
    scored again from the submission's usage columns and their stored correctness; rows
    missing, or written for another definition of the task, are built from the stored run.
    """
    basis, task_hash = basis_of(context)
    task_id = context.task.id
    if table.is_current(session, task_id=task_id, basis=basis, task_hash=task_hash):
        return 0
    present = table.bases(session, task_id=task_id)
    evaluated = set(table.evaluated_ids(session, task_id=task_id))
    table.remove(session, submission_ids=sorted(set(present) - evaluated))
    rebuild = sorted(sid for sid in evaluated if sid not in present or present[sid][1] != task_hash)
    rescore = sorted(
        sid
        for sid in evaluated
        if sid in present and present[sid][1] == task_hash and present[sid][0] != basis
    )
    written = 0
    for chunk in _chunks(rebuild):
        loaded = table.evaluations_of(session, submission_ids=chunk)
        table.upsert(session, [standing_of(context, *loaded[sid]) for sid in chunk])
        written += len(chunk)
    scorer = Scorer(context)
    for chunk in _chunks(rescore):
        table.rewrite(session, list(_rescored(scorer, basis, table.usage_of(session, chunk))))
        written += len(chunk)
    session.flush()
    return written


def _rescored(scorer: Scorer, basis: str, rows: Iterable[Any]) -> Iterable[dict[str, Any]]:
    """New Arena columns of rows whose baseline moved (a row without a value keeps none)."""
    for row in rows:
        if row.problem is not None:
            yield {"submission_id": row.id, "basis": basis}
            continue
        run = ArenaRun(
            submission_id=row.id,
            task_id=row.task_id,
            total_tokens=row.total_tokens,
            tool_calls=row.tool_calls,
            iterations=row.iterations,
            execution_time=row.execution_time or None,
            cost_usd=row.cost_usd,
        )
        yield {"submission_id": row.id, "basis": basis, **scorer.arena(run, row.correctness)}


def _chunks(ids: Sequence[str], size: int = 500) -> Iterable[list[str]]:
    for start in range(0, len(ids), size):
        yield list(ids[start : start + size])
