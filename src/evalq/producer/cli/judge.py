"""The judge from the command line: `evalq judge agreement TASKS`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape
from rich.table import Table

from evalq.core.errors import EvalqError
from evalq.producer.cli.output import console, fail, working

if TYPE_CHECKING:
    from evalq.core.judge_series import JudgeHistory

judge_app = typer.Typer(help="The LLM judge: is it validated against people?", no_args_is_help=True)


@judge_app.command("agreement")
def agreement(
    tasks: Annotated[str, typer.Argument(help="A task id, ids separated by commas, or globs.")],
    seed: Annotated[int, typer.Option(min=0, help="Seed of the bootstrap.")] = 0,
    as_json: Annotated[bool, typer.Option("--json", help="Print the JSON the API serves.")] = False,
) -> None:
    """Judge-human agreement per task, rubric and judge model, with people's own (the ceiling)."""
    from evalq.service.client import Client

    try:
        report = Client().judge_agreement(tasks, seed=seed)
    except EvalqError as error:
        fail(error)
    if as_json:
        print(report.model_dump_json(indent=2))
        return
    if not report.rubrics:
        console.print("no judge scores on these tasks yet", markup=False)
        for ceiling in report.people:
            shown = "-" if ceiling.alpha is None else f"{ceiling.alpha:.2f}"
            line = f"people's own agreement on {ceiling.rubric} (the ceiling): alpha {shown} "
            console.print(line + f"over {ceiling.runs} runs labelled twice or more", markup=False)
        return
    title = (
        f"judge vs people (validated: >= {report.min_labels} pairs, alpha >= {report.min_alpha})"
    )
    table = Table(title=title)
    for column in ("task", "rubric", "model", "n", "alpha [95% CI]", "bias", "people", "status"):
        table.add_column(column)
    for entry in report.rubrics:
        alpha = "-" if entry.alpha is None else f"{entry.alpha:.2f}"
        if entry.alpha_ci is not None:
            alpha += f" [{entry.alpha_ci[0]:.2f}, {entry.alpha_ci[1]:.2f}]"
        bias = "-" if entry.bias is None else f"{entry.bias:+.2f}"
        people = "-" if entry.human_alpha is None else f"{entry.human_alpha:.2f}"
        people += f" ({entry.human_runs} runs)"
        status = "validated" if entry.validated else "not validated"
        cells = (entry.task_id or "(all)", entry.rubric, entry.model, str(entry.pairs))
        table.add_row(*map(escape, (*cells, alpha, bias, people, status)))
    console.print(table)
    for entry in report.not_validated():
        console.print(f"{entry.rubric} / {entry.model}: {entry.note}", markup=False)


@judge_app.command("calibrate")
def calibrate_command(
    path: Annotated[
        Path | None,
        typer.Argument(
            help="JSONL: one labelled item per line, "
            '{"levels": [{"confidence": 0.8, "agreed": true}, ...]}, cheapest level first.'
        ),
    ] = None,
    tasks: Annotated[
        str | None,
        typer.Option(
            "--tasks",
            help="Instead of a file: the audited runs of these tasks (drawn like live traffic).",
        ),
    ] = None,
    alpha: Annotated[float, typer.Option(help="Tolerated disagreement (target 1 - alpha).")] = 0.1,
    delta: Annotated[float, typer.Option(help="Allowed probability that the bound fails.")] = 0.1,
    reference: Annotated[
        str, typer.Option(help="'human' (labels) or 'top judge' (the top level's verdicts).")
    ] = "human",
    start_share: Annotated[
        float | None,
        typer.Option(
            help="Each level's search starts at the threshold trusting this share of its "
            "items (default 0.3)."
        ),
    ] = None,
    plan: Annotated[
        bool,
        typer.Option(
            "--plan",
            help="Only show where each level's search starts and how many items it may decide "
            "(confidences only; labels are not read).",
        ),
    ] = False,
) -> None:
    """Thresholds per judge level so trusted verdicts agree >= 1-alpha w.p. >= 1-delta (JSON)."""
    from evalq.core.errors import InvalidInput
    from evalq.core.storable import decode_json
    from evalq.judge.calibration import START_SHARE, Judgment, calibrate, search_plan

    share = START_SHARE if start_share is None else start_share

    if reference not in ("human", "top judge"):
        fail(InvalidInput([("--reference", "must be 'human' or 'top judge'")]))
    if (path is None) == (tasks is None):
        fail(InvalidInput([("FILE", "give a file or --tasks, one of them")]))
    if tasks is not None:
        from evalq.service.client import Client

        try:
            if plan:
                planned = Client().cascade_search_plan(
                    tasks, alpha=alpha, delta=delta, start_share=share
                )
                print(json.dumps([level.model_dump() for level in planned], indent=2))
                return
            with working(f"calibrating the cascade on {tasks}"):
                found = Client().calibrate_cascade(
                    tasks, alpha=alpha, delta=delta, reference=reference, start_share=share
                )
        except EvalqError as error:
            fail(error)
        print(found.model_dump_json(indent=2))
        return
    assert path is not None
    try:
        items = []
        for number, line in enumerate(path.read_bytes().split(b"\n"), start=1):
            if not line.strip():
                continue
            data = decode_json(line, where=f"{path.name}:{number}")
            try:
                items.append(
                    [Judgment(float(j["confidence"]), bool(j["agreed"])) for j in data["levels"]]
                )
            except (KeyError, TypeError, ValueError):
                rule = 'must be {"levels": [{"confidence": NUMBER, "agreed": BOOL}, ...]}'
                raise InvalidInput([(f"{path.name}:{number}", rule)]) from None
        if plan:
            confidences = [[j.confidence for j in item] for item in items]
            planned = search_plan(confidences, alpha=alpha, delta=delta, start_share=share)
            print(json.dumps([level.model_dump() for level in planned], indent=2))
            return
        with working(f"calibrating the cascade on {len(items)} items"):
            result = calibrate(
                items,
                alpha=alpha,
                delta=delta,
                reference=reference,  # type: ignore[arg-type]
                start_share=share,
            )
    except OSError as error:
        fail(InvalidInput([("(file)", f"cannot read: {error.strerror}")]))
    except EvalqError as error:
        fail(error)
    print(result.model_dump_json(indent=2))


