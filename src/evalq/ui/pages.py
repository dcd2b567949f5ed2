"""The read pages: the tasks list, a task's board, one run, the review queue, and the judge's
agreement with people on a published set.

Each is a live page (`evalq.ui.web.live`): the browser polls it with ``If-None-Match`` and gets
304 until an evaluation moves the page's figures (`evalq.ui.freshness`).
"""

from __future__ import annotations

import math
from typing import Annotated

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse, Response
from markupsafe import Markup
from sqlalchemy.orm import Session

from evalq.core.errors import InvalidInput, NotFound
from evalq.core.status import FINAL_STATUSES, STATUSES
from evalq.read import monitors as watched
from evalq.read import served
from evalq.read.board_page import BoardPage, board_page
from evalq.read.boards.query import MAX_CURSOR, BoardQuery
from evalq.read.health import evaluation_health
from evalq.read.leaderboard import NEAR_COPY
from evalq.read.sessions import MAX_BOARD, session_board
from evalq.report.comparison import comparison_section
from evalq.report.svg import binned_histogram
from evalq.report.verdict import standings_verdict, verdict_section
from evalq.store import traces
from evalq.ui.labels import render_run
from evalq.ui.web import ViewerDep, live, render, settings_of

router = APIRouter(include_in_schema=False)
PAGE_SIZE = 50
"""Board rows per page."""
Text = Annotated[str, Query(max_length=200)]


def not_found(
    request: Request, viewer: ViewerDep, what: str, *, note: str | None = None
) -> HTMLResponse:
    """The 404 page naming what is missing (and ``note``: why, when it is known)."""
    return render(request, "missing.html", viewer, status=404, what=what, note=note)


@router.get("/", response_class=HTMLResponse)
def tasks_page(request: Request, viewer: ViewerDep, q: Text = "") -> Response:
    """Every task: kind, runs by status, last activity; ``q`` keeps the ids containing it."""
    settings = settings_of(request)

    def page(session: Session) -> HTMLResponse:
        overviews = served.task_list(session).tasks
        wanted = q.strip().lower()
        shown = [o for o in overviews if wanted in o.id.lower()]
        return render(
            request,
            "tasks.html",
            viewer,
            overviews=shown,
            total=len(overviews),
            q=q,
            statuses=STATUSES,
            health=evaluation_health(session),
            depths=queue_depths(settings.broker_url, settings.redis_master_name),
            monitors=watched.task_monitors(session, task_ids=[o.id for o in shown]),
        )

    return live(request, viewer, page)


def queue_depths(broker_url: str | None, master_name: str | None) -> dict[str, int] | None:
    """Messages waiting per queue, as `/metrics` reports them; None without a Redis broker or
    when it does not answer."""
    from evalq.workers.depths import BROKER_TIMEOUT_S, redis_queue_depths
    from evalq.workers.redis_url import is_redis_url

    if not is_redis_url(broker_url) or str(broker_url).startswith("unix://"):
        return None
    try:
        return redis_queue_depths(
            str(broker_url), master_name=master_name, timeout_s=BROKER_TIMEOUT_S
        )
    except Exception:  # the page still renders; the strip says the broker did not answer
        return None


def _metadata_filter(text: str) -> dict[str, str]:
    """``key=value`` of the board's metadata filter (empty: none)."""
    if not text.strip():
        return {}
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise InvalidInput([("metadata", "must be KEY=VALUE, e.g. experiment=prompt-v2")])
    return {key.strip(): value.strip()}


def _plot(page: BoardPage) -> str:
    """A histogram of the kept rows' ranking values (0-1 or 0-100 as the score is), binned by
    the database, with the board's confidence band."""
    if not sum(page.bins):
        return ""
    ci, key = page.board.confidence_interval, page.board.ranking_key
    lo, hi = page.scale
    return binned_histogram(
        page.bins,
        title=f"{key} of the rows kept",
        x_label=key,
        lo=lo,
        hi=hi,
        band=None if ci.mean is None else (ci.mean, ci.low, ci.high),
    )


def _verdict(page: BoardPage) -> str:
    """The verdict section: from the standings' summary (Arena, PeerRead), else the report."""
    if page.verdict is not None:
        return standings_verdict(page.board.kind, page.verdict, page.board.task_id)
    assert page.report is not None
    return verdict_section(page.report)


def _baseline_variant(page: BoardPage) -> str | None:
    """The variant a Scylla board's uplifts are measured over (None for the other kinds)."""
    variants = page.report.variants if page.report is not None else None
    return variants.baseline if variants is not None else None


def _comparisons(page: BoardPage) -> str:
    """A Scylla task's Comparisons section, as its report shows it (the worth-it verdict
    between any two variants and the tests by variant), from the board's stored figures."""
    if page.board.kind != "scylla" or page.report is None:
        return ""
    return comparison_section(page.report)


