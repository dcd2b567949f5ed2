"""`evalq import promptfoo|inspect|openai-evals PATH`: another tool's results in, evaluated by
evalq too."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer

from evalq.core.errors import EvalqError, InvalidInput
from evalq.producer.cli.output import console, fail, wait_with_progress
from evalq.producer.cli.traces import import_app

__all__ = [
    "import_app",
    "import_csv",
    "import_inspect",
    "import_jsonl",
    "import_openai_evals",
    "import_promptfoo",
]

ApplyOption = Annotated[
    bool, typer.Option("--apply", help="Store and evaluate; without it, only say what would be.")
]
TimeoutOption = Annotated[float, typer.Option(help="Seconds to wait for the results.")]


@import_app.command("promptfoo")
def import_promptfoo(
    path: Annotated[Path, typer.Argument(help="A results file: promptfoo eval -o results.json.")],
    apply: ApplyOption = False,
    timeout: TimeoutOption = 3600,
) -> None:
    """One task per eval, one run per result row, promptfoo's score kept as metadata.

    Dry run unless --apply; rows imported before are left alone (docs/importers.md).
    """
    _import(path, "promptfoo", apply=apply, timeout=timeout)


@import_app.command("inspect")
def import_inspect(
    path: Annotated[
        Path, typer.Argument(help="An Inspect AI eval log: .eval (the zip format) or .json.")
    ],
    apply: ApplyOption = False,
    timeout: TimeoutOption = 3600,
) -> None:
    """One task per Inspect task, one run per sample and epoch, its scores kept as metadata.

    Dry run unless --apply; samples imported before are left alone (docs/importers.md).
    """
    _import(path, "inspect", apply=apply, timeout=timeout)


@import_app.command("openai-evals")
def import_openai_evals(
    path: Annotated[
        Path,
        typer.Argument(
            help="An OpenAI Evals export: the Evals API's eval, run and output item objects "
            "(or list pages of them), as JSON or one per line."
        ),
    ],
    apply: ApplyOption = False,
    timeout: TimeoutOption = 3600,
) -> None:
    """One task per eval, one run per output item, the graders' results kept as metadata.

    Dry run unless --apply; items imported before are left alone (docs/importers.md).
    """
    _import(path, "openai-evals", apply=apply, timeout=timeout)


def _column(help_text: str) -> Any:
    return typer.Option(help=help_text, show_default=False)


OutputCol = Annotated[str, typer.Option("--output-col", help="The column of the run's output.")]
TaskCol = Annotated[
    str | None, _column("The column of the task id (or give one task with --task-id).")
]
TaskId = Annotated[str | None, _column("One task for every row.")]
ScoreCol = Annotated[str | None, _column("The column of the old tool's score (kept, not ranked).")]
IdCol = Annotated[
    str | None, _column("The column of the row's id (else a digest of the row names it).")
]
ModelCol = Annotated[str | None, _column("The column of the model's name.")]
ModelName = Annotated[str, typer.Option("--model", help="The model, without --model-col.")]
ToolCol = Annotated[str | None, _column("The column of the tool or agent's name.")]
ToolName = Annotated[str, typer.Option("--tool", help="The tool, without --tool-col.")]
InputTokensCol = Annotated[str | None, _column("The column of the input token count.")]
OutputTokensCol = Annotated[str | None, _column("The column of the output token count.")]
TotalTokensCol = Annotated[
    str | None, _column("The column of the total token count (no token column: 0).")
]

Where = Annotated[
    str | None, _column("COLUMN=VALUE: import only the rows whose COLUMN holds VALUE.")
]


@import_app.command("jsonl")
def import_jsonl(
    path: Annotated[Path, typer.Argument(help="JSON Lines: one JSON object (a row) a line.")],
    output_col: OutputCol,
    task_col: TaskCol = None,
    task_id: TaskId = None,
    score_col: ScoreCol = None,
    id_col: IdCol = None,
    model_col: ModelCol = None,
    model: ModelName = "unknown",
    tool_col: ToolCol = None,
    tool: ToolName = "import",
    input_tokens_col: InputTokensCol = None,
    output_tokens_col: OutputTokensCol = None,
    total_tokens_col: TotalTokensCol = None,
    where: Where = None,
    apply: ApplyOption = False,
    timeout: TimeoutOption = 3600,
) -> None:
    """One run per line, mapped by the columns named (a.b: b inside a); a score column is
    kept as metadata.

    Dry run unless --apply; rows imported before are left alone (docs/importers.md).
    """
    columns = {k: v for k, v in locals().items() if k not in ("path", "apply", "timeout")}
    _import(path, "jsonl", apply=apply, timeout=timeout, columns=columns)


@import_app.command("csv")
def import_csv(
    path: Annotated[Path, typer.Argument(help="CSV with a header line naming the columns.")],
    output_col: OutputCol,
    task_col: TaskCol = None,
    task_id: TaskId = None,
    score_col: ScoreCol = None,
    id_col: IdCol = None,
    model_col: ModelCol = None,
    model: ModelName = "unknown",
    tool_col: ToolCol = None,
    tool: ToolName = "import",
    input_tokens_col: InputTokensCol = None,
    output_tokens_col: OutputTokensCol = None,
    total_tokens_col: TotalTokensCol = None,
    where: Where = None,
    apply: ApplyOption = False,
    timeout: TimeoutOption = 3600,
) -> None:
    """One run per record, mapped by the columns named; a score column is kept as metadata.

    Dry run unless --apply; rows imported before are left alone (docs/importers.md).
    """
    columns = {k: v for k, v in locals().items() if k not in ("path", "apply", "timeout")}
    _import(path, "csv", apply=apply, timeout=timeout, columns=columns)


def _import(
    path: Path,
    name: str,
    *,
    apply: bool,
    timeout: float,
    columns: dict[str, Any] | None = None,
) -> None:
    from evalq.producer.importers.apply import import_file
    from evalq.producer.importers.source import read_bounded
    from evalq.service.client import Client

    client = Client()
    try:
        raw = read_bounded(path)
        answer, submitted = import_file(client, name, raw, columns=columns, apply=apply)
    except InvalidInput as error:
        client.close()
        _exit_on_problems(path, error.problems, more=error.more)
    except EvalqError as error:
        client.close()
        fail(error)
    try:
        console.print(answer.summary(), highlight=False)
        if not apply:
            console.print("dry run: nothing stored (--apply to import)", highlight=False)
            return
        if not submitted:
            return
        statuses = wait_with_progress(client, [s.id for s in submitted], timeout=timeout)
    except EvalqError as error:
        fail(error)
    finally:
        client.close()
    failed = sorted(i for i, status in statuses.items() if status == "failed")
    console.print(f"imported and evaluated {len(statuses)} run(s)", highlight=False)
    if failed:
        typer.echo(f"{len(failed)} failed evaluation: {', '.join(failed)}", err=True)
        raise typer.Exit(1)


def _exit_on_problems(path: Path, problems: Sequence[tuple[str, str]], *, more: int) -> NoReturn:
    """Each problem as ``FILE:LINE: rule``, ``FILE: rule`` or ``FILE: JSON.PATH: rule``; exit 2."""
    for where, rule in problems:
        if where.startswith("line "):
            typer.echo(f"{path}:{where.removeprefix('line ').rstrip(':')}: {rule}", err=True)
        elif where == "(file)":
            typer.echo(f"{path}: {rule}", err=True)
        else:
            typer.echo(f"{path}: {where}: {rule}", err=True)
    if more:
        typer.echo(f"{path}: and {more} more problems", err=True)
    raise typer.Exit(2)
