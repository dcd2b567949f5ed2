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

import hashlib
from bisect import bisect_left, bisect_right
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any

from pydantic import Field, JsonValue, ValidationError
from sqlalchemy.orm import Session

from evalq.core.errors import InvalidInput
from evalq.core.judge_validation import JudgeValidation
from evalq.core.metadata import IMPORTED_GRADER, IMPORTED_SCORE, filter_problems, matches
from evalq.core.profile import Profile, Recommendation
from evalq.core.results import CostOfPass, EvaluationStatus, ScyllaScores
from evalq.core.schemas import TaskKind
from evalq.core.settings import Settings
from evalq.read import standings
from evalq.read.boards.sample import SAMPLED_RUNS, Sample, run_counts, sample_of, sampled_view
from evalq.read.compare import CompareReport, compare_task
from evalq.read.flood import flood_note
from evalq.read.plans import (
    Shortfall,
    Tickets,
    counted_rows,
    padded,
    planned_variant_runs,
    shortfalls,
    with_shortfalls,
)
from evalq.read.rank_uncertainty import (
    SINGLE_RUN,
    SINGLE_SUBMISSION,
    SUITE_INTERVAL_MAX_ENTRIES,
    RankUncertainty,
    method_of,
    none_drawn,
    suite_uncertainty,
    too_many_entries,
    variant_uncertainty,
)
from evalq.read.reply import Reply
from evalq.read.run_counts import RunCounts
from evalq.read.standings import problem_of
from evalq.read.usage import SELF_REPORTED, UsageSource, usage_note, usage_source
from evalq.read.variants import VariantsAnalysis, variants_analysis
from evalq.read.view import (
    ScoredRow,
    TaskContext,
    TaskView,
    is_held,
    task_context,
    view_from,
    view_of,
)
from evalq.scoring.kinds import KINDS, KindRule, ranking_value, sort_key
from evalq.scoring.review import NEAR_COPY as NEAR_COPY  # what the doors say of near-copies
from evalq.scoring.review import (
    NEAR_COPY_TOLERANCE,
    dominant_agent,
    dominant_of,
    duplicates,
    near_copies,
)
from evalq.scoring.variants import compare_variants
from evalq.scoring.worth import analyse_variants
from evalq.stats import rank_interval
from evalq.stats.confidence import confidence_interval, interval_from_moments
from evalq.stats.rank_interval import RankUncertainty as DrawnRanks
from evalq.stats.rank_interval import competition_ranks_of
from evalq.stats.ranking import competition_ranks
from evalq.store import copies as copy_marks
from evalq.store import queries, task_kinds
from evalq.store import standings as table
from evalq.store.chunks import chunks
from evalq.store.models import EvaluationRow, Review, SubmissionRow
from evalq.store.task_tallies import BINS
from evalq.store.versions import task_version

CATEGORIES = ("efficiency", "speed", "cost", "correctness")

HELD = "held for review: not ranked until a person accepts it (evalq review accept)"


class CategoryRanks(Reply):
    """An entry's rank in each Arena category (standard competition ranking)."""

    efficiency: int
    speed: int
    cost: int
    correctness: int


class RankInterval(Reply):
    """The bootstrap interval of a rank, in whole ranks (1 is best)."""

    low: int = Field(description="The (1 - level) / 2 quantile of the ranks, rounded down.")
    high: int = Field(description="The (1 + level) / 2 quantile of the ranks, rounded up.")


RANK_INTERVAL = (
    "Bootstrap interval of the rank (see rank_uncertainty); null when the row has nothing to "
    "resample, with rank_interval_note saying why."
)
NOT_SEPARABLE = (
    "Rows whose rank interval overlaps this one's: the data do not say which ranks higher. "
    "Empty without an interval."
)


class LeaderboardEntry(Reply):
    """One evaluated submission; Arena figures are re-scored against the current baseline."""

    rank: int | None = Field(
        description="Standard competition rank (1, 1, 3) by the task kind's key; null for a run "
        "held for review (listed after the ranked rows) unless include_held."
    )
    submission_id: str
    tool: str
    model: str
    variant: str | None
    status: EvaluationStatus
    ranking_value: float | None = Field(description="The value shown for the ranking key.")
    partial: bool = Field(description="A tier failed (status degraded): ranked below the rest.")
    not_reported: list[str] = Field(description="Inputs the submitter did not report.")
    review: Review | None = Field(
        description="flagged: held for review (out of the baseline, and unless include_held "
        "out of ranks, percentiles, intervals and comparisons) until a person accepts it; "
        "accepted: a person accepted it; null: never flagged."
    )
    held: bool = Field(
        description="Held for review (review flagged): unranked and out of every statistic of "
        "the board unless include_held."
    )
    flags: list[str] = Field(description="Outlier indicators that asked for a manual review.")
    warnings: list[str] = Field(description="Validation warnings (shown, never held against).")
    injection: list[str] = Field(
        default_factory=list,
        description="Each sentence of the run's output that instructs its evaluator, what it "
        "does and why it was marked (docs/scoring.md, 'Instructions to the evaluator'): the "
        "tiers read the output without them; empty when none.",
    )
    overall: float = Field(description="Arena overall before the difficulty factor (0-100).")
    overall_adjusted: float = Field(description="Arena overall after the difficulty factor.")
    efficiency: float
    speed: float
    cost: float
    correctness: float
    category_ranks: CategoryRanks | None = Field(description="Null for an unranked held run.")
    percentile: float | None = Field(
        description="Mid-rank percentile among the ranked entries; null for a held run."
    )
    peerread: float | None = Field(description="The PeerRead composite.")
    recommendation: Recommendation | None
    peerread_note: str | None = Field(
        default=None,
        description="What the PeerRead composite cannot see (no judge ran: similarity cannot "
        "tell a review from a summary of the paper).",
    )
    peerread_copied: str | None = Field(
        default=None,
        description="Set when the run copies a reference or restates the task's context instead "
        "of reviewing (its similarity counts only what it did not copy).",
    )
    scylla_composite: float | None
    scylla_grade: str | None
    suite_passed: bool | None
    suite_final_score: float | None
    rank_interval: RankInterval | None = Field(description=RANK_INTERVAL)
    rank_interval_note: str | None = Field(description="Why there is no rank interval.")
    not_separable_from: list[str] = Field(description="Submission ids. " + NOT_SEPARABLE)
    problem: str | None = Field(
        default=None,
        description="Why this stored run cannot be read under today's schema (it is listed "
        "last, unscored, instead of failing the board); absent when it reads.",
        exclude_if=lambda value: value is None,
    )
    usage_source: UsageSource = Field(
        default="self-reported",
        description="collected-trace: evalq's OTLP intake assembled the run from spans sent "
        "under an API key its task trusts (trusted_trace_keys), and took its usage from them; "
        "own-trace: the run carries a trace of its own (timed steps in its body, or spans sent "
        "under a key the task does not trust) that its time and tool calls were checked "
        "against, but that the submitter wrote: consistent, not verified; self-reported: no "
        "trace, its usage is only what it reported.",
    )
    unranked: str | None = Field(
        default=None,
        description="Why a run that is not held is listed unranked: its trace was not collected "
        "and the task's profile ranks only runs whose usage comes from a collected trace "
        '(arena.usage = "traced"); null otherwise.',
    )
    imported_score: JsonValue = Field(
        default=None,
        description="The score another tool gave this run, kept from its import (metadata "
        "imported_score, as that tool wrote it: a number, a grade, a flag); shown beside "
        "evalq's, never ranked on; absent for a run that was not imported with one.",
        exclude_if=lambda value: value is None,
    )
    imported_grader: str | None = Field(
        default=None,
        description="What gave imported_score (the tool, and its scorer or grader).",
        exclude_if=lambda value: value is None,
    )


