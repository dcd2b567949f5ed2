"""Each kind of task ranks by its own score, on the bundled examples (issue: ranking by kind)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.support.settings import configure
from typer.testing import CliRunner

from evalq.producer.cli import app
from evalq.read.leaderboard import LeaderboardReport, leaderboard
from evalq.store.db import session_scope


def board(url: str, task_id: str) -> LeaderboardReport:
    with session_scope(url) as session:
        return leaderboard(session, task_id=task_id)


def rank_of(found: LeaderboardReport) -> dict[str, int]:
    return {e.submission_id: e.rank for e in found.entries}


def test_the_peerread_board_puts_the_balanced_review_above_the_shortcuts(store: str) -> None:
    found = board(store, "peerread-salience-gating")
    assert (found.kind, found.ranking_key) == ("peerread", "peerread_composite")
    ranks = rank_of(found)
    # peer-07: "Accept."; peer-06: restates the abstract; peer-03: a review of another paper
    for shortcut in ("peer-07-terse", "peer-06-parrot", "peer-03-wrong-paper"):
        assert ranks["peer-01-balanced"] < ranks[shortcut]
    assert ranks["peer-01-balanced"] == 1
    values = [e.ranking_value for e in found.entries]
    assert values == sorted(values, reverse=True)  # by the composite, not the Arena overall
    peer = {e.submission_id: e for e in found.entries}
    assert all(e.ranking_value == pytest.approx(e.peerread, abs=1e-4) for e in found.entries)
    assert peer["peer-07-terse"].overall > peer["peer-01-balanced"].overall  # fewer tokens


def test_the_peerread_board_marks_the_run_that_restates_the_paper(store: str) -> None:
    peer = {e.submission_id: e for e in board(store, "peerread-salience-gating").entries}
    # peer-06 retells the paper's own account of itself (the task's context)
    assert (peer["peer-06-parrot"].peerread_copied or "").startswith("restates the task's context")
    assert {name for name, e in peer.items() if e.peerread_copied} == {"peer-06-parrot"}


def test_the_suite_board_leads_with_the_run_that_passes_its_gate(store: str) -> None:
    found = board(store, "suite-refund-agent")
    assert found.kind == "suite"
    first = found.entries[0]
    assert first.suite_passed is True and first.rank == 1
    assert all(e.suite_passed is False for e in found.entries[1:])
    # a blocked run with a higher final score still ranks below the passing one
    assert max(e.suite_final_score or 0 for e in found.entries[1:]) > (first.suite_final_score or 0)


def test_the_scylla_board_is_per_variant_with_the_runs_beneath(store: str) -> None:
    found = board(store, "scylla-token-bucket")
    assert found.kind == "scylla" and found.variants is not None
    variants = {v.variant: v for v in found.variants}
    assert set(variants) == {"T0", "T1", "T2", "T3"}
    assert variants["T0"].uplift is None
    assert all(variants[t].uplift is not None for t in ("T1", "T2", "T3"))
    assert found.variants[0].rank == 1
    medians = [v.median_composite or 0 for v in found.variants]
    assert medians == sorted(medians, reverse=True)
    composites = [e.scylla_composite or 0 for e in found.entries]
    assert len(found.entries) == 40 and composites == sorted(composites, reverse=True)


def test_arena_ranks_use_the_overall_before_the_difficulty_factor(store: str) -> None:
    found = board(store, "arena-frontend-dark-mode")
    assert found.kind == "arena"
    capped = [e for e in found.entries if e.overall_adjusted == 100.0]
    assert len(capped) >= 3  # the factor and the cap make these equal ...
    assert len({e.rank for e in capped}) > 1  # ... their ranks still tell them apart
    outlier = next(e for e in found.entries if e.submission_id == "arena-fe-09")
    assert outlier.review == "flagged" and "minimal_tool_usage" in outlier.flags


def test_leaderboard_json_keeps_its_rows_and_names_what_it_ranks_by(
    store: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    configure(monkeypatch, database_url=store)
    result = CliRunner().invoke(app, ["leaderboard", "arena-debug-flaky-date-parser", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["kind"] == "arena" and data["ranking_key"] == "arena_overall_unadjusted"
    rows = {e["submission_id"]: e for e in data["entries"]}
    assert all(
        {"rank", "submission_id", "ranking_value", "partial"} <= set(e) for e in rows.values()
    )
    assert rows["arena-dbg-10"]["not_reported"] == ["cost", "speed"]
    assert rows["arena-dbg-04"]["not_reported"] == ["speed"]
    assert all("flags" in e and "review" in e for e in rows.values())


def test_leaderboard_json_is_the_board_as_read_in_process_written_plainly(
    store: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # written by pydantic's serialiser, not rich's pretty-printer (issue 27): the same values
    configure(monkeypatch, database_url=store)
    task_id = "scylla-token-bucket"
    result = CliRunner().invoke(app, ["leaderboard", task_id, "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == board(store, task_id).model_dump(mode="json")


@pytest.mark.parametrize(
    ("task_id", "scale"),
    [
        ("peerread-salience-gating", (0.0, 1.0)),
        ("suite-refund-agent", (0.0, 1.0)),
        ("scylla-token-bucket", (0.0, 1.0)),
        ("arena-debug-flaky-date-parser", (0.0, 100.0)),
    ],
)
def test_a_board_s_interval_is_on_its_own_score_s_scale(
    store: str, task_id: str, scale: tuple[float, float]
) -> None:
    # The suite board's upper bound was 1.0187, a small PeerRead board's [0.0, 100.0].
    ci = board(store, task_id).confidence_interval
    assert scale[0] <= ci.low <= ci.high <= scale[1]
    if ci.enough_data:
        assert ci.low <= ci.mean <= ci.high
    else:
        assert (ci.low, ci.high) == scale


def test_too_few_rows_give_the_whole_of_the_score_s_own_range(store: str) -> None:
    with session_scope(store) as session:
        two = leaderboard(session, task_id="suite-refund-agent", variant="no-such-variant")
    assert two.entries == [] and not two.confidence_interval.enough_data
    assert (two.confidence_interval.low, two.confidence_interval.high) == (0.0, 1.0)


def test_an_unjudged_peerread_board_says_it_cannot_tell_a_review_from_a_summary(
    store: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    configure(monkeypatch, database_url=store)
    runner = CliRunner()
    data = json.loads(
        runner.invoke(app, ["leaderboard", "peerread-salience-gating", "--json"]).stdout
    )
    notes = {e["peerread_note"] for e in data["entries"]}
    assert notes == {"no judge ran: similarity cannot tell a review from a summary of the paper"}
    table = runner.invoke(app, ["leaderboard", "peerread-salience-gating"], terminal_width=200)
    assert table.exit_code == 0, table.output
    assert "cannot tell a review from a paper summary" in " ".join(table.output.split())
    page = tmp_path / "report.html"
    report = runner.invoke(app, ["report", "peerread-salience-gating", "-o", str(page)])
    assert report.exit_code == 0, report.output
    assert "composites had no judge: no judge ran: similarity cannot tell" in page.read_text()
