"""Leaderboards: every submission of a task ranked by the score its task's kind is about.

The task's kind (`evalq.scoring.kinds`) decides the ranking: a PeerRead task ranks by the PeerRead
composite, a suite by its gate and then its final score, a Scylla task per variant (with its runs
ranked by their Scylla composite beneath), an Arena task by the Arena overall before the
difficulty factor. Within every kind a partial evaluation (a tier failed) ranks below the
complete ones, and says so.

Arena scores depend on the task's baseline, which moves as submissions arrive, so every
evaluated submission is re-scored from its stored raw figures against the *current* snapshot:
all rows are compared against the same reference. The other scores do not depend on the
baseline and are read as stored.

A run held for review (flagged as an outlier and not yet accepted by a person) is held
everywhere: it is listed after the ranked rows, marked ``held``, with no rank, percentile or
category ranks, and left out of the ranks, percentiles, rank intervals, the board's confidence
interval and the per-variant board; ``include_held=True`` ranks it among the others (still
marked). Accepting it (`evalq review accept`) ranks it.

Each row may carry a bootstrap interval of its rank (`evalq.read.rank_uncertainty`): a Scylla
variant over resamples of its runs, a suite entry over resamples of its scenarios; rows whose
intervals overlap are listed as not separable from each other.
"""

from __future__ import annotations

import dataclasses
from bisect import bisect_left, bisect_right
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from sqlalchemy.orm import Session

from evalq.core.errors import InvalidInput
from evalq.core.metadata import filter_problems, matches
from evalq.core.profile import Profile, profile_named
from evalq.core.results import EvaluationScores
from evalq.core.schemas import STORED, ScenarioResult, Submission, Task
from evalq.core.settings import Settings
from evalq.read.baseline import CurrentBaseline, current_baseline
from evalq.read.rank_uncertainty import (
    SINGLE_RUN,
    SINGLE_SUBMISSION,
    RankMethod,
    method_of,
    suite_uncertainty,
    variant_uncertainty,
)
from evalq.scoring.arena import ArenaScore, score_run
from evalq.scoring.arena.run import ArenaRun
from evalq.scoring.confidence import confidence_interval
from evalq.scoring.kinds import KindRule, RankedValues, kind_of, ranking_value, sort_key
from evalq.scoring.rank_interval import RankInterval, RankUncertainty, competition_ranks_of
from evalq.scoring.ranking import competition_ranks
from evalq.scoring.scylla import ScyllaRun
from evalq.scoring.variants import compare_variants
from evalq.store import queries
from evalq.store.models import EvaluationRow, SubmissionRow

CATEGORIES = ("efficiency", "speed", "cost", "correctness")
HELD = "held for review: not ranked until a person accepts it (evalq review accept)"


@dataclass(frozen=True)
class Entry:
    """One row of a leaderboard.

    ``rank`` and ``percentile`` follow the task kind's ranking (``ranking_value`` is the number
    shown for it); ``overall`` is the Arena overall before the difficulty factor (what ranks an
    Arena task) and ``overall_adjusted`` the one after it (for comparing across tasks).
    ``held``: the run is held for review (flagged, not yet accepted); on a board that leaves
    held runs out (the default) its ``rank``, ``percentile`` and ``category_ranks`` are None.
    ``rank_interval`` is the bootstrap interval of ``rank`` (suite entries, over their
    scenarios), None with ``rank_interval_note`` saying why; ``not_separable_from`` lists the
    submissions whose interval overlaps it.
    """

    rank: int | None
    submission_id: str
    tool: str
    model: str
    variant: str | None
    status: str
    ranking_value: float | None
    partial: bool
    not_reported: list[str]
    review: str | None
    held: bool
    flags: list[str]
    warnings: list[str]
    overall: float
    overall_adjusted: float
    efficiency: float
    speed: float
    cost: float
    correctness: float
    category_ranks: dict[str, int] | None
    percentile: float | None
    peerread: float | None
    recommendation: str | None
    peerread_note: str | None
    scylla_composite: float | None
    scylla_grade: str | None
    suite_passed: bool | None
    suite_final_score: float | None
    rank_interval: RankInterval | None
    rank_interval_note: str | None
    not_separable_from: list[str]


