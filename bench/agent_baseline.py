"""What weighing each agent once in the Arena baseline changes, on the bundled examples.

Usage: python bench/agent_baseline.py [--scale 1000 10000 100000] [--backend sqlite|postgresql]

Every bundled Arena run (the held `arena-fe-09` left out) is scored with the pure scorers against
its task's baseline computed three ways: over runs (spec 000, ``arena.baseline = "runs"``), over
agents (``"agents"``: each agent's median once, a crowd of 3+ names seen on no other task as
one) and robust (``"robust"``, the default: agents once, names thinner than the task's typical
agent as one, ranges within 5x the agents' median). Printed: how many runs change rank on the
unmodified demo against spec 000's baseline; then, for each flood class of docs/scoring.md, how
many real runs change place among the real runs in each mode (the flood's own runs take the
places their scores earn), and the flooded task's baseline figures under three of them. A pure
recomputation; tests/integration/read/test_robust_baseline_demo.py measures the stored boards.

With ``--scale``: the time of one baseline computation in the database (`sql_baseline`) in each
mode, for a task of each size with 20 agents (its runs inserted directly), median of 5.
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

from evalq.core.profile import profile_named
from evalq.core.schemas import Submission
from evalq.producer.cli.demo import EXAMPLES
from evalq.producer.files import read_jsonl, read_tasks
from evalq.scoring.arena import ArenaRun, Baseline, compute_baseline, score_arena_run
from evalq.scoring.arena.baseline import Agent

FLOODED = "arena-debug-flaky-date-parser"
MODES = ("runs", "agents", "robust")
FIGURES = ("median_execution_time", "max_execution_time", "median_cost", "max_cost",
           "median_tokens", "max_tokens")  # fmt: skip


def ranks(scores: dict[str, float]) -> dict[str, int]:
    """Standard competition ranks (1, 1, 3) of scores rounded as the board shows them."""
    shown = {k: round(v, 2) for k, v in scores.items()}
    return {k: 1 + sum(o > v for o in shown.values()) for k, v in shown.items()}


def among(places: dict[str, int], real: Sequence[str]) -> dict[str, int]:
    """The real runs' places among the real runs (the flood's own runs take their own)."""
    return {k: 1 + sum(places[o] < places[k] for o in real) for k in real}


class Demo:
    """The bundled Arena runs (the held `arena-fe-09` left out, as the store holds it) and each
    agent's tasks over every bundled example (the standings the robust baseline reads)."""

    def __init__(self) -> None:
        self.profile = profile_named("default")
        self.modes = {m: self.profile.arena.model_copy(update={"baseline": m}) for m in MODES}
        self.tasks = {t.id: t for t in read_tasks(EXAMPLES / "tasks.json")}
        self.subs: dict[str, Submission] = {}
        self.tasks_of: dict[Agent, set[str]] = {}
        for path in sorted(EXAMPLES.glob("*.jsonl")):
            good, bad = read_jsonl(path)
            assert not bad
            for _, s in good:
                self.tasks_of.setdefault((s.tool, s.model), set()).add(s.task_id)
                if path.name == "arena.jsonl" and s.id != "arena-fe-09":
                    self.subs[s.id] = s
        self.by_task: dict[str, list[ArenaRun]] = {}
        for s in self.subs.values():
            self.by_task.setdefault(s.task_id, []).append(ArenaRun.from_submission(s, self.profile))

    def baseline(self, mode: str, runs: Sequence[ArenaRun], extra: Sequence[ArenaRun]) -> Baseline:
        tasks_of = {a: set(t) for a, t in self.tasks_of.items()}
        for r in extra:
            tasks_of.setdefault((r.tool, r.model), set()).add(r.task_id)
        agents = {(r.tool, r.model) for r in runs}
        standings = {a: len(tasks_of.get(a, set()) | {runs[0].task_id}) for a in agents}
        new = {a for a, n in standings.items() if n == 1} if len(agents) > 1 else set()
        return compute_baseline(runs, self.modes[mode], new_agents=new, standings=standings)

    def places(self, task_id: str, runs: Sequence[ArenaRun], baseline: Baseline) -> dict[str, int]:
        model = self.subs[self.by_task[task_id][0].submission_id]
        scores = {
            r.submission_id: score_arena_run(
                r, self.tasks[task_id], self.subs.get(r.submission_id, model).evidence,
                baseline, self.modes["runs"],
            ).overall_score
            for r in runs
        }  # fmt: skip
        return ranks(scores)

    def moved(self, mode: str, extra: Sequence[ArenaRun]) -> dict[str, int]:
        """Real runs whose place among the real runs changes when ``extra`` is added."""
        found = {}
        for task_id, real in sorted(self.by_task.items()):
            here = [r for r in extra if r.task_id == task_id]
            if not here:
                continue
            ids = [r.submission_id for r in real]
            clean = among(self.places(task_id, real, self.baseline(mode, real, [])), ids)
            runs = [*real, *here]
            after = among(self.places(task_id, runs, self.baseline(mode, runs, extra)), ids)
            found[task_id] = sum(clean[k] != after[k] for k in ids)
        return found


