"""The forms that change something: sign in, sign out, and accept a run held for review.

Sign-out and accept need the session's CSRF token (`evalq.ui.session.csrf_ok`); accept also the
key's write scope, and calls the same code as ``evalq review accept`` and
``POST /v1/submissions/{id}/review/accept`` (`Client.accept_review`).
"""

from __future__ import annotations

from typing import Annotated
from urllib.parse import quote

from fastapi import APIRouter, Form, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from evalq.core.errors import EvalqError, NotFound
from evalq.producer.client import Client
from evalq.store.db import session_scope
from evalq.ui.pages import review_rows
from evalq.ui.session import COOKIE, MAX_AGE_S, csrf_ok, sign_in
from evalq.ui.web import ViewerDep, render, settings_of

router = APIRouter(include_in_schema=False)
FormText = Annotated[str, Form(max_length=500)]


def _local(target: str) -> str:
    """``target`` when it is a path on this site, else ``/`` (no open redirect)."""
    return target if target.startswith("/") and not target.startswith(("//", "/\\")) else "/"


@router.get("/ui/login", response_class=HTMLResponse)
def login_form(request: Request, next: str = "/") -> HTMLResponse:
    """The sign-in form."""
    return render(request, "login.html", None, next=_local(next), failed=False)


@router.post("/ui/login", response_class=HTMLResponse)
def login(
    request: Request,
    api_key: Annotated[str, Form(max_length=200)],
    next: FormText = "/",
) -> Response:
    """Check the key; on success set the session cookie and go on to ``next``."""
    with session_scope(settings_of(request).database_url) as session:
        cookie = sign_in(session, api_key=api_key.strip())
    if cookie is None:
        return render(request, "login.html", None, status=401, next=_local(next), failed=True)
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

        def rows() -> list[dict[str, object]]:
            with session_scope(settings_of(request).database_url) as session:
                return review_rows(session)

        return render(
            request,
            "review.html",
            viewer,
            status=404 if isinstance(error, NotFound) else 422,
            rows=await run_in_threadpool(rows),
            done="",
            error=str(error),
        )
    return RedirectResponse(f"/ui/review?done={quote(submission_id, safe='')}", status_code=303)
