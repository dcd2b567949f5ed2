"""What a report says first for every kind: the score that ranks, and the tiers that did not run.

The notes read the tiers each stored evaluation names as missing (`TierGap`) and what the
leaderboard entries carry (``peerread_note``, ``partial``, ``not_reported``), so the page, the
CSV and the JSON say the same thing.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from evalq.read.leaderboard import LeaderboardEntry
from evalq.read.report_data import TierGap

KIND_COLUMNS: dict[str, tuple[str, ...]] = {
    "scylla": ("scylla_composite", "scylla_grade"),
    "suite": ("suite_passed", "suite_final_score"),
    "peerread": ("peerread", "recommendation"),
}
"""A kind's own columns (`LeaderboardEntry` fields), written right after the ranking score."""


def gap_note(gap: TierGap, total: int) -> str:
    """One missing tier over a task's runs, and what that means for the score."""
    why = f": {gap.reason}" if gap.reason else ""
    head = (
        f"no judge ran for {gap.runs} of {total} run(s){why}"
        if gap.tier == "judge"
        else f"tier {gap.tier} {gap.status} for {gap.runs} of {total} run(s){why}"
    )
    return f"{head}; the score of those runs is computed without its figures."


def tier_notes(entries: list[LeaderboardEntry], gaps: Sequence[TierGap] = ()) -> list[str]:
    """One sentence per tier that did not run (or failed) for some of ``entries`` (``gaps``, as
    stored) and per input not reported, with what that means for the score; empty when every
    tier ran for every entry."""
    total = len(entries)
    notes = [gap_note(gap, total) for gap in gaps]
    unjudged = [e.peerread_note for e in entries if e.peerread_note]
    if unjudged:
        note = Counter(unjudged).most_common(1)[0][0]
        notes.append(
            f"{len(unjudged)} of {total} run(s): {note}; their composite is ranked on the "
            "other tiers alone, so it rewards on-topic text."
        )
    partial = sum(1 for e in entries if e.partial)
    if partial:
        notes.append(
            f"{partial} of {total} run(s): a tier failed (status degraded); their score is "
            "partial and they are ranked below every complete run."
        )
    missing = Counter(name for e in entries for name in e.not_reported)
    for name, count in sorted(missing.items()):
        notes.append(
            f"{count} of {total} run(s) did not report {name}: it scores 0, the worst value, "
            "so leaving it out never raises a score."
        )
    return notes


def entry_tier_note(entry: LeaderboardEntry) -> str:
    """The tiers that did not run for one entry, joined by ``;`` (empty when all ran)."""
    parts = []
    if entry.peerread_copied:
        parts.append(entry.peerread_copied)
    if entry.peerread_note:
        parts.append(entry.peerread_note)
    if entry.partial:
        parts.append("a tier failed: partial score, ranked below complete runs")
    parts += [f"{name} not reported: scores 0" for name in entry.not_reported]
    return "; ".join(parts)