class VariantRank(Reply):
    """One variant of a Scylla task's per-variant board, ranked by median composite."""

    rank: int
    variant: str
    runs: int
    pass_rate: float | None = Field(description="Mean pass rate of its runs.")
    median_composite: float | None
    grade: str | None
    cost_of_pass: CostOfPass | None = Field(
        description='Dollars per pass; "inf" when no run passed, null when no run has a cost.'
    )
    uplift: float | None = Field(description="Over the baseline variant; null for it.")
    rank_interval: RankInterval | None = Field(description=RANK_INTERVAL)
    rank_interval_note: str | None = Field(description="Why there is no rank interval.")
    not_separable_from: list[str] = Field(description="Variant names. " + NOT_SEPARABLE)
    models: list[str] = Field(
        default_factory=list,
        description="The models its runs name, sorted; more than one: the variant mixes models, "
        "and its figures are not one model's.",
    )
    costed_runs: int = Field(
        default=0,
        description="How many of its runs have a cost (the others could not be priced): cost "
        "of pass and best value read only those.",
    )
    run_plan: str | None = Field(
        default=None,
        description='Fewer runs than planned ("T1: 5 of 10 planned runs": the rest count as '
        "failures at the task's worst cost, and runs counts them) or than its peers (its "
        "verdicts withheld), in words; null when neither.",
    )
    sampled_from: int | None = Field(
        default=None,
        description="Its runs in all (planned runs not sent counted) when its figures were "
        "drawn over a seeded sample of them, runs of sampled_from (the board's figures say "
        "the sample's rule: sampled); null when drawn over every run.",
    )


def variant_caveats(variant: VariantRank) -> list[str]:
    """What a reader must know before trusting a variant's figures: it sent fewer runs than
    planned or than its peers, it mixes models, or some of its runs could not be priced
    (costed n of N). Empty when none."""
    caveats = [] if variant.run_plan is None else [variant.run_plan]
    if len(variant.models) > 1:
        caveats.append("mixes models: " + ", ".join(variant.models))
    if variant.costed_runs < variant.runs:
        caveats.append(f"costed {variant.costed_runs} of {variant.runs} runs")
    return caveats


class ConfidenceInterval(Reply):
    """Student-t confidence interval of the mean ranking value."""

    of: str = Field(description="The ranking key whose values it is about.")
    low: float
    high: float
    mean: float | None = Field(description="Null with too few values.")
    enough_data: bool = Field(description="False under 3 values (the bounds are then the range).")
    level: float = Field(description="Confidence level, e.g. 0.95.")


class LeaderboardReport(Reply):
    """Body of GET /v1/tasks/{id}/leaderboard."""

    task_id: str
    kind: TaskKind = Field(description="The task kind, which decides the ranking.")
    ranking_key: str = Field(description="What the entries are ranked by.")
    baseline_version: int = Field(description="The Arena baseline every entry was scored against.")
    baseline_is_default: bool
    entries: list[LeaderboardEntry] = Field(description="By rank, then submission id.")
    variants: list[VariantRank] | None = Field(
        description="A Scylla task's per-variant board; null for the other kinds."
    )
    confidence_interval: ConfidenceInterval
    rank_uncertainty: RankUncertainty
    include_held: bool = Field(
        description="True: runs held for review were ranked among the others; false: they are "
        "listed after the ranked rows, unranked, and out of every statistic."
    )
    duplicate_of: dict[str, str] = Field(
        default_factory=dict,
        description="Copies: each id whose run repeats an earlier run's content (output, trace, "
        "usage, evidence; another id, labels or metadata) and the id of that earliest run. A "
        "copy counts once, as the earliest: it is not listed, ranked or counted anywhere. "
        "Near-copies (near_copies) are among them.",
    )
    near_copies: dict[str, str] = Field(
        default_factory=dict,
        description="The near-copies among duplicate_of: runs with an earlier run's content "
        "(by MinHash similarity of output, trace and evidence, any agent) and every usage "
        f"figure within {NEAR_COPY_TOLERANCE:.1%} of its, counted once like a copy.",
    )
    baseline_note: str | None = Field(
        default=None,
        description="An Arena board whose counted runs come mostly from one agent (more than "
        "half of at least 10): that agent's runs set the baseline every score is measured "
        "against, so many runs of one agent move the others' scores. Null otherwise, and "
        'under a baseline that weighs each agent once (arena.baseline "robust", the default, '
        'or "agents").',
    )
    range_note: str | None = Field(
        default=None,
        description="An Arena board whose ranges (time, cost, tokens, tool calls) are "
        "stretched by a crowd of agent names seen on no other task: every score is measured "
        "against those ranges, so its verdict is withheld. Null otherwise, and under the "
        'robust baseline (arena.baseline "robust", the default), which reads its ranges '
        "without such names (crowd_note).",
    )
    crowd_note: str | None = Field(
        default=None,
        description="Under the robust baseline: the runs of agent names with fewer tasks than "
        "the task's typical agent reach beyond the other agents' ranges. The baseline reads "
        "its ranges without them, so they score at the ranges' ends and move no other run's "
        "scores: said, nothing withheld. Null otherwise.",
    )
    self_reported: int = Field(
        default=0,
        description="How many of the board's entries (ranked and listed apart, with the "
        "filters given) have usage not taken from a collected trace (usage_source own-trace or "
        "self-reported).",
    )
    own_trace: int = Field(
        default=0,
        description="How many of those carry a trace of their own (usage_source own-trace).",
    )
    usage_note: str | None = Field(
        default=None,
        description='In words: "usage of 12 of 40 runs is self-reported (not from a collected '
        "trace; 4 of them with a trace of their own ...)\"; null when every entry's trace was "
        "collected.",
    )
    judge_validation: JudgeValidation | None = Field(
        default=None,
        description="The judge's agreement with people's labels and whether its scores are "
        "validated (docs/judge.md); absent when no judge score is shown.",
        exclude_if=lambda value: value is None,
    )
    verifier: str | None = Field(
        default=None,
        description='"unverified: ..." when the task\'s last verifier audit found a probe its '
        "checks accept (docs/audit.md); absent otherwise.",
        exclude_if=lambda value: value is None,
    )
    judge_break: str | None = Field(
        default=None,
        description='"judge changed: ..." when the scores shown mix two or more judges: which, '
        "how many runs each scored, and each break's bridge (docs/judge.md); absent otherwise.",
        exclude_if=lambda value: value is None,
    )
    rescoring_note: str | None = Field(
        default=None,
        description="When some of the task's runs are not yet scored against the baseline, "
        "profile and definition this read scores against (a run merged while the refresh ran, "
        "a redefinition, a profile this server reads differently): how many, placed by their "
        "stored scores until the refresh that follows scores them again. Absent otherwise.",
        exclude_if=lambda value: value is None,
    )
    total: int | None = Field(
        default=None,
        description="How many entries the board has (ranked and held) with the filters given; "
        "entries holds those from offset, at most limit of them.",
    )
    offset: int = Field(default=0, description="Entries skipped before the first one listed.")
    limit: int | None = Field(
        default=None, description="Most entries listed (the page size); null: every entry."
    )
    next_cursor: str | None = Field(
        default=None,
        description="Pass as cursor (with the same filters and limit, no offset) for the next "
        "page: that read says whether the board moved in between (board_moved). Null on the "
        "last page and when the read is not paged.",
    )
    board_moved: bool | None = Field(
        default=None,
        description="Read with a cursor: true when the board moved (a run merged, a review "
        "decided, the baseline refreshed) since the cursor's page was read, so this page and "
        "that one may repeat or miss a run; read again without the cursor for the board as it "
        "stands. Absent without a cursor.",
        exclude_if=lambda value: value is None,
    )
    replica_lag_s: float | None = Field(
        default=None,
        ge=0,
        description="Read from the store's read replica (EVALQ_READ_DATABASE_URL): at most "
        "this many seconds behind the primary when read (0: it had replayed everything it "
        "received). Absent when read from the primary.",
        exclude_if=lambda value: value is None,
    )


