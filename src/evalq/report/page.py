"""The report as one self-contained HTML page: tables, inline SVG plots, inline CSS and script.

The Content-Security-Policy allows no network access at all, inline styles, and exactly the
page's own script (by hash): even a string that escaped escaping could not run.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from evalq.core.judge_validation import JudgeValidation
from evalq.read.leaderboard import CATEGORIES, LeaderboardEntry, LeaderboardReport
from evalq.read.report_data import ReportData
from evalq.read.usage import USAGE_LABELS
from evalq.read.variants import VariantsAnalysis
from evalq.report.assets import SCRIPT, STYLE, script_hash
from evalq.report.comparison import comparison_section
from evalq.report.ranks import rank_cell, rank_label, rank_note
from evalq.report.svg import (
    BarRow,
    IntervalRow,
    Point,
    esc,
    grouped_bars,
    histogram,
    intervals,
    scatter,
    signed_bars,
)
from evalq.report.tiers import tier_notes
from evalq.report.verdict import verdict_section
from evalq.stats.statistics import Statistics


def _cell(value: float | None, digits: int = 2) -> str:
    if value is None:
        return '<td class="num" data-value="">-</td>'
    return f'<td class="num" data-value="{value!r}">{value:.{digits}f}</td>'


def _text(value: object) -> str:
    return f"<td>{esc('-' if value is None else value)}</td>"


def _tool_model(tool: str, model: str) -> str:
    """Tool over model in one cell: two narrow lines instead of two wide columns."""
    return f'<td class="wrap">{esc(tool)}<br><span class="sub">{esc(model)}</span></td>'


def _wrap(value: object) -> str:
    """A text cell that may break inside long ids and names instead of widening the table."""
    return f'<td class="wrap">{esc("-" if value is None else value)}</td>'


KIND_COLUMN: dict[str, tuple[str, str, int]] = {
    "peerread": ("PeerRead composite", "peerread", 3),
    "scylla": ("Scylla composite", "scylla_composite", 3),
    "suite": ("suite final score", "suite_final_score", 3),
}
"""The column a kind ranks by, shown right after the names (Arena ranks by ``overall``)."""


def leaderboard_table(data: ReportData) -> str:
    """The ranked entries; rows carry ``data-sid``, numeric cells ``data-value`` for sorting.

    The kind's own score comes first after the names; names and flags wrap so that no column
    is pushed out of a 1400-pixel window.
    """
    kind_column = KIND_COLUMN.get(data.kind)
    with_variant = any(e.variant for e in data.entries)
    heads = [
        ("rank", True), ("submission", False), ("tool / model", False),
        *([("variant", False)] if with_variant else []),
        *([(kind_column[0], True)] if kind_column else []),
        ("overall", True), ("efficiency", True), ("speed", True), ("cost", True),
        ("correctness", True), ("percentile", True), ("cost (USD)", True), ("time (s)", True),
        ("status", False), ("usage", False), ("flags", False),
    ]  # fmt: skip
    head = "".join(f'<th{" class=num" if n else ""} scope="col">{esc(h)}</th>' for h, n in heads)
    rows = []
    for e in data.entries:
        run = data.runs.get(e.submission_id)
        missing = ", ".join(f"{name} not reported" for name in e.not_reported)
        flags = ", ".join(
            [*e.flags, *([missing] if missing else []), *([e.unranked] if e.unranked else [])]
        )
        kind_cell = ""
        if kind_column:
            kind_cell = _cell(getattr(e, kind_column[1]), kind_column[2])
        rows.append(
            f'<tr data-sid="{esc(e.submission_id)}">'
            + rank_cell(e)
            + _wrap(e.submission_id) + _tool_model(e.tool, e.model)
            + (_text(e.variant) if with_variant else "") + kind_cell
            + _cell(e.overall) + _cell(e.efficiency) + _cell(e.speed) + _cell(e.cost)
            + _cell(e.correctness) + _cell(e.percentile, 1)
            + _cell(None if run is None else run.cost_usd, 4)
            + _cell(None if run is None else run.execution_time, 1)
            + _text(e.status) + _text(USAGE_LABELS[e.usage_source]) + _wrap(flags or None)
            + "</tr>"
        )  # fmt: skip
    return (
        f'<div class="scroll"><table id="leaderboard"><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div>"
        + rank_note(data.leaderboard, data.entries)
        + usage_paragraph(data.leaderboard)
    )


def usage_paragraph(board: LeaderboardReport) -> str:
    """The board's note on self-reported usage (the usage column names each run's source),
    after its task's "unverified" mark when its verifier audit found one (docs/audit.md), its
    "judge changed" mark when its scores mix judges (docs/judge.md) and its rescoring note when
    some runs await the refresh that scores them against the current baseline."""
    verifier = (
        "" if board.verifier is None else f'<p class="note verifier">{esc(board.verifier)}</p>'
    )
    if board.judge_break is not None:
        verifier += f'<p class="note judge-break">{esc(board.judge_break)}</p>'
    if board.rescoring_note is not None:
        verifier += f'<p class="note rescoring">Being rescored: {esc(board.rescoring_note)}</p>'
    if board.usage_note is None:
        return verifier
    return verifier + (
        f'<p class="note usage">Usage: {esc(board.usage_note)}; the usage column says which '
        "runs' usage comes from a trace evalq collected, which from a trace of their own "
        "(unverified), and which is only reported.</p>"
    )


def distributions(data: ReportData) -> str:
    """A histogram per dimension, the mean and its confidence band drawn over it."""
    figures = []
    for interval in data.intervals:
        values = [float(getattr(e, interval.dimension)) for e in data.ranked]
        band = None
        if interval.enough_data and interval.mean is not None:
            band = (interval.mean, interval.low, interval.high)
        plot = histogram(
            values,
            title=f"{interval.dimension} score distribution",
            x_label=f"{interval.dimension} score (points, 0 to 100)",
            band=band,
            band_label=f"{data.confidence_level:.0%} confidence interval of the mean",
        )
        figures.append(f"<figure><figcaption>{esc(interval.dimension)}</figcaption>{plot}</figure>")
    return f'<div class="grid">{"".join(figures)}</div>'


def ranking_distribution(data: ReportData) -> str:
    """A histogram of the score a non-Arena kind ranks by (empty for Arena, whose overall is
    the first of the distributions): ten bins over [0, 1], or [0, 100] for larger scores."""
    if data.kind == "arena":
        return ""
    key = data.leaderboard.ranking_key
    values = [e.ranking_value for e in data.ranked if e.ranking_value is not None]
    hi = 1.0 if all(0.0 <= v <= 1.0 for v in values) else 100.0
    ci = data.leaderboard.confidence_interval
    band = None
    if ci.enough_data and ci.mean is not None:
        band = (ci.mean, ci.low, ci.high)
    plot = histogram(
        values,
        title=f"{key} distribution (the score that ranks this {data.kind} task)",
        x_label=f"{key} (0 to {hi:g})",
        hi=hi,
        band=band,
        band_label=f"{ci.level:.0%} confidence interval of the mean",
    )
    unranked = len(data.ranked) - len(values)
    note = f'<p class="note">{unranked} ranked run(s) have no {esc(key)}.</p>' if unranked else ""
    return (
        f"<h2>Ranking score: {esc(key)}</h2>"
        f'<figure id="ranking-distribution"><figcaption>{esc(key)}</figcaption>{plot}</figure>'
        + note
    )


def tier_section(data: ReportData) -> str:
    """The tiers that did not run for some runs, and what that means for the score."""
    notes = tier_notes(data.entries, data.tier_gaps)
    if not notes:
        return ""
    items = "".join(f"<li>{esc(n)}</li>" for n in notes)
    head = "Tiers that did not run and inputs not reported, and what that means for the score:"
    return f'<div id="tier-notes" class="note"><p>{head}</p><ul>{items}</ul></div>'


def breakdown(entries: Sequence[LeaderboardEntry]) -> str:
    """Each submission's four category scores side by side, in leaderboard order."""
    rows = [
        BarRow(
            f"#{rank_label(e)} {e.submission_id}",
            e.submission_id,
            {name: float(getattr(e, name)) for name in CATEGORIES},
        )
        for e in entries
    ]
    return grouped_bars(rows, CATEGORIES, title="score per dimension and submission")


