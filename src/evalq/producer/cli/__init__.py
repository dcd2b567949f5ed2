"""The `evalq` command line: the root typer app and the command tree.

Each command lives in the module of its kind (``submit``, ``boards``, ``ops``, ``demo``,
``traces``); this module only registers them, in the order ``evalq --help`` lists them.

Start-up: importing the tree loads typer and rich, nothing else a command might need. Each
command imports the store, the broker, the settings and the statistics in its body, so
``--version`` and ``--help`` cost an interpreter and typer (tests/unit/producer/
test_cli_startup.py checks what they load; bench/cli_startup.py measures it).
"""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from evalq import __version__
from evalq.producer.cli import (
    boards,
    demo,
    importers,
    judge,
    labels,
    lists,
    monitors,
    ops,
    review,
    rules,
    sessions,
    submit,
    webhooks,
)
from evalq.producer.cli.api import api as api_command
from evalq.producer.cli.api import keys_app
from evalq.producer.cli.arguments import unstorable
from evalq.producer.cli.audit import task_audit
from evalq.producer.cli.compare import compare_command
from evalq.producer.cli.demo import EXAMPLES
from evalq.producer.cli.gate import gate_command
from evalq.producer.cli.output import SETTINGS_INVALID, OneErrorStyle, one_line
from evalq.producer.cli.power import plan_command

__all__ = ["EXAMPLES", "app", "main"]

app = typer.Typer(
    cls=OneErrorStyle,  # usage errors print `error: ...` as every other error does
    help="evalq: evaluate AI-agent runs on a job queue.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,  # `main` prints one line; --debug shows the traceback
)
db_app = typer.Typer(help="Database schema.", no_args_is_help=True)
task_app = typer.Typer(help="Task definitions.", no_args_is_help=True)
app.add_typer(db_app, name="db")
app.add_typer(task_app, name="task")
app.add_typer(keys_app, name="keys")
app.add_typer(review.review_app, name="review")
app.add_typer(importers.import_app, name="import")  # otlp, promptfoo, inspect
app.add_typer(webhooks.webhook_app, name="webhook")
app.add_typer(monitors.monitor_app, name="monitor")
app.add_typer(rules.rule_app, name="rule")
app.add_typer(sessions.session_app, name="session")
app.add_typer(labels.labels_app, name="labels")
app.add_typer(judge.judge_app, name="judge")

_debug = [False]


def _print_version(requested: bool) -> None:
    """`--version`: print it and stop before any command (or missing command) is looked at."""
    if requested:
        print(f"evalq {__version__}")
        raise typer.Exit()


@app.callback()
def root(
    debug: Annotated[
        bool, typer.Option("--debug", help="Show the full traceback of an unexpected error.")
    ] = False,
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_print_version, is_eager=True, help="Print the version and exit."
        ),
    ] = False,
) -> None:
    """evalq: evaluate AI-agent runs on a job queue."""
    from evalq.core.redact import install_log_redaction

    _debug[0] = debug
    # Before any command runs (not for the root's --help and --version, which need no
    # settings): the last-resort handler prints the client's warnings, secrets redacted.
    install_log_redaction()


app.command("api")(api_command)
app.command()(submit.submit)
app.command()(submit.status)
app.command("leaderboard")(boards.leaderboard_command)
app.command("compare")(compare_command)
app.command("gate")(gate_command)
app.command("plan")(plan_command)
app.command()(ops.worker)
app.command()(ops.recover)
db_app.command("upgrade")(ops.db_upgrade)
db_app.command("refresh")(ops.db_refresh)
task_app.command("put")(submit.task_put)
task_app.command("list")(lists.task_list)
task_app.command("submissions")(lists.task_submissions)
task_app.command("audit")(task_audit)
app.command()(demo.demo)
app.command()(ops.flower)
app.command()(ops.beat)
app.command()(boards.report)


def main() -> None:
    """Entry point of the `evalq` script: a failure is one line on stderr, unless --debug.

    Exit status 2 for what the user can fix (input, a service that is down), 1 for the rest,
    130 on Ctrl-C.
    """
    refused = unstorable(sys.argv[1:])
    if refused:
        rules = "; ".join(f"{name}: {rule}" for name, rule in refused)
        print(f"error: {rules}", file=sys.stderr)
        sys.exit(2)
    try:
        app()
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        sys.exit(130)
    except Exception as error:
        if _debug[0]:
            raise
        line, status = one_line(error)
        if status != SETTINGS_INVALID:
            from evalq.core.redact import redact

            line = redact(line)
        print(f"error: {line}", file=sys.stderr)
        sys.exit(status)
