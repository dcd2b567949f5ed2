"""What every page shares: the templates, the signed-in viewer, rendering, and live ETags."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Annotated, Any, TypeVar
from urllib.parse import quote, urlencode

from fastapi import Depends, Request
from fastapi.responses import HTMLResponse, Response
from jinja2 import Environment, PackageLoader, select_autoescape
from markupsafe import Markup
from sqlalchemy.orm import Session

from evalq import __version__
from evalq.core.settings import Settings
from evalq.read.usage import USAGE_LABELS
from evalq.report.page import validation_block
from evalq.store.db import read_scope, session_scope
from evalq.ui import freshness
from evalq.ui.session import COOKIE, Viewer, viewer_of

LOGIN = "/ui/login"
T = TypeVar("T")


def _number(value: Any, digits: int = 3) -> str:
    """A figure for a table cell: ``-`` for None, fixed digits for a float."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def _when(value: datetime | str | None) -> str:
    """A stored time (or its ISO 8601 text, as the read side serves it) as people read it: to
    the second, in UTC, named so (``-`` for None)."""
    if value is None or value == "":
        return "-"
    moment = datetime.fromisoformat(value) if isinstance(value, str) else value
    aware = moment if moment.tzinfo else moment.replace(tzinfo=UTC)  # the store keeps UTC
    return aware.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


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
templates.filters["when"] = _when
templates.filters["q"] = lambda value: quote(str(value), safe="")
# the judge's validation as the report writes it (escaped there), beside any judge score
templates.filters["validation"] = lambda value: Markup(validation_block(value))
templates.filters["usage"] = lambda source: USAGE_LABELS[source]
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


CHECKED_FOR_S = 10.0
"""How long a checked session is trusted without reading its key again: a revoked key's open
pages stop within this many seconds (its sign-in and every form post are refused at once)."""
_checked: dict[str, tuple[Viewer, float]] = {}
_checked_lock = threading.Lock()


def checked_viewer(request: Request) -> Viewer | None:
    """The cookie's viewer, read from the store at most once per `CHECKED_FOR_S` per cookie
    for the pages' GETs (a live page polls every few seconds)."""
    cookie = request.cookies.get(COOKIE)
    now = time.monotonic()
    if cookie and request.method == "GET":
        with _checked_lock:
            found = _checked.get(cookie)
        if found is not None and found[1] > now:
            return found[0]
    with session_scope(settings_of(request).database_url) as session:
        viewer = viewer_of(session, cookie)
    if viewer is not None and cookie:
        with _checked_lock:
            if len(_checked) > 4096:
                _checked.clear()
            _checked[cookie] = (viewer, now + CHECKED_FOR_S)
    return viewer


def _viewer(request: Request) -> Viewer:
    """The signed-in viewer, holding the read scope."""
    viewer = checked_viewer(request)
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
    headers = {"ETag": etag} if etag is not None else {}  # Cache-Control: `SecurityHeaders`
    return HTMLResponse(body, status_code=status, headers=headers)


def etag_of(session: Session, request: Request, viewer: Viewer) -> str | None:
    """The ETag of the live page ``request`` asks for (per viewer: the page shows what their
    scopes allow); None when it is not a live page."""
    version = freshness.version_of(session, request.url.path)
    return None if version is None else f'W/"{version}-{len(viewer.scopes)}"'


def live(request: Request, viewer: Viewer, page: Callable[[Session], HTMLResponse]) -> Response:
    """A live page: 304 when its version still matches the poll's ``If-None-Match``, else the
    page rendered with its ETag. (Polls usually get their 304 earlier, from `polls.LivePolls`.)"""
    with read_scope(settings_of(request)) as session:  # pages tolerate lag: the replica
        etag = etag_of(session, request, viewer)
        if etag is not None and request.headers.get("if-none-match") == etag:
            return Response(status_code=304, headers={"ETag": etag})
        request.state.etag = etag
        response = page(session)
    if etag is not None:
        response.headers["ETag"] = etag
    return response
