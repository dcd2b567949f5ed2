"""The agent-weighted Arena baseline (``arena.baseline = "agents"``) on the bundled examples: what
it changes on the unmodified boards (and the robust default), and how far one agent's flood of
runs and a crowd of throwaway names move the baseline and the real runs' places, against spec
000's median of runs (selected with ``arena.baseline = "runs"``).

The figures asserted here are the ones docs/scoring.md reports.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tests.integration.read.test_attacks import FLOODED, flood
from tests.integration.read.test_copies import add_runs, examples
from tests.integration.read.test_held_runs import copy_of
from tests.support.settings import configure
from typer.testing import CliRunner

from evalq.core.profile import profile_named
from evalq.core.schemas import Submission, Usage
from evalq.producer.cli import app
from evalq.read.baseline import current_baseline
from evalq.read.compare import compare
from evalq.read.leaderboard import leaderboard
from evalq.store import queries
from evalq.store.db import session_scope
from evalq.tasks.merge import refresh_baseline

ARENA = ("arena-data-sales-summary", FLOODED, "arena-frontend-dark-mode")
DEFAULT = Path(__file__).parents[3] / "src" / "evalq" / "core" / "default_profile.toml"


def weigh(url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mode: str) -> None:
    """The default profile with ``arena.baseline = mode`` for the store at ``url``, and every
    Arena task's baseline refreshed under it."""
    text = DEFAULT.read_text()
    assert text.count('baseline = "robust"') == 1
    path = tmp_path / f"{mode}.toml"
    path.write_text(text.replace('baseline = "robust"', f'baseline = "{mode}"'))
    configure(monkeypatch, database_url=url, profile_path=str(path))
    for task_id in ARENA:
        refresh_baseline(task_id)


def weigh_agents(url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`weigh` with ``arena.baseline = "agents"``."""
    weigh(url, tmp_path, monkeypatch, "agents")


def figures(url: str) -> dict[str, Any]:
    """Each Arena board's places (held runs: None) and baseline, and the model comparison."""
    found: dict[str, Any] = {}
    with session_scope(url) as session:
        for task_id in ARENA:
            board = leaderboard(session, task_id=task_id)
            found[task_id] = {e.submission_id: e.rank for e in board.entries}
            found[f"{task_id} note"] = board.baseline_note
        found["compare"] = (
            compare(session, tasks="arena-*", by="model", values=["claude-sonnet-4", "o3"])
            .comparisons[0]
            .conclusion
        )
    return found


def baseline_of(url: str, task_id: str) -> dict[str, Any]:
    with session_scope(url) as session:
        task = queries.get_task(session, task_id=task_id)
        return current_baseline(
            session, task_id=task_id, profile=profile_named(task.profile)
        ).baseline.model_dump()


def copy_in(url: str, directory: Path) -> str:
    directory.mkdir()
    return copy_of(url, directory)


def moved(before: dict[str, int | None], after: dict[str, int | None]) -> int:
    return sum(before[k] != after.get(k) for k in before)


def one_agent_flood() -> list[Submission]:
    """30 slow, costly runs from one agent already on the task, each a run of its own: its
    cost 4% above the one before (same-agent runs with every usage figure within 3.5% and the
    content of an earlier one, its output with a tag appended, are near-copies and count
    once: docs/scoring.md)."""
    model = next(s for s in examples("arena.jsonl") if s.task_id == FLOODED)
    return [
        model.model_copy(
            update={
                "id": f"volume-{i}",
                "output": f"{model.output} (attempt {i})",
                "usage": Usage(
                    input_tokens=300_000 + 1_000 * i,
                    output_tokens=50_000,
                    tool_calls=120 + i,
                    iterations=3,
                    execution_time=5_000.0 + 50 * i,
                    cost_usd=round(25.0 * 1.04**i, 2),
                ),
            }
        )
        for i in range(30)
    ]


def test_weighing_agents_on_the_unmodified_demo(
    store: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    robust = figures(store)  # the default
    spec_url = copy_in(store, tmp_path / "spec")
    weigh(spec_url, tmp_path, monkeypatch, "runs")
    spec = figures(spec_url)
    url = copy_in(store, tmp_path / "agents")
    weigh_agents(url, tmp_path, monkeypatch)
    agents = figures(url)
    changes = {t: (moved(spec[t], agents[t]), moved(spec[t], robust[t])) for t in ARENA}
    print("rank changes, runs -> agents, robust:", changes, spec["compare"], agents["compare"])
    # every demo Arena agent sends one counted run per task (claude-code / claude-opus-4.5's
    # second frontend run, arena-fe-09, is held for review), all within 5x of its task's
    # median: nothing moves
    assert changes == {task_id: (0, 0) for task_id in ARENA}
    assert agents["compare"] == spec["compare"] == robust["compare"]
    terminal = CliRunner().invoke(app, ["leaderboard", ARENA[2]], env={"EVALQ_DATABASE_URL": url})
    assert terminal.exit_code == 0, terminal.output


@pytest.mark.parametrize("attack", ["one agent, 30 runs", "6 new names, 2 runs each"])
def test_a_flood_moves_the_agent_baseline_by_one_agents_place(
    store: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, attack: str
) -> None:
    runs = one_agent_flood() if attack.startswith("one") else flood()
    spec_url = copy_in(store, tmp_path / "spec")
    weigh(spec_url, tmp_path, monkeypatch, "runs")
    spec_clean, spec_places = baseline_of(spec_url, FLOODED), figures(spec_url)[FLOODED]
    add_runs(spec_url, runs, monkeypatch)
    spec = baseline_of(spec_url, FLOODED)
    spec_after = figures(spec_url)
    spec_moved = moved(spec_places, spec_after[FLOODED])

    clean_url = copy_in(store, tmp_path / "clean")
    weigh_agents(clean_url, tmp_path, monkeypatch)
    agents_clean, clean_places = baseline_of(clean_url, FLOODED), figures(clean_url)[FLOODED]
    url = copy_in(clean_url, tmp_path / "flooded")
    weigh_agents(url, tmp_path, monkeypatch)
    add_runs(url, runs, monkeypatch)
    agents = baseline_of(url, FLOODED)
    agents_after = figures(url)
    agents_moved = moved(clean_places, agents_after[FLOODED])
    shown = ("median_execution_time", "median_cost", "median_tokens", "max_execution_time")
    for name in shown:
        print(
            f"{attack}: {name} runs {spec_clean[name]:.4g} -> {spec[name]:.4g}; "
            f"agents {agents_clean[name]:.4g} -> {agents[name]:.4g}"
        )
    print(f"{attack}: real runs moved: runs {spec_moved}, agents {agents_moved}")
    assert agents_clean["median_execution_time"] == spec_clean["median_execution_time"]
    # one agent's place: the median of 11 agents (or 12 with the crowd as one) moves to at
    # most the next agent's value, never to the flood's 5,000 s and more as the runs' median does
    assert spec["median_execution_time"] >= 5_000
    assert agents["median_execution_time"] < 300
    # the note that one agent's runs set the baseline: said over runs, moot over agents
    note = f"{FLOODED} note"
    assert (spec_after[note] is not None) == attack.startswith("one")
    assert agents_after[note] is None
