"""Path and query values the store cannot hold, refused before anything reads them.

Request bodies reach the store through the wire models, whose strings follow
`evalq.core.storable.string_rule`; a path or query value followed no rule, so a NUL in
``?labeller=`` or in ``/ui/runs/{id}`` reached PostgreSQL (which cannot hold it) and answered
500, while SQLite answered 404 or 200. `StorableParams` applies the same rule to every path and
query value of every route, the API's and the UI's, before routing: the live-poll fast path
(`evalq.ui.polls`) reads the store before any route runs.

A request that will not get past its key check goes on unchecked: its 401 or 403 (a page's
sign-in) comes first, as for any other bad input, and those checks read no path or query value.
"""

from __future__ import annotations

from starlette.concurrency import run_in_threadpool
from starlette.datastructures import QueryParams
from starlette.requests import Request
from starlette.types import ASGIApp, Receive, Scope, Send

from evalq.core.storable import printable, string_rule
from evalq.producer.api.errors import problems
from evalq.producer.api.routing import matching
from evalq.store.db import session_scope
from evalq.store.keys import authenticate
from evalq.ui.security import SecurityHeaders, is_ui
from evalq.ui.web import checked_viewer


class StorableParams:
    """ASGI middleware: 422 naming each path or query parameter whose value the store cannot
    hold (a NUL, a lone surrogate), with the rule it breaks."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        found = refused(scope) if scope["type"] == "http" else []
        if not found or not await run_in_threadpool(admitted, Request(scope)):
            # the key's 401 / 403 (a page's sign-in) come first; they read no path value
            await self.app(scope, receive, send)
            return
        # the UI's headers too: a UI page's refusal is a UI response like any other
        await SecurityHeaders(problems(found))(scope, receive, send)


def admitted(request: Request) -> bool:
    """Whether the request gets past the key check it will meet: a UI page's signed-in session
    with the read scope, or an API key with the scope of the method (``read`` for GET and
    HEAD, ``write`` for the rest: docs/api.md, "Authentication")."""
    if is_ui(request.url.path):
        viewer = checked_viewer(request)
        return viewer is not None and viewer.can("read")
    scheme, _, secret = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not secret:
        return False
    with session_scope(request.app.state.settings.database_url) as session:
        key = authenticate(session, key=secret.strip())
    needed = "read" if request.method in ("GET", "HEAD") else "write"
    return key is not None and needed in key.scopes


def refused(scope: Scope) -> list[tuple[str, str]]:
    """``(parameter, rule)`` for each path or query value of ``scope`` the store cannot hold.

    A path value is named by the route parameter that holds it (``(path)`` when no route
    serves the path); a query value by its name.
    """
    found: list[tuple[str, str]] = []
    path_rule = string_rule(scope["path"])
    if path_rule is not None:
        found.extend((name, path_rule) for name in _path_parameters(scope))
    for name, value in QueryParams(scope["query_string"]).multi_items():
        rule = string_rule(value)
        if rule is not None:
            found.append((printable(name), rule))
    return found


def _path_parameters(scope: Scope) -> list[str]:
    """The names of the parameters holding a value the store cannot hold, in the first route
    whose path template matches the path (``(path)`` when none does)."""
    for route in matching(getattr(scope.get("app"), "routes", ()), scope["path"]):
        matched = route.path_regex.fullmatch(scope["path"])
        values = matched.groupdict() if matched else {}
        names = [name for name, value in values.items() if string_rule(value)]
        if names:
            return names
    return ["(path)"]
