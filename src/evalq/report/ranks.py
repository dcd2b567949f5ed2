"""Rank intervals on the page: ``2 [2–3] ≈`` and the note that explains it (docs/scoring.md,
"Rank uncertainty").

A row's rank comes with the bootstrap interval of its rank when it has one
(`evalq.read.rank_uncertainty`); ≈ marks a row whose interval overlaps another row's: the data
do not say which of the two ranks higher.
"""

from __future__ import annotations

from collections.abc import Sequence

from evalq.read.leaderboard import LeaderboardEntry, LeaderboardReport, VariantRank
from evalq.report.svg import esc

NOT_SEPARABLE = "≈"


def rank_label(row: LeaderboardEntry | VariantRank) -> str:
    """The rank as shown: its number, "held" for a run held for review, or "unranked" for a
    run whose self-reported usage the task's profile does not rank."""
    if row.rank is None:
        apart = getattr(row, "unranked", None) and not getattr(row, "held", False)
        return "unranked" if apart else "held"
    return str(row.rank)


def rank_cell(row: LeaderboardEntry | VariantRank) -> str:
    """The rank cell: the rank, its interval when it has one, ≈ (naming the others on hover)."""
    interval = row.rank_interval
    text = rank_label(row)
    if interval is not None:
        text += f' <span class="rank-interval">[{interval.low}–{interval.high}]</span>'
    if row.not_separable_from:
        others = esc(", ".join(row.not_separable_from))
        text += (
            f' <abbr class="not-separable" title="not separable from {others}">'
            f"{NOT_SEPARABLE}</abbr>"
        )
    return f'<td class="num" data-value="{row.rank or ""}">{text}</td>'


def interval_cell(row: VariantRank) -> str:
    """A column of its own: ``[2–3] ≈ T0, T1``, or why there is no interval."""
    if row.rank_interval is None:
        return f"<td>{esc(row.rank_interval_note or '-')}</td>"
    text = f"[{row.rank_interval.low}–{row.rank_interval.high}]"
    if row.not_separable_from:
        others = esc(", ".join(row.not_separable_from))
        text += f' <span class="not-separable">{NOT_SEPARABLE}</span> {others}'
    return f'<td class="rank-interval">{text}</td>'


def rank_note(board: LeaderboardReport, rows: Sequence[LeaderboardEntry | VariantRank]) -> str:
    """What the intervals and ≈ mean, under a table whose rows have intervals (else "")."""
    if not any(row.rank_interval for row in rows):
        return ""
    method = board.rank_uncertainty
    whose = "each variant's runs" if method.applies_to == "variants" else "each entry's scenarios"
    return (
        f'<p class="note rank-note">Rank interval [low–high]: the {method.level:.0%} bootstrap '
        f"interval of a row's rank over {method.resamples} resamples of {esc(whose)} (seeded "
        f"with {method.seed}, so the page is reproducible). {NOT_SEPARABLE} not separable: the "
        "row's interval overlaps another row's, so the data do not say which of them ranks "
        "higher.</p>"
    )
