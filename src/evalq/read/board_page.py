"""What the UI's board page shows, bounded by what it shows.

An Arena or PeerRead board is read from its standings (`evalq.read.standings`): the page of
rows asked for, the top of the unfiltered board and its figures for the verdict, the runs held
for review (named, at most `HELD_NAMED`), the filter choices and a histogram of the kept rows'
ranking values, each from the database; nothing decodes a run it does not list. A Scylla or
suite verdict needs every run (its per-variant board and steps, its rank intervals): those are
the task's stored whole-board figures (`evalq.read.leaderboard.board_figures`), computed by the
refresh after a batch of merges and reused while the task holds still; the suite gates shown
are the page's runs'. Every board carries the judge's validation, as the API's leaderboard does.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from datetime import UTC, datetime

from pydantic import Field
from sqlalchemy.orm import Session

from evalq.core.settings import Settings, get_settings
from evalq.read import served
from evalq.read.answer import ArenaAnswer, arena_answer
from evalq.read.boards.query import BoardQuery
from evalq.read.leaderboard import (
    LeaderboardEntry,
    LeaderboardReport,
    board_figures,
    current_figures,
    kept_of,
    paged,
    rule_of,
)
from evalq.read.reply import Reply
from evalq.read.report_data import RECOMMENDATIONS, ReportData, suite_gates
from evalq.read.view import TaskContext, task_context
from evalq.scoring.kinds import KINDS
from evalq.store import queries
from evalq.store import standings as table
from evalq.store.task_tallies import BINS

VERDICT_ROWS = 10
"""Rows of the Arena board in the verdict (the page lists the rest)."""
HELD_NAMED = 20
"""Runs held for review named under the verdict; the others are counted."""


class Verdict(Reply):
    """What an Arena or PeerRead verdict says of the whole, unfiltered board."""

    top: list[LeaderboardEntry] = Field(description="Its first ranked rows (VERDICT_ROWS).")
    ranked: int = Field(description="How many rows it ranks.")
    baseline_note: str | None
    range_note: str | None = Field(
        default=None, description="A crowd of new agent names stretched the ranges: withheld."
    )
    crowd_note: str | None = Field(
        default=None,
        description="Thin names' runs beyond the ranges the robust baseline reads without "
        "them: said, nothing withheld.",
    )
    recommendations: dict[str, int] | None = Field(
        description="PeerRead: ranked rows per recommendation; null for the Arena."
    )
    unjudged: int = Field(description="PeerRead: ranked composites no judge scored.")
    held: list[str] = Field(description=f"Runs held for review, by id (at most {HELD_NAMED}).")
    held_total: int
    answer: ArenaAnswer | None = Field(
        default=None, description="The Arena's answer first: leader, gap, how sure."
    )


class BoardPage(Reply):
    """One page of a task's board as the UI shows it."""

    board: LeaderboardReport = Field(description="The page of the filtered board.")
    verdict: Verdict | None = Field(
        description="The Arena or PeerRead verdict; null for a Scylla or suite task, whose "
        "verdict is drawn from `report`."
    )
    report: ReportData | None = Field(
        default=None, description="A Scylla or suite task's report (its verdict's data)."
    )
    choices: dict[str, list[str]] = Field(description="Filter values: tool, model, variant.")
    bins: list[int] = Field(description=f"Kept rows per {BINS} equal bins of the value's scale.")
    scale: tuple[float, float]


