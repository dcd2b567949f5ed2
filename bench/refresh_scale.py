"""The refresh of an Arena, a Scylla and a suite task as the task grows, before and after a change.

    python bench/refresh_scale.py [--sizes 1000 3000 10000] [--kinds arena scylla suite]
                                  [--new 50] [--before REV] [--profile 25] [--quick]

The bundled examples are merged once (`evalq demo`), then each size gets a SQLite store with
one Scylla and one suite task of that many distinct runs (`_clone_store.add_clones`: fresh
output, hashes and shape digest per clone; it prints how many of each task are copies or held,
~0 beyond the templates' own held runs). Each task's refresh (`evalq.read.served.refresh_task`:
copies and holds, baseline, standings, places, and the whole-task figures a Scylla or suite
board draws) is then timed in a fresh process on a copy of the store (wall and the process's
CPU time: on a shared machine the CPU time moves less with the load), three times in a row:
"whole", with the task's copies decided from all its runs (as its first refresh does, or one
after a run arrives late: the task's `task_refreshes` row deleted first); "quiet", nothing changed
since; "+N", after ``--new`` more clones submitted after every other run (what a refresh
after a batch of merges sees: their standings built and every run scored against the moved
baseline). Each once with this tree's code and, with
``--before REV``, once with the code of that revision (``git archive``: the same store, side
by side, so the machine's load weighs on both alike). ``--profile N`` also prints the N
entries of each refresh's cProfile with the most cumulative time (a second refresh, profiled:
the wall printed is the unprofiled one).

The ratio line is this tree's slowest refresh at the largest size, in seconds.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _clone_store import Example, add_clones, merged_examples, read_examples
from _common import ROOT, apply_env, evalq_env, parse_args, ratio

KINDS = ("arena", "scylla", "suite")

TIMED = r"""
import cProfile, io, json, pstats, random, sys, time
from sqlalchemy import delete, func, select
from evalq.store import models
from _clone_store import read_examples, store_clones
from evalq.read.served import refresh_task
from evalq.store.db import session_scope
from evalq.store.models import SubmissionRow
task_id, top, examples_url, kind, new = sys.argv[1:6]
top, new = int(top), int(new)
from evalq.core.settings import get_settings
url = get_settings().database_url
def timed(profiler=None):
    started, cpu = time.perf_counter(), time.process_time()
    with session_scope() as session:
        if profiler:
            profiler.enable()
        refresh_task(session, task_id=task_id)
        if profiler:
            profiler.disable()
    return {"wall": time.perf_counter() - started, "cpu": time.process_time() - cpu}
if hasattr(models, "TaskRefreshRow"):  # an older revision decides the whole task anyway
    with session_scope() as session:
        kept = models.TaskRefreshRow
        session.execute(delete(kept).where(kept.task_id == task_id))
found = {"whole": timed(), "quiet": timed()}
if new:
    example = next(e for e in read_examples(examples_url) if e.kind == kind)
    with session_scope() as session:
        count = session.scalar(select(func.count()).where(SubmissionRow.task_id == task_id))
        latest = session.scalar(select(func.max(SubmissionRow.created_at)))
    runs = range(count, count + new)  # submitted after every other run, as merges arrive
    store_clones(url, example, task_id, runs, random.Random(count), after=latest)
profiler = cProfile.Profile() if top else None
found[f"+{new}"] = timed(profiler)
lines = []
if profiler:
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(top)
    lines = [l for l in out.getvalue().splitlines() if l.strip()]
