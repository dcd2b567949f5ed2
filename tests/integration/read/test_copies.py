"""A run sent again under new ids counts once (issue 25 item 2), on the bundled examples.

The audit's gaming cases, replayed: 10 exact copies (new ids, same content) of o3's best Arena
run per task, and 10 copies of T1's passing Scylla runs. Each leaves the boards, the comparison
and the variant verdicts as they were, and the board names the copies. The same output sent
with other usage is not a copy: it is held for review.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.integration.read.test_held_runs import copy_of
from tests.support.processes import PATIENCE
from tests.support.settings import configure
from typer.testing import CliRunner

from evalq.core.schemas import Submission, Usage
from evalq.producer.cli import EXAMPLES, app
from evalq.producer.files import read_jsonl
from evalq.read.compare import COPY, compare
from evalq.read.leaderboard import leaderboard, variant_caveats
from evalq.read.reports import variant_report
from evalq.scoring.review import COPIED_OUTPUT
from evalq.service.client import Client
from evalq.store import queries
from evalq.store.db import session_scope
from evalq.tasks.merge import refresh_baseline
from evalq.workers.bootstrap import worker_app
from evalq.workers.embedded import embedded_worker

SCYLLA = "scylla-token-bucket"


def examples(name: str) -> list[Submission]:
    good, bad = read_jsonl(EXAMPLES / name)
    assert not bad
    return [s for _, s in good]


def add_runs(url: str, runs: list[Submission], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("EVALQ_BROKER_URL", raising=False)
    monkeypatch.delenv("EVALQ_JUDGE_MODEL", raising=False)
    configure(monkeypatch, database_url=url)
    client = Client(app=worker_app())
    with embedded_worker(client.app):
        ids = [r.id for r in client.submit_many(runs)]
        assert set(client.wait(ids, timeout=600 * PATIENCE).values()) == {"done"}
        for task_id in {r.task_id for r in runs}:
            refresh_baseline(task_id)
    client.app.close()


def copies(run: Submission, n: int) -> list[Submission]:
    return [run.model_copy(update={"id": f"{run.id}-copy-{i}"}) for i in range(n)]


def board(url: str, task_id: str) -> dict[str, Any]:
    with session_scope(url) as session:
        found = leaderboard(session, task_id=task_id).model_dump(mode="json")
    found.pop("baseline_version")
    found.pop("duplicate_of")
    return found


def difference(url: str) -> dict[str, Any]:
    with session_scope(url) as session:
        found = compare(
            session, tasks="arena-*", by="model", values=["claude-sonnet-4", "o3"]
        ).model_dump(mode="json")
    first = found["comparisons"][0]
    return {
        "means": (first["mean_reference"], first["mean_other"], first["difference"]),
        "left_out": found["left_out"],
    }


@pytest.fixture
def copied(store: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The store plus 10 copies of o3's best run on each Arena task."""
    url = copy_of(store, tmp_path)
    with session_scope(store) as session:
        best = {}
        for task_id in ("arena-frontend-dark-mode", "arena-debug-flaky-date-parser"):
            entries = leaderboard(session, task_id=task_id).entries
            best[task_id] = next(e.submission_id for e in entries if e.model == "o3")
    by_id = {s.id: s for s in examples("arena.jsonl")}
    add_runs(url, [c for sid in best.values() for c in copies(by_id[sid], 10)], monkeypatch)
    yield url
    configure(pytest.MonkeyPatch())


def test_copies_leave_every_arena_board_as_it_was(store: str, copied: str) -> None:
    for task_id in ("arena-frontend-dark-mode", "arena-debug-flaky-date-parser"):
        assert board(copied, task_id) == board(store, task_id), task_id
    with session_scope(copied) as session:
        named = leaderboard(session, task_id="arena-frontend-dark-mode").duplicate_of
    assert len(named) == 10 and len(set(named.values())) == 1


def test_pages_of_a_board_with_copies_name_them_and_leave_them_out(copied: str) -> None:
    # a page ranks from narrow rows; it finds the same copies as the whole board
    task_id = "arena-frontend-dark-mode"
    with session_scope(copied) as session:
        whole = leaderboard(session, task_id=task_id)
        pages = [leaderboard(session, task_id=task_id, limit=4, offset=o) for o in range(0, 16, 4)]
    assert [e for p in pages for e in p.entries] == whole.entries
    assert all(p.duplicate_of == whole.duplicate_of for p in pages)
    assert len(whole.duplicate_of) == 10 and pages[0].total == len(whole.entries)


def test_copies_leave_the_comparison_as_it_was_and_are_counted(store: str, copied: str) -> None:
    before, after = difference(store), difference(copied)
    assert after["means"] == before["means"]
    assert {"group": "o3", "reason": COPY, "count": 20} in after["left_out"]