def leaderboard(
    session: Session,
    *,
    task_id: str,
    tool: str | None = None,
    model: str | None = None,
    variant: str | None = None,
    metadata: Mapping[str, str] | None = None,
    settings: Settings | None = None,
    include_held: bool = False,
    status: str | None = None,
    limit: int | None = None,
    offset: int = 0,
    known: Mapping[str, tuple[SubmissionRow, EvaluationRow]] | None = None,
) -> LeaderboardReport:
    """Rank a task's evaluated submissions (standard competition ranking, 1, 1, 3) by the score
    its kind is about (`_leaderboard`), with what an Arena board must say of a crowd of new
    agent names that stretches its ranges, or of thin names beyond them
    (`evalq.read.flood.flood_note`). ``known``: runs the caller already read (by id), not
    read again for the entries.

    Raises:
        NotFound: no such task.
        InvalidInput: as `_leaderboard`.
    """
    board, context = _leaderboard(
        session,
        task_id=task_id,
        tool=tool,
        model=model,
        variant=variant,
        metadata=metadata,
        settings=settings,
        include_held=include_held,
        status=status,
        limit=limit,
        offset=offset,
        known=known,
    )
    return with_imported_scores(session, with_range_note(session, board, context))


def with_imported_scores(session: Session, board: LeaderboardReport) -> LeaderboardReport:
    """``board`` with each listed run's imported score (docs/importers.md) beside evalq's."""
    metadata = queries.metadata_of(session, ids=[e.submission_id for e in board.entries])
    if not any(IMPORTED_SCORE in found for found in metadata.values()):
        return board
    entries = []
    for entry in board.entries:
        found = metadata.get(entry.submission_id, {})
        if IMPORTED_SCORE in found:
            grader = found.get(IMPORTED_GRADER)
            entry = entry.model_copy(
                update={
                    "imported_score": found[IMPORTED_SCORE],
                    "imported_grader": grader if isinstance(grader, str) else None,
                }
            )
        entries.append(entry)
    return board.model_copy(update={"entries": entries})


def with_range_note(
    session: Session, board: LeaderboardReport, context: TaskContext
) -> LeaderboardReport:
    """``board`` with its range note or its crowd note (`evalq.read.flood.flood_note`, by the
    task's profile and current baseline, as ``context`` read them) when it is an Arena board."""
    if board.kind != "arena":
        return board
    robust = context.current.baseline if context.profile.arena.baseline == "robust" else None
    ranges, crowd = flood_note(session, task_id=board.task_id, robust=robust)
    return board.model_copy(update={"range_note": ranges, "crowd_note": crowd})


def _leaderboard(
    session: Session,
    *,
    task_id: str,
    tool: str | None = None,
    model: str | None = None,
    variant: str | None = None,
    metadata: Mapping[str, str] | None = None,
    settings: Settings | None = None,
    include_held: bool = False,
    status: str | None = None,
    limit: int | None = None,
    offset: int = 0,
    known: Mapping[str, tuple[SubmissionRow, EvaluationRow]] | None = None,
) -> tuple[LeaderboardReport, TaskContext]:
    """Rank a task's evaluated submissions (standard competition ranking, 1, 1, 3) by the score
    its kind is about; with the task's context it was ranked from (its profile and baseline).

    Filters keep only the matching submissions; ranks and percentiles are computed among the
    rows kept. ``metadata`` keeps the rows whose metadata holds every ``key: value`` given,
    values compared as strings (`evalq.core.metadata.matches`); it selects rows and never
    changes what they are ranked by.

    Runs held for review are listed after the ranked rows, unranked and out of every figure
    computed over the board; ``include_held=True`` ranks them among the others. ``status``
    keeps the ``done`` or the ``degraded`` evaluations only.

    ``limit`` lists at most that many entries from ``offset`` (in the board's order; ranks,
    percentiles and the interval are still the whole board's); None lists every entry from
    ``offset``. Every read is ranked in the database from the task's standings (`paged`):
    a quiet unfiltered board in the places its refresh stored, any other by counts of the
    kept rows above the page; only the runs listed are read and scored in full. A Scylla or
    suite board's whole-board figures (the variant board, rank intervals) are the ones its
    refresh stored for the unfiltered board, or drawn for this read over the kept runs only
    when filtered (`kept_figures`). Standings scored on an earlier baseline, profile or
    definition than this read's (a merge that raced the refresh, a redefinition) are ranked
    as stored, and the board says how many (`LeaderboardReport.rescoring_note`).

    Raises:
        NotFound: no such task.
        InvalidInput: a metadata filter names a key no metadata can have (on ``metadata.KEY``),
            ``status`` is not done or degraded, ``limit`` is not from 1 to 1,000, or
            ``offset`` is negative.
    """
    wanted = dict(metadata or {})
    problems = filter_problems(wanted)
    if limit is not None and not 1 <= limit <= MAX_LIMIT:
        problems.append(("limit", f"from 1 to {MAX_LIMIT:,}"))
    if offset < 0:
        problems.append(("offset", "0 or more"))
    if status is not None and status not in queries.EVALUATED:
        problems.append(("status", f"one of {', '.join(queries.EVALUATED)} (a board's runs)"))
    if problems:
        raise InvalidInput(problems)
    context = task_context(session, task_id=task_id, settings=settings)
    kept = kept_of(context, tool=tool, model=model, variant=variant, status=status, metadata=wanted)
    unfiltered = not (tool or model or variant or status or wanted or include_held)
    current = current_figures(session, context) if unfiltered else None
    if current is not None and current.placed():
        # the task has not moved since the refresh: its standings are current (the refresh
        # synced them, and any change since would have moved the version), and its pages
        # are read in the order it stored
        return current.page(session, context, kept, limit, offset, known), context
    rule = rule_of(session, context)
    copied = copy_marks.stored(session, task_id=task_id)
    kept = replace(kept, copies=frozenset(copied[0]))
    page, _ = paged(
        session, context, rule, kept, include_held, limit, offset, copied=copied, known=known
    )
    if rule.kind in ("scylla", "suite"):
        figures = (
            board_figures(session, context)
            if unfiltered
            else kept_figures(session, context, rule, kept, include_held=include_held)
        )
        page = figures.applied(page)
    return with_rescoring_note(session, context, page), context


