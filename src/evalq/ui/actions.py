"""The forms that change something: sign in, sign out, and accept a run held for review.

Sign-in needs the form's own token (`evalq.ui.session.login_token_ok`) and a post from this
site (`evalq.ui.security.posted_from_here`): a page of another site cannot sign a browser in
with a key of its choosing. Sign-out and accept need the session's CSRF token
(`evalq.ui.session.csrf_ok`); accept also the key's write scope, and calls the same code as
``evalq review accept`` and ``POST /v1/submissions/{id}/review/accept``
(`Client.accept_review`).
"""

from __future__ import annotations

from typing import Annotated
from urllib.parse import quote

from fastapi import APIRouter, Form, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from evalq.core.errors import EvalqError, NotFound
from evalq.read import served
from evalq.service.client import Client
from evalq.store.db import session_scope
from evalq.ui.security import posted_from_here
from evalq.ui.session import (
    COOKIE,
    LOGIN_COOKIE,
    MAX_AGE_S,
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


@router.post("/ui/review/accept")
async def accept(
    request: Request, viewer: ViewerDep, submission_id: FormText, csrf: FormText = ""
) -> Response:
    """Accept a run held for review, as `evalq review accept` does."""
    if not csrf_ok(viewer, csrf):
        return render(request, "refused.html", viewer, status=403, why="the form's CSRF token")
    if not viewer.can("write"):
        return render(request, "refused.html", viewer, status=403, why="the write scope")
    client: Client = request.app.state.client
    try:
        await run_in_threadpool(client.accept_review, submission_id)
    except EvalqError as error:

        def first_page() -> served.HeldRuns:
            with session_scope(settings_of(request).database_url) as session:
                return served.held_runs(session)

        held = await run_in_threadpool(first_page)
        return render(
            request,
            "review.html",
            viewer,
            status=404 if isinstance(error, NotFound) else 422,
            rows=held.runs,
            total=held.total,
            page=1,
            pages=max(1, -(-held.total // served.REVIEW_PAGE)),
            done="",
            error=str(error),
        )
    return RedirectResponse(f"/ui/review?done={quote(submission_id, safe='')}", status_code=303)
