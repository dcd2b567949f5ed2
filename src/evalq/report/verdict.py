"""The verdict a report leads with, by task kind: what a reader came to the page to learn.

- suite: each submission's gate, pass or blocked, and every reason it blocks;
- scylla: the per-variant board, with each variant's uplift over the baseline variant, its
  bootstrap interval and whether it is worth it (`evalq.scoring.worth`);
- peerread: how the PeerRead composites recommend (accept ... reject);
- arena: the board, ranked by the Arena overall as the leaderboard ranks it.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from urllib.parse import urlencode

from evalq.read.answer import ArenaAnswer, arena_answer
from evalq.read.board_page import Verdict
from evalq.read.leaderboard import NEAR_COPY, LeaderboardEntry, LeaderboardReport, variant_caveats
from evalq.read.report_data import ReportData, SuiteGate
from evalq.read.variants import VariantStep
from evalq.report.ranks import interval_cell, rank_label, rank_note
from evalq.report.svg import count_bars, esc
from evalq.scoring.evaluation import NOT_JUDGED

BOARD_ROWS = 10
"""Rows of the Arena board in the verdict; the full leaderboard follows below it."""


def _table(table_id: str, heads: Sequence[str], rows: Sequence[str]) -> str:
    head = "".join(f'<th scope="col">{esc(h)}</th>' for h in heads)
    return (
        f'<div class="scroll"><table id="{table_id}" class="verdict-table"><thead><tr>{head}'
        f"</tr></thead><tbody>{''.join(rows)}</tbody></table></div>"
    )


def _num(value: float | None, fmt: str = "{:.3f}") -> str:
    return f'<td class="num">{"-" if value is None else esc(fmt.format(value))}</td>'


def _reasons(gate: SuiteGate) -> str:
    """Why a gate blocks, one item per reason (required scenarios, safety, thresholds)."""
    if gate.passed:
        return "<td>-</td>"
    items = "".join(f"<li>{esc(reason)}</li>" for reason in gate.blocking_failures)
    return f'<td class="wrap"><ul class="reasons">{items}</ul></td>'


def suite_verdict(data: ReportData) -> str:
    """Gate passed or blocked per ranked submission, in leaderboard order, with every reason
    (a run held for review is named under the verdict, not counted in it)."""
    rows = []
    gated = [
        (e, data.suite_gates[e.submission_id])
        for e in data.ranked
        if e.submission_id in data.suite_gates
    ]
    for entry, gate in gated:
        state = "pass" if gate.passed else "blocked"
        rows.append(
            f'<tr data-gate="{state}"><td class="wrap">{esc(entry.submission_id)}</td>'
            f'<td class="wrap">{esc(entry.tool)} / {esc(entry.model)}</td>'
            f'<td class="gate {state}">{state}</td>{_num(gate.final_score)}{_reasons(gate)}'
            f'<td class="wrap">{esc("; ".join(gate.warnings) or "-")}</td></tr>'
        )
    passed = sum(gate.passed for _, gate in gated)
    summary = (
        f'<p class="verdict-line"><strong>{passed} of {len(gated)}</strong> submission(s) pass '
        "the suite gate.</p>"
    )
    heads = ("submission", "tool / model", "gate", "final score", "blocked because", "warnings")
    return summary + _table("suite-gates", heads, rows)


def _uplift_cell(step: VariantStep | None, is_baseline: bool, uplift: float | None) -> str:
    """Spec 003's uplift of the median (a figure), the mean composite difference with the
    interval of the test that decides, and the verdict."""
    if is_baseline:
        return "<td>baseline</td><td>-</td><td>-</td>"
    median = "undefined" if uplift is None else f"{uplift:+.1%}"
    d = None if step is None else step.difference
    if step is None or d is None:
        reason = "-" if step is None else step.reason
        return f'<td class="num">{median}</td><td class="wrap">{esc(reason)}</td><td>-</td>'
    shown = "withheld" if step.withheld else step.verdict
    return (
        f'<td class="num">{median}</td>'
        f'<td class="num">{d.mean_difference:+.4f} [{d.low:+.4f}, {d.high:+.4f}]</td>'
        f'<td class="verdict {esc(shown.replace(" ", "-"))}" title="{esc(step.reason)}">'
        f"{esc(shown)}</td>"
    )


def _cost(value: float | None) -> str:
    if value is None:
        return "unknown"
    return "never passes" if math.isinf(value) else f"{value:.4f} USD"


def step_verdicts(data: ReportData) -> str:
    """The answer to "is each step up the ladder worth it?", first and short enough to wrap at
    any width: one line per step (T0 -> T1, T1 -> T2, ...) with its verdict, how sure (the mean
    composite difference with the interval of the test that decides, and its corrected p) and
    each side's cost of pass."""
    analysis = data.variants
    if analysis is None or not analysis.transitions:
        return ""
    costs = {v.variant: v.cost_of_pass for v in data.leaderboard.variants or []}
    level = f"{100 * analysis.bootstrap.step_level:.4g}%"
    items = []
    for t in analysis.transitions:
        shown = "withheld" if t.withheld else t.verdict
        d = t.difference
        sure = (
            esc(t.reason)
            if d is None
            else f"mean composite {d.mean_difference:+.4f} [{d.low:+.4f}, {d.high:+.4f}] at "
            f"{level}"
            + ("" if t.adjusted_p is None else f", {analysis.bootstrap.correction} p "
               f"{t.adjusted_p:.3g}")
        )  # fmt: skip
        delta = "" if t.cost_of_pass_delta is None else f" ({t.cost_of_pass_delta:+.4f})"
        items.append(
            f'<li data-step="{esc(t.source)}-{esc(t.target)}" data-verdict="{esc(shown)}">'
            f"<strong>{esc(t.target)} over {esc(t.source)}: "
            f'<span class="verdict {esc(shown.replace(" ", "-"))}">{esc(shown)}</span></strong>'
            f'; <span class="sure">{sure}</span>; <span class="cost">cost of pass '
            f"{esc(_cost(costs.get(t.source)))} &rarr; {esc(_cost(costs.get(t.target)))}"
            f"{esc(delta)}</span></li>"
        )
    return (
        '<div class="steps-verdict" id="step-verdicts"><h3>Is each step worth it?</h3>'
        f'<ul class="answers">{"".join(items)}</ul></div>'
    )