def kept_of(
    context: TaskContext,
    *,
    tool: str | None = None,
    model: str | None = None,
    variant: str | None = None,
    status: str | None = None,
    metadata: Mapping[str, str] | None = None,
    copies: frozenset[str] = frozenset(),
) -> table.Kept:
    """The rows a board with these filters keeps, as its statements select them (the task's
    profile says whether only collected usage is ranked)."""
    return table.Kept(
        context.task.id,
        tool,
        model,
        variant,
        status,
        copies,
        traced_only=traced_only(context),
        metadata=tuple(sorted((metadata or {}).items())),
    )


def with_rescoring_note(
    session: Session, context: TaskContext, board: LeaderboardReport
) -> LeaderboardReport:
    """``board`` with its rescoring note when some of the task's standings are not on the
    basis this read scores against (`rescoring_note`); unchanged when all are."""
    basis, task_hash = standings.basis_of(context)
    found = table.currency(session, task_id=context.task.id, basis=basis, task_hash=task_hash)
    behind, missing = found.total - found.current, max(0, found.evaluated - found.total)
    if not behind and not missing:
        return board
    said = []
    if behind:
        said.append(
            f"{behind:,} placed by their scores against an earlier baseline, profile or "
            "definition of the task"
        )
    if missing:
        said.append(f"{missing:,} not listed yet")
    note = (
        f"Of the task's {found.evaluated:,} evaluated runs, {' and '.join(said)}: the refresh "
        "after the change scores them again (each listed run shows its score as of now)."
    )
    return board.model_copy(update={"rescoring_note": note})


def board_of(
    view: TaskView,
    *,
    tool: str | None = None,
    model: str | None = None,
    variant: str | None = None,
    metadata: Mapping[str, str] | None = None,
    include_held: bool = False,
    status: str | None = None,
) -> LeaderboardReport:
    """The leaderboard of a task already loaded whole (`task_view`), ranked in Python; the
    arguments as `leaderboard`'s (``metadata`` already checked). No door's read ranks a board
    this way (`leaderboard` ranks in the database): it draws a Scylla or suite board's
    whole-board figures over the runs loaded (`draw_figures`, `kept_figures`), and the tests
    hold the database's boards equal to it."""
    wanted = dict(metadata or {})
    rule, every, profile, current = view.rule, view.rows, view.profile, view.current
    kept = [
        r
        for r in every
        if not (tool and r.submission.tool != tool)
        and not (model and r.submission.model != model)
        and not (variant and r.submission.variant != variant)
        and not (status and r.evaluation.status != status)
        and matches(r.metadata, wanted)
    ]
    apart = {r.submission.id for r in kept if (r.held and not include_held) or unranked(r, profile)}
    rows = [r for r in kept if r.submission.id not in apart]
    held = sorted((r for r in kept if r.submission.id in apart), key=lambda r: r.submission.id)
    keys = [sort_key(rule, r.values) for r in rows]
    ranks = competition_ranks_of(keys)
    by_category = {
        name: competition_ranks([getattr(r.arena, f"{name}_score") for r in rows], ndigits=2)
        for name in CATEGORIES
    }
    level = profile.arena.confidence_level
    uncertainty = None
    too_many = rule.kind == "suite" and len(rows) > SUITE_INTERVAL_MAX_ENTRIES
    if rule.kind == "suite" and not too_many:
        uncertainty = suite_uncertainty(
            rule, [r.values for r in rows], [r.scenarios for r in rows], profile.suite, level=level
        )
    ordered = sorted(keys)
    entries = [
        _entry(r, rule, ranks[i], _percentile(keys[i], ordered), by_category, i)
        for i, r in enumerate(rows)
    ]
    entries = _with_intervals(entries, uncertainty)
    if too_many:
        note = too_many_entries(len(rows))
        entries = [e.model_copy(update={"rank_interval_note": note}) for e in entries]
    entries.sort(key=lambda e: (e.rank or 0, e.submission_id))
    variants = None
    if rule.kind == "scylla":
        variants, uncertainty = _variant_board(rows, profile, view.counts, view.tickets)
    shown = [e.ranking_value for e in entries if e.ranking_value is not None]
    entries += [_entry(r, rule, None, None, {}, 0, unranked(r, profile)) for r in held]
    interval = confidence_interval(shown, level, bounds=rule.scale)
    self_reported = sum(e.usage_source != "collected-trace" for e in entries)
    own_trace = sum(e.usage_source == "own-trace" for e in entries)
    return LeaderboardReport(
        task_id=view.task.id,
        kind=rule.kind,
        ranking_key=rule.ranking_key,
        baseline_version=current.version,
        baseline_is_default=current.baseline.is_default,
        entries=entries,
        variants=variants,
        confidence_interval=ConfidenceInterval(
            of=rule.ranking_key,
            low=round(interval.low, 4),
            high=round(interval.high, 4),
            mean=None if interval.mean is None else round(interval.mean, 4),
            enough_data=interval.enough_data,
            level=level,
        ),
        rank_uncertainty=none_drawn(level, too_many_entries(len(rows)))
        if too_many
        else method_of(rule.kind, uncertainty, level),
        include_held=include_held,
        duplicate_of=dict(sorted(view.duplicate_of.items())),
        near_copies=dict(sorted(view.near_copies.items())),
        baseline_note=_baseline_note(
            rule.kind,
            [(r.submission.tool, r.submission.model) for r in every if not r.held],
            profile.arena.baseline,
        ),
        total=len(entries),
        self_reported=self_reported,
        own_trace=own_trace,
        usage_note=usage_note(self_reported, own_trace, len(entries)),
    )


def traced_only(context: TaskContext) -> bool:
    """Whether the task's profile ranks only runs whose usage comes from a collected trace."""
    return context.profile.arena.usage == "traced"


