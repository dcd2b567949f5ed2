"""A run held for review is held everywhere (issue 25 item 1), on the bundled examples.

``arena-fe-09`` claims the whole dark-mode feature in one tool call and 2,070 tokens: the merge
flags it for review. Until a person accepts it, it is listed apart (unranked) and left out of
ranks, percentiles, the board's interval, comparisons and the report's verdict; the option
``include_held`` ranks it among the others, and accepting it ranks it.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.support.processes import PATIENCE
from tests.support.settings import configure
from typer.testing import CliRunner

from evalq.core.schemas import Submission, Usage
from evalq.producer.cli import EXAMPLES, app
from evalq.producer.files import read_jsonl
from evalq.read.boards import projector
from evalq.read.compare import HELD, compare
from evalq.read.leaderboard import LeaderboardReport, leaderboard
from evalq.read.report_data import report_data
from evalq.read.reports import variant_report
from evalq.read.view import task_context
from evalq.report.verdict import verdict_section
from evalq.service.client import Client
from evalq.store import queries
from evalq.store.db import session_scope
from evalq.workers.bootstrap import worker_app
from evalq.workers.embedded import embedded_worker

TASK = "arena-frontend-dark-mode"
HELD_RUN = "arena-fe-09"
SCYLLA = "scylla-token-bucket"


def board(url: str, *, include_held: bool = False) -> LeaderboardReport:
    with session_scope(url) as session:
        return leaderboard(session, task_id=TASK, include_held=include_held)


def copy_of(store: str, tmp_path: Path) -> str:
    """A copy of the package's store, for a test that changes it."""
    path = tmp_path / "evalq.db"
    source, target = sqlite3.connect(store.removeprefix("sqlite:///")), sqlite3.connect(path)
    with source, target:
        source.backup(target)  # with what the write-ahead log holds
    source.close()
    target.close()
    return f"sqlite:///{path}"


def test_a_held_run_is_listed_apart_unranked(store: str) -> None:
    found = board(store)
    held = found.entries[-1]
    assert held.submission_id == HELD_RUN and held.held and held.review == "flagged"
    assert (held.rank, held.percentile, held.category_ranks) == (None, None, None)
    assert held.overall == 100.0  # its scores are still shown
    ranked = found.entries[:-1]
    assert all(e.rank is not None and not e.held for e in ranked)
    assert found.entries[0].submission_id != HELD_RUN and found.entries[0].rank == 1
    # percentiles run from 0 to 100 over the ranked rows alone
    assert max(e.percentile or 0 for e in ranked) == 100.0
    assert min(e.percentile or 0 for e in ranked) == 0.0
    assert not found.include_held


def test_the_boards_interval_leaves_the_held_run_out(store: str) -> None:
    found, included = board(store), board(store, include_held=True)
    ranked = [e.ranking_value or 0 for e in found.entries if not e.held]
    assert found.confidence_interval.mean == pytest.approx(sum(ranked) / len(ranked), abs=1e-4)
    assert included.confidence_interval.mean > found.confidence_interval.mean


def test_with_the_option_the_held_run_ranks_and_stays_marked(store: str) -> None:
    found = board(store, include_held=True)
    first = found.entries[0]
    assert first.submission_id == HELD_RUN and first.rank == 1 and first.held
    assert first.percentile == 100.0 and found.include_held


def test_the_report_verdict_never_puts_the_held_run_first(store: str) -> None:
    with session_scope(store) as session:
        data = report_data(session, task_id=TASK)
    page = verdict_section(data)
    board_rows = page.split('id="arena-board"')[1].split("</table>")[0]
    assert f'data-sid="{HELD_RUN}"' not in board_rows
    assert "Held for review" in page and HELD_RUN in page
    ranked = [e for e in data.entries if not e.held]
    overall = next(i for i in data.intervals if i.dimension == "overall")
    assert overall.mean == pytest.approx(sum(e.overall for e in ranked) / len(ranked), abs=1e-6)


def test_once_accepted_the_run_ranks(store: str, tmp_path: Path) -> None:
    url = copy_of(store, tmp_path)
    with session_scope(url) as session:
        queries.accept_review(session, submission_id=HELD_RUN)
    first = board(url).entries[0]
    assert (first.submission_id, first.rank, first.held, first.review) == (
        HELD_RUN,
        1,
        False,
        "accepted",
    )


def _gamed(submission: Submission, index: int) -> Submission:
    """The run again under a new id, claiming one tool call, 1 s and 200 tokens: too good."""
    return submission.model_copy(
        update={
            "id": f"{submission.id}-gamed-{index}",
            "usage": Usage(input_tokens=150, output_tokens=50, tool_calls=1, execution_time=1.0),
        }
    )