def attacks(demo: Demo) -> dict[str, list[ArenaRun]]:
    """The flood classes of docs/scoring.md, as the pure scorer sees them."""
    model = next(r for r in demo.by_task[FLOODED] if r.submission_id == "arena-dbg-01")
    others = [t for t in sorted(demo.by_task) if t != FLOODED]

    def slow(name: int, i: int, task: str = FLOODED) -> ArenaRun:
        return replace(
            model, task_id=task, submission_id=f"slow-{name}-{i}-{task}", tool=f"throwaway-{name}",
            model=f"m-{name}", total_tokens=round((300_000 + 40_000 * i) * 1.05**name) + 50_000,
            tool_calls=120 + 30 * i, iterations=3, execution_time=5_000.0 + 1_500 * i,
            cost_usd=25.0 + 10 * i,
        )  # fmt: skip

    def fast(name: int, i: int, task: str = FLOODED) -> ArenaRun:
        return replace(
            model, task_id=task, submission_id=f"fast-{name}-{i}-{task}", tool=f"quick-{name}",
            model=f"m-{name}", total_tokens=5_000 + 100 * name + 10 * i, tool_calls=2,
            iterations=1, execution_time=20.0 + name + 2 * i, cost_usd=0.002 + 0.001 * i,
        )  # fmt: skip

    crowd = [slow(n, i) for n in range(6) for i in range(2)]
    return {
        "2 new names, 2 slow costly runs each": crowd[:4],
        "6 new names, 2 each": crowd,
        "6 names, each with 1 run elsewhere": crowd + [slow(n, 0, others[0]) for n in range(6)],
        "6 names, each with runs on 2 other tasks": crowd
        + [slow(n, 0, t) for n in range(6) for t in others],
        "12 names, each with 1 run elsewhere": [slow(n, i) for n in range(12) for i in range(2)]
        + [slow(n, 0, others[0]) for n in range(12)],
        "20 names, each with 1 run elsewhere": [slow(n, i) for n in range(20) for i in range(2)]
        + [slow(n, 0, others[0]) for n in range(20)],
        "one agent, 30 runs": [
            replace(
                model,
                submission_id=f"one-{i}",
                total_tokens=350_000 + 1_000 * i,
                tool_calls=120 + i,
                iterations=3,
                execution_time=5_000.0 + 50 * i,
                cost_usd=round(25 * 1.04**i, 2),
            )
            for i in range(30)
        ],
        "6 names, fast cheap runs, 1 run elsewhere": [fast(n, i) for n in range(6) for i in (0, 1)]
        + [fast(n, 0, others[0]) for n in range(6)],
        "2 new names inside 5x the median": [
            replace(
                slow(n, i),
                execution_time=450.0 + 30 * i,
                cost_usd=0.9,
                total_tokens=150_000,
                tool_calls=50,
            )
            for n in range(2)
            for i in range(2)
        ],
    }


def main() -> None:
    demo = Demo()
    for mode in MODES[1:]:
        moved = total = 0
        for task_id, runs in sorted(demo.by_task.items()):
            before = demo.places(task_id, runs, demo.baseline("runs", runs, []))
            after = demo.places(task_id, runs, demo.baseline(mode, runs, []))
            moved += sum(before[k] != after[k] for k in before)
            total += len(runs)
        print(f"unmodified demo, runs -> {mode}: {moved} of {total} runs change rank")
    print("\nreal runs re-ranked among the real runs, by task (runs / agents / robust):")
    for label, extra in attacks(demo).items():
        shown = {mode: demo.moved(mode, extra) for mode in MODES}
        cells = " / ".join(str(sum(found.values())) for found in shown.values())
        print(f"  {label}: {cells}  {shown['robust']}")
    real = demo.by_task[FLOODED]
    clean = demo.baseline("robust", real, [])
    print(f"{FLOODED}, clean: " + ", ".join(f"{f} {getattr(clean, f):.4g}" for f in FIGURES))
    for label, extra in list(attacks(demo).items())[:3]:
        for mode in MODES:
            base = demo.baseline(mode, [*real, *(r for r in extra if r.task_id == FLOODED)], extra)
            print(f"{FLOODED}, {label}, {mode}: "
                  + ", ".join(f"{f} {getattr(base, f):.4g}" for f in FIGURES))  # fmt: skip


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
    modes = {m: arena.model_copy(update={"baseline": m}) for m in MODES}
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
                      f"over agents {times['agents'] * 1e3:.1f} ms, "
                      f"robust {times['robust'] * 1e3:.1f} ms")  # fmt: skip
                ratios[size] = times["robust"] / times["runs"]
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
        print(f"ratio baseline time robust / over runs: {shown}")