def _print_history(history: JudgeHistory) -> None:
    table = Table(title=f"judges of {history.task_id}")
    for column in ("series", "model", "provider", "version", "prompt", "rubrics", "scored"):
        table.add_column(column)
    table.add_column("rejudged")
    table.add_column("from")
    for s in history.series:
        i = s.identity
        cells = (s.series, i.model, i.provider or "-", i.version or "-", i.prompt_digest[:8])
        counts = (i.rubric_digest[:8], str(s.scored), str(s.rejudged))
        table.add_row(*map(escape, (*cells, *counts, f"{s.first_judged_at:%Y-%m-%d %H:%M}")))
    console.print(table)
    for b in history.bridges:
        console.print(f"break {b.old} -> {b.new}: {b.note}", markup=False, highlight=False)
    if history.mark is not None:
        console.print(history.mark, markup=False, highlight=False)
    elif len(history.series) <= 1:
        console.print("one judge: no break", markup=False)


DETECT_HELP = "The judge bias the bridge is sized to detect, on the judge's [0, 1] scale (0.1)."


@judge_app.command("series")
def series_command(
    task_id: str,
    detect: Annotated[float | None, typer.Option(help=DETECT_HELP)] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the JSON the API serves.")] = False,
) -> None:
    """The task's judges over time: each judge's series, the breaks between them and the bridge
    across each (runs judged by both: bias and agreement with intervals; docs/judge.md)."""
    from evalq.service.client import Client

    try:
        history = Client().judge_history(task_id, detect=detect)
    except EvalqError as error:
        fail(error)
    if as_json:
        print(history.model_dump_json(indent=2))
        return
    _print_history(history)


@judge_app.command("rejudge")
def rejudge_command(
    task_id: str,
    runs: Annotated[
        int | None,
        typer.Option(help="Judge this many runs; default: the bridging sample the break needs."),
    ] = None,
    detect: Annotated[float | None, typer.Option(help=DETECT_HELP)] = None,
    seed: Annotated[int, typer.Option(min=0, help="Seed of the order runs are drawn in.")] = 0,
    as_json: Annotated[bool, typer.Option("--json", help="Print the JSON the API serves.")] = False,
) -> None:
    """Judge the task's runs again with the configured judge (EVALQ_JUDGE_MODEL), as a new
    series beside their scores: no score, tier row or evaluation is changed. Without --runs,
    the previous judge's runs are judged until the bridge has the pairs its power needs."""
    from evalq.service.client import Client

    try:
        with working(f"re-judging {task_id}"):
            history = Client().rejudge(task_id, runs=runs, detect=detect, seed=seed)
    except EvalqError as error:
        fail(error)
    if as_json:
        print(history.model_dump_json(indent=2))
        return
    _print_history(history)
