"""`evalq` start-up: `--version` and `--help` against `import typer`, `evalq leaderboard TASK
--json` against the same work done in a warm process plus an interpreter's start, and `evalq api`
to its first 200 on /healthz against a bare FastAPI app under uvicorn.

    python bench/cli_startup.py [--runs 10] [--quick]

Every command runs ``--runs`` times as a fresh process (the `evalq` script next to this
interpreter) and its median wall time is kept:

1. ``python -c pass`` (the interpreter alone), ``python -c "import typer"``, ``evalq --version``
   and ``evalq --help``. Goal: each within 2x of ``import typer``. For context, ``--help`` of a
   two-command typer app (typer renders help with rich: its own floor).
2. A small store (a throwaway SQLite file, `tests/support/small_board.py`): the bundled Arena
   task and its 12 submissions, evaluated in this process without a model. Then
   ``evalq leaderboard TASK --json`` as a process, against the same command called in this
   process once warm (median of ``--runs``) plus ``python -c pass``. Goal: within 2x. For
   context, the same against the warm call plus importing the libraries it cannot do without
   (SQLAlchemy, pydantic-settings, typer).

3. ``evalq api`` (a Redis broker, the SQLite store) started ``--runs`` times, the time from the
   process's start to its first 200 on ``/healthz``, against a bare FastAPI app with one route
   run by ``uvicorn.run`` (also polled on ``/healthz``). Goal: within 2x. The front answers the
   health check while the API loads behind it (src/evalq/producer/api/front.py).

Last line: the worst of the four ratios.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Sequence
from pathlib import Path

from _common import BIN, apply_env, evalq_env, figure, flush, parse_args, ratio, redis_url
from tests.support.processes import free_port
from tests.support.small_board import TASK_ID, evaluate_small_board

TWO_COMMANDS = (
    "import typer\n"
    "app = typer.Typer()\n"
    "app.command()(lambda x: None)\n"
    "app.command('b')(lambda y: None)\n"
    "app()"
)
"""A two-command typer app: its ``--help`` is typer's own floor for a help page (rich)."""
LIBRARIES = "import typer, pydantic_settings, sqlalchemy.orm"
"""What `evalq leaderboard` cannot start without: its floor, printed for context."""
BARE_API = (
    "import sys\n"
    "import uvicorn\n"
    "from fastapi import FastAPI\n"
    "app = FastAPI()\n"
    "app.get('/healthz')(lambda: {'status': 'ok'})\n"
    "uvicorn.run(app, host='127.0.0.1', port=int(sys.argv[1]), log_level='warning')"
)
"""A bare FastAPI app with one route under uvicorn: the floor of `evalq api`'s first answer."""
BROKER_DB = 11


def evalq_argv() -> list[str]:
    """The installed `evalq` script, or the module when the script is not there."""
    script = BIN / "evalq"
    if script.exists():
        return [str(script)]
    return [sys.executable, "-m", "evalq.producer.cli"]


def wall_s(argv: Sequence[str], env: dict[str, str], runs: int) -> float:
    """Median wall time of ``argv`` as a fresh process; it must exit 0."""
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(argv, env=env, check=True, stdout=subprocess.DEVNULL, timeout=120)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def first_200_s(argv_for: Callable[[int], list[str]], env: dict[str, str], runs: int) -> float:
    """Median time from starting ``argv_for(port)`` to its first 200 on ``/healthz``."""
    times = []
    for _ in range(runs):
        port = free_port()
        started = time.perf_counter()
        process = subprocess.Popen(
            argv_for(port),
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        try:
            times.append(_wait_for_200(f"http://127.0.0.1:{port}/healthz", process) - started)
        finally:
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(60)
    return statistics.median(times)


def _wait_for_200(url: str, process: subprocess.Popen[bytes]) -> float:
    """Poll ``url`` every 10 ms; the moment it first answered 200."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=10) as answer:
                if answer.status == 200:
                    return time.perf_counter()
        except OSError:  # not listening yet (or 503: the broker not reached yet)
            pass
        if process.poll() is not None:
            raise RuntimeError(f"{process.args!r} exited with {process.returncode}")
        time.sleep(0.01)
    raise RuntimeError(f"no 200 from {url} within 120 s")


def in_process_s(runs: int) -> float:
    """Median time of `evalq leaderboard TASK --json` called in this (warm) process."""
    from evalq.producer.cli.boards import leaderboard_command

    times = []
    for _ in range(runs + 1):  # the first call loads the modules: not counted
        started = time.perf_counter()
        with contextlib.redirect_stdout(io.StringIO()):
            leaderboard_command(TASK_ID, as_json=True)
        times.append(time.perf_counter() - started)
    return statistics.median(times[1:])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10, help="processes per command (median)")
    args = parse_args(parser, quick={"runs": 3})
    runs = args.runs
    with tempfile.TemporaryDirectory(prefix="evalq-bench-") as workdir:
        url = f"sqlite:///{Path(workdir) / 'evalq.db'}"
        env = evalq_env(database_url=url)
        apply_env(env)
        count = evaluate_small_board(url)
        python = [sys.executable, "-c"]
        interpreter = wall_s([*python, "pass"], env, runs)
        typer = wall_s([*python, "import typer"], env, runs)
        version = wall_s([*evalq_argv(), "--version"], env, runs)
        help_s = wall_s([*evalq_argv(), "--help"], env, runs)
        typer_help = wall_s([*python, TWO_COMMANDS, "--help"], env, runs)
        board = wall_s([*evalq_argv(), "leaderboard", TASK_ID, "--json"], env, runs)
        libraries = wall_s([*python, LIBRARIES], env, runs)
        work = in_process_s(runs)
        flush(BROKER_DB)
        api_env = env | {"EVALQ_BROKER_URL": redis_url(BROKER_DB)}
        bare_api = first_200_s(lambda port: [*python, BARE_API, str(port)], env, runs)
        evalq_api = first_200_s(
            lambda port: [*evalq_argv(), "api", "--port", str(port), "--log-level", "warning"],
            api_env,
            runs,
        )
        flush(BROKER_DB)
    print(f"# median of {runs} processes each; leaderboard of {count} submissions, SQLite")
    figure("python -c pass", interpreter * 1000, "ms")
    figure('python -c "import typer"', typer * 1000, "ms")
    figure("evalq --version", version * 1000, "ms")
    figure("evalq --help", help_s * 1000, "ms")
    figure("a two-command typer app --help (typer's floor)", typer_help * 1000, "ms")
    figure("evalq leaderboard TASK --json (process)", board * 1000, "ms")
    figure("leaderboard in a warm process", work * 1000, "ms")
    figure("leaderboard in a warm process + python -c pass", (work + interpreter) * 1000, "ms")
    figure(f'python -c "{LIBRARIES}"', libraries * 1000, "ms")
    figure("leaderboard process / (warm + that import)", board / (work + libraries), "x")
    figure("bare FastAPI + uvicorn, start to first 200", bare_api * 1000, "ms")
    figure("evalq api (Redis broker), start to first 200 on /healthz", evalq_api * 1000, "ms")
    ratios = {
        "--version / import typer": version / typer,
        "--help / import typer": help_s / typer,
        "leaderboard process / (warm + interpreter)": board / (work + interpreter),
        "evalq api first 200 / bare FastAPI": evalq_api / bare_api,
    }
    for name, value in ratios.items():
        figure(f"{name} (goal <= 2)", value, "x")
    worst = max(ratios, key=lambda name: ratios[name])
    ratio(f"worst: {worst} (goal <= 2)", ratios[worst], "x")


if __name__ == "__main__":
    main()
