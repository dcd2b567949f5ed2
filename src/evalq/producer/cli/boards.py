"""The read side: `evalq leaderboard` and `evalq report`."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape
from rich.table import Table

from evalq.core.errors import EvalqError
from evalq.producer.cli.output import console, fail, working

if TYPE_CHECKING:
    from evalq.read.leaderboard import LeaderboardEntry, LeaderboardReport, VariantRank

NOT_SEPARABLE = "≈"
"""Marks a row whose rank interval overlaps another row's."""
INCLUDE_HELD = (
    "Rank the runs held for review (flagged outliers not yet accepted) among the others; by "
    "default they are listed apart and left out of every statistic."
)


def _num(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


KIND_COLUMNS: dict[str, tuple[str, ...]] = {
    "arena": ("overall", "adj", "eff", "speed", "cost", "correct"),
    "peerread": ("composite", "recommendation", "overall"),
    "suite": ("gate", "final", "overall"),
    "scylla": ("variant", "composite", "grade", "overall"),
}
"""The columns a task's kind ranks by, after the run and who made it (tool / model); the rest
are folded into ``notes`` (or --wide)."""
WIDE_COLUMNS = ("adj", "eff", "speed", "cost", "correct", "pct")


def _cells(entry: LeaderboardEntry, kind: str) -> dict[str, str]:
    """Every column a leaderboard row of a ``kind`` task can show, formatted."""
    e = entry
    composite = e.peerread if kind == "peerread" else e.scylla_composite
    return {
        "tool": e.tool,
        "model": e.model,
        "overall": f"{e.overall:.2f}",
        "adj": f"{e.overall_adjusted:.2f}",
        "eff": f"{e.efficiency:.1f}",
        "speed": f"{e.speed:.1f}",
        "cost": f"{e.cost:.1f}",
        "correct": f"{e.correctness:.0f}",
        "pct": "-" if e.percentile is None else f"{e.percentile:.1f}",
        "composite": _num(composite),
        "recommendation": e.recommendation or "-",
        "gate": "-" if e.suite_passed is None else ("pass" if e.suite_passed else "blocked"),
        "final": _num(e.suite_final_score),
        "variant": e.variant or "-",
        "grade": e.scylla_grade or "-",
    }


def _rank(row: LeaderboardEntry | VariantRank) -> str:
    """The rank, with its bootstrap interval and the not-separable mark when it has one."""
    interval = row.rank_interval
    if row.rank is None:
        apart = getattr(row, "unranked", None) and not getattr(row, "held", False)
        return "unranked" if apart else "held"
    if interval is None:
        return str(row.rank)
    mark = NOT_SEPARABLE if row.not_separable_from else ""
    return f"{row.rank} [{interval.low}-{interval.high}]{mark}"


def rank_legend(board: LeaderboardReport) -> str | None:
    """What ``1 [1-2]≈`` means, for a board whose rows have rank intervals (else None)."""
    method = board.rank_uncertainty
    rows: list[LeaderboardEntry | VariantRank] = [*board.entries, *(board.variants or [])]
    if not any(row.rank_interval for row in rows):
        return None
    whose = "each variant's runs" if method.applies_to == "variants" else "each entry's scenarios"
    return (
        f"  rank [low-high]: {method.level:.0%} bootstrap interval of the rank over "
        f"{method.resamples} resamples of {whose} (seed {method.seed}); "
        f"{NOT_SEPARABLE} = not separable: its interval overlaps another row's"
    )


def _notes(entry: LeaderboardEntry) -> str:
    """What a reader must know about a row, in a few words: '-' when nothing."""
    notes: list[str] = []
    if entry.injection:
        notes.append("injection attempt: " + "; ".join(entry.injection))
    if entry.status != "done":
        notes.append(entry.status)
    if entry.partial:
        notes.append("partial")
    if entry.not_reported:
        notes.append("not reported: " + ",".join(entry.not_reported))
    if entry.usage_source != "self-reported":
        from evalq.read.usage import USAGE_LABELS  # loaded with the board, not at startup

        notes.append("usage: " + USAGE_LABELS[entry.usage_source])
    if entry.unranked:
        notes.append("unranked: usage not collected")
    if entry.peerread_copied:
        notes.append(entry.peerread_copied)
    if entry.peerread_note:
        notes.append("no judge: cannot tell a review from a paper summary")
    if entry.review == "flagged":
        notes.append("held" + (": " + ",".join(entry.flags) if entry.flags else ""))
    elif entry.review == "accepted":
        notes.append("accepted")
    return "; ".join(notes) or "-"


def leaderboard_table(board: LeaderboardReport, *, wide: bool = False) -> Table:
    """The board as a table that reads at 100 columns: rank, submission, tool / model (who won),
    the kind's own columns, notes; ``wide`` adds every Arena figure and the percentile."""
    title = (
        f"{board.task_id} ({board.kind}, ranked by {board.ranking_key}): "
        f"baseline v{board.baseline_version}{' (default)' if board.baseline_is_default else ''}"
    )
    columns = list(KIND_COLUMNS[board.kind])
    if wide:
        columns += [c for c in WIDE_COLUMNS if c not in columns]
    table = Table(title=title)
    table.add_column("rank", justify="right", no_wrap=True)
    longest = max((len(e.submission_id) for e in board.entries), default=10)
    # ids stay whole (up to 40 characters; longer ones wrap, never cut); who made it folds
    table.add_column("submission", overflow="fold", min_width=min(longest, 40))
    table.add_column("tool / model", overflow="fold")
    for column in columns:
        table.add_column(column, no_wrap=True)
    table.add_column("notes", overflow="fold")
    for entry in board.entries:
        cells = _cells(entry, board.kind)
        table.add_row(
            _rank(entry),
            escape(entry.submission_id),
            escape(f"{entry.tool} / {entry.model}"),
            *(escape(cells[c]) for c in columns),
            escape(_notes(entry)),
        )
    return table


def print_leaderboard(board: LeaderboardReport, *, wide: bool = False) -> None:
    """Render a leaderboard: the variant table (Scylla), the runs, what the columns mean."""
    if board.variants is not None:
        from evalq.read.leaderboard import variant_caveats

        variants = Table(title=f"{board.task_id}: variants")
        for column in ("rank", "variant", "runs", "pass rate", "median", "grade", "cost/pass"):
            variants.add_column(column, no_wrap=True)
        variants.add_column("uplift vs T0", no_wrap=True)
        caveats = {v.variant: variant_caveats(v) for v in board.variants}
        if any(caveats.values()):
            variants.add_column("caveats")
        for v in board.variants:
            variants.add_row(
                _rank(v), v.variant, str(v.runs), _num(v.pass_rate, 2),
                _num(v.median_composite), v.grade or "-", _num(v.cost_of_pass, 4),
                "-" if v.uplift is None else f"{v.uplift:+.1%}",
                *(["; ".join(caveats[v.variant]) or "-"] if any(caveats.values()) else []),
            )  # fmt: skip
        console.print(variants)
    console.print(leaderboard_table(board, wide=wide))
    if board.verifier is not None:
        console.print(f"task {escape(board.verifier)}", highlight=False)
    if board.judge_break is not None:
        console.print(board.judge_break, markup=False, highlight=False)
    if board.judge_validation is not None:
        for line in board.judge_validation.lines():
            console.print(line, markup=False, highlight=False)
    ci = board.confidence_interval
    note = "" if ci.enough_data else " (not enough data)"
    console.print(
        f"  {ci.level:.0%} CI of the mean {ci.of}: [{ci.low}, {ci.high}]{note}. "
        "overall = Arena overall before the difficulty factor, adj = after it; not reported = "
        "counted as the worst value; held = flagged for review, left out of the baseline until "
        "accepted (evalq review accept ID); --wide for every Arena figure and the percentile, "
        "--json for scripts",
        highlight=False,
    )
    legend = rank_legend(board)
    if legend is not None:
        console.print(legend, highlight=False, markup=False)
    for line in page_lines(board):
        console.print(line, highlight=False, markup=False)
    if board.baseline_note:
        console.print(f"  Read with care: {board.baseline_note}.", highlight=False, markup=False)
    if board.range_note:
        console.print(f"  Read with care: {board.range_note}.", highlight=False, markup=False)
    if board.crowd_note:
        console.print(f"  Note: {board.crowd_note}.", highlight=False, markup=False)
    if board.rescoring_note:
        console.print(f"  Being rescored: {board.rescoring_note}", highlight=False, markup=False)
    if board.usage_note:
        console.print(
            f"  Usage: {board.usage_note}. Rows marked 'usage: collected trace' took their usage "
            "from spans evalq collected from the agents' runtime; 'usage: own trace "
            "(unverified)' agrees with a trace the run brought itself, which nobody checked.",
            highlight=False,
            markup=False,
        )
    if board.duplicate_of:
        copies = ", ".join(f"{copy} (of {first})" for copy, first in board.duplicate_of.items())
        console.print(
            f"  {len(board.duplicate_of)} cop{'y' if len(board.duplicate_of) == 1 else 'ies'} "
            f"of earlier runs counted once, as the earliest: {copies}",
            highlight=False,
            markup=False,
        )
    if board.near_copies:
        from evalq.scoring.review import NEAR_COPY  # loaded with the board already

        console.print(
            f"  {len(board.near_copies)} of them: {NEAR_COPY} ({', '.join(board.near_copies)})",
            highlight=False,
            markup=False,
        )


def page_lines(board: LeaderboardReport) -> list[str]:
    """What a paged board says of its page: which entries it lists, whether the board moved
    since the page before (read with --cursor), and how to read the next one."""
    if board.limit is None:
        return []
    total = board.total or 0
    shown = (
        f"entries {board.offset + 1}-{board.offset + len(board.entries)}"
        if board.entries
        else "no entries"
    )
    lines = [f"  {shown} of {total}"]
    if board.board_moved:
        lines.append(
            "  The board moved since the page before was read: the two pages may repeat or "
            "miss a run; read without --cursor for the board as it stands."
        )
    if board.next_cursor is not None:
        lines.append(f"  next page: --limit {board.limit} --cursor {board.next_cursor}")
    return lines


def metadata_pairs(pairs: list[str]) -> dict[str, str]:
    """``--where KEY=VALUE`` options as a filter; a malformed or repeated one is a usage error."""
    wanted: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise typer.BadParameter(f"{pair!r} is not KEY=VALUE", param_hint="--where")
        if key in wanted:
            raise typer.BadParameter(f"{key!r} is given more than once", param_hint="--where")
        wanted[key] = value
    return wanted


def leaderboard_command(
    task_id: str,
    tool: Annotated[str | None, typer.Option(help="Only this tool.")] = None,
    model: Annotated[str | None, typer.Option(help="Only this model.")] = None,
    variant: Annotated[str | None, typer.Option(help="Only this variant (T0..Tn).")] = None,
    where: Annotated[
        list[str] | None,
        typer.Option(
            help="Only submissions whose metadata has KEY=VALUE (exact, compared as strings); "
            "repeat to require several."
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    wide: Annotated[
        bool, typer.Option("--wide", help="Also tool, model and every Arena figure.")
    ] = False,
    include_held: Annotated[bool, typer.Option("--include-held", help=INCLUDE_HELD)] = False,
    limit: Annotated[
        int | None,
        typer.Option(min=1, max=1000, help="List at most this many entries (a page)."),
    ] = None,
    offset: Annotated[int, typer.Option(min=0, help="Entries to skip first.")] = 0,
    cursor: Annotated[
        str | None,
        typer.Option(
            help="The next_cursor of the page before (--json shows it), for the page after "
            "it: same filters and --limit, no --offset."
        ),
    ] = None,
) -> None:
    """Rank a task's evaluated submissions against its current baseline (runs held for review
    are listed last, unranked, unless --include-held)."""
    from evalq.read import served
    from evalq.read.boards.query import BoardQuery
    from evalq.store.db import read_scope

    query = BoardQuery(
        task_id=task_id,
        tool=tool,
        model=model,
        variant=variant,
        metadata=metadata_pairs(where or []),
        include_held=include_held,
        limit=limit,
        offset=offset,
        cursor=cursor,
    )
    try:
        with read_scope() as session:
            board = served.board(session, query)
    except EvalqError as error:
        fail(error)
    if as_json:
        # pydantic's serialiser writes it: rich's print_json re-parses and highlights every
        # token (4 s of a 1,000-row board; bench/read_scale.py)
        sys.stdout.write(board.model_dump_json(indent=2) + "\n")
    else:
        print_leaderboard(board, wide=wide)


def report(
    task_id: str,
    output: Annotated[Path, typer.Option("--output", "-o", help="File to write.")] = Path(
        "report.html"
    ),
    fmt: Annotated[
        str, typer.Option("--format", help="html (self-contained page), csv or json.")
    ] = "html",
    include_held: Annotated[bool, typer.Option("--include-held", help=INCLUDE_HELD)] = False,
) -> None:
    """Write a task's report: the kind's verdict, then leaderboard, distributions, intervals,
    cost, variant uplift."""
    from evalq.read import served
    from evalq.report import render
    from evalq.store.db import read_scope

    try:
        with working(f"reading and drawing the report of {task_id}"), read_scope() as session:
            data = served.report(session, task_id=task_id, include_held=include_held)
            text = render(data, fmt)
    except EvalqError as error:
        fail(error)
    output.write_text(text, encoding="utf-8", newline="")  # CSV lines end \r\n already
    console.print(f"wrote {output} ({len(data.entries)} submissions)", highlight=False)
