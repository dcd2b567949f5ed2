"""Leaderboards: every submission of a task ranked against one baseline snapshot.

Arena scores depend on the task's baseline, which moves as submissions arrive. A leaderboard
therefore re-scores every evaluated submission from its stored raw metrics against the *current*
snapshot, so all ranks are computed against the same reference. Other scores (PeerRead, Scylla,
suite) do not depend on the baseline and are read as stored.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from sqlalchemy.orm import Session

from evalq.core.profile import profile_named
from evalq.core.results import EvaluationScores
from evalq.core.schemas import Submission
from evalq.core.settings import Settings
from evalq.read.baseline import current_baseline
from evalq.scoring.arena import detect_outliers, score_run
from evalq.scoring.arena.run import ArenaRun
from evalq.scoring.confidence import confidence_interval
from evalq.scoring.percentile import percentile
from evalq.scoring.ranking import competition_ranks
from evalq.store import queries

CATEGORIES = ("efficiency", "speed", "cost", "correctness")


@dataclass(frozen=True)
class Entry:
    """One row of a leaderboard."""

    rank: int
    submission_id: str
    tool: str
    model: str
    variant: str | None
    status: str
    overall: float
    efficiency: float
    speed: float
    cost: float
    correctness: float
    category_ranks: dict[str, int]
    percentile: float
    imputed: list[str]
    peerread: float | None
    recommendation: str | None
    flags: list[str]
    scylla_grade: str | None
    suite_passed: bool | None


@dataclass(frozen=True)
class Leaderboard:
    """A task's ranked entries, the baseline they were scored against, and the score spread."""

    task_id: str
    baseline_version: int
    baseline_is_default: bool
    entries: list[Entry]
    confidence_interval: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return asdict(self)


def leaderboard(
    session: Session,
    *,
    task_id: str,
    tool: str | None = None,
    model: str | None = None,
    variant: str | None = None,
    settings: Settings | None = None,
) -> Leaderboard:
    """Rank a task's evaluated submissions (standard competition ranking, 1, 1, 3).

    Filters keep only the matching submissions; ranks and percentiles are computed among the
    rows kept.
    """
    task = queries.get_task(session, task_id=task_id)
    profile = profile_named(task.profile, settings)
    current = current_baseline(session, task_id=task_id, profile=profile)
    baseline = current.baseline
    rows = []
    for sub_row, evaluation in queries.task_evaluations(session, task_id=task_id):
        if (tool and sub_row.tool != tool) or (model and sub_row.model != model):
            continue
        if variant and sub_row.variant != variant:
            continue
        submission = Submission.model_validate(sub_row.payload)
        run = ArenaRun.of(submission, sub_row.cost_usd)
        arena = score_run(run, task, submission.evidence, baseline, profile.arena)
        scores = EvaluationScores.model_validate(evaluation.scores)
        rows.append((sub_row, evaluation, arena, scores, run))
    outliers = {
        flag.submission_id: list(flag.flags)
        for flag in detect_outliers([run for _, _, _, _, run in rows], profile.arena)
    }
    overall = [round(arena.overall, 2) for _, _, arena, _, _ in rows]
    ranks = competition_ranks(overall)
    by_category = {
        name: competition_ranks([round(getattr(a, name), 2) for _, _, a, _, _ in rows])
        for name in CATEGORIES
    }
    entries = [
        Entry(
            rank=ranks[i],
            submission_id=sub_row.id,
            tool=sub_row.tool,
            model=sub_row.model,
            variant=sub_row.variant,
            status=evaluation.status,
            overall=overall[i],
            efficiency=round(arena.efficiency, 2),
            speed=round(arena.speed, 2),
            cost=round(arena.cost, 2),
            correctness=round(arena.correctness, 2),
            category_ranks={name: by_category[name][i] for name in CATEGORIES},
            percentile=round(percentile(overall[i], overall), 1),
            imputed=list(arena.imputed),
            peerread=scores.peerread.composite,
            recommendation=scores.peerread.recommendation,
            flags=outliers.get(sub_row.id, []),
            scylla_grade=scores.scylla.grade if scores.scylla else None,
            suite_passed=scores.suite.passed if scores.suite else None,
        )
        for i, (sub_row, evaluation, arena, scores, _) in enumerate(rows)
    ]
    entries.sort(key=lambda e: (e.rank, e.submission_id))
    interval = confidence_interval(overall, profile.arena.confidence_level)
    return Leaderboard(
        task_id=task_id,
        baseline_version=current.version,
        baseline_is_default=baseline.is_default,
        entries=entries,
        confidence_interval={
            "low": round(interval.low, 2),
            "high": round(interval.high, 2),
            "mean": None if interval.mean is None else round(interval.mean, 2),
            "enough_data": interval.enough_data,
            "level": profile.arena.confidence_level,
        },
    )
