"""The forms that change something: sign in, sign out, and accept or un-accept a run held for
review.

Sign-in needs the form's own token (`evalq.ui.session.login_token_ok`) and a post from this
site (`evalq.ui.security.posted_from_here`): a page of another site cannot sign a browser in
with a key of its choosing. Sign-out and a review decision need the session's CSRF token
(`evalq.ui.session.csrf_ok`); a decision also the key's write scope. An accept or an un-accept
moves the task's baseline, so it takes two steps, both plain forms (no script): a confirmation
page that names the task whose baseline moves and asks for the reason, then the post, which
calls the same code as ``evalq review accept`` / ``unaccept`` and ``POST
/v1/submissions/{id}/review/accept`` / ``unaccept`` (`Client.accept_review`,
`Client.unaccept_review`) with the signed-in key's name as who decided.
"""

from __future__ import annotations

from typing import Annotated
from urllib.parse import quote

from fastapi import APIRouter, Form, Query, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from evalq.core.errors import EvalqError, NotFound
from evalq.core.review_decisions import MAX_REASON_CHARS, ReviewAction
from evalq.read import served
from evalq.service.client import Client
from evalq.store.db import session_scope
from evalq.ui.pages import not_found
from evalq.ui.security import posted_from_here
from evalq.ui.session import (
    COOKIE,
    LOGIN_COOKIE,
    MAX_AGE_S,
    Viewer,
    csrf_ok,
    login_token,
    login_token_ok,
    sign_in,
)
from evalq.ui.web import ViewerDep, render, settings_of

router = APIRouter(include_in_schema=False)
FormText = Annotated[str, Form(max_length=500)]


def _local(target: str) -> str:
    """``target`` when it is a path on this site, else ``/`` (no open redirect)."""
    return target if target.startswith("/") and not target.startswith(("//", "/\\")) else "/"


def _login_page(
    request: Request, next: str, *, failed: bool = False, status: int = 200
) -> HTMLResponse:
    """The sign-in form with its token, and the pre-session cookie that holds the token."""
    token = login_token(request.cookies.get(LOGIN_COOKIE))
    response = render(
        request, "login.html", None, status=status, next=_local(next), failed=failed, csrf=token
    )
    response.set_cookie(
        LOGIN_COOKIE,
        token,
        path="/ui/login",
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
    )
    return response


@router.get("/ui/login", response_class=HTMLResponse)
def login_form(request: Request, next: str = "/") -> HTMLResponse:
    """The sign-in form."""
    return _login_page(request, next)


@router.post("/ui/login", response_class=HTMLResponse)
def login(
    request: Request,
    api_key: Annotated[str, Form(max_length=200)],
    next: FormText = "/",
    csrf: FormText = "",
) -> Response:
    """Check the key; on success set the session cookie and go on to ``next``.

    A post from another site's page, or without the form's token, is refused (403) before the
    key is looked at, and sets nothing.
    """
    if not posted_from_here(request.headers):
        why = "a sign-in posted from this site's own page (this one came from another origin)"
        return render(request, "refused.html", None, status=403, why=why)
    if not login_token_ok(request.cookies.get(LOGIN_COOKIE), csrf):
        why = "the sign-in form's token: open the sign-in page again and sign in from it"
        return render(request, "refused.html", None, status=403, why=why)
    with session_scope(settings_of(request).database_url) as session:
        cookie = sign_in(session, api_key=api_key.strip())
    if cookie is None:
        return _login_page(request, next, failed=True, status=401)
    response = RedirectResponse(_local(next), status_code=303)
    response.set_cookie(
        COOKIE,
        cookie,
        max_age=MAX_AGE_S,
        path="/",
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
    )
    response.delete_cookie(LOGIN_COOKIE, path="/ui/login", httponly=True, samesite="strict")
    return response


@router.post("/ui/logout")
def logout(request: Request, viewer: ViewerDep, csrf: FormText = "") -> Response:
    """End the session (the cookie is dropped; the key itself stays valid)."""
    if not csrf_ok(viewer, csrf):
        return render(request, "refused.html", viewer, status=403, why="the form's CSRF token")
    response = RedirectResponse("/ui/login", status_code=303)
    response.delete_cookie(COOKIE, path="/", httponly=True, samesite="strict")
    return response


ACTIONS: dict[str, ReviewAction] = {"accept": "accept", "unaccept": "unaccept"}


def _confirm_page(
    request: Request,
    viewer: Viewer,
    subject: served.ReviewSubject,
    action: ReviewAction,
    *,
    reason: str = "",
    error: str = "",
    status: int = 200,
) -> HTMLResponse:
    """The decision's second step: what it changes, a required reason, confirm or go back."""
    return render(
        request,
        "review_confirm.html",
        viewer,
        status=status,
        subject=subject,
        action=action,
        reason=reason,
        error=error,
        max_reason=MAX_REASON_CHARS,
    )


def _subject(request: Request, submission_id: str) -> served.ReviewSubject | None:
    with session_scope(settings_of(request).database_url) as session:
        try:
            return served.review_subject(session, submission_id=submission_id)
        except NotFound:
            return None


@router.get("/ui/review/{action}", response_class=HTMLResponse)
def confirm(
    request: Request,
    viewer: ViewerDep,
    action: str,
    submission_id: Annotated[str, Query(max_length=500)] = "",
) -> Response:
    """The confirmation of an accept or an un-accept (a page of its own: no script needed)."""
    if action not in ACTIONS:
        return not_found(request, viewer, f"the review action {action!r}")
    if not viewer.can("write"):
        return render(request, "refused.html", viewer, status=403, why="the write scope")
    subject = _subject(request, submission_id)
    if subject is None:
        return not_found(request, viewer, f"submission {submission_id!r}")
    return _confirm_page(request, viewer, subject, ACTIONS[action])


@router.post("/ui/review/{action}")
async def decide(
    request: Request,
    viewer: ViewerDep,
    action: str,
    submission_id: FormText,
    csrf: FormText = "",
    reason: Annotated[str, Form(max_length=4 * MAX_REASON_CHARS)] = "",
) -> Response:
    """Accept or un-accept a run as `evalq review accept` / `unaccept` do, with the reason
    the confirmation asked for; the signed-in key's name is recorded as who decided. Then the
    run's page, which shows the record."""
    if action not in ACTIONS:
        return not_found(request, viewer, f"the review action {action!r}")
    if not csrf_ok(viewer, csrf):
        return render(request, "refused.html", viewer, status=403, why="the form's CSRF token")
    if not viewer.can("write"):
        return render(request, "refused.html", viewer, status=403, why="the write scope")
    client: Client = request.app.state.client
    change = client.accept_review if action == "accept" else client.unaccept_review
    try:
        await run_in_threadpool(lambda: change(submission_id, reason=reason, by=viewer.name))
    except EvalqError as error:
        subject = await run_in_threadpool(_subject, request, submission_id)
        if subject is None:
            return not_found(request, viewer, f"submission {submission_id!r}")
        return _confirm_page(
            request,
            viewer,
            subject,
            ACTIONS[action],
            reason=reason,
            error=str(error),
            status=404 if isinstance(error, NotFound) else 422,
        )
    return RedirectResponse(f"/ui/runs/{quote(submission_id, safe='')}", status_code=303)
