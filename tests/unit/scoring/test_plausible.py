"""A time the task's other agents make implausible is held; a few runs cannot move the line."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from evalq.core.profile import Profile
from evalq.scoring.arena.run import ArenaRun
from evalq.scoring.plausible import IMPLAUSIBLY_FAST, implausibly_fast, speed_floor
from evalq.scoring.review import RunFacts, review_flags

AGENTS = {("aider", "o3"): 120.0, ("codex", "gpt-5"): 90.0, ("goose", "sonnet"): 200.0}


def run(sid: str, tool: str, model: str, seconds: float | None) -> RunFacts:
    return RunFacts(
        run=ArenaRun(
            submission_id=sid,
            task_id="t",
            total_tokens=40_000,
            tool_calls=12,
            iterations=2,
            execution_time=seconds,
            cost_usd=0.2,
            tool=tool,
            model=model,
        ),
        submitted_at=datetime(2026, 11, 28, tzinfo=UTC),
        run_hash=sid,
        output_hash=sid,
    )


def test_the_floor_is_a_fraction_of_the_other_agents_lower_quartile() -> None:
    # others of a new agent: 90, 120, 200 -> lower quartile 105 -> floor 10.5 s
    assert speed_floor(AGENTS, ("new", "m")) == pytest.approx(10.5)
    assert speed_floor(AGENTS, ("aider", "o3")) is None  # its own agent never counts: 2 left
    assert speed_floor({("a", "m"): 1.0, ("b", "m"): 2.0}, ("c", "m")) is None  # too few


def test_a_run_claiming_one_millisecond_is_held_and_its_neighbours_too() -> None:
    honest = [run(f"h{i}", t, m, s * (1 + i / 10)) for i, ((t, m), s) in enumerate(AGENTS.items())]
    for claim in (0.001, 1.0, 10.0):
        liar = run("liar", "new", "m", claim)
        assert review_flags([*honest, liar], Profile().arena) == {"liar": (IMPLAUSIBLY_FAST,)}, (
            claim
        )
    # a quick but plausible run, and a time not reported (already the worst speed), are not held
    assert review_flags([*honest, run("quick", "new", "m", 40.0)], Profile().arena) == {}
    assert review_flags([*honest, run("silent", "new", "m", 0.0)], Profile().arena) == {}


def test_a_flood_of_fast_runs_from_one_agent_does_not_vouch_for_itself() -> None:
    honest = [run(f"h{i}", t, m, s) for i, ((t, m), s) in enumerate(AGENTS.items())]
    flood = [run(f"f{i}", "fake", "m", 0.002 + i / 1000) for i in range(30)]
    held = review_flags([*honest, *flood], Profile().arena)
    assert set(held) == {f.run.submission_id for f in flood}


def test_a_crowd_of_new_names_under_a_quarter_of_the_agents_is_held() -> None:
    many = {(f"tool{i}", "m"): 100.0 + 10 * i for i in range(9)}
    crowd = {("fake1", "m"): 0.001, ("fake2", "m"): 0.001}
    assert implausibly_fast(0.001, ("fake1", "m"), {**many, **crowd})


def test_without_a_time_nothing_is_decided() -> None:
    assert not implausibly_fast(None, ("a", "m"), AGENTS)