def interval_plot(data: ReportData) -> str:
    """The mean of every dimension with its confidence interval."""
    rows = [IntervalRow(i.dimension, i.mean, i.low, i.high, i.enough_data) for i in data.intervals]
    title = f"{data.confidence_level:.0%} confidence intervals of the mean score"
    return intervals(rows, title=title)


def cost_plot(data: ReportData) -> str:
    """Overall score against dollar cost, for the submissions whose cost is known."""
    points = []
    unknown = []
    for e in data.entries:
        run = data.runs.get(e.submission_id)
        if run is None or run.cost_usd is None:
            unknown.append(e.submission_id)
            continue
        label = f"{e.submission_id} ({e.tool}, {e.model}): ${run.cost_usd:.4f}, {e.overall:.2f}"
        group = e.variant or e.tool
        points.append(Point(run.cost_usd, e.overall, e.submission_id, label, group))
    plot = scatter(
        points,
        title="overall score against cost",
        x_label="cost (USD)",
        y_label="overall score",
        y_range=(0.0, 100.0),
    )
    note = ""
    if unknown:
        note = f'<p class="note">No cost known (not plotted): {esc(", ".join(unknown))}.</p>'
    return plot + note


def _stat(stats: Statistics | None, pick: str = "median", fmt: str = "{:.3f}") -> str:
    value = None if stats is None else getattr(stats, pick)
    return (
        '<td class="num">-</td>' if value is None else f'<td class="num">{fmt.format(value)}</td>'
    )


