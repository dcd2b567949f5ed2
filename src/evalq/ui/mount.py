"""How `evalq api` serves the UI: its routers, its static files, its headers, its redirects."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlencode

from fastapi import FastAPI, Request
from fastapi.responses import RedirectResponse, Response
from fastapi.staticfiles import StaticFiles

from evalq.ui import actions, compare, events, labels, pages
from evalq.ui.polls import LivePolls
from evalq.ui.security import SecurityHeaders
from evalq.ui.web import LOGIN, ScopeMissing, SignInNeeded, render

STATIC = Path(__file__).with_name("static")


def install(app: FastAPI) -> None:
    """Serve the UI at ``/`` and ``/ui/`` on ``app``."""
    app.include_router(pages.router)
    app.include_router(compare.router)
    app.include_router(actions.router)
    app.include_router(labels.router)
    app.include_router(events.router)
    app.mount("/ui/static", StaticFiles(directory=STATIC), name="ui-static")
    app.add_middleware(LivePolls)
    app.add_middleware(SecurityHeaders)
    app.add_exception_handler(SignInNeeded, _sign_in)  # type: ignore[arg-type]
    app.add_exception_handler(ScopeMissing, _refused)  # type: ignore[arg-type]


def _sign_in(request: Request, needed: SignInNeeded) -> Response:
    """A page redirects to the sign-in form; a live poll (it sends X-Evalq-Live) gets 401."""
    if request.headers.get("x-evalq-live"):
        return Response(status_code=401)
    return RedirectResponse(f"{LOGIN}?{urlencode({'next': needed.next_url})}", status_code=303)


def _refused(request: Request, missing: ScopeMissing) -> Response:
    return render(request, "refused.html", None, status=403, why=f"the {missing.scope} scope")