def test_copies_of_passing_runs_do_not_move_the_variant_verdicts(
    store: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = copy_of(store, tmp_path)
    passing = [s for s in examples("scylla.jsonl") if s.variant == "T1" and s.passed][:2]
    assert passing
    add_runs(url, [c for run in passing for c in copies(run, 5)], monkeypatch)
    with session_scope(store) as session:
        before = variant_report(session, task_id=SCYLLA).model_dump(mode="json")
    with session_scope(url) as session:
        after = variant_report(session, task_id=SCYLLA).model_dump(mode="json")
    assert after == before


def test_the_same_output_with_other_usage_is_held_for_review(
    store: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = copy_of(store, tmp_path)
    original = next(s for s in examples("arena.jsonl") if s.model == "o3")
    cheaper = original.model_copy(
        update={
            "id": f"{original.id}-cheaper",
            "model": "gpt-4o",
            "usage": Usage(input_tokens=900, output_tokens=100, tool_calls=4, execution_time=30.0),
        }
    )
    add_runs(url, [cheaper], monkeypatch)
    with session_scope(url) as session:
        row = queries.get_submission_row(session, submission_id=cheaper.id)
        evaluation = queries.get_evaluation(session, submission_id=cheaper.id)
        assert row.review == "flagged"
        assert evaluation is not None
        assert COPIED_OUTPUT in evaluation.scores["review"]["flags"]
        entries = leaderboard(session, task_id=original.task_id).entries
    held = next(e for e in entries if e.submission_id == cheaper.id)
    assert held.held and held.rank is None


def test_a_variant_mixing_models_and_unpriced_runs_says_so(
    store: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = copy_of(store, tmp_path)
    t1 = [s for s in examples("scylla.jsonl") if s.variant == "T1"][:3]
    relabelled = [
        run.model_copy(
            update={
                "id": f"{run.id}-other-model",
                "model": "a-model-no-profile-prices",
                "output": f"{run.output} (run {i} of another model)",
                "usage": run.usage.model_copy(update={"cost_usd": None, "tool_calls": 7 + i}),
            }
        )
        for i, run in enumerate(t1)
    ]
    add_runs(url, relabelled, monkeypatch)
    with session_scope(url) as session:
        variants = {v.variant: v for v in leaderboard(session, task_id=SCYLLA).variants or []}
    mixed = variants["T1"]
    assert mixed.models == sorted({t1[0].model, "a-model-no-profile-prices"})
    assert (mixed.runs, mixed.costed_runs) == (13, 10)
    assert variant_caveats(mixed) == [
        f"mixes models: {', '.join(mixed.models)}",
        "costed 10 of 13 runs",
    ]
    assert variant_caveats(variants["T0"]) == []
    page = CliRunner().invoke(app, ["leaderboard", SCYLLA], env={"EVALQ_DATABASE_URL": url})
    assert page.exit_code == 0, page.output
    assert "mixes models" in page.output and "costed 10 of 13 runs" in page.output


def test_runs_of_one_agent_that_set_the_baseline_are_said_on_the_board(
    store: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """30 more runs of one agent with the output of a poor Arena run and usage 6% apart (not
    near-copies: `test_attacks.py` has those) are not held; the board says that one agent now
    sets the baseline, in JSON and the terminal (the report prints the same note under its
    Arena verdict). Said under spec 000's baseline, over runs; the robust default weighs each
    agent once, so one agent's volume does not set it (`test_robust_baseline_demo.py`)."""
    task_id = "arena-frontend-dark-mode"
    url = copy_of(store, tmp_path)
    spec = tmp_path / "spec.toml"
    spec.write_text('[arena]\nbaseline = "runs"\n')
    configure(monkeypatch, profile_path=str(spec))
    with session_scope(url) as session:
        assert leaderboard(session, task_id=task_id).baseline_note is None
    poor = next(s for s in examples("arena.jsonl") if s.id == "arena-fe-10")
    tokens = poor.usage.input_tokens or 0
    near = [
        poor.model_copy(
            update={
                "id": f"{poor.id}-near-{i}",
                "usage": Usage.model_validate(
                    poor.usage.model_dump(exclude_none=True, exclude={"total_tokens"})
                    | {"input_tokens": round(tokens * 1.06**i)}
                ),
            }
        )
        for i in range(1, 31)
    ]
    add_runs(url, near, monkeypatch)
    with session_scope(url) as session:
        found = leaderboard(session, task_id=task_id)
    assert found.near_copies == {}
    assert found.baseline_note is not None
    assert found.baseline_note.startswith(
        f"{poor.tool} / {poor.model} sent 31 of the 41 runs counted"
    )
    terminal = CliRunner().invoke(app, ["leaderboard", task_id], env={"EVALQ_DATABASE_URL": url})
    assert terminal.exit_code == 0, terminal.output
    assert "Read with care" in terminal.output and "sent 31 of the 41" in terminal.output
