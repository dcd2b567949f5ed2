"""Bodies the HTTP API sends and accepts, besides the wire models of `evalq.core.schemas`.

The read routes' bodies are the read side's replies (`evalq.read`), served as they are.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field
from pydantic.json_schema import SkipJsonSchema

from evalq.core.errors import MAX_PROBLEMS
from evalq.core.schemas import Strict, Submission
from evalq.core.status import Status


class SubmissionBatch(Strict):
    """Several submissions in one request: all are stored, or none is."""

    submissions: list[Submission] = Field(min_length=1, description="At most EVALQ_API_MAX_BATCH.")


def _absent_by_default(schema: dict[str, Any]) -> None:
    """A key the API leaves out rather than sending null: no ``default`` in the schema."""
    schema.pop("default", None)


class Problem(BaseModel):
    """One reason a request was rejected."""

    field: str = Field(description="Dotted path of the offending value, e.g. usage.total_tokens.")
    rule: str = Field(description="The rule it broke.")


class Problems(BaseModel):
    """Body of every 422: each bad field with its rule, the first 50 of them."""

    detail: list[Problem] = Field(
        min_length=1, max_length=MAX_PROBLEMS, description="The first problems found."
    )
    more: Annotated[int, Field(ge=1)] | SkipJsonSchema[None] = Field(
        default=None,
        description="How many more problems were found but not listed; absent when none were.",
        json_schema_extra=_absent_by_default,
    )


class Message(BaseModel):
    """Body of the other errors (401, 403, 404, 409, 413, 415, 503)."""

    detail: str


class Accepted(BaseModel):
    """One submission the API accepted (new) or already had (same id, same content)."""

    id: str
    created: bool = Field(description="False when the same submission was sent before.")
    status: Status
    url: str = Field(description="Where to read its result.")


class BatchAccepted(BaseModel):
    """The answer to a batch, in the order of the request."""

    submissions: list[Accepted]


class TaskStored(BaseModel):
    """The answer to PUT /v1/tasks/{id}."""

    task: dict[str, Any] = Field(description="The stored definition, defaults filled in.")
    created: bool = Field(description="True when the task did not exist before.")
    changed: bool = Field(description="False when the same definition was already stored.")


class Check(BaseModel):
    """One dependency's health."""

    ok: bool
    detail: str


class Health(BaseModel):
    """Body of GET /healthz."""

    status: Literal["ok", "unavailable"]
    database: Check
    broker: Check
