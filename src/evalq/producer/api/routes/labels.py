"""Human labels of runs: add (write scope) and list (read scope)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query

from evalq.core.errors import InvalidInput
from evalq.core.labels import LabelList, LabelQueue
from evalq.producer.api.auth import require
from evalq.producer.api.deps import ClientDep, JsonBody, known
from evalq.producer.api.errors import ERROR_RESPONSES
from evalq.producer.api.models import Message

router = APIRouter(prefix="/v1/labels", tags=["labels"])
READ = [Depends(require("read"))]
WRITE = [Depends(require("write"))]
NOT_FOUND = {404: {"model": Message, "description": "No such task or run."}, **ERROR_RESPONSES}
BODY_RULE = 'must be an object {"labels": [...]} and nothing else'


@router.post(
    "",
    status_code=201,
    dependencies=WRITE,
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {
                "application/json": {"schema": {"$ref": "#/components/schemas/LabelBatch"}}
            },
        }
    },
    responses={
        **ERROR_RESPONSES,
        413: {"model": Message, "description": "Body larger than EVALQ_API_MAX_BODY_BYTES."},
        415: {"model": Message, "description": "Content-Type is not application/json."},
    },
)
def add_labels(data: JsonBody, client: ClientDep) -> LabelList:
    """Store people's labels of runs: every label, or none when one is invalid.

    Each label gives 1-5 scores per judge rubric and/or the task's decision (``recommendation``,
    ``passed``), with the labeller's id and an optional note. The same labeller labelling the
    same run again replaces their label. Problems are named ``[INDEX].field``, as the Python
    client names them; a run that is not stored is a 422 on ``[INDEX].submission_id``.
    """
    well_formed = isinstance(data, dict) and set(data) == {"labels"}
    if not well_formed or not isinstance(data["labels"], list):
        raise InvalidInput([("(root)", BODY_RULE)])
    return LabelList(labels=client.add_labels(data["labels"]))


@router.get("/queue", dependencies=READ, responses=NOT_FOUND)
def label_queue(
    client: ClientDep,
    task_id: Annotated[str, Query(max_length=128)],
    unlabelled_only: bool = True,
) -> LabelQueue:
    """Runs the judge cascade asks people to label: those it left 'judge uncertain' first, then
    those drawn for the audit share (docs/judge.md); by default only those nobody labelled."""
    return client.label_queue(known("task", task_id), unlabelled_only=unlabelled_only)


@router.get("", dependencies=READ, responses=NOT_FOUND)
def list_labels(
    client: ClientDep,
    task_id: Annotated[str | None, Query(max_length=128)] = None,
    submission_id: Annotated[str | None, Query(max_length=128)] = None,
    labeller: Annotated[str | None, Query(max_length=100)] = None,
) -> LabelList:
    """Stored labels by task, run and labeller; each parameter given narrows the list."""
    found = client.labels(
        task_id=None if task_id is None else known("task", task_id),
        submission_id=None if submission_id is None else known("submission", submission_id),
        labeller=labeller,
    )
    return LabelList(labels=found)