def unranked(row: ScoredRow | SubmissionRow, profile: Profile) -> str | None:
    """Why a run is listed unranked whatever its review: its trace was not collected and
    ``profile`` ranks only runs whose usage comes from a collected trace (`SELF_REPORTED`);
    else None."""
    sub_row = row.submission if isinstance(row, ScoredRow) else row
    if (
        profile.arena.usage == "traced"
        and usage_source(sub_row.trace_provenance) != "collected-trace"
    ):
        return SELF_REPORTED
    return None


MAX_LIMIT = 1_000
"""Most entries one page of a board may list."""


def copies_of(session: Session, *, task_id: str) -> tuple[dict[str, str], dict[str, str]]:
    """The task's copies: those the refresh decided (`SubmissionRow.copy_of`, set by
    `evalq.store.review_sql.settle_reviews`: duplicates, near-copies by shape and by
    similarity, which needs the payloads) and those `duplicates` finds among the runs evaluated
    since; and the near-copies among them (a run hash other than its original's). Two
    statements: the ids that may be copies, and their facts."""
    rows = queries.fact_rows(session, submission_ids=table.repeated_runs(session, task_id=task_id))
    facts = [queries.run_facts(row) for row in rows]
    found = {row.id: row.copy_of for row in rows if row.copy_of is not None}
    found |= duplicates(facts)
    return found, near_copies(facts, found)


def paged(
    session: Session,
    context: TaskContext,
    rule: KindRule,
    kept: table.Kept,
    include_held: bool,
    limit: int | None,
    offset: int,
    *,
    stored: table.Summary | None = None,
    copied: tuple[Mapping[str, str], Mapping[str, str]] | None = None,
    known: Mapping[str, tuple[SubmissionRow, EvaluationRow]] | None = None,
) -> tuple[LeaderboardReport, table.Summary]:
    """One page of a board, ranked in the database from the task's standings
    (`evalq.read.standings`): a bounded number of statements whatever the task's size, and
    only the runs listed read and scored in full (the same entries as `board_of`'s).
    ``limit`` None lists every entry from ``offset``.

    ``stored``: the unfiltered board's summary as the refresh stored it, current: the page is
    then read in the order of the places stored with it (an index range), else ranked here
    by counts of the kept rows above the page (`table.ranked_page`). ``copied``: the task's
    copies and near-copies, when already known; else the marks the projector keeps
    (`evalq.store.copies.stored`). ``known``: runs already read (a report's), not read
    again. The unfiltered board's summary (held runs out) is read from
    the task's tallies (`evalq.store.standings.tallied_summary`): no statement aggregates the
    task."""
    copies, near = copied or copy_marks.stored(session, task_id=context.task.id)
    kept = replace(kept, copies=frozenset(copies), traced_only=traced_only(context))
    summary = stored or table.summary(
        session, rule, kept, include_held=include_held, copies=kept.copies
    )
    # no limit: every entry from the offset (the whole board, read as one page)
    size = summary.ranked + summary.apart if limit is None else limit
    placed = []
    if offset < summary.ranked and stored is not None:
        placed = table.placed_page(session, task_id=context.task.id, limit=size, offset=offset)
    elif offset < summary.ranked:
        placed = table.ranked_page(
            session, rule, kept, include_held=include_held, limit=size, offset=offset
        )
    held_ids: list[str] = []
    if len(placed) < size and summary.apart:
        start = max(0, offset - summary.ranked)
        held_ids = table.held_page(
            session, kept, limit=size - len(placed), offset=start, include_held=include_held
        )
    listed = [p.submission_id for p in placed] + held_ids
    loaded = {sid: known[sid] for sid in listed if sid in known} if known else {}
    for chunk in chunks([sid for sid in listed if sid not in loaded]):
        loaded |= queries.evaluations_of(session, submission_ids=chunk)
    n = summary.ranked
    entries = [
        _listed(context, rule, loaded[p.submission_id], p.rank, _percentile_of(p, n), p.categories)
        for p in placed
    ]
    entries += [_listed(context, rule, loaded[sid], None, None, None) for sid in held_ids]
    level = context.profile.arena.confidence_level
    interval = interval_from_moments(
        summary.values, summary.mean, summary.squares, level, bounds=rule.scale
    )
    return LeaderboardReport(
        task_id=context.task.id,
        kind=rule.kind,
        ranking_key=rule.ranking_key,
        baseline_version=context.current.version,
        baseline_is_default=context.current.baseline.is_default,
        entries=entries,
        variants=None,
        confidence_interval=ConfidenceInterval(
            of=rule.ranking_key,
            low=round(interval.low, 4),
            high=round(interval.high, 4),
            mean=None if interval.mean is None else round(interval.mean, 4),
            enough_data=interval.enough_data,
            level=level,
        ),
        rank_uncertainty=method_of(rule.kind, None, level),
        include_held=include_held,
        duplicate_of=dict(sorted(copies.items())),
        near_copies=dict(sorted(near.items())),
        baseline_note=_baseline_note_of(rule.kind, summary.agents, context.profile.arena.baseline),
        total=summary.ranked + summary.apart,
        offset=offset,
        limit=limit,
        self_reported=summary.self_reported,
        own_trace=summary.own_trace,
        usage_note=usage_note(
            summary.self_reported, summary.own_trace, summary.ranked + summary.apart
        ),
    ), summary


class EntryInterval(Reply):
    """A suite entry's rank interval as its whole board drew it."""

    rank_interval: RankInterval | None
    rank_interval_note: str | None
    not_separable_from: list[str]


class Sampled(Reply):
    """The sample a board's whole-task statistics were drawn over (`evalq.read.boards.sample`)."""

    runs: int = Field(description="The sampled runs the statistics were drawn over.")
    per_variant: int = Field(description="Most runs per variant sampled.")
    note: str = Field(description="The rule in words.")