def scylla_verdict(data: ReportData) -> str:
    """The per-variant board: pass rate, median composite, grade, cost of pass, uplift + CI."""
    baseline = data.variants.baseline if data.variants else None
    rows = []
    for v in data.leaderboard.variants or []:
        cost = v.cost_of_pass
        cost_text = "-" if cost is None else "never passes" if math.isinf(cost) else f"{cost:.4f}"
        rows.append(
            f'<tr data-variant="{esc(v.variant)}"><td class="num">{v.rank}</td>'
            f"<td>{esc(v.variant)}</td><td class=num>{v.runs}</td>"
            f"{_num(v.pass_rate, '{:.0%}')}{_num(v.median_composite)}"
            f"<td>{esc(v.grade or '-')}</td><td class=num>{esc(cost_text)}</td>"
            f"{_uplift_cell(data.steps.get(v.variant), v.variant == baseline, v.uplift)}"
            f"{interval_cell(v)}</tr>"
        )
    level = f"{data.confidence_level:.0%}"
    method = data.variants.bootstrap if data.variants else None
    steps = f"{100 * method.step_level:.4g}%" if method else level
    heads = (
        "rank", "variant", "runs", "pass rate", "median composite", "grade", "cost of pass (USD)",
        f"uplift over {baseline or 'T0'} (median)",
        f"mean composite − {baseline or 'T0'} [{steps} interval of the test]", "worth it?",
        f"rank [{level} interval], ≈ not separable from",
    )  # fmt: skip
    base = esc(baseline or "T0")
    tests = f"{method.correction} over {method.steps} pairs" if method else "corrected"
    note = (
        f'<p class="note">Worth it? The two-sample permutation test (of Welch\'s t) of the '
        f"difference of the runs' mean composites over {base} ({tests}, the test "
        "<code>evalq compare</code> uses); "
        "beside it, that test inverted: the interval lies above zero exactly when the step is "
        "worth it, below zero when not, and holds zero when inconclusive. The uplift is spec "
        f"003's relative change of the median composite over {base}, a figure that decides "
        "nothing: a median of runs that pass or fail jumps between the two modes, so it can "
        "look large where the means do not differ clearly. Every pair of variants is in "
        "Comparisons below.</p>"
    )
    ranks = rank_note(data.leaderboard, data.leaderboard.variants or [])
    caveats = [
        f"{esc(v.variant)}: {esc('; '.join(found))}"
        for v in data.leaderboard.variants or []
        if (found := variant_caveats(v))
    ]
    said = (
        '<p class="note caveats">Read with care: ' + " · ".join(caveats) + ".</p>"
        if caveats
        else ""
    )
    return step_verdicts(data) + _table("variant-board", heads, rows) + said + note + ranks


