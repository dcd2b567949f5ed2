"""Errors as HTTP answers: 422 names each field and rule, the rest carry one message."""

from __future__ import annotations

import logging
import re
from itertools import islice

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from kombu.exceptions import OperationalError as BrokerError
from redis.exceptions import ConnectionError as RedisConnectionError
from sqlalchemy.exc import OperationalError as DatabaseError

from evalq.core.errors import (
    MAX_PROBLEMS,
    Conflict,
    InvalidInput,
    NotConfigured,
    NotFound,
    UpstreamFailure,
)
from evalq.core.redact import redact
from evalq.producer.api.body import BodyTooLarge
from evalq.producer.api.models import Message, Problems
from evalq.producer.api.routing import matching

log = logging.getLogger(__name__)

PROBLEMS = {
    "model": Problems,
    "description": "Invalid input: each bad field and its rule (the first 50, and how many more).",
}
ERROR_RESPONSES: dict[int | str, dict[str, object]] = {
    401: {"model": Message, "description": "Missing, unknown or revoked API key."},
    403: {"model": Message, "description": "The key lacks the scope this route needs."},
    422: PROBLEMS,
}


def problems(items: list[tuple[str, str]], status: int = 422, *, total: int = 0) -> JSONResponse:
    """A 422 body: ``{"detail": [{"field": ..., "rule": ...}], "more": N}``.

    At most `MAX_PROBLEMS` are listed; ``more`` (present only when positive) counts the rest of
    ``total``, so a hostile body gets a small answer that still says how bad it was.
    """
    listed = items[:MAX_PROBLEMS]
    body: dict[str, object] = {"detail": [{"field": field, "rule": rule} for field, rule in listed]}
    more = max(total, len(items)) - len(listed)
    if more > 0:
        body["more"] = more
    return JSONResponse(body, status)


def message(text: str, status: int) -> JSONResponse:
    """Any other error body: ``{"detail": "..."}``, configured secrets removed (an upstream
    failure's message may name a URL with its credentials)."""
    return JSONResponse({"detail": redact(text)}, status)


def _request_validation(_: Request, error: Exception) -> JSONResponse:
    assert isinstance(error, RequestValidationError)
    items = []
    found = error.errors()
    for item in islice(found, MAX_PROBLEMS):
        loc = [str(part) for part in item.get("loc", ())]
        if loc and loc[0] in ("query", "path", "header", "body"):
            loc = loc[1:]
        items.append((".".join(loc) or "(request)", str(item.get("msg", "invalid"))))
    return problems(items, total=len(found))


def _invalid(_: Request, error: Exception) -> JSONResponse:
    assert isinstance(error, InvalidInput)
    return problems(error.problems, total=error.total)


def _unavailable(_: Request, error: Exception) -> JSONResponse:
    log.warning("dependency unavailable: %s", error)
    what = "database" if isinstance(error, DatabaseError) else "broker"
    return message(f"the {what} is unavailable; retry later", 503)


METHODS = ("DELETE", "GET", "HEAD", "PATCH", "POST", "PUT")


def _method_not_allowed(request: Request, _: Exception) -> JSONResponse:
    """A 405 whose ``Allow`` names every method the routes of the path serve (Starlette's
    names only those of the first route that matched the path, or none).

    The routes of the path are those whose template spells most of it out: a path that
    ``/v1/submissions/{submission_id}/review/accept`` matches belongs to that route, not to
    ``/v1/submissions/{submission_id:path}``, which matches it only as a run whose id ends in
    ``/review/accept`` (the OpenAPI document gives the path that route's methods alone).
    """
    routes = matching(request.app.router.routes, request.url.path)
    most = max((_literal_length(route.path) for route in routes), default=0)
    allowed = [
        method
        for method in METHODS
        if any(
            method in (getattr(route, "methods", None) or ())
            for route in routes
            if _literal_length(route.path) == most
        )
    ]
    answer = message("Method Not Allowed", 405)
    answer.headers["Allow"] = ", ".join(allowed)
    return answer


def _literal_length(template: str) -> int:
    """How many characters of a path template are spelled out (its parameters left out)."""
    return len(re.sub(r"\{[^}]*\}", "", template))


def install(app: FastAPI) -> None:
    """Register the handlers that turn evalq's errors into HTTP answers."""
    app.add_exception_handler(RequestValidationError, _request_validation)
    app.add_exception_handler(405, _method_not_allowed)
    app.add_exception_handler(InvalidInput, _invalid)
    app.add_exception_handler(NotFound, lambda _, e: message(str(e), 404))
    app.add_exception_handler(Conflict, lambda _, e: message(str(e), 409))
    app.add_exception_handler(BodyTooLarge, lambda _, e: message(str(e), 413))
    app.add_exception_handler(UpstreamFailure, lambda _, e: message(str(e), 503))
    app.add_exception_handler(NotConfigured, lambda _, e: message(str(e), 503))
    for unavailable in (DatabaseError, BrokerError, RedisConnectionError):
        app.add_exception_handler(unavailable, _unavailable)