class BoardFigures(Reply):
    """What a Scylla or suite board computes from every run of the unfiltered board (held
    runs out): kept (`evalq.store.standings.store_figures`) while the task holds still."""

    variants: list[VariantRank] | None
    rank_uncertainty: RankUncertainty
    intervals: dict[str, EntryInterval] = Field(description="Suite entries, by submission id.")
    analysis: VariantsAnalysis | None = Field(
        default=None,
        description="Scylla: the variant ladder (every pair of variants, each step over the "
        "baseline variant and between neighbours), as `comparison` carries it.",
    )
    comparison: CompareReport | None = Field(
        default=None,
        description="Scylla: what `evalq compare TASK --by variant` says of the task (the "
        "report's Comparisons section); null with fewer than two variants to compare.",
    )
    comparison_note: str | None = Field(
        default=None, description="Why a Scylla task has no comparison (the rule refused)."
    )
    summary: dict[str, Any] | None = Field(
        default=None,
        description="The unfiltered board's counts and moments (`Summary.as_json`), stored "
        "with the places the same refresh gave its runs.",
    )
    choices: dict[str, list[str]] = Field(default_factory=dict)
    bins: list[int] = Field(default_factory=list)
    kind: TaskKind | None = Field(default=None, description="The task's kind when drawn.")
    copies: dict[str, str] = Field(
        default_factory=dict, description="The copies left out when drawn (copy -> original)."
    )
    near_copies: dict[str, str] = Field(
        default_factory=dict, description="The near-copies among copies (copy -> original)."
    )
    runs: int | None = Field(
        default=None,
        description="The unfiltered board's runs when drawn, ranked and listed apart (copies "
        "left out, held ones in).",
    )
    entry_note: str | None = Field(
        default=None,
        description="Why no ranked entry has a rank interval, when that holds for all of them "
        "(a suite board of more than 20 ranked entries): said on each, as `board_of` does.",
    )
    sampled: Sampled | None = Field(
        default=None,
        description="A Scylla board's whole-task statistics (variant board, ladder, "
        "comparison) drawn over a seeded sample of its runs: how many, and the rule; null "
        "when drawn over every run.",
    )

    def placed(self) -> bool:
        """Whether pages of the unfiltered board can be read in the places stored with these
        figures."""
        return (
            self.summary is not None
            and "own_trace" in self.summary  # drawn before trace provenance was counted: not
            and self.kind is not None
            and self.drawn_at is None
        )

    def page(
        self,
        session: Session,
        context: TaskContext,
        kept: table.Kept,
        limit: int | None,
        offset: int,
        known: Mapping[str, tuple[SubmissionRow, EvaluationRow]] | None = None,
    ) -> LeaderboardReport:
        """A page of the unfiltered board in the stored places, with these figures."""
        assert self.summary is not None and self.kind is not None
        stored = table.Summary.of_json(self.summary)
        rule = KINDS[self.kind]
        found, _ = paged(
            session,
            context,
            rule,
            kept,
            False,
            limit,
            offset,
            stored=stored,
            copied=(self.copies, self.near_copies),
            known=known,
        )
        return self.applied(found)

    drawn_at: datetime | None = Field(
        default=None,
        description="When these figures were drawn, if the task has moved since (runs "
        "arrived or were reviewed): the refresh that follows draws them again. Null: current.",
    )

    def as_of(self, drawn_at: datetime) -> BoardFigures:
        """These figures, marked as drawn before the task's latest change."""
        note = (
            f"{self.rank_uncertainty.note}; drawn at {drawn_at:%Y-%m-%d %H:%M:%S} UTC, before "
            "the latest runs (the refresh after them draws the intervals again)"
        )
        return self.model_copy(
            update={
                "drawn_at": drawn_at,
                "rank_uncertainty": self.rank_uncertainty.model_copy(update={"note": note}),
            }
        )

    def applied(self, page: LeaderboardReport) -> LeaderboardReport:
        """``page`` (ranked in the database) with these figures, as `board_of` lists it; on
        stale figures a suite entry drawn after them is listed without an interval, and says
        so."""
        entries = [
            entry.model_copy(
                update={
                    "rank_interval": found.rank_interval,
                    "rank_interval_note": found.rank_interval_note,
                    "not_separable_from": found.not_separable_from,
                }
            )
            if (found := self.intervals.get(entry.submission_id)) is not None
            else entry.model_copy(update={"rank_interval_note": self.entry_note})
            if self.entry_note is not None and entry.rank is not None
            else entry
            if self.drawn_at is None or entry.rank is None or not self.intervals
            else entry.model_copy(update={"rank_interval_note": NOT_DRAWN_YET})
            for entry in page.entries
        ]
        return page.model_copy(
            update={
                "entries": entries,
                "variants": self.variants,
                "rank_uncertainty": self.rank_uncertainty,
            }
        )


NOT_DRAWN_YET = (
    "not drawn yet: this run came after the board's rank intervals were drawn (the refresh "
    "after the latest runs draws them again)"
)


def figures_version(session: Session, context: TaskContext) -> str:
    """What a board's stored figures hold for: the task's runs, reviews, baseline and
    definition (`task_version`), the profile the standings were scored with, and its run
    tickets as at the read (a plan registered, a ticket used or past its deadline moves it)."""
    basis, task_hash = standings.basis_of(context)
    tickets = ",".join(
        f"{v}={t.issued}/{len(t.used)}/{t.settled}/{t.waiting}/{t.expired}"
        for v, t in sorted(context.tickets.items())
    )
    version = f"{task_version(session, task_id=context.task.id)}:{basis}:{task_hash}"
    # hashed: the stored version has a bounded width, a task any number of variants
    return f"{version}:{hashlib.sha256(tickets.encode()).hexdigest()[:12]}" if tickets else version


def current_figures(session: Session, context: TaskContext) -> BoardFigures | None:
    """The task's stored figures if the task has not moved since they were drawn, else None."""
    stored = table.stored_figures(session, task_id=context.task.id)
    if stored is None or stored.version != figures_version(session, context):
        return None
    return BoardFigures.model_validate(stored.data)


def board_figures(session: Session, context: TaskContext) -> BoardFigures:
    """The task's whole-board figures as stored. When the task has moved since (runs, reviews,
    baseline, definition or profile), the stored ones are served marked with when they were
    drawn: the baseline refresh that follows every batch of merges draws them again
    (`evalq.read.boards.projector`), so no read waits for a bootstrap of every run. With none
    stored yet (a task the refresh has not reached) they are drawn here and not stored: a read
    never writes."""
    stored = table.stored_figures(session, task_id=context.task.id)
    if stored is None:
        return draw_figures(session, context)
    figures = BoardFigures.model_validate(stored.data)
    if stored.version == figures_version(session, context):
        return figures
    return figures.as_of(stored.computed_at)


def intervals_of(board: LeaderboardReport) -> dict[str, EntryInterval]:
    """A suite board's ranked entries' rank intervals, by submission id (none for the other
    kinds)."""
    return {
        e.submission_id: EntryInterval(
            rank_interval=e.rank_interval,
            rank_interval_note=e.rank_interval_note,
            not_separable_from=e.not_separable_from,
        )
        for e in board.entries
        if e.rank is not None and board.kind == "suite"
    }