def peerread_verdict(data: ReportData) -> str:
    """How many submissions the PeerRead composite recommends each way, as counts and shares."""
    unjudged = sum(1 for e in data.entries if e.peerread_note)
    return recommendation_verdict(data.recommendations or {}, unjudged, len(data.entries))


def recommendation_verdict(counts: Mapping[str, int], unjudged: int, of: int) -> str:
    """`peerread_verdict` from the counts per recommendation and how many of ``of`` composites
    no judge scored."""
    total = sum(counts.values()) or 1
    rows = [
        f'<tr data-recommendation="{esc(label)}"><td>{esc(label)}</td><td class=num>{count}</td>'
        f"<td class=num>{count / total:.0%}</td></tr>"
        for label, count in counts.items()
    ]
    plot = count_bars(
        list(counts.items()),
        title="PeerRead recommendation distribution",
        x_label="submissions (count)",
    )
    caveat = (
        f"<p class=note>{unjudged} of {of} composites had no judge: "
        f"{esc(NOT_JUDGED)} (tier 1 rewards on-topic text; docs/scoring.md).</p>"
        if unjudged
        else ""
    )
    return (
        _table("recommendations", ("recommendation", "submissions", "share"), rows)
        + f"<figure><figcaption>recommendations</figcaption>{plot}</figure>"
        + caveat
    )


def arena_verdict(data: ReportData) -> str:
    """The answer (leader, gap, how sure), then the top of the board, ranked by the Arena
    overall (before the difficulty factor); runs held for review are never in it (they are
    listed apart in the leaderboard below)."""
    ranked, board = data.ranked, data.leaderboard
    runs = Counter((e.tool, e.model) for e in ranked)
    return board_verdict(
        ranked[:BOARD_ROWS],
        len(ranked),
        board.baseline_note,
        board.range_note,
        arena_answer(ranked[:BOARD_ROWS], runs),
        crowd_note=board.crowd_note,
    )


def answer_block(answer: ArenaAnswer | None, task_id: str | None = None) -> str:
    """The answer's sentences; with ``task_id`` (the UI) a link to compare the two agents."""
    if answer is None:
        return ""
    link = ""
    if task_id and answer.next is not None and answer.compare_by and answer.separable:
        by = answer.compare_by
        mine, theirs = getattr(answer.leader, by), getattr(answer.next, by)
        query = urlencode([("tasks", task_id), ("by", by), ("values", mine), ("values", theirs)])
        link = f' <a href="/ui/compare?{esc(query)}">Compare the two {esc(by)}s</a>.'
    sure = "separable" if answer.separable else "single-runs"
    return f'<p class="answer" data-answer="{sure}">{esc(answer.statement)}{link}</p>'


