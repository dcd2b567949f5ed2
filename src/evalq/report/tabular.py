"""The report's data as CSV (one row per leaderboard entry) or JSON (everything)."""

from __future__ import annotations

import csv
import io
import json

from evalq.read.report_data import ReportData

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
)


def render_csv(data: ReportData) -> str:
    """One row per entry in leaderboard order; list fields joined by ``;``, None as empty."""
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=CSV_COLUMNS, lineterminator="\n")
    writer.writeheader()
    for entry in data.entries:
        run = data.runs.get(entry.submission_id)
        row = {name: getattr(entry, name, None) for name in CSV_COLUMNS}
        row["cost_usd"] = None if run is None else run.cost_usd
        row["execution_time"] = None if run is None else run.execution_time
        row["not_reported"] = ";".join(entry.not_reported)
        row["flags"] = ";".join(entry.flags)
        interval = entry.rank_interval
        row["rank_low"] = None if interval is None else interval.low
        row["rank_high"] = None if interval is None else interval.high
        row["not_separable_from"] = ";".join(entry.not_separable_from)
        writer.writerow(row)
    return out.getvalue()


def render_json(data: ReportData) -> str:
    """The whole report (`ReportData`) as indented JSON."""
    return json.dumps(data.model_dump(mode="json"), indent=2, allow_nan=False) + "\n"