def board_page(
    session: Session, query: BoardQuery, *, settings: Settings | None = None
) -> BoardPage:
    """The board page of a task: the page ``query`` asks for (``limit`` rows from ``offset``
    or from its cursor), with its filters.

    Raises:
        NotFound: no such task.
        InvalidInput: a filter or the page is refused (as `leaderboard`).
    """
    settings = settings or get_settings()
    task_id = query.task_id
    context = task_context(session, task_id=task_id, settings=settings)
    # what the refresh stored of the unfiltered board, if the task has not moved since
    current = current_figures(session, context)
    placed = current is not None and current.placed() and current.kind is not None
    if current is not None and current.kind is not None and placed:
        rule = KINDS[current.kind]
    else:
        # the task moved since its refresh: the kind as the standings are ranked by
        rule = rule_of(session, context)
    board = served.board(session, query, settings=settings)
    tool, model, variant, status = query.tool, query.model, query.variant, query.status
    include_held = query.include_held
    kept = kept_of(
        context,
        tool=tool,
        model=model,
        variant=variant,
        status=status,
        metadata=query.metadata,
        copies=frozenset(board.duplicate_of),
    )
    filtered = bool(tool or model or variant or status or query.metadata or include_held)
    choices = current.choices if current is not None else table.choices(session, task_id=task_id)
    bins = (
        current.bins
        if current is not None and not filtered
        else table.bins(session, rule, kept, include_held=include_held, scale=rule.scale, n=BINS)
    )
    if rule.kind not in ("arena", "peerread"):
        data = _figures_report(session, context, board)
        return BoardPage(
            board=board, verdict=None, report=data, choices=choices, bins=bins, scale=rule.scale
        )
    whole = replace(kept, tool=None, model=None, variant=None, status=None)
    if current is not None and placed and current.summary is not None:
        top = current.page(session, context, whole, VERDICT_ROWS, 0)
        summary = table.Summary.of_json(current.summary)
    else:
        # the task's copies as the page found them: not looked for again
        copied = (board.duplicate_of, board.near_copies)
        top, summary = paged(session, context, rule, whole, False, VERDICT_ROWS, 0, copied=copied)
    # the runs held for review (those unranked for their usage are marked in the board)
    held_only = replace(whole, traced_only=False)
    held = table.held_page(session, held_only, limit=HELD_NAMED, offset=0) if summary.held else []
    answer = None
    if rule.kind == "arena":
        ranked = [e for e in top.entries if e.rank is not None]
        agents = list(dict.fromkeys((e.tool, e.model) for e in ranked))[:2]
        answer = arena_answer(ranked, table.agent_runs(session, whole, agents=agents))
    return BoardPage(
        board=board,
        verdict=Verdict(
            top=[e for e in top.entries if e.rank is not None],
            ranked=summary.ranked,
            baseline_note=top.baseline_note,
            range_note=board.range_note,
            crowd_note=board.crowd_note,
            recommendations=_recommendations(summary.recommendations)
            if rule.kind == "peerread"
            else None,
            unjudged=summary.unjudged,
            held=held,
            held_total=summary.held,
            answer=answer,
        ),
        choices=choices,
        bins=bins,
        scale=rule.scale,
    )


def _recommendations(counts: Mapping[str, int]) -> dict[str, int]:
    """Every label in `RECOMMENDATIONS`' order, "none" only when some composite is missing
    (as `evalq.read.report_data.recommendations` lists them)."""
    found = dict.fromkeys(RECOMMENDATIONS, 0) | dict(counts)
    return {k: v for k, v in found.items() if v or k != "none"}


def _figures_report(session: Session, context: TaskContext, board: LeaderboardReport) -> ReportData:
    """What a Scylla or suite verdict reads, from the task's stored whole-board figures (the
    variant board, the variant ladder and, for Scylla, the comparison by variant that the
    report's Comparisons section shows) and the page's own runs
    (their suite gates): no run beyond the page is decoded while the task holds still."""
    figures = board_figures(session, context)
    listed = [e.submission_id for e in board.entries if e.problem is None]
    loaded = queries.evaluations_of(session, submission_ids=listed)
    rows = [context.scored(*loaded[sid]) for sid in listed if sid in loaded]
    steps = [] if figures.analysis is None else figures.analysis.over_baseline
    return ReportData(
        task_id=context.task.id,
        generated_at=datetime.now(UTC).isoformat(timespec="seconds"),
        confidence_level=context.profile.arena.confidence_level,
        leaderboard=board.model_copy(
            update={"variants": figures.variants, "rank_uncertainty": figures.rank_uncertainty}
        ),
        runs={},
        intervals=[],
        variants=figures.analysis,
        uplift_intervals={
            t.target: t.uplift["composite"] for t in steps if "composite" in t.uplift
        },
        suite_gates=suite_gates(rows),
        comparison=figures.comparison,
        comparison_note=figures.comparison_note,
        recommendations=None,
    )