@dataclass(frozen=True)
class VariantRow:
    """One variant of a Scylla task's per-variant board (spec 003).

    ``rank_interval`` is the bootstrap interval of ``rank`` over resamples of the variant's
    runs (None with ``rank_interval_note`` for a single run); ``not_separable_from`` lists the
    variants whose interval overlaps it.
    """

    rank: int
    variant: str
    runs: int
    pass_rate: float | None
    median_composite: float | None
    grade: str | None
    cost_of_pass: float | str | None
    uplift: float | None
    rank_interval: RankInterval | None
    rank_interval_note: str | None
    not_separable_from: list[str]


@dataclass(frozen=True)
class Leaderboard:
    """A task's ranked entries, what they are ranked by, and the baseline they were scored
    against. ``variants`` is the per-variant board of a Scylla task (None for other kinds);
    ``rank_uncertainty`` says how the rows' rank intervals were drawn. ``include_held`` says
    whether runs held for review were ranked (True) or listed apart after the ranked rows."""

    task_id: str
    kind: str
    ranking_key: str
    baseline_version: int
    baseline_is_default: bool
    entries: list[Entry]
    variants: list[VariantRow] | None
    confidence_interval: dict[str, Any]
    rank_uncertainty: RankMethod
    include_held: bool

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return asdict(self)


@dataclass(frozen=True)
class ScoredRow:
    """One evaluated submission as every board reads it: its row, its evaluation, and the
    values its kind may rank it by (Arena re-scored against the current baseline)."""

    submission: SubmissionRow
    metadata: dict[str, Any]
    evaluation: EvaluationRow
    scores: EvaluationScores
    arena: ArenaScore
    values: RankedValues
    scenarios: list[ScenarioResult]

    @property
    def held(self) -> bool:
        """Held for review: flagged as an outlier and not yet accepted by a person."""
        return is_held(self.submission.review)


def is_held(review: str | None) -> bool:
    """A run whose review is pending (``flagged``): held out of every statistic until accepted."""
    return review == "flagged"


def leaderboard(
    session: Session,
    *,
    task_id: str,
    tool: str | None = None,
    model: str | None = None,
    variant: str | None = None,
    metadata: Mapping[str, str] | None = None,
    settings: Settings | None = None,
    rank_intervals: bool = True,
    include_held: bool = False,
) -> Leaderboard:
    """Rank a task's evaluated submissions (standard competition ranking, 1, 1, 3) by the score
    its kind is about.

    Filters keep only the matching submissions; ranks and percentiles are computed among the
    rows kept. ``metadata`` keeps the rows whose metadata holds every ``key: value`` given,
    values compared as strings (`evalq.core.metadata.matches`); it selects rows and never
    changes what they are ranked by. ``rank_intervals=False`` leaves out the suite entries'
    rank intervals (the costly part) for readers that only want the scores.

    Runs held for review are listed after the ranked rows, unranked and out of every figure
    computed over the board; ``include_held=True`` ranks them among the others.

    Raises:
        NotFound: no such task.
        InvalidInput: a metadata filter names a key no metadata can have (on ``metadata.KEY``).
    """
    wanted = dict(metadata or {})
    problems = filter_problems(wanted)
    if problems:
        raise InvalidInput(problems)
    task = queries.get_task(session, task_id=task_id)
    profile = profile_named(task.profile, settings)
    current = current_baseline(session, task_id=task_id, profile=profile)
    rule, every = scored_rows(session, task=task, profile=profile, current=current)
    kept = [
        r
        for r in every
        if not (tool and r.submission.tool != tool)
        and not (model and r.submission.model != model)
        and not (variant and r.submission.variant != variant)
        and matches(r.metadata, wanted)
    ]
    rows = [r for r in kept if include_held or not r.held]
    held = sorted((r for r in kept if not include_held and r.held), key=lambda r: r.submission.id)
    keys = [sort_key(rule, r.values) for r in rows]
    ranks = competition_ranks_of(keys)
    by_category = {
        name: competition_ranks([getattr(r.arena, name) for r in rows], ndigits=2)
        for name in CATEGORIES
    }
    level = profile.arena.confidence_level
    uncertainty = None
    if rule.kind == "suite" and rank_intervals:
        uncertainty = suite_uncertainty(
            rule, [r.values for r in rows], [r.scenarios for r in rows], profile.suite, level=level
        )
    ordered = sorted(keys)
    entries = [
        _entry(r, rule, ranks[i], _percentile(keys[i], ordered), by_category, i)
        for i, r in enumerate(rows)
    ]
    entries = _with_intervals(entries, uncertainty)
    entries.sort(key=lambda e: (e.rank or 0, e.submission_id))
    variants = None
    if rule.kind == "scylla":
        variants, uncertainty = _variant_board(rows, profile)
    shown = [e.ranking_value for e in entries if e.ranking_value is not None]
    entries += [_entry(r, rule, None, None, {}, 0) for r in held]
    interval = confidence_interval(shown, level, bounds=rule.scale)
    return Leaderboard(
        task_id=task_id,
        kind=rule.kind,
        ranking_key=rule.ranking_key,
        baseline_version=current.version,
        baseline_is_default=current.baseline.is_default,
        entries=entries,
        variants=variants,
        confidence_interval={
            "of": rule.ranking_key,
            "low": round(interval.low, 4),
            "high": round(interval.high, 4),
            "mean": None if interval.mean is None else round(interval.mean, 4),
            "enough_data": interval.enough_data,
            "level": level,
        },
        rank_uncertainty=method_of(rule.kind, uncertainty, level)
        if rank_intervals or rule.kind != "suite"
        else RankMethod(None, None, 0, 0, level, "rank intervals not computed for this read"),
        include_held=include_held,
    )