@pytest.fixture
def gamed(store: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The store plus, per Arena task, one too-good claude-sonnet-4 run (held for review)."""
    url = copy_of(store, tmp_path)
    good, _ = read_jsonl(EXAMPLES / "arena.jsonl")
    firsts: dict[str, Submission] = {}
    for _, submission in good:
        if submission.model == "claude-sonnet-4":
            firsts.setdefault(submission.task_id, submission)
    runs = [_gamed(submission, i) for i, submission in enumerate(firsts.values())]
    monkeypatch.delenv("EVALQ_BROKER_URL", raising=False)
    monkeypatch.delenv("EVALQ_JUDGE_MODEL", raising=False)
    configure(monkeypatch, database_url=url)
    client = Client(app=worker_app())
    with embedded_worker(client.app):
        ids = [r.id for r in client.submit_many(runs)]
        assert set(client.wait(ids, timeout=600 * PATIENCE).values()) == {"done"}
    client.app.close()
    with session_scope(url) as session:
        assert {
            sid: queries.get_submission_row(session, submission_id=sid).review for sid in ids
        } == (dict.fromkeys(ids, "flagged"))
    yield url
    configure(pytest.MonkeyPatch())


def _difference(url: str, *, include_held: bool = False) -> dict[str, object]:
    with session_scope(url) as session:
        found = compare(
            session,
            tasks="arena-*",
            by="model",
            values=["claude-sonnet-4", "o3"],
            include_held=include_held,
        ).model_dump(mode="json")
    first = found["comparisons"][0]
    # With the demo's 3 shared tasks the comparison is "too few" (no difference shown): the
    # means it would compare show what the held runs do to it.
    means = (first["mean_reference"], first["mean_other"], first["difference"])
    return {"difference": means, "left_out": found["left_out"]}


def test_a_held_run_per_task_leaves_the_comparison_unchanged(store: str, gamed: str) -> None:
    before, after = _difference(store), _difference(gamed)
    assert after["difference"] == before["difference"]
    assert {"group": "claude-sonnet-4", "reason": HELD, "count": 3} in after["left_out"]  # type: ignore[operator]
    included = _difference(gamed, include_held=True)
    assert included["difference"] != before["difference"]


def test_a_held_scylla_run_is_out_of_its_variants_statistics(store: str, tmp_path: Path) -> None:
    url = copy_of(store, tmp_path)
    with session_scope(url) as session:
        before = leaderboard(session, task_id=SCYLLA)
        best = before.entries[0]  # the best run of the task
        queries.flag_for_review(session, submission_id=best.submission_id)
    with session_scope(url) as session:
        # the projector's share of the refresh that follows a merge that holds a run (the
        # refresh would decide the review again: this run is no outlier)
        projector.project_task(session, task_context(session, task_id=SCYLLA))
    with session_scope(url) as session:
        after = leaderboard(session, task_id=SCYLLA)
        included = leaderboard(session, task_id=SCYLLA, include_held=True)
        report = variant_report(session, task_id=SCYLLA)
        report_included = variant_report(session, task_id=SCYLLA, include_held=True)

    def runs(found: LeaderboardReport) -> dict[str, int]:
        return {v.variant: v.runs for v in found.variants or []}

    variant = str(best.variant)
    assert runs(after)[variant] == runs(before)[variant] - 1
    assert runs(included) == runs(before)
    assert after.entries[-1].submission_id == best.submission_id and after.entries[-1].held
    assert report.runs == report_included.runs - 1 == len(before.entries) - 1


def test_the_cli_lists_the_held_run_apart_unless_asked(
    store: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    configure(monkeypatch, database_url=store)
    runner = CliRunner()
    shown = runner.invoke(app, ["leaderboard", TASK, "--json"])
    assert shown.exit_code == 0, shown.output
    entries = json.loads(shown.stdout)["entries"]
    assert entries[-1]["submission_id"] == HELD_RUN and entries[-1]["rank"] is None
    table = runner.invoke(app, ["leaderboard", TASK], env={"COLUMNS": "200"})
    held_line = next(line for line in table.stdout.splitlines() if HELD_RUN in line)
    assert "held" in held_line.split(HELD_RUN)[0]  # in the rank column
    included = runner.invoke(app, ["leaderboard", TASK, "--json", "--include-held"])
    assert json.loads(included.stdout)["entries"][0]["submission_id"] == HELD_RUN
    compared = runner.invoke(
        app, ["compare", "arena-*", "--by", "model", "claude-opus-4.5", "o3", "--json"]
    )
    assert compared.exit_code == 0, compared.output
    left_out = json.loads(compared.stdout)["left_out"]
    assert {"group": "claude-opus-4.5", "reason": HELD, "count": 1} in left_out
