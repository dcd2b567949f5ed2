"""People's labels in the UI: the label form's post, and the labelling queue.

A label is saved as ``evalq labels add`` and ``POST /v1/labels`` save it (`Client.add_label`:
the same rules, the same store), by the signed-in key's name as its labeller. Saving needs what
accepting a held run needs: the session's CSRF token and the key's write scope. A refused label
stores nothing and shows the page again with each bad field and its rule, the values kept.

The queue (``/ui/labels``) shows the next evaluated run nobody labelled, of one task or of all
(`evalq.read.labelling`), with the form; a saved label moves it on to the next, and a skip moves
past the run without labelling it. Keyboard shortcuts (`static/ui.js`) only fill and send the
same plain form, which works without script.
"""

from __future__ import annotations

from typing import Annotated, Any
from urllib.parse import quote

from fastapi import APIRouter, Query, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from sqlalchemy import select
from sqlalchemy.orm import Session
from starlette.datastructures import FormData

from evalq.core.errors import EvalqError, InvalidInput, NotFound
from evalq.core.profile import Recommendation
from evalq.core.schemas import RUBRIC_NAMES
from evalq.read.labelling import next_to_label
from evalq.service.client import Client
from evalq.store.db import session_scope
from evalq.store.models import TaskRow
from evalq.ui.run import run_page
from evalq.ui.session import Viewer, csrf_ok
from evalq.ui.web import ViewerDep, render, settings_of

router = APIRouter(include_in_schema=False)
Text = Annotated[str, Query(max_length=200)]
QUEUE = "/ui/labels"
RECOMMENDATIONS: tuple[Recommendation, ...] = ("accept", "weak_accept", "weak_reject", "reject")
DECISIONS = {"pass": True, "fail": False}
MAX_FIELD_CHARS = 4000
"""Longest form value read (the note's own limit, 2000, is the label's rule)."""


def _local(target: str) -> str:
    """``target`` when it is a path on this site, else the queue (no open redirect)."""
    ok = target.startswith("/") and not target.startswith(("//", "/\\"))
    return target if ok else QUEUE


def label_of_form(form: FormData, labeller: str) -> dict[str, Any]:
    """The label the form describes, for `Client.add_label` to check: a score field
    ``score_RUBRIC`` that is a whole number becomes an int (anything else is passed on as it is
    and refused by the label's rules, naming the field); empty fields are left out."""

    def text(name: str) -> str:
        value = form.get(name)
        return value[:MAX_FIELD_CHARS].strip() if isinstance(value, str) else ""

    scores: dict[str, Any] = {}
    for name in form:
        if name.startswith("score_") and (value := text(name)):
            scores[name.removeprefix("score_")] = (
                int(value) if value.isascii() and value.isdigit() else value
            )
    data: dict[str, Any] = {"submission_id": text("submission_id"), "labeller": labeller}
    if scores:
        data["scores"] = scores
    if recommendation := text("recommendation"):
        data["recommendation"] = recommendation
    if decision := text("passed"):
        data["passed"] = DECISIONS.get(decision, decision)
    if note := text("note"):
        data["note"] = note
    return data


def form_values(form: FormData) -> dict[str, Any]:
    """What the person chose, to show the form again as it was sent."""
    values: dict[str, Any] = {name: form.get(name) for name in ("recommendation", "passed", "note")}
    values["scores"] = {
        name.removeprefix("score_"): form.get(name) for name in form if name.startswith("score_")
    }
    return values


def label_context(viewer: Viewer, **extra: Any) -> dict[str, Any]:
    """What the label form needs besides its run: the rubrics, the decisions, the labeller."""
    return {
        "rubrics": RUBRIC_NAMES,
        "recommendations": RECOMMENDATIONS,
        "labeller": viewer.name,
        "can_label": viewer.can("write"),
        **extra,
    }