def board_verdict(
    top: Sequence[LeaderboardEntry],
    ranked: int,
    baseline_note: str | None,
    range_note: str | None = None,
    answer: ArenaAnswer | None = None,
    task_id: str | None = None,
    *,
    crowd_note: str | None = None,
) -> str:
    """`arena_verdict` from the answer, the board's first ranked rows and how many it ranks;
    withheld (the rows are in the leaderboard below) when a crowd of new agent names stretched
    the ranges; with the crowd note (thin names beyond the ranges, which the robust baseline
    reads without them) said beside it, nothing withheld."""
    if range_note:
        return f'<p class="note withheld">Verdict withheld: {esc(range_note)}.</p>'

    rows = [
        f'<tr data-sid="{esc(e.submission_id)}"><td class="num">{rank_label(e)}</td>'
        f'<td class="wrap">{esc(e.submission_id)}</td><td class="wrap">{esc(e.tool)}</td>'
        f'<td class="wrap">{esc(e.model)}</td>{_num(e.overall, "{:.2f}")}'
        f"{_num(e.percentile, '{:.1f}')}<td>{esc(e.status)}</td></tr>"
        for e in top[:BOARD_ROWS]
    ]
    more = ranked - BOARD_ROWS
    note = f'<p class="note">{more} more in the leaderboard below.</p>' if more > 0 else ""
    if baseline_note:
        note += f'<p class="note caveats">Read with care: {esc(baseline_note)}.</p>'
    if crowd_note:
        note += f'<p class="note caveats" id="crowd-note">{esc(crowd_note)}.</p>'
    heads = ("rank", "submission", "tool", "model", "overall", "percentile", "status")
    return answer_block(answer, task_id) + _table("arena-board", heads, rows) + note


VERDICTS: dict[str, tuple[str, Callable[[ReportData], str]]] = {
    "suite": ("Verdict: suite gate", suite_verdict),
    "scylla": ("Verdict: variants", scylla_verdict),
    "peerread": ("Verdict: recommendations", peerread_verdict),
    "arena": ("Verdict: board", arena_verdict),
}


def held_note(data: ReportData) -> str:
    """The runs held for review, named apart from the verdict they are not part of (else "")."""
    held = [e.submission_id for e in data.entries if e.rank is None]
    return held_names(held, len(held))


def held_names(named: Sequence[str], total: int) -> str:
    """`held_note` of ``total`` held runs, ``named`` of them by id (the rest counted)."""
    if not total:
        return ""
    more = f" and {total - len(named)} more" if total > len(named) else ""
    return (
        '<p class="note held">Held for review, left out of this verdict until a person accepts '
        f"them (evalq review accept): {esc(', '.join(named))}{more}.</p>"
    )


def standings_verdict(kind: str, verdict: Verdict, task_id: str | None = None) -> str:
    """The verdict section of an Arena or PeerRead board from its database summary."""
    if kind == "peerread":
        title = VERDICTS["peerread"][0]
        body = recommendation_verdict(
            verdict.recommendations or {}, verdict.unjudged, verdict.ranked
        )
    else:
        title = VERDICTS["arena"][0]
        body = board_verdict(
            verdict.top,
            verdict.ranked,
            verdict.baseline_note,
            verdict.range_note,
            verdict.answer,
            task_id,
            crowd_note=verdict.crowd_note,
        )
    return (
        f'<section id="verdict" data-kind="{esc(kind)}"><h2>{esc(title)}</h2>'
        f"{body}{held_names(verdict.held, verdict.held_total)}</section>"
    )


def copies_note(board: LeaderboardReport) -> str:
    """The copies and near-copies the board counted once, named (else "")."""
    if not board.duplicate_of:
        return ""
    near = (
        f" {len(board.near_copies)} of them are {esc(NEAR_COPY)}: "
        f"{esc(', '.join(board.near_copies))}."
        if board.near_copies
        else ""
    )
    return (
        f'<p class="note copies">{len(board.duplicate_of)} copies of earlier runs, counted once '
        f"as the earliest and left out of this verdict.{near}</p>"
    )


def verdict_section(data: ReportData) -> str:
    """``<section id="verdict">`` for the task's kind (an unknown kind gets the Arena board),
    then the runs held for review, which no verdict counts, and the copies counted once."""
    title, render = VERDICTS.get(data.kind, VERDICTS["arena"])
    return (
        f'<section id="verdict" data-kind="{esc(data.kind)}"><h2>{esc(title)}</h2>'
        f"{render(data)}{held_note(data)}{copies_note(data.leaderboard)}</section>"
    )
