"""`evalq demo`: evaluate the bundled examples end to end and print the leaderboards."""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from evalq.core.errors import EvalqError, InvalidInput
from evalq.producer.cli.boards import leaderboard_command
from evalq.producer.cli.output import console, fail, fail_with, wait_with_progress

if TYPE_CHECKING:
    from evalq.core.schemas import Submission

# Package data (pyproject.toml), so `evalq demo` finds them in any install, from any directory.
# A wheel installs as plain files, so the resource is a real directory.
EXAMPLES = Path(str(resources.files("evalq") / "examples"))


def demo(
    examples: Annotated[Path, typer.Option(help="Directory with tasks.json and *.jsonl.")] = (
        EXAMPLES
    ),
    timeout: Annotated[float, typer.Option(help="Seconds to wait.")] = 1800,
) -> None:
    """Evaluate the bundled examples end to end and print the leaderboards.

    With no EVALQ_BROKER_URL the whole pipeline runs in this process (an embedded worker over
    kombu's in-memory transport, the SQLite store); with one, real workers do the work.
    """
    from evalq.core.settings import get_settings
    from evalq.producer.client import Client
    from evalq.producer.files import read_jsonl, read_tasks

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

        for task in tasks:  # settle the baselines before ranking
            refresh_baseline(task.id)
    for task in tasks:
        leaderboard_command(task.id)