def kept_figures(
    session: Session, context: TaskContext, rule: KindRule, kept: table.Kept, *, include_held: bool
) -> BoardFigures:
    """A filtered Scylla or suite board's whole-board figures (the variant board, the entries'
    rank intervals), drawn for this read over the runs it ranks (``kept``, its copies and
    traced-only rule given) and nothing else, as `board_of` draws them over those runs: only
    they are read, at most `SAMPLED_RUNS` per variant of a Scylla board (chosen as the
    refresh's sample chooses them, and said; each variant's plan and peers then judged on
    every run the board ranks). A suite board of more than `SUITE_INTERVAL_MAX_ENTRIES`
    ranked entries draws none, as its unfiltered board does, and reads no run."""
    level = context.profile.arena.confidence_level
    ranked = table.ranked_runs(session, kept, include_held=include_held)
    figures = BoardFigures(
        variants=None, rank_uncertainty=method_of(rule.kind, None, level), intervals={}
    )
    if rule.kind == "suite" and len(ranked) > SUITE_INTERVAL_MAX_ENTRIES:
        why = too_many_entries(len(ranked))
        return figures.model_copy(
            update={"rank_uncertainty": none_drawn(level, why), "entry_note": why}
        )
    by_variant: dict[str | None, list[tuple[str, str]]] = {}
    for sid, variant, content_hash in ranked:
        by_variant.setdefault(variant, []).append((content_hash or "", sid))
    sample = None
    if rule.kind == "scylla" and max(map(len, by_variant.values()), default=0) > SAMPLED_RUNS:
        ids = sorted(sid for runs in by_variant.values() for _, sid in sorted(runs)[:SAMPLED_RUNS])
        # the plans judged on every run this board ranks, not on the sample
        counts = run_counts(session, task_id=context.task.id, kept=kept, include_held=include_held)
        sample = Sample(ids, counts, len(ranked), SAMPLED_RUNS)
    ids = sample.ids if sample is not None else sorted(sid for sid, _, _ in ranked)
    loaded: dict[str, tuple[SubmissionRow, EvaluationRow]] = {}
    for chunk in chunks(ids):
        loaded |= queries.evaluations_of(session, submission_ids=chunk)
    view = view_from(context, [loaded[sid] for sid in ids if sid in loaded])
    counted = None if sample is None else sample.counts  # None: over the rows drawn
    whole = board_of(replace(view, rule=rule, counts=counted), include_held=include_held)
    uncertainty = whole.rank_uncertainty
    if sample is not None:
        uncertainty = uncertainty.model_copy(update={"note": f"{uncertainty.note}; {sample.note}"})
    return figures.model_copy(
        update={
            "variants": whole.variants,
            "rank_uncertainty": uncertainty,
            "intervals": intervals_of(whole),
        }
    )


def draw_figures(session: Session, context: TaskContext) -> BoardFigures:
    """The task's whole-board figures drawn now from its standings and runs (reads only; the
    projector stores them with the places of the unfiltered board)."""
    rule = rule_of(session, context)
    copied, near = copy_marks.stored(session, task_id=context.task.id)
    kept = table.Kept(context.task.id, copies=frozenset(copied), traced_only=traced_only(context))
    summary = table.summary(session, rule, kept, include_held=False, copies=kept.copies)
    level = context.profile.arena.confidence_level
    figures = BoardFigures(
        variants=None,
        rank_uncertainty=method_of(rule.kind, None, level),
        intervals={},
        summary=summary.as_json(),
        choices=table.choices(session, task_id=context.task.id),
        bins=table.bins(session, rule, kept, include_held=False, scale=rule.scale, n=BINS),
        kind=rule.kind,
        copies=dict(sorted(copied.items())),
        near_copies=dict(sorted(near.items())),
        runs=summary.ranked + summary.apart,
    )
    if rule.kind == "suite" and summary.ranked > SUITE_INTERVAL_MAX_ENTRIES:
        # no rank intervals at this size, and a suite has no variant board: nothing of the
        # runs' documents to read (`board_of` says the same)
        why = too_many_entries(summary.ranked)
        return figures.model_copy(
            update={"rank_uncertainty": none_drawn(level, why), "entry_note": why}
        )
    if rule.kind in ("scylla", "suite"):
        sample = (
            sample_of(session, task_id=context.task.id, copies=kept.copies)
            if rule.kind == "scylla"
            else None
        )
        view = (
            view_of(session, context) if sample is None else sampled_view(session, context, sample)
        )
        whole = board_of(view)
        by_variant, short = planned_variant_runs(
            view.rows, context.profile.scylla, counts=view.counts, tickets=view.tickets
        )
        comparison, note = _variant_comparison(view, rule) if len(by_variant) > 1 else (None, None)
        analysis = (
            comparison.variants  # the runs short of a plan already counted there
            if comparison is not None and comparison.variants is not None
            else with_shortfalls(
                variants_analysis(
                    analyse_variants(by_variant, context.profile.scylla, level=level)
                ),
                short,
                view.tickets,
            )
            if by_variant
            else None
        )
        figures = figures.model_copy(
            update={
                "comparison": comparison,
                "comparison_note": note,
                "analysis": analysis,
                "variants": whole.variants,
                "rank_uncertainty": whole.rank_uncertainty
                if sample is None
                else whole.rank_uncertainty.model_copy(
                    update={"note": f"{whole.rank_uncertainty.note}; {sample.note}"}
                ),
                "sampled": None
                if sample is None
                else Sampled(
                    runs=len(sample.ids), per_variant=sample.per_variant, note=sample.note
                ),
                "intervals": intervals_of(whole),
            }
        )
    return figures


def _variant_comparison(view: TaskView, rule: KindRule) -> tuple[CompareReport | None, str | None]:
    """A Scylla task's comparison by variant, computed once with its board figures (the one
    `evalq compare TASK --by variant` and the report make); a comparison the data cannot
    support is said, not raised."""
    if rule.kind != "scylla":
        return None, None
    try:
        return compare_task(view, by="variant"), None
    except InvalidInput as refused:
        return None, "; ".join(r for _, r in refused.problems)


def rule_of(session: Session, context: TaskContext) -> KindRule:
    """The task's kind rule, as stored (`evalq.store.task_kinds`: named, or derived from its
    runs when they merged)."""
    return task_kinds.stored_rule(session, task_id=context.task.id)


def _percentile_of(placed: table.Placed, n: int) -> float:
    """`_percentile` from the row's rank and ties among ``n`` ranked rows."""
    if n <= 1:
        return 100.0
    below = n - (placed.rank - 1) - placed.tied
    return round(100.0 * (below + (placed.tied - 1) / 2) / (n - 1), 1)


def _listed(
    context: TaskContext,
    rule: KindRule,
    loaded: tuple[SubmissionRow, EvaluationRow],
    rank: int | None,
    percentile: float | None,
    categories: tuple[int, ...] | None,
) -> LeaderboardEntry:
    """A listed row's entry; a stored run that no longer validates is listed with its problem."""
    by_category = (
        {}
        if categories is None
        else {name: [rank_of] for name, rank_of in zip(CATEGORIES, categories, strict=True)}
    )
    apart = None if rank is not None else unranked(loaded[0], context.profile)
    try:
        row = context.scored(*loaded)
    except (ValidationError, InvalidInput, ValueError, TypeError, KeyError) as broken:
        return _problem_entry(
            loaded[0], loaded[1], rank, percentile, by_category, problem_of(broken), apart
        )
    return _entry(row, rule, rank, percentile, by_category, 0, apart)


