"""POST /v1/submissions (one or a batch, idempotent on id) and GET /v1/submissions/{id}."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, HTTPException, Request, Response
from pydantic import ValidationError
from sqlalchemy.exc import IntegrityError

from evalq.core.errors import MAX_PROBLEMS, InvalidInput
from evalq.core.review_decisions import ReviewDecided, checked_reason
from evalq.core.schemas import Submission, parse_submission, problems_of
from evalq.core.settings import Settings
from evalq.producer.api.auth import require
from evalq.producer.api.body import is_json, parse_json
from evalq.producer.api.deps import ClientDep, JsonBody, SessionDep, SettingsDep, known
from evalq.producer.api.errors import ERROR_RESPONSES
from evalq.producer.api.models import (
    Accepted,
    BatchAccepted,
    Message,
)
from evalq.read import served
from evalq.read.submission import SubmissionResult
from evalq.service.client import Client
from evalq.store import queries
from evalq.store.db import session_scope
from evalq.store.keys import ApiKey

router = APIRouter(prefix="/v1/submissions", tags=["submissions"])

SUBMIT_BODY = {
    "required": True,
    "content": {
        "application/json": {
            "schema": {
                "oneOf": [
                    {"$ref": "#/components/schemas/Submission"},
                    {"$ref": "#/components/schemas/SubmissionBatch"},
                ]
            }
        }
    },
}


def parse_request(data: Any, max_batch: int) -> tuple[list[Submission], bool]:
    """The submissions a body holds and whether it was a batch; `InvalidInput` otherwise.

    A batch is an object with a ``submissions`` key (a submission has no such field).
    """
    if isinstance(data, dict) and "submissions" in data:
        return parse_batch(data, max_batch), True
    return [parse_submission(data)], False


def parse_batch(data: dict[str, Any], max_batch: int) -> list[Submission]:
    """The items of ``{"submissions": [...]}``, all valid, or `InvalidInput` naming the bad ones.

    The size is checked before any item is validated, and items are validated one at a time, so
    the problems held at once are one item's plus the first `MAX_PROBLEMS`; past those they are
    only counted. (Validating 1.7 million empty objects as one list built 8.7 million pydantic
    errors: 14 s and 3.5 GB before a single problem was listed.)
    """
    items = data["submissions"]
    unknown = [(str(key), "Extra inputs are not permitted") for key in data if key != "submissions"]
    if not isinstance(items, list):
        raise InvalidInput([("submissions", "Input should be a valid list"), *unknown])
    if not items:
        raise InvalidInput([("submissions", "must hold at least 1 item"), *unknown])
    if len(items) > max_batch:
        rule = f"at most {max_batch} submissions per request (EVALQ_API_MAX_BATCH)"
        raise InvalidInput([("submissions", rule), *unknown])
    problems, total = unknown[:MAX_PROBLEMS], len(unknown)
    parsed: list[Submission] = []
    for index, item in enumerate(items):
        try:
            parsed.append(Submission.model_validate(item))
        except ValidationError as error:
            total += error.error_count()
            if len(problems) < MAX_PROBLEMS:
                problems += problems_of(error, prefix=f"submissions.{index}.")
    if total:
        raise InvalidInput(problems, total=total)
    return parsed


@router.post(
    "",
    status_code=201,
    summary="Submit one run, or a batch",
    response_model=Accepted | BatchAccepted,
    dependencies=[Depends(require("write"))],
    openapi_extra={"requestBody": SUBMIT_BODY},
    responses={
        200: {"model": Accepted | BatchAccepted, "description": "Nothing new: all were known."},
        409: {"model": Message, "description": "A known id with different content."},
        413: {"model": Message, "description": "Body larger than EVALQ_API_MAX_BODY_BYTES."},
        415: {"model": Message, "description": "Content-Type is not application/json."},
        **ERROR_RESPONSES,
    },
)
def submit(
    response: Response,
    data: JsonBody,
    client: ClientDep,
    settings: SettingsDep,
) -> Accepted | BatchAccepted:
    """Validate, store and enqueue; idempotent on each submission's ``id``.

    The body is one `Submission`, or ``{"submissions": [...]}``. Every item is validated before
    anything is stored: one bad item (422), an unknown task (422 on ``task_id``) or an id sent
    before with different content (409) rejects the whole request and nothing is stored or
    enqueued. 201 when at least one submission is new, 200 when all were known.
    """
    submissions, batch = parse_request(data, settings.api_max_batch)
    accepted = submit_all(submissions, client, settings, response)
    return BatchAccepted(submissions=accepted) if batch else accepted[0]


def submit_all(
    submissions: list[Submission], client: Client, settings: Settings, response: Response
) -> list[Accepted]:
    """Store and enqueue valid submissions (`Client.submit_many`); 201 if one is new, else 200.

    Shared with ``POST /v1/traces``, so both doors answer the same way.
    """
    try:
        results = client.submit_many(submissions)
    except IntegrityError:  # a concurrent request stored the same id first: now it is known
        results = client.submit_many(submissions)
    # A new one is queued, or already evaluated when it had nothing to fan out.
    with session_scope(settings.database_url) as session:
        statuses = queries.status_counts(session, ids=[r.id for r in results])
    accepted = [
        Accepted(
            id=r.id,
            created=r.created,
            status=statuses.get(r.id, "queued"),
            url=f"/v1/submissions/{r.id}",
        )
        for r in results
    ]
    response.status_code = 201 if any(a.created for a in accepted) else 200
    return accepted


DECISION_BODY = {
    "requestBody": {
        "required": True,
        "content": {
            "application/json": {"schema": {"$ref": "#/components/schemas/DecisionRequest"}}
        },
    }
}
DECISION_RESPONSES: dict[int | str, dict[str, Any]] = {
    404: {"model": Message, "description": "No such submission."},
    413: {"model": Message, "description": "Body larger than EVALQ_API_MAX_BODY_BYTES."},
    415: {"model": Message, "description": "Content-Type is not application/json."},
    **ERROR_RESPONSES,
}


async def decision_reason(request: Request) -> str:
    """The ``reason`` of a decision's body ``{"reason": "..."}``; a post without a body has
    none, and is refused on ``reason`` as an empty one is."""
    raw = await request.body()
    if not raw:
        return checked_reason(None)
    if not is_json(request.headers.get("content-type")):
        raise HTTPException(415, "Content-Type must be application/json")
    data = parse_json(raw)
    if not isinstance(data, dict) or not set(data) <= {"reason"}:
        raise InvalidInput([("(root)", 'must be an object {"reason": "..."} and nothing else')])
    return checked_reason(data.get("reason"))


ReasonDep = Annotated[str, Depends(decision_reason)]


@router.post(
    "/{submission_id:path}/review/accept",
    summary="Accept a submission held for review, saying why",
    openapi_extra=DECISION_BODY,
    responses=DECISION_RESPONSES,
)
def accept_review(
    submission_id: str,
    client: ClientDep,
    key: Annotated[ApiKey, Depends(require("write"))],
    reason: ReasonDep,
) -> ReviewDecided:
    """Accept a run the merge flagged as an outlier: its task's baseline counts it again, and
    the runs of the task are scored against the moved baseline (their places may change).

    The decision is recorded with the API key's name, the time and the ``reason`` (required),
    and shown with the run (``review_decisions``). The baseline is refreshed at once and its
    version returned; accepting an accepted run again changes nothing (``changed`` false). A
    run that is not flagged is a 422 on ``review``; ``POST .../review/unaccept`` undoes it.
    """
    sid = known("submission", submission_id)
    return client.accept_review(sid, reason=reason, by=key.name)


@router.post(
    "/{submission_id:path}/review/unaccept",
    summary="Undo an accept: hold the submission for review again, saying why",
    openapi_extra=DECISION_BODY,
    responses=DECISION_RESPONSES,
)
def unaccept_review(
    submission_id: str,
    client: ClientDep,
    key: Annotated[ApiKey, Depends(require("write"))],
    reason: ReasonDep,
) -> ReviewDecided:
    """Undo an accept: the run is held again, out of its task's baseline, which is refreshed
    as an accept refreshes it. Recorded as the accept is (key's name, time, ``reason``).
    Un-accepting a held run changes nothing; a run never flagged is a 422 on ``review``.
    """
    sid = known("submission", submission_id)
    return client.unaccept_review(sid, reason=reason, by=key.name)


@router.get(
    "/{submission_id:path}",
    summary="Status and scores of one submission",
    dependencies=[Depends(require("read"))],
    responses={404: {"model": Message, "description": "No such submission."}, **ERROR_RESPONSES},
    response_model_exclude_unset=True,  # the keys submission_result leaves out stay out
)
def get_submission(
    submission_id: str, session: SessionDep, settings: SettingsDep
) -> SubmissionResult:
    """Status, scores, tier outcomes (errors without tracebacks) and the baseline version.

    ``scores`` and the fields after it appear once the submission is evaluated (status
    ``done``, ``degraded`` or ``failed``; a failed one, whose input killed a tier's worker on
    every delivery, keeps the scores of the tiers that ran and says why in ``error``). Its Arena
    scores are against the task's current baseline, as on the leaderboard; ``merged`` keeps
    those the merge stored.
    """
    return served.run_result(
        session, submission_id=known("submission", submission_id), settings=settings
    )
