"""What weighing each agent once in the Arena baseline changes, on the bundled examples.

Usage: python bench/agent_baseline.py [--scale 1000 10000 100000] [--backend sqlite|postgresql]

Every bundled Arena run is scored with the pure scorers against its task's baseline computed two
ways: over runs (spec 000, ``arena.baseline = "runs"``) and over agents (``"agents"``: each
agent's median once, a crowd of names seen on no other task as one). Printed: how many runs change
rank and which tasks change first place; then, on one task, how far two attacks move the
baseline's time, cost and token figures in each mode and how many real runs change rank:
30 slow, costly runs from one agent already on the task, and 12 such runs from 6 throwaway names
(2 each). Held runs and copies are not left out here (every example run counts): a pure
recomputation, not the store's boards (tests/integration/read/test_agent_baseline_demo.py
measures the stored boards).

With ``--scale``: the time of one baseline computation in the database (`sql_baseline`) over runs
and over agents, for a task of each size with 20 agents (its runs inserted directly), median of 5.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from evalq.core.profile import ArenaProfile, profile_named
from evalq.core.schemas import Submission, Task
from evalq.producer.cli.demo import EXAMPLES
from evalq.producer.files import read_jsonl, read_tasks
from evalq.scoring.arena import ArenaRun, Baseline, compute_baseline, score_arena_run
from evalq.scoring.arena.baseline import Agent

FLOODED = "arena-debug-flaky-date-parser"
FIGURES = ("median_execution_time", "max_execution_time", "median_cost", "max_cost",
           "median_tokens", "max_tokens")  # fmt: skip


def ranks(scores: dict[str, float]) -> dict[str, int]:
    """Standard competition ranks (1, 1, 3) of scores rounded as the board shows them."""
    shown = {k: round(v, 2) for k, v in scores.items()}
    return {k: 1 + sum(o > v for o in shown.values()) for k, v in shown.items()}


def scored(
    task: Task,
    runs: Sequence[ArenaRun],
    subs: dict[str, Submission],
    arena: ArenaProfile,
    new: set[Agent],
) -> tuple[Baseline, dict[str, int]]:
    baseline = compute_baseline(runs, arena, new_agents=new)
    scores = {
        r.submission_id: score_arena_run(
            r, task, subs[r.submission_id].evidence, baseline, arena
        ).overall_score
        for r in runs
    }
    return baseline, ranks(scores)


def main() -> None:
    profile = profile_named("default")
    modes = {m: profile.arena.model_copy(update={"baseline": m}) for m in ("runs", "agents")}
    tasks = {t.id: t for t in read_tasks(EXAMPLES / "tasks.json")}
    good, bad = read_jsonl(EXAMPLES / "arena.jsonl")
    assert not bad
    subs = {s.id: s for _, s in good}
    by_task: dict[str, list[ArenaRun]] = {}
    for s in subs.values():
        by_task.setdefault(s.task_id, []).append(ArenaRun.from_submission(s, profile))
    tasks_of: dict[Agent, set[str]] = {}
    for s in subs.values():
        tasks_of.setdefault((s.tool, s.model), set()).add(s.task_id)

    def new_of(task_id: str, runs: Sequence[ArenaRun]) -> set[Agent]:
        agents = {(r.tool, r.model) for r in runs}
        return (
            {a for a in agents if tasks_of.get(a, set()) <= {task_id}} if len(agents) > 1 else set()
        )

    moved = total = 0
    firsts = []
    for task_id, runs in sorted(by_task.items()):
        new = new_of(task_id, runs)
        _, before = scored(tasks[task_id], runs, subs, modes["runs"], new)
        _, after = scored(tasks[task_id], runs, subs, modes["agents"], new)
        total += len(runs)
        moved += sum(before[k] != after[k] for k in before)
        first = lambda r: sorted(k for k, v in r.items() if v == 1)  # noqa: E731
        if first(before) != first(after):
            firsts.append(f"{task_id}: {first(before)} -> {first(after)}")
        agents = len({(r.tool, r.model) for r in runs})
        print(f"{task_id}: {len(runs)} runs, {agents} agents, "
              f"{sum(before[k] != after[k] for k in before)} change rank")  # fmt: skip
    print(f"\nruns -> agents on {len(by_task)} Arena tasks: {moved} of {total} runs change rank; "
          f"first place changes on {len(firsts)} tasks {firsts}")  # fmt: skip

    real = by_task[FLOODED]
    model = real[0]
    extreme = dict(total_tokens=400_000, tool_calls=150, execution_time=6_000.0, cost_usd=30.0)
    one_agent = [
        replace(model, submission_id=f"flood-one-{i}", **extreme) for i in range(30)
    ]  # one agent already on the task sends 30 slow, costly runs
    crowd = [
        replace(model, submission_id=f"flood-{n}-{i}", tool=f"throwaway-{n}", model=f"m-{n}",
                **extreme)
        for n in range(6) for i in range(2)
    ]  # fmt: skip
    for name in ("runs", "agents"):
        arena = modes[name]
        base, places = scored(tasks[FLOODED], real, subs, arena, new_of(FLOODED, real))
        print(f"\n{FLOODED}, baseline over {name}:")
        print("  clean:     " + ", ".join(f"{f} {getattr(base, f):.4g}" for f in FIGURES))
        for label, extra in (("30 from one agent", one_agent), ("6 names x 2", crowd)):
            runs = [*real, *extra]
            for r in extra:
                subs.setdefault(r.submission_id, subs[model.submission_id])
                tasks_of.setdefault((r.tool, r.model), {FLOODED})
            after, new_places = scored(tasks[FLOODED], runs, subs, arena, new_of(FLOODED, runs))
            changed = sum(places[k] != new_places[k] for k in places)
            print(f"  {label}: " + ", ".join(f"{f} {getattr(after, f):.4g}" for f in FIGURES)
                  + f"; {changed} of {len(real)} real runs change rank")  # fmt: skip


def scale(sizes: Sequence[int], backend: str) -> dict[int, float]:
    """The baseline's time over agents and over runs at each size; returns their ratios."""
    from sqlalchemy import insert

    from evalq.core.schemas import Task as TaskSchema
    from evalq.store import queries
    from evalq.store.baseline_sql import sql_baseline
    from evalq.store.db import session_scope
    from evalq.store.models import SubmissionRow

    sys.path.insert(0, str(Path(__file__).parent))
    from merge_scale import new_database

    arena = profile_named("default").arena
    modes = {m: arena.model_copy(update={"baseline": m}) for m in ("runs", "agents")}
    rng = random.Random(1)
    ratios: dict[int, float] = {}
    with tempfile.TemporaryDirectory() as workdir:
        for size in sizes:
            url, drop = new_database(backend, Path(workdir), size)
            try:
                with session_scope(url) as session:
                    for task_id in ("t", "other"):
                        queries.put_task(session, task=TaskSchema(id=task_id, category="debugging"))
                for start in range(0, size, 10_000):
                    rows = [
                        {
                            "id": f"r{i}", "task_id": "t" if i % 50 else "other",
                            "content_hash": "0" * 64, "payload": {}, "status": "done",
                            "tool": f"tool-{i % 20}", "model": "m",
                            "total_tokens": rng.randint(1_000, 200_000),
                            "tool_calls": rng.randint(0, 60), "iterations": rng.randint(1, 9),
                            "execution_time": rng.uniform(1, 900), "cost_usd": rng.uniform(0, 3),
                        }
                        for i in range(start, min(size, start + 10_000))
                    ]  # fmt: skip
                    with session_scope(url) as session:
                        session.execute(insert(SubmissionRow), rows)
                if backend == "postgresql":
                    from sqlalchemy import text

                    from evalq.store.db import engine_for

                    with engine_for(url).connect() as connection:
                        connection.execution_options(isolation_level="AUTOCOMMIT")
                        connection.execute(text("VACUUM ANALYZE"))
                times = {}
                for name, profile in modes.items():
                    taken = []
                    for _ in range(5):
                        with session_scope(url) as session:
                            began = time.perf_counter()
                            sql_baseline(session, task_id="t", profile=profile)
                            taken.append(time.perf_counter() - began)
                    times[name] = statistics.median(taken)
                print(f"{backend} {size:,} runs: baseline over runs {times['runs'] * 1e3:.1f} ms, "
                      f"over agents {times['agents'] * 1e3:.1f} ms")  # fmt: skip
                ratios[size] = times["agents"] / times["runs"]
            finally:
                drop()
    return ratios


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=int, nargs="*", help="task sizes to time (runs)")
    parser.add_argument("--backend", choices=["sqlite", "postgresql"], default="sqlite")
    parser.add_argument(
        "--quick", action="store_true", help="the demo figures and one small timing (CI's check)"
    )
    arguments = parser.parse_args()
    if arguments.quick:
        main()
        ratios = scale([500], "sqlite")
    elif arguments.scale:
        ratios = scale(arguments.scale, arguments.backend)
    else:
        main()
        ratios = {}
    if ratios:
        shown = ", ".join(f"{size:,} runs {r:.1f}x" for size, r in ratios.items())
        print(f"ratio baseline time over agents / over runs: {shown}")
