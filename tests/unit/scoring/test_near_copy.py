"""Near-copies by similarity: appended, nudged or renamed copies count once; distinct runs do
not merge."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from importlib import resources

from evalq.scoring.arena.run import ArenaRun
from evalq.scoring.near_copy import NEAR_CONTAINMENT, containment, sketch
from evalq.scoring.review import RunFacts, duplicates

RUNS = [
    json.loads(line)
    for line in (resources.files("evalq") / "examples" / "scylla.jsonl").read_text().splitlines()
]


def facts(
    payload: dict[str, object],
    sid: str,
    minute: int,
    *,
    model: str = "m",
    scale: float = 1.0,
    cost: float | None = None,
) -> RunFacts:
    return RunFacts(
        run=ArenaRun(
            submission_id=sid,
            task_id="t",
            total_tokens=round(100_000 * scale),
            tool_calls=25,
            iterations=1,
            execution_time=400.0 * scale,
            cost_usd=cost,
            tool="tool",
            model=model,
        ),
        submitted_at=datetime(2026, 11, 28, tzinfo=UTC) + timedelta(minutes=minute),
        run_hash=sid,
        output_hash=sid,
        shape_hash=sid,
        sketch=sketch(payload),
    )


def test_appended_nudged_or_renamed_copies_are_near_copies() -> None:
    run = RUNS[0]
    original = facts(run, "original", 0)
    appended = facts(dict(run, output=f"{run['output']} Checked twice."), "appended", 1)
    nudged = facts(run, "nudged", 2, scale=1.03)
    renamed = facts(run, "renamed", 3, model="other")
    found = duplicates([original, appended, nudged, renamed])
    assert found == {"appended": "original", "nudged": "original", "renamed": "original"}


def test_distinct_outputs_or_usage_apart_do_not_merge() -> None:
    a, b = RUNS[0], next(r for r in RUNS if r["output"] != RUNS[0]["output"])
    sa, sb = sketch(a), sketch(b)
    assert sa is not None and sb is not None and containment(sa, sb) < NEAR_CONTAINMENT
    assert duplicates([facts(a, "a", 0), facts(b, "b", 1)]) == {}
    assert duplicates([facts(a, "a", 0), facts(a, "far", 1, scale=1.05)]) == {}


def test_one_agents_runs_apart_in_cost_alone_are_its_own_runs_and_another_agents_are_not() -> None:
    # the cost is left out only across agents (a relabelled copy is re-priced by its model's
    # name); within one agent a cost 4% apart is a run of its own, as it was for the shape rule
    run = RUNS[0]
    first = facts(run, "first", 0, cost=10.0)
    again = facts(dict(run, output=f"{run['output']} (attempt 2)"), "again", 1, cost=10.4)
    assert duplicates([first, again]) == {}
    relabelled = facts(run, "relabelled", 1, model="other", cost=10.4)
    assert duplicates([first, relabelled]) == {"relabelled": "first"}