print(json.dumps({"refreshes": found, "profile": lines}))
"""


def timed_refresh(
    src: Path, url: str, task_id: str, top: int, examples_url: str, kind: str, new: int
) -> dict[str, object]:
    """The three refreshes of ``task_id`` (whole, quiet, after ``new`` runs) in a fresh process
    running the code under ``src``."""
    env = evalq_env(database_url=url)
    env["PYTHONPATH"] = os.pathsep.join([str(src), str(ROOT / "bench")])
    done = subprocess.run(
        [sys.executable, "-c", TIMED, task_id, str(top), examples_url, kind, str(new)],
        env=env,
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
    )
    if done.returncode:
        return {"error": done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "?"}
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def source_of(rev: str, workdir: Path) -> Path:
    """The ``src`` folder of revision ``rev`` of this repository, unpacked under ``workdir``."""
    target = workdir / "before"
    target.mkdir()
    archive = subprocess.run(
        ["git", "archive", rev, "src"], cwd=ROOT, capture_output=True, check=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(target)], input=archive, check=True)
    return target / "src"


def store_of(workdir: Path, examples: list[Example], size: int) -> tuple[str, dict[str, str]]:
    """A migrated SQLite store with one task of ``size`` distinct runs per example given."""
    from evalq.store.db import engine_for, upgrade

    path = workdir / f"refresh_{size}.db"
    url = f"sqlite:///{path}"
    upgrade(url)
    apply_env(evalq_env(database_url=url))
    created = add_clones(url, examples, size)
    engine_for(url).dispose()
    return url, created


def shown(result: dict[str, Any]) -> str:
    if "error" in result:
        return f"error: {result['error']}"[:60]
    return " | ".join(
        f"{float(r['wall']):.2f} s ({float(r['cpu']):.2f} s CPU)"
        for r in result["refreshes"].values()
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 3_000, 10_000])
    parser.add_argument("--kinds", nargs="+", choices=KINDS, default=list(KINDS))
    parser.add_argument("--new", type=int, default=50, help="runs added before the third")
    parser.add_argument("--before", help="a revision whose code is timed beside this tree's")
    parser.add_argument("--profile", type=int, default=0, help="cProfile entries of the third")
    options = parse_args(parser, quick={"sizes": [60], "new": 5})
    trees: dict[str, Path] = {"after": ROOT / "src"}
    rows: list[tuple[int, str, str, dict[str, Any]]] = []
    with tempfile.TemporaryDirectory(prefix="evalq-bench-") as directory:
        workdir = Path(directory)
        if options.before:
            trees = {"before": source_of(options.before, workdir)} | trees
        started = time.perf_counter()
        examples_url = merged_examples(workdir)
        examples: dict[str, Example] = {}
        for example in read_examples(examples_url):  # the first task of each kind
            if example.kind in options.kinds:
                examples.setdefault(example.kind, example)
        print(f"# examples merged in {time.perf_counter() - started:.1f} s", flush=True)
        for size in options.sizes:
            url, created = store_of(workdir, list(examples.values()), size)
            path = Path(url.removeprefix("sqlite:///"))
            for kind, example in examples.items():
                task_id = created[example.task["id"]]
                for name, src in trees.items():
                    copy = workdir / f"copy_{name}.db"
                    shutil.copyfile(path, copy)
                    found = timed_refresh(
                        src,
                        f"sqlite:///{copy}",
                        task_id,
                        options.profile,
                        examples_url,
                        kind,
                        options.new,
                    )
                    print(f"# {kind} {size:,} {name}: {shown(found)}", flush=True)
                    print("\n".join(str(line) for line in found.get("profile", [])))
                    copy.unlink()
                    rows.append((size, kind, name, found))
            path.unlink()
    load = " ".join(f"{value:.1f}" for value in os.getloadavg())
    print(f"\n# refresh wall (its process's CPU time), SQLite, load {load}")
    print(f"| runs per task | kind | code | whole | quiet | +{options.new} runs |")
    print("|---|---|---|---|---|---|")
    for size, kind, name, found in rows:
        print(f"| {size:,} | {kind} | {name} | {shown(found)} |")
    largest = max(options.sizes)
    walls = [
        float(r["wall"])
        for size, _, name, found in rows
        if size == largest and name == "after" and "error" not in found
        for label, r in found["refreshes"].items()
        if label != "whole"
    ]
    ratio(
        f"slowest refresh after merges at {largest:,} runs per task (s)",
        max(walls, default=float("inf")),
    )


if __name__ == "__main__":
    main()