@router.get("/ui/tasks/{task_id}", response_class=HTMLResponse)
def board_view(
    request: Request,
    viewer: ViewerDep,
    task_id: str,
    tool: Text = "",
    model: Text = "",
    variant: Text = "",
    status: Text = "",
    metadata: Text = "",
    include_held: bool = False,
    page: Annotated[int, Query(ge=1, le=1_000_000)] = 1,
    per: Annotated[int, Query(ge=5, le=200)] = PAGE_SIZE,
    cursor: Annotated[str | None, Query(max_length=MAX_CURSOR)] = None,
) -> Response:
    """A task's board: the kind's verdict first, then the ranked rows, filtered and paged; the
    page reads what it lists (`evalq.read.board_page`), whatever the task's size. "next"
    carries the page's cursor: the next page says when the board moved in between."""
    settings = settings_of(request)
    filters: dict[str, object] = {"tool": tool, "model": model, "variant": variant}
    filters |= {"status": status}
    filters |= {"metadata": metadata, "include_held": include_held}
    filters |= {"per": per if per != PAGE_SIZE else None}

    def board(session: Session) -> HTMLResponse:
        problems: list[tuple[str, str]] = []
        if status and status not in FINAL_STATUSES:
            problems.append(("status", f"must be one of {', '.join(FINAL_STATUSES)}"))
        try:
            wanted = _metadata_filter(metadata)
        except InvalidInput as bad:
            problems += bad.problems
            wanted = {}
        asked = BoardQuery(
            task_id=task_id,
            tool=tool or None,
            model=model or None,
            variant=variant or None,
            metadata=wanted,
            include_held=include_held,
            status=status if status in FINAL_STATUSES else None,
            limit=per,
            offset=0 if cursor else (page - 1) * per,
            cursor=cursor or None,
        )
        try:
            try:
                shown = board_page(session, asked, settings=settings)
            except InvalidInput as bad:  # a metadata key no metadata can have, a forged cursor
                problems += bad.problems
                plain = BoardQuery(task_id=task_id, limit=per, offset=(page - 1) * per)
                shown = board_page(session, plain, settings=settings)
        except NotFound:
            return not_found(request, viewer, f"task {task_id!r}")
        total = shown.board.total or 0
        return render(
            request,
            "board.html",
            viewer,
            status=422 if problems else 200,
            board=shown.board,
            near_copy=NEAR_COPY,
            verdict=Markup(_verdict(shown)),
            comparisons=Markup(_comparisons(shown)),
            plot=Markup(_plot(shown)),
            entries=shown.board.entries,
            total=total,
            first=shown.board.offset + 1,
            page=shown.board.offset // per + 1,
            pages=max(1, math.ceil(total / per)),
            filters=filters,
            problems=problems,
            statuses=FINAL_STATUSES,
            choices=shown.choices,
            baseline_variant=_baseline_variant(shown),
            monitors=watched.task_monitors(session, task_ids=[task_id]).get(task_id, []),
        )

    return live(request, viewer, board)


@router.get("/ui/tasks/{task_id}/sessions", response_class=HTMLResponse)
def sessions_view(request: Request, viewer: ViewerDep, task_id: str) -> Response:
    """A task's session board (`evalq.read.sessions.session_board`)."""

    def page(session: Session) -> HTMLResponse:
        try:
            board = session_board(session, task_id=task_id, limit=MAX_BOARD)
        except NotFound:
            return not_found(request, viewer, f"task {task_id!r}")
        return render(request, "sessions.html", viewer, board=board)

    return live(request, viewer, page)


@router.get("/ui/runs/{submission_id:path}", response_class=HTMLResponse)
def run_view(
    request: Request, viewer: ViewerDep, submission_id: str, labelled: Text = ""
) -> Response:
    """One run: output beside the references, tiers, judge, trace, cost, errors, review, and
    people's labels with the label form."""

    def page(session: Session) -> HTMLResponse:
        try:
            return render_run(request, viewer, session, submission_id, labelled=labelled)
        except NotFound:
            trace = traces.trace_of_id(session, submission_id=submission_id)
            note = None
            if trace is not None and trace.status in ("refused", "failed"):
                why = traces.reason(trace) or "no reason was stored"
                note = f"Its trace {trace.trace_id} was {trace.status}: {why}"
            return not_found(request, viewer, f"submission {submission_id!r}", note=note)

    return live(request, viewer, page)


@router.get("/ui/review", response_class=HTMLResponse)
def review_page(
    request: Request,
    viewer: ViewerDep,
    page: Annotated[int, Query(ge=1, le=1_000_000)] = 1,
) -> Response:
    """The runs held for review, why, and (write scope) an accept link each, to the
    confirmation that asks for the reason; a page at a time."""

    def read(session: Session) -> HTMLResponse:
        held = served.held_runs(session, offset=(page - 1) * served.REVIEW_PAGE)
        return render(
            request,
            "review.html",
            viewer,
            rows=held.runs,
            total=held.total,
            page=page,
            pages=max(1, math.ceil(held.total / served.REVIEW_PAGE)),
        )

    return live(request, viewer, read)


@router.get("/ui/agreement/published", response_class=HTMLResponse)
def published_agreement_page(request: Request, viewer: ViewerDep) -> Response:
    """How far a real LLM judge agrees with people on a published set (HANNA), measured as a
    board measures its own judge, with where the figures come from."""
    from evalq.read import published_agreement

    return render(
        request,
        "published_agreement.html",
        viewer,
        validation=published_agreement.hanna_agreement(),
        source=published_agreement.SOURCE,
        judge=published_agreement.JUDGE,
    )
