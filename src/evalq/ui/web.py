"""What every page shares: the templates, the signed-in viewer, rendering, and live ETags."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any
from urllib.parse import quote, urlencode

from fastapi import Depends, Request
from fastapi.responses import HTMLResponse, Response
from jinja2 import Environment, PackageLoader, select_autoescape
from sqlalchemy.orm import Session

from evalq import __version__
from evalq.core.settings import Settings
from evalq.store.db import session_scope
from evalq.ui.session import COOKIE, Viewer, viewer_of

LOGIN = "/ui/login"


def _number(value: Any, digits: int = 3) -> str:
    """A figure for a table cell: ``-`` for None, fixed digits for a float."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def _url(path: str, **query: Any) -> str:
    """``path`` with the query parameters that are set (empty ones left out)."""
    kept = {k: v for k, v in query.items() if v not in (None, "", False)}
    return path + ("?" + urlencode(kept, doseq=True) if kept else "")


templates = Environment(
    loader=PackageLoader("evalq.ui", "templates"),
    autoescape=select_autoescape(default=True, default_for_string=True),
    trim_blocks=True,
    lstrip_blocks=True,
)
templates.filters["num"] = _number
templates.filters["q"] = lambda value: quote(str(value), safe="")
templates.globals["url"] = _url
templates.globals["version"] = __version__


class SignInNeeded(Exception):
    """No valid session: a page redirects to the sign-in form, a live poll gets 401."""

    def __init__(self, next_url: str) -> None:
        super().__init__(next_url)
        self.next_url = next_url


class ScopeMissing(Exception):
    """The key lacks the scope the page needs (403)."""

    def __init__(self, scope: str) -> None:
        super().__init__(scope)
        self.scope = scope


def settings_of(request: Request) -> Settings:
    """The app's Settings."""
    settings: Settings = request.app.state.settings
    return settings


def _viewer(request: Request) -> Viewer:
    """The signed-in viewer, holding the read scope."""
    with session_scope(settings_of(request).database_url) as session:
        viewer = viewer_of(session, request.cookies.get(COOKIE))
    if viewer is None:
        target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
        raise SignInNeeded(target)
    if not viewer.can("read"):
        raise ScopeMissing("read")
    return viewer


ViewerDep = Annotated[Viewer, Depends(_viewer)]


def render(
    request: Request,
    template: str,
    viewer: Viewer | None,
    *,
    status: int = 200,
    etag: str | None = None,
    **context: Any,
) -> HTMLResponse:
    """The page ``template`` with ``context``; ``etag`` makes it a live page."""
    etag = etag or getattr(request.state, "etag", None)
    body = templates.get_template(template).render(
        request=request, viewer=viewer, path=request.url.path, etag=etag, **context
    )
    headers = {"Cache-Control": "no-cache, private"}
    if etag is not None:
        headers["ETag"] = etag
    return HTMLResponse(body, status_code=status, headers=headers)


def live(
    request: Request,
    viewer: Viewer,
    version: Callable[[Session], str],
    page: Callable[[Session], HTMLResponse],
) -> Response:
    """A live page: 304 when ``version`` still matches the poll's ``If-None-Match``, else the
    page rendered (its ETag the version, per viewer: the page shows what their scopes allow)."""
    with session_scope(settings_of(request).database_url) as session:
        etag = f'W/"{version(session)}-{len(viewer.scopes)}"'
        if request.headers.get("if-none-match") == etag:
            return Response(status_code=304, headers={"ETag": etag})
        request.state.etag = etag
        response = page(session)
    response.headers["ETag"] = etag
    return response