def variants_section(report: VariantsAnalysis) -> str:
    """Per-variant statistics and the uplift of each variant's median composite over T0."""
    rows = []
    for v in report.variants:
        uplift = report.uplift.get(v.variant)
        cop = v.cost_of_pass
        cop_cell = "-" if cop is None else ("never passes" if math.isinf(cop) else f"{cop:.4f}")
        uplift_cell = (
            "baseline" if v.variant == report.baseline
            else "undefined" if uplift is None else f"{uplift:+.1%}"
        )  # fmt: skip
        rows.append(
            f"<tr><td>{esc(v.variant)}</td><td class=num>{v.runs}</td>"
            + _stat(v.pass_rate, "mean", "{:.0%}") + _stat(v.impl_rate) + _stat(v.composite)
            + _stat(v.composite, "std_dev") + f"<td>{esc(v.grade or '-')}</td>"
            + _stat(v.cost_usd, "median", "{:.4f}") + f'<td class="num">{esc(cop_cell)}</td>'
            + f'<td class="num">{esc(uplift_cell)}</td></tr>'
        )  # fmt: skip
    heads = (
        "variant", "runs", "pass rate", "impl rate (median)", "composite (median)",
        "composite (std dev)", "grade", "cost USD (median)", "cost of pass", "uplift",
    )  # fmt: skip
    table = (
        '<table id="variants"><thead><tr>'
        + "".join(f'<th scope="col">{esc(h)}</th>' for h in heads)
        + f"</tr></thead><tbody>{''.join(rows)}</tbody></table>"
    )
    base = report.baseline or "the baseline variant"
    items = [(name, value) for name, value in report.uplift.items()]
    plot = signed_bars(
        items,
        title=f"uplift of the median composite over {base}",
        x_label=f"uplift over {base} (0.1 = +10%)",
    )
    return table + f"<figure><figcaption>uplift over {esc(base)}</figcaption>{plot}</figure>"


def render_html(data: ReportData) -> str:
    """The whole report page: the title, the verdict, then the tables and plots."""
    csp = (
        "default-src 'none'; img-src data:; style-src 'unsafe-inline'; "
        f"script-src {script_hash()}; base-uri 'none'; form-action 'none'"
    )
    sections = [
        f"<h1>evalq report: {esc(data.task_id)}</h1>",
        verdict_section(data),
        meta_line(data),
        judge_line(data),
        tier_section(data),
        "<h2>Leaderboard</h2>",
        '<p class="note">Click a column to sort; hover a row to find it in the plots.</p>',
        leaderboard_table(data),
        ranking_distribution(data),
        "<h2>Score distributions</h2>"
        if data.kind == "arena"
        else "<h2>Arena score distributions (shown for reference; they do not rank this task)</h2>",
        distributions(data),
        "<h2>Per-dimension breakdown</h2>",
        breakdown(data.entries),
        "<h2>Confidence intervals</h2>",
        interval_plot(data),
        "<h2>Cost against score</h2>",
        cost_plot(data),
    ]
    if data.variants is not None:
        sections += ["<h2>Variants (uplift over T0)</h2>", variants_section(data.variants)]
    sections.append(comparison_section(data))
    body = "\n".join(sections)
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{esc(csp)}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>evalq report: {esc(data.task_id)}</title><style>{STYLE}</style></head>"
        f"<body>\n{body}\n<script>{SCRIPT}</script></body></html>\n"
    )


def judge_line(data: ReportData) -> str:
    """Whether the judge's scores on the page are validated against people; empty without."""
    return validation_block(data.leaderboard.judge_validation)


def validation_block(validation: JudgeValidation | None) -> str:
    """The judge's validation against people, one item per rubric and model; empty without
    (the report, the UI's board and compare pages)."""
    if validation is None:
        return ""
    head, *rubrics = validation.lines()
    items = "".join(f"<li>{esc(line.strip())}</li>" for line in rubrics)
    return f'<div class="judge-validation"><p class="meta">{esc(head)}</p><ul>{items}</ul></div>'


def meta_line(data: ReportData) -> str:
    """How many submissions, which baseline, when, and the interval of the kind's score."""
    board = data.leaderboard
    ci = board.confidence_interval
    baseline = f"baseline v{board.baseline_version}" + (
        " (default)" if board.baseline_is_default else ""
    )
    return (
        f'<p class="meta">{board.kind} task, ranked by {esc(board.ranking_key)}; '
        f"{len(data.entries)} evaluated submission(s), {esc(baseline)}, generated "
        f"{esc(data.generated_at)}; mean {esc(ci.mean)}, {data.confidence_level:.0%} CI "
        f"[{esc(ci.low)}, {esc(ci.high)}]{'' if ci.enough_data else ' (not enough data)'}"
        "</p>"
    )
