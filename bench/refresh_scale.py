"""The refresh of a Scylla and a suite task as the task grows, before and after a change.

    python bench/refresh_scale.py [--sizes 1000 3000 10000] [--kinds scylla suite]
                                  [--before REV] [--profile 25] [--quick]

The bundled examples are merged once (`evalq demo`), then each size gets a SQLite store with
one Scylla and one suite task of that many distinct runs (`_clone_store.add_clones`: fresh
output, hashes and shape digest per clone; it prints how many of each task are copies or held,
~0 beyond the templates' own held runs). Each task's refresh (`evalq.read.served.refresh_task`:
baseline, standings, places, and the whole-task figures a Scylla or suite board draws) is then
timed in a fresh process on a copy of the store (wall and the process's CPU time: on a
shared machine the CPU time moves less with the load), once with this tree's code and, with
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

from _clone_store import Example, add_clones, merged_examples, read_examples
from _common import ROOT, apply_env, evalq_env, parse_args, ratio

KINDS = ("scylla", "suite")

TIMED = r"""
import cProfile, io, json, pstats, sys, time
from evalq.read.served import refresh_task
from evalq.store.db import session_scope
task_id, top = sys.argv[1], int(sys.argv[2])
profiler = cProfile.Profile() if top else None
started, cpu = time.perf_counter(), time.process_time()
with session_scope() as session:
    if profiler:
        profiler.enable()
    refresh_task(session, task_id=task_id)
    if profiler:
        profiler.disable()
wall, cpu = time.perf_counter() - started, time.process_time() - cpu
lines = []
if profiler:
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(top)
    lines = [l for l in out.getvalue().splitlines() if l.strip()]
print(json.dumps({"wall": wall, "cpu": cpu, "profile": lines}))
"""


def timed_refresh(src: Path, url: str, task_id: str, top: int) -> dict[str, object]:
    """One refresh of ``task_id`` in a fresh process running the code under ``src``."""
    env = evalq_env(database_url=url)
    env["PYTHONPATH"] = os.pathsep.join([str(src), str(ROOT / "bench")])
    done = subprocess.run(
        [sys.executable, "-c", TIMED, task_id, str(top)],
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


def shown(result: dict[str, object]) -> str:
    if "error" in result:
        return f"error: {result['error']}"[:60]
    wall, cpu = float(str(result["wall"])), float(str(result["cpu"]))
    return f"{wall:.2f} s ({cpu:.2f} s CPU)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 3_000, 10_000])
    parser.add_argument("--kinds", nargs="+", choices=KINDS, default=list(KINDS))
    parser.add_argument("--before", help="a revision whose code is timed beside this tree's")
    parser.add_argument("--profile", type=int, default=0, help="cProfile entries to print")
    options = parse_args(parser, quick={"sizes": [60]})
    trees: dict[str, Path] = {"after": ROOT / "src"}
    rows: list[tuple[int, str, dict[str, dict[str, object]]]] = []
    with tempfile.TemporaryDirectory(prefix="evalq-bench-") as directory:
        workdir = Path(directory)
        if options.before:
            trees = {"before": source_of(options.before, workdir)} | trees
        started = time.perf_counter()
        examples = [e for e in read_examples(merged_examples(workdir)) if e.kind in options.kinds]
        print(f"# examples merged in {time.perf_counter() - started:.1f} s", flush=True)
        for size in options.sizes:
            url, created = store_of(workdir, examples, size)
            path = Path(url.removeprefix("sqlite:///"))
            for example in examples:
                task_id = created[example.task["id"]]
                results: dict[str, dict[str, object]] = {}
                for name, src in trees.items():
                    copy = workdir / f"copy_{name}.db"
                    shutil.copyfile(path, copy)
                    results[name] = timed_refresh(src, f"sqlite:///{copy}", task_id, 0)
                    print(f"# {example.kind} {size:,} {name}: {shown(results[name])}", flush=True)
                    if options.profile and "error" not in results[name]:
                        shutil.copyfile(path, copy)
                        profiled = timed_refresh(src, f"sqlite:///{copy}", task_id, options.profile)
                        print("\n".join(str(line) for line in profiled.get("profile", [])))
                    copy.unlink()
                rows.append((size, example.kind, results))
            path.unlink()
    load = " ".join(f"{value:.1f}" for value in os.getloadavg())
    print(f"\n# refresh wall (its process's CPU time), SQLite, load {load}")
    print("| runs per task | kind | " + " | ".join(trees) + " |")
    print("|---|---|" + "---|" * len(trees))
    for size, kind, results in rows:
        print(f"| {size:,} | {kind} | " + " | ".join(shown(results[n]) for n in trees) + " |")
    largest = max(options.sizes)
    walls = [
        float(str(results["after"].get("wall", "inf")))
        for size, _, results in rows
        if size == largest
    ]
    ratio(f"slowest refresh at {largest:,} runs per task (s)", max(walls))


if __name__ == "__main__":
    main()
