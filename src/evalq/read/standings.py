"""The read model of the boards: each evaluated run's ranking inputs, stored when they change.

A board ranks by values that depend on the run (its stored scores, its evidence) and, for the
Arena dimensions, on the task's current baseline. Computing them at every read costs the whole
task in Python; here they are computed once and stored as plain columns (`StandingRow`):

- the merge writes a run's row (`write`) in the transaction that stores its evaluation;
- the baseline refresh scores the task's rows again against the new snapshot (`sync`): only the
  three baseline-dependent dimensions, from the submission's usage columns and the stored
  correctness (no payload is decoded);
- both through the projector (`evalq.read.boards.projector`), the read model's one writer; a
  board read never writes: it ranks the rows as stored and asks how many are not current
  (`evalq.store.standings.currency`: one statement of three index counts); when some are
  missing or scored on another basis (a merge that raced a refresh, a profile this reader
  reads differently), the board says how many until the refresh scores them again
  (`evalq.read.leaderboard.with_rescoring_note`); a quiet board's read skips the question
  (the refresh's figures say the rows are current: `evalq.read.leaderboard.current_figures`).

A run or evaluation stored under an older schema that no longer validates gets a row with its
``problem`` and no ranking value: its board lists it last, marked, instead of failing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
from pydantic import ValidationError
from sqlalchemy.orm import Session

from evalq.core.errors import InvalidInput
from evalq.core.schemas import canonical_hash
from evalq.read.view import TaskContext
from evalq.scoring.arena.efficiency import (
    ABOVE_MEDIAN_STEP,
    FIRST_TRY,
    WITHIN_MEDIAN_FLOOR,
    WITHIN_MEDIAN_STEP,
)
from evalq.scoring.arena.overall import dimension_weights
from evalq.scoring.arena.scale import NOT_REPORTED_SCORE
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
    """The Arena dimensions of stored runs against a context's baseline, as `score_arena_run`
    computes them one run at a time (`efficiency_score`, `speed_score`, `cost_score` and the
    weighted mean of the four), so a rescored row equals the board's re-scored entry."""

    def __init__(self, context: TaskContext) -> None:
        self.context = context
        self.weights = dimension_weights(context.task, context.profile.arena)

    def rescored(self, basis: str, rows: Sequence[Any]) -> list[dict[str, Any]]:
        """The new Arena columns of the stored rows whose baseline moved
        (`table.usage_to_rescore`), scored all at once over numpy columns of their usage (equal
        to the functions run by run: a unit test holds them equal; each step is the same float
        operation in the same order, and the power and the rounding are Python's own); only the
        rows whose values changed, each with ``basis``. A baseline whose median alone moved
        changes few rows' values (the ranges score tokens, calls, time and cost), and each row
        written costs an update of every ranking index; the rest only change basis
        (`table.rebase`), as does a row without a value."""
        valued = [row for row in rows if row.problem is None]
        if not valued:
            return []
        baseline, profile = self.context.current.baseline, self.context.profile.arena

        def column(values: Iterable[float | None]) -> np.ndarray:
            # None and 0 are "not reported" (ArenaRun.measured_time, measured_cost): NaN
            return np.array([value or np.nan for value in values], dtype=np.float64)

        tokens = np.array([row.total_tokens for row in valued], dtype=np.float64)
        calls = np.array([row.tool_calls for row in valued], dtype=np.float64)
        iterations = np.array([row.iterations for row in valued], dtype=np.float64)
        time = column(row.execution_time for row in valued)
        cost = column(row.cost_usd for row in valued)
        efficiency = _clamped(
            _mean(
                {
                    "tokens": 100.0 * _position(tokens, baseline.min_tokens, baseline.max_tokens),
                    "tool_calls": 100.0
                    * _position(calls, baseline.min_tool_calls, baseline.max_tool_calls),
                    "iterations": _iteration_scores(iterations, baseline.median_iterations),
                },
                profile.efficiency_weights,
                "profile.arena.efficiency_weights",
            )
        )
        ratio = _position(time, baseline.min_execution_time, baseline.max_execution_time)
        powered = [r**profile.speed_exponent for r in ratio.tolist()]  # Python's pow, as `arena`
        speed = np.where(np.isnan(time), NOT_REPORTED_SCORE, _clamped(100.0 * np.array(powered)))
        priced = _clamped(100.0 * _position(cost, baseline.min_cost, baseline.max_cost))
        cost_scores = np.where(np.isnan(cost), NOT_REPORTED_SCORE, priced)
        correctness = np.array([row.correctness for row in valued], dtype=np.float64)
        dims = dict(zip(CATEGORIES, (efficiency, speed, cost_scores, correctness), strict=True))
        overall = _clamped(_mean(dims, self.weights, "task.weights")).tolist()
        keys = {name: values.tolist() for name, values in dims.items()}
        changed = []
        for index, row in enumerate(valued):
            values = {
                "arena_key": round(overall[index], VALUE_DIGITS),
                **{f"{name}_key": round(keys[name][index], CATEGORY_DIGITS) for name in CATEGORIES},
            }
            if any(getattr(row, key) != value for key, value in values.items()):
                changed.append({"submission_id": row.id, "basis": basis, **values})
        return changed


def _position(values: np.ndarray, best: float, worst: float) -> np.ndarray:
    """`range_position` of each value (NaN stays NaN)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        inside = (worst - values) / (worst - best)
    return np.where(values <= best, 1.0, np.where(values >= worst, 0.0, inside))


def _clamped(values: np.ndarray) -> np.ndarray:
    """`clamp_score` of each value (NaN stays NaN)."""
    clamped: np.ndarray = np.minimum(100.0, np.maximum(0.0, values))
    return clamped


def _iteration_scores(iterations: np.ndarray, median: float) -> np.ndarray:
    """`iteration_score` of each run's iterations."""
    within = np.maximum(WITHIN_MEDIAN_FLOOR, FIRST_TRY - (iterations - 1) * WITHIN_MEDIAN_STEP)
    above = np.maximum(0.0, WITHIN_MEDIAN_FLOOR - (iterations - median) * ABOVE_MEDIAN_STEP)
    scores = np.where(iterations == 1, FIRST_TRY, np.where(iterations <= median, within, above))
    return _clamped(scores)


def _mean(values: Mapping[str, np.ndarray], weights: Mapping[str, float], field: str) -> np.ndarray:
    """`weighted_mean` of columns with no value missing: the same sum in the same order."""
    total: np.ndarray | float = 0.0
    weight_sum = 0.0
    for name, weight in weights.items():
        if weight > 0 and name in values:
            total = total + values[name] * weight
            weight_sum += weight
    if weight_sum <= 0:
        raise InvalidInput([(field, f"needs a positive weight on one of {list(values)}")])
    return np.asarray(total, dtype=np.float64) / weight_sum


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
    written = 0
    for chunk in _chunks(rebuild):
        loaded = table.evaluations_of(session, submission_ids=chunk)
        table.upsert(session, [standing_of(context, *loaded[sid]) for sid in chunk])
        written += len(chunk)
    # the rest were stored for this definition on another basis: rescored set-wise, the rows
    # whose values moved written, and every one marked as on this basis in one statement
    moved = table.usage_to_rescore(session, task_id=task_id, basis=basis, task_hash=task_hash)
    table.rewrite(session, Scorer(context).rescored(basis, moved))
    table.rebase(session, task_id=task_id, basis=basis, task_hash=task_hash)
    session.flush()
    return written + len(moved)


def _chunks(ids: Sequence[str], size: int = 500) -> Iterable[list[str]]:
    for start in range(0, len(ids), size):
        yield list(ids[start : start + size])