def scored_rows(
    session: Session, *, task: Task, profile: Profile, current: CurrentBaseline
) -> tuple[KindRule, list[ScoredRow]]:
    """The task's kind rule and every evaluated submission scored, read in one query.

    The kind is derived from all of the task's runs (a task without ``kind``), whatever a
    reader keeps of them afterwards.
    """
    every = [
        _row(sub_row, evaluation, task, profile, current)
        for sub_row, evaluation in queries.task_evaluations(session, task_id=task.id)
    ]
    rule = kind_of(
        task,
        has_variants=any(r.submission.variant is not None for r in every),
        has_scenarios=any(r.scores.suite is not None for r in every),
    )
    return rule, every


def _row(
    sub_row: SubmissionRow,
    evaluation: EvaluationRow,
    task: Task,
    profile: Profile,
    current: CurrentBaseline,
) -> ScoredRow:
    submission = Submission.model_validate(sub_row.payload, context=STORED)
    run = ArenaRun.of(submission, sub_row.cost_usd)
    arena = score_run(run, task, submission.evidence, current.baseline, profile.arena)
    scores = EvaluationScores.model_validate(evaluation.scores)
    # a tier failed, or the composite misses an input for another reason that is not the
    # submitter's (e.g. the judge's budget ran out before a rubric)
    partial = evaluation.status == "degraded" or bool(scores.peerread and scores.peerread.partial)
    values = RankedValues(
        partial=partial,
        arena_unadjusted=arena.unadjusted,
        peerread_composite=scores.peerread.composite if scores.peerread else None,
        scylla_composite=scores.scylla.composite if scores.scylla else None,
        suite_passed=scores.suite.passed if scores.suite else None,
        suite_final_score=scores.suite.final_score if scores.suite else None,
    )
    return ScoredRow(
        sub_row, submission.metadata, evaluation, scores, arena, values, submission.scenarios
    )


def _percentile(key: tuple[float, ...], ordered: list[tuple[float, ...]]) -> float:
    """100 x (rows ranked strictly below + half the other rows tied) / (n - 1); 100 when alone.

    ``ordered`` is every row's key, sorted: two bisections, so a board of n rows costs
    O(n log n), not O(n**2).
    """
    if len(ordered) <= 1:
        return 100.0
    below = len(ordered) - bisect_right(ordered, key)
    tied = bisect_right(ordered, key) - bisect_left(ordered, key) - 1
    return round(100.0 * (below + tied / 2) / (len(ordered) - 1), 1)


