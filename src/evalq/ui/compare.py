"""The compare page: two or more groups over tasks, with the statistics `evalq compare` prints.

It calls the read side's `compare` as ``GET /v1/compare`` does, off the event loop and within the
same ``EVALQ_COMPARE_CONCURRENCY`` slots.
"""

from __future__ import annotations

import asyncio
from typing import Annotated

from fastapi import APIRouter, Query, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import HTMLResponse
from markupsafe import Markup

from evalq.core.errors import InvalidInput, NotFound
from evalq.read import served
from evalq.read.compare import CompareReport
from evalq.report.svg import signed_bars
from evalq.store.db import read_scope
from evalq.ui.diff import OutputDiff, output_diff
from evalq.ui.web import ViewerDep, render, settings_of

router = APIRouter(include_in_schema=False)
Text = Annotated[str, Query(max_length=1000)]


def difference_plot(report: CompareReport) -> str:
    """Each unit's difference (group - reference) in the score's points, one plot per group
    compared with the reference, as signed bars (at most 40 units each)."""
    plots = []
    for other in report.groups:
        if other == report.reference:
            continue
        items: list[tuple[str, float | None]] = [
            (unit.unit, unit.values[other] - unit.values[report.reference])
            for unit in report.units
            if other in unit.values and report.reference in unit.values
        ]
        if items:
            plots.append(
                signed_bars(
                    items[:40],
                    title=f"{other} - {report.reference} per {report.unit}",
                    x_label=f"{report.score}: {other} minus {report.reference}",
                    unit="points",
                )
            )
    return "".join(plots)


@router.get("/ui/compare", response_class=HTMLResponse)
async def compare_page(
    request: Request,
    viewer: ViewerDep,
    tasks: Text = "",
    by: Text = "model",
    values: Annotated[list[str] | None, Query(max_length=20)] = None,
    include_held: bool = False,
    run_a: Annotated[str, Query(max_length=128)] = "",
    run_b: Annotated[str, Query(max_length=128)] = "",
    ticked: Annotated[list[str] | None, Query(alias="run", max_length=200)] = None,
) -> HTMLResponse:
    """The form; when it names tasks, the comparison of its groups; when it names two runs,
    their outputs side by side."""
    settings = settings_of(request)

    def read_choices() -> served.CompareChoices:
        with read_scope(settings) as session:
            return served.compare_choices(session)

    groups = [v.strip() for v in values or [] if v.strip()]
    form = {"tasks": tasks, "by": by, "values": groups, "include_held": include_held}
    form |= {"run_a": run_a, "run_b": run_b}
    form["choices"] = await run_in_threadpool(read_choices)
    picked = list(dict.fromkeys(r.strip()[:128] for r in ticked or [] if r.strip()))
    if ticked is not None and len(picked) != 2:  # rows ticked on a board: it takes exactly two
        rule = f"tick exactly two runs on the board to compare their outputs ({len(picked)} ticked)"
        return render(
            request,
            "compare.html",
            viewer,
            status=422,
            form=form,
            report=None,
            problems=[("run", rule)],
        )
    if picked:
        run_a, run_b = picked
        form |= {"run_a": run_a, "run_b": run_b}
    if run_a.strip() and run_b.strip():

        def read_diff() -> OutputDiff:
            with read_scope(settings) as session:
                return output_diff(
                    session, left=run_a.strip(), right=run_b.strip(), settings=settings
                )

        try:
            diff = await run_in_threadpool(read_diff)
        except NotFound as missing:
            return render(
                request,
                "compare.html",
                viewer,
                status=404,
                form=form,
                report=None,
                problems=[("run", str(missing))],
            )
        return render(
            request, "compare.html", viewer, form=form, report=None, problems=[], diff=diff
        )
    if not tasks.strip():
        return render(request, "compare.html", viewer, form=form, report=None, problems=[])

    def run() -> CompareReport:
        with read_scope(settings) as session:
            return served.comparison(
                session,
                tasks=tasks.strip(),
                by=by.strip(),
                values=groups,
                settings=settings,
                include_held=include_held,
            )

    slots: asyncio.Semaphore = request.app.state.compare_slots
    try:
        async with slots:
            report = await run_in_threadpool(run)
    except InvalidInput as bad:
        return render(
            request,
            "compare.html",
            viewer,
            status=422,
            form=form,
            report=None,
            problems=bad.problems,
        )
    except NotFound as missing:
        return render(
            request,
            "compare.html",
            viewer,
            status=404,
            form=form,
            report=None,
            problems=[("tasks", str(missing))],
        )
    plot = Markup(difference_plot(report))
    return render(
        request,
        "compare.html",
        viewer,
        form=form,
        report=report,
        problems=[],
        plot=plot,
    )