def _problem_entry(
    sub_row: SubmissionRow,
    evaluation: EvaluationRow,
    rank: int | None,
    percentile: float | None,
    by_category: dict[str, list[int]],
    problem: str,
    apart: str | None = None,
) -> LeaderboardEntry:
    """The entry of a run that cannot be read under today's schema: named, marked, no scores."""
    return LeaderboardEntry(
        rank=rank,
        submission_id=sub_row.id,
        tool=sub_row.tool,
        model=sub_row.model,
        variant=sub_row.variant,
        status="degraded" if evaluation.status == "degraded" else "done",
        ranking_value=None,
        partial=False,
        not_reported=[],
        review=sub_row.review,
        held=is_held(sub_row.review),
        flags=[],
        warnings=[],
        overall=0.0,
        overall_adjusted=0.0,
        efficiency=0.0,
        speed=0.0,
        cost=0.0,
        correctness=0.0,
        category_ranks=None
        if rank is None
        else CategoryRanks.model_validate({k: v[0] for k, v in by_category.items()}),
        percentile=percentile,
        peerread=None,
        recommendation=None,
        scylla_composite=None,
        scylla_grade=None,
        suite_passed=None,
        suite_final_score=None,
        rank_interval=None,
        rank_interval_note=(apart or HELD) if rank is None else SINGLE_SUBMISSION,
        not_separable_from=[],
        problem=problem,
        usage_source=usage_source(sub_row.trace_provenance),
        unranked=apart,
    )


def _baseline_note_of(
    kind: str, agents: Mapping[tuple[str, str], int], weighs: str = "runs"
) -> str | None:
    """`_baseline_note` from the number of counted runs of each ``(tool, model)``."""
    if kind != "arena" or weighs != "runs":
        return None
    dominance = dominant_of(agents)
    return None if dominance is None else dominance.note()


def _baseline_note(
    kind: str, counted: Sequence[tuple[str, str]], weighs: str = "runs"
) -> str | None:
    """`evalq.scoring.review.dominant_agent` over the ``(tool, model)`` of the runs the task's
    baseline counts (copies and held runs left out, whatever the board's filters). None when
    the baseline weighs each agent once (``arena.baseline`` "agents" or "robust"): no agent's
    volume moves it."""
    if kind != "arena" or weighs != "runs":
        return None
    dominance = dominant_agent(counted)
    return None if dominance is None else dominance.note()


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
    apart: str | None = None,
) -> LeaderboardEntry:
    """A scored row's entry; ``apart``: why it is unranked though not held (`unranked`)."""
    scores, arena = row.scores, row.arena
    peer_not_reported = list(scores.peerread.not_reported) if scores.peerread else []
    value = ranking_value(rule, row.values)
    return LeaderboardEntry(
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
        warnings=row.warnings,
        injection=row.injection,
        overall=round(arena.unadjusted_score, 2),
        overall_adjusted=round(arena.overall_score, 2),
        efficiency=round(arena.efficiency_score, 2),
        speed=round(arena.speed_score, 2),
        cost=round(arena.cost_score, 2),
        correctness=round(arena.correctness_score, 2),
        category_ranks=None
        if rank is None
        else CategoryRanks.model_validate({name: by_category[name][index] for name in CATEGORIES}),
        percentile=percentile,
        peerread=scores.peerread.composite if scores.peerread else None,
        recommendation=scores.peerread.recommendation if scores.peerread else None,
        peerread_note=scores.peerread.note if scores.peerread else None,
        peerread_copied=scores.peerread.copied if scores.peerread else None,
        scylla_composite=scores.scylla.composite if scores.scylla else None,
        scylla_grade=scores.scylla.grade if scores.scylla else None,
        suite_passed=scores.suite.passed if scores.suite else None,
        suite_final_score=scores.suite.final_score if scores.suite else None,
        rank_interval=None,
        rank_interval_note=(apart or HELD)
        if rank is None
        else SINGLE_RUN
        if rule.kind == "scylla"
        else SINGLE_SUBMISSION,
        not_separable_from=[],
        usage_source=usage_source(row.submission.trace_provenance),
        unranked=apart,
    )


def _interval(drawn: rank_interval.RankInterval | None) -> RankInterval | None:
    return None if drawn is None else RankInterval(low=drawn.low, high=drawn.high)


def _with_intervals(
    entries: list[LeaderboardEntry], uncertainty: DrawnRanks | None
) -> list[LeaderboardEntry]:
    """``entries`` (in the order ``uncertainty`` was drawn) with their rank intervals."""
    if uncertainty is None:
        return entries
    return [
        entry.model_copy(
            update={
                "rank_interval": _interval(ranks.interval),
                "rank_interval_note": ranks.note,
                "not_separable_from": sorted(
                    entries[j].submission_id for j in ranks.not_separable_from
                ),
            }
        )
        for entry, ranks in zip(entries, uncertainty.rows, strict=True)
    ]


def _variant_board(
    rows: list[ScoredRow],
    profile: Profile,
    counts: RunCounts | None = None,
    tickets: Tickets | None = None,
) -> tuple[list[VariantRank], DrawnRanks | None]:
    """The per-variant board: each variant's pass rate, median composite, grade, cost of pass,
    uplift over the baseline variant, and rank interval, ranked by median composite; and how
    the intervals were drawn (None without variants). A registered variant's runs sent without
    a ticket are not counted (`evalq.read.plans.counted_rows`)."""
    sent: dict[str, list[ScyllaScores]] = {}
    models: dict[str, set[str]] = {}
    for row in counted_rows(rows, tickets):
        if row.scores.scylla is not None:
            sent.setdefault(row.scores.scylla.variant, []).append(row.scores.scylla)
            models.setdefault(row.scores.scylla.variant, set()).add(row.submission.model)
    if not sent:
        return [], None
    # the runs planned and not sent count as failures (`evalq.read.plans`)
    short = shortfalls(rows, profile.scylla, counts, tickets)
    runs = padded(sent, short, rows, profile.scylla, counts)
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
        board.append(
            VariantRank(
                rank=rank,
                variant=stats.variant,
                runs=stats.runs,
                pass_rate=None if stats.pass_rate is None else round(stats.pass_rate.mean, 4),
                median_composite=None
                if stats.composite is None
                else round(stats.composite.median, 4),
                grade=stats.grade,
                cost_of_pass=stats.cost_of_pass,
                uplift=report.uplift.get(stats.variant),
                rank_interval=_interval(spread.interval),
                rank_interval_note=spread.note,
                not_separable_from=[names[j] for j in spread.not_separable_from],
                models=sorted(models.get(stats.variant, ())),  # one with only lapsed tickets: none
                costed_runs=sum(r.cost_usd is not None for r in runs[stats.variant]),
                run_plan=short[stats.variant].note() if stats.variant in short else None,
                sampled_from=_whole_runs(stats.variant, stats.runs, short, counts),
            )
        )
    board.sort(key=lambda v: (v.rank, v.variant))
    return board, uncertainty


def _whole_runs(
    variant: str, runs: int, short: Mapping[str, Shortfall], counts: RunCounts | None
) -> int | None:
    """A sampled variant's runs in all, as ``runs`` counts them (its counted runs and its
    planned runs not sent); None when ``runs`` are all of them."""
    if counts is None:
        return None
    found = short.get(variant)
    missing = 0 if found is None else max(0, (found.planned or 0) - found.sent)
    whole = counts.counted.get(variant, 0) + missing
    return whole if whole > runs else None
