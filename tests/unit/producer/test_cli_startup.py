"""`evalq --version` and `--help` load typer and little else: a command imports what it needs
when it runs (the store, the broker, the statistics), so asking for help costs no start-up.

Checked on what a fresh interpreter has loaded, never on a time (bench/cli_startup.py has the
figures)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.support.processes import PATIENCE

HEAVY = ("sqlalchemy", "alembic", "celery", "kombu", "numpy", "scipy", "networkx", "torch")
MODELS = ("pydantic", "pydantic_core", "pydantic_settings", "fastapi", "transformers")
"""Not loaded by the root's ``--version`` and ``--help`` either (a command's ``--help`` runs the
root callback, whose log redaction reads the settings: pydantic-settings)."""


def loaded_after(*args: str, status: int = 0) -> tuple[set[str], str]:
    """The heavy top-level packages loaded by ``evalq ARGS`` in a fresh interpreter, and the
    command's output; it must exit with ``status``."""
    code = (
        "import sys\n"
        "from evalq.producer.cli import main\n"
        f"sys.argv = ['evalq', *{list(args)!r}]\n"
        "try:\n"
        "    main()\n"
        "except SystemExit as stop:\n"
        f"    assert (stop.code or 0) == {status}, stop.code\n"
        "loaded = {name.split('.')[0] for name in sys.modules}\n"
        f"print('loaded:', ','.join(sorted(loaded & {set(HEAVY + MODELS)!r})))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        timeout=120 * PATIENCE,
    )
    output, _, last = result.stdout.rstrip("\n").rpartition("\n")
    assert last.startswith("loaded:"), result.stdout
    return {name for name in last.removeprefix("loaded:").strip().split(",") if name}, output


@pytest.mark.parametrize(
    ("args", "status"),
    [
        (["--version"], 0),
        (["--help"], 0),
        ([], 2),  # no command: the help, as a usage error
        (["leaderboard", "--help"], 0),
        (["task", "--help"], 0),
        (["keys", "list", "--help"], 0),
    ],
)
def test_help_and_version_load_no_store_broker_or_statistics(args: list[str], status: int) -> None:
    loaded, output = loaded_after(*args, status=status)
    assert loaded - set(MODELS) == set()
    assert output  # it did print its answer


@pytest.mark.parametrize(("args", "status"), [(["--version"], 0), (["--help"], 0), ([], 2)])
def test_the_roots_help_and_version_load_no_pydantic(args: list[str], status: int) -> None:
    loaded, _ = loaded_after(*args, status=status)
    assert loaded == set()


def test_the_help_still_lists_every_command() -> None:
    _, output = loaded_after("--help")
    for command in ("api", "submit", "status", "leaderboard", "compare", "worker", "demo"):
        assert command in output
