"""`evalq demo`: evaluate the bundled examples end to end, print the leaderboards, and say how
to open them in the web UI."""

from __future__ import annotations

import shutil
import sys
from importlib import resources
from importlib.util import find_spec
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from evalq.core.errors import EvalqError, InvalidInput
from evalq.producer.cli.boards import leaderboard_command
from evalq.producer.cli.output import console, fail, fail_with, wait_with_progress, working

if TYPE_CHECKING:
    from evalq.core.schemas import Submission

# Package data (pyproject.toml), so `evalq demo` finds them in any install, from any directory.
# A wheel installs as plain files, so the resource is a real directory.
EXAMPLES = Path(str(resources.files("evalq") / "examples"))
UI_URL = "http://127.0.0.1:8000/"
"""Where `evalq api` serves the UI with its default --host and --port."""


def _as_typed(program: Path) -> str:
    """How to type ``program`` here: its bare name when PATH finds this very file (an activated
    venv), else its path (relative below the working directory: ``.venv/bin/evalq`` after
    ``make demo``, whose venv is never activated)."""
    found = shutil.which(program.name)
    if found is not None and Path(found).resolve() == program.resolve():
        return program.name
    absolute = program.absolute()
    if absolute.is_relative_to(Path.cwd()):
        return str(absolute.relative_to(Path.cwd()))
    return str(absolute)


def next_steps(*, has_api_extra: bool) -> list[str]:
    """The lines `evalq demo` ends with: the commands that open its results in the web UI, with
    this install's own `evalq` (docs/ui.md, "Opening it after make demo")."""
    evalq = _as_typed(Path(sys.executable).with_name("evalq"))
    lines = ["", "Open these results in the web UI (from this directory, the same store):"]
    if not has_api_extra:
        pip = _as_typed(Path(sys.executable).with_name("pip"))
        lines.append(f"  {pip} install -e '.[api]'   # the api extra, from the clone")
    return [
        *lines,
        f"  {evalq} keys create --name me --scopes read,write   # prints a key, once",
        f"  {evalq} api   # serves {UI_URL}",
        f"then open {UI_URL} and sign in with the key.",
    ]


def demo(
    examples: Annotated[Path, typer.Option(help="Directory with tasks.json and *.jsonl.")] = (
        EXAMPLES
    ),
    timeout: Annotated[float, typer.Option(help="Seconds to wait.")] = 1800,
) -> None:
    """Evaluate the bundled examples end to end, print the leaderboards and how to open the UI.

    With no EVALQ_BROKER_URL the whole pipeline runs in this process (an embedded worker over
    kombu's in-memory transport, the SQLite store); with one, real workers do the work.
    """
    from evalq.core.settings import get_settings
    from evalq.producer.files import read_jsonl, read_tasks
    from evalq.service.client import Client

    client = Client(get_settings())
    if client.in_process:  # the tiers run here: they need the worker extra
        from evalq.workers.bootstrap import worker_extra_problem
        from evalq.workers.names import QUEUES

        problem = worker_extra_problem(list(QUEUES), command="evalq demo")
        if problem:
            fail_with(problem)
    try:
        tasks = read_tasks(examples / "tasks.json")
        submissions: list[Submission] = []
        for path in sorted(examples.glob("*.jsonl")):
            good, bad = read_jsonl(path)
            if bad:
                raise InvalidInput(
                    [(f"{path.name}:{line}: {f}", rule) for line, p in bad for f, rule in p]
                )
            submissions += [submission for _, submission in good]
    except EvalqError as error:
        fail(error)
    with client:  # with no broker: the in-process worker runs for the block
        for task in tasks:
            client.put_task(task)
        results = client.submit_many(submissions)
        console.print(f"{len(results)} submissions on {len(tasks)} tasks")
        wait_with_progress(client, [r.id for r in results], timeout=timeout)
        from evalq.tasks.merge import refresh_baseline

        with working("settling each task's baseline"):
            for task in tasks:  # settle the baselines before ranking
                refresh_baseline(task.id)
    for task in tasks:
        leaderboard_command(task.id)
    has_api_extra = find_spec("fastapi") is not None and find_spec("uvicorn") is not None
    print("\n".join(next_steps(has_api_extra=has_api_extra)))