def render_run(
    request: Request, viewer: Viewer, session: Session, submission_id: str, **extra: Any
) -> HTMLResponse:
    """The run's page with its label form (`extra`: its problems, values, a saved note)."""
    status = extra.pop("status", 200)
    found = run_page(session, submission_id=submission_id, settings=settings_of(request))
    context = label_context(viewer, **extra)
    return render(request, "run.html", viewer, status=status, run=found, r=found.result, **context)


def render_queue(
    request: Request,
    viewer: Viewer,
    session: Session,
    *,
    task: str,
    after: str = "",
    show: str | None = None,
    status: int = 200,
    **extra: Any,
) -> HTMLResponse:
    """The labelling queue: the next run nobody labelled (of ``task``, or of all tasks), after
    run ``after`` when given; run ``show`` instead when given (a refused label's run)."""
    tasks = list(session.scalars(select(TaskRow.id).order_by(TaskRow.id)))
    try:
        found = next_to_label(session, task_id=task or None, after=after or None)
    except NotFound:
        problems = [("task", f"no task {task!r} is stored; pick one of the list")]
        found = next_to_label(session)
        task, status = "", 404
        extra["problems"] = [*extra.get("problems", []), *problems]
    run = None
    shown = show or found.submission_id
    if shown is not None:
        try:
            run = run_page(session, submission_id=shown, settings=settings_of(request))
        except NotFound:  # a refused label named no stored run: the problems say so
            run = None
    here = QUEUE + (f"?task={quote(task, safe='')}" if task else "")
    return render(
        request,
        "labels.html",
        viewer,
        status=status,
        live_interval=0,
        queue=found,
        tasks=tasks,
        task=task,
        run=run,
        r=None if run is None else run.result,
        here=here,
        **label_context(viewer, **extra),
    )


@router.get("/ui/labels", response_class=HTMLResponse)
def queue_page(
    request: Request, viewer: ViewerDep, task: Text = "", after: Text = "", labelled: Text = ""
) -> Response:
    """The labelling queue, a run at a time."""
    with session_scope(settings_of(request).database_url) as session:
        return render_queue(request, viewer, session, task=task, after=after, labelled=labelled)


@router.post("/ui/labels")
async def save_label(request: Request, viewer: ViewerDep) -> Response:
    """Save the form's label (as `evalq labels add`), then go back to ``next``."""
    form = await request.form(max_files=0, max_fields=50)
    csrf = form.get("csrf")
    if not csrf_ok(viewer, csrf if isinstance(csrf, str) else None):
        return render(request, "refused.html", viewer, status=403, why="the form's CSRF token")
    if not viewer.can("write"):
        return render(request, "refused.html", viewer, status=403, why="the write scope")
    label = label_of_form(form, viewer.name)
    next_value = form.get("next")
    target = _local(next_value if isinstance(next_value, str) else "")
    client: Client = request.app.state.client
    try:
        await run_in_threadpool(client.add_label, label)
    except EvalqError as error:
        problems = error.problems if isinstance(error, InvalidInput) else [("", str(error))]
        missing = str(error)
        status = 404 if isinstance(error, NotFound) else 422
        values = form_values(form)

        def again() -> HTMLResponse:
            with session_scope(settings_of(request).database_url) as session:
                if target.startswith(QUEUE):
                    return render_queue(
                        request,
                        viewer,
                        session,
                        task=_task_of(target),
                        show=label["submission_id"] or None,
                        status=status,
                        problems=problems,
                        values=values,
                    )
                try:
                    return render_run(
                        request,
                        viewer,
                        session,
                        label["submission_id"],
                        status=status,
                        problems=problems,
                        values=values,
                    )
                except NotFound:
                    return render(
                        request, "missing.html", viewer, status=404, what=missing, note=None
                    )

        return await run_in_threadpool(again)
    sep = "&" if "?" in target else "?"
    return RedirectResponse(
        f"{target}{sep}labelled={quote(label['submission_id'], safe='')}", status_code=303
    )


def _task_of(target: str) -> str:
    """The ``task`` of a queue address (``/ui/labels?task=ID``), empty when none."""
    from urllib.parse import parse_qs, urlsplit

    return parse_qs(urlsplit(target).query).get("task", [""])[0]
