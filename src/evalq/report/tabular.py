"""The report's data as CSV (one row per leaderboard entry) or JSON (everything)."""

from __future__ import annotations

import json
from collections.abc import Sequence

from evalq.core.csv_cells import write_csv
from evalq.read.leaderboard import LeaderboardEntry
from evalq.read.report_data import ReportData
from evalq.report.tiers import KIND_COLUMNS, entry_tier_note, tier_notes

LEAD_COLUMNS = ("rank", "submission_id", "ranking_key", "ranking_value")
"""Every kind's CSV starts with these, then the kind's own columns (`KIND_COLUMNS`)."""
CSV_COLUMNS = (
    "rank",
    "submission_id",
    "tool",
    "model",
    "variant",
    "status",
    "overall",
    "efficiency",
    "speed",
    "cost",
    "correctness",
    "percentile",
    "peerread",
    "recommendation",
    "cost_usd",
    "execution_time",
    "not_reported",
    "flags",
    "rank_low",
    "rank_high",
    "not_separable_from",
    "tier_notes",
)
"""The columns every kind shares, after the leading and the kind's own ones."""


def csv_columns(kind: str) -> tuple[str, ...]:
    """The CSV header of a ``kind``: the ranking score, the kind's own columns, then the rest."""
    lead = (*LEAD_COLUMNS, *KIND_COLUMNS.get(kind, ()))
    return (*lead, *(column for column in CSV_COLUMNS if column not in lead))


def render_csv(data: ReportData) -> str:
    """One row per entry in leaderboard order; list fields joined by ``;``, None as empty.

    Each row leads with the kind's ranking key and value and the kind's own columns; the
    ``tier_notes`` column says which tier did not run for that row and what it means. Strings
    that a spreadsheet would read as formulas are quoted (`evalq.core.csv_cells`).
    """
    columns = csv_columns(data.kind)
    return write_csv(columns, (_row(data, entry, columns) for entry in data.entries))


def _row(data: ReportData, entry: LeaderboardEntry, columns: Sequence[str]) -> dict[str, object]:
    run = data.runs.get(entry.submission_id)
    row = {name: getattr(entry, name, None) for name in columns}
    row["ranking_key"] = data.leaderboard.ranking_key
    row["cost_usd"] = None if run is None else run.cost_usd
    row["execution_time"] = None if run is None else run.execution_time
    row["not_reported"] = ";".join(entry.not_reported)
    row["flags"] = ";".join(entry.flags)
    interval = entry.rank_interval
    row["rank_low"] = None if interval is None else interval.low
    row["rank_high"] = None if interval is None else interval.high
    row["not_separable_from"] = ";".join(entry.not_separable_from)
    row["tier_notes"] = entry_tier_note(entry)
    return row


def render_json(data: ReportData) -> str:
    """The whole report (`ReportData`) as indented JSON, led by what the kind ranks by and the
    tiers that did not run (``tier_notes``), as the page and the CSV lead with them."""
    lead = {
        "kind": data.kind,
        "ranking_key": data.leaderboard.ranking_key,
        "tier_notes": tier_notes(data.entries, data.tier_gaps),
    }
    return json.dumps(lead | data.model_dump(mode="json"), indent=2, allow_nan=False) + "\n"
