"""The app's routes as it serves them: every route of every included router, in order.

FastAPI keeps a router it includes whole, as one route holding the router, so the app's
``routes`` list does not show its paths; the 405 answer (`errors`) and the path-value check
(`params`) both need them.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from starlette.routing import BaseRoute, Mount, Route


def served(routes: Iterable[BaseRoute]) -> Iterator[Route | Mount]:
    """The routes and mounts of ``routes``, those of included routers in their place."""
    for route in routes:
        included = getattr(route, "original_router", None)
        if included is not None:
            yield from served(included.routes)
        elif isinstance(route, Route | Mount):
            yield route


def matching(routes: Iterable[BaseRoute], path: str) -> list[Route | Mount]:
    """The routes whose path template matches ``path``, any method."""
    return [route for route in served(routes) if route.path_regex.fullmatch(path)]