def _entry(
    row: ScoredRow,
    rule: KindRule,
    rank: int | None,
    percentile: float | None,
    by_category: dict[str, list[int]],
    index: int,
) -> Entry:
    scores, arena = row.scores, row.arena
    peer_not_reported = list(scores.peerread.not_reported) if scores.peerread else []
    value = ranking_value(rule, row.values)
    return Entry(
        rank=rank,
        submission_id=row.submission.id,
        tool=row.submission.tool,
        model=row.submission.model,
        variant=row.submission.variant,
        status=row.evaluation.status,
        ranking_value=None if value is None else round(value, 4),
        partial=row.values.partial,
        not_reported=sorted({*arena.not_reported, *peer_not_reported}),
        review=row.submission.review,
        held=row.held,
        flags=list(scores.review.flags),
        warnings=list(scores.review.warnings),
        overall=round(arena.unadjusted, 2),
        overall_adjusted=round(arena.overall, 2),
        efficiency=round(arena.efficiency, 2),
        speed=round(arena.speed, 2),
        cost=round(arena.cost, 2),
        correctness=round(arena.correctness, 2),
        category_ranks=None
        if rank is None
        else {name: by_category[name][index] for name in CATEGORIES},
        percentile=percentile,
        peerread=scores.peerread.composite if scores.peerread else None,
        recommendation=scores.peerread.recommendation if scores.peerread else None,
        peerread_note=scores.peerread.note if scores.peerread else None,
        scylla_composite=scores.scylla.composite if scores.scylla else None,
        scylla_grade=scores.scylla.grade if scores.scylla else None,
        suite_passed=scores.suite.passed if scores.suite else None,
        suite_final_score=scores.suite.final_score if scores.suite else None,
        rank_interval=None,
        rank_interval_note=HELD
        if rank is None
        else SINGLE_RUN
        if rule.kind == "scylla"
        else SINGLE_SUBMISSION,
        not_separable_from=[],
    )


def _with_intervals(entries: list[Entry], uncertainty: RankUncertainty | None) -> list[Entry]:
    """``entries`` (in the order ``uncertainty`` was drawn) with their rank intervals."""
    if uncertainty is None:
        return entries
    return [
        dataclasses.replace(
            entry,
            rank_interval=ranks.interval,
            rank_interval_note=ranks.note,
            not_separable_from=sorted(entries[j].submission_id for j in ranks.not_separable_from),
        )
        for entry, ranks in zip(entries, uncertainty.rows, strict=True)
    ]


def _variant_board(
    rows: list[ScoredRow], profile: Profile
) -> tuple[list[VariantRow], RankUncertainty | None]:
    """The per-variant board: each variant's pass rate, median composite, grade, cost of pass,
    uplift over the baseline variant, and rank interval, ranked by median composite; and how
    the intervals were drawn (None without variants)."""
    runs: dict[str, list[ScyllaRun]] = {}
    for row in rows:
        if row.scores.scylla is not None:
            runs.setdefault(row.scores.scylla.variant, []).append(
                ScyllaRun.from_scores(row.scores.scylla)
            )
    if not runs:
        return [], None
    report = compare_variants(runs, profile.scylla)
    medians = [
        -1.0 if stats.composite is None else stats.composite.median for stats in report.variants
    ]
    ranks = competition_ranks(medians, ndigits=4)
    uncertainty = variant_uncertainty(
        [[r.composite for r in runs[stats.variant]] for stats in report.variants],
        level=profile.arena.confidence_level,
    )
    names = [stats.variant for stats in report.variants]
    board = []
    for stats, rank, spread in zip(report.variants, ranks, uncertainty.rows, strict=True):
        cost_of_pass = stats.cost_of_pass
        board.append(
            VariantRow(
                rank=rank,
                variant=stats.variant,
                runs=stats.runs,
                pass_rate=None if stats.pass_rate is None else round(stats.pass_rate.mean, 4),
                median_composite=None
                if stats.composite is None
                else round(stats.composite.median, 4),
                grade=stats.grade,
                cost_of_pass="inf"
                if cost_of_pass is not None and cost_of_pass == float("inf")
                else cost_of_pass,
                uplift=report.uplift.get(stats.variant),
                rank_interval=spread.interval,
                rank_interval_note=spread.note,
                not_separable_from=[names[j] for j in spread.not_separable_from],
            )
        )
    board.sort(key=lambda v: (v.rank, v.variant))
    return board, uncertainty
