"""POST /v1/imports/{format}: another tool's results file in, as `evalq import FORMAT` takes it.

The body is the file's bytes, read as it streams and refused past 64 MiB (and past
EVALQ_API_MAX_BODY_BYTES, as every body); a dry run unless ``apply=true``. docs/importers.md.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, HTTPException, Query, Request
from fastapi.concurrency import run_in_threadpool

from evalq.producer.api.auth import require
from evalq.producer.api.body import media_type
from evalq.producer.api.deps import ClientDep
from evalq.producer.api.errors import ERROR_RESPONSES
from evalq.producer.api.models import Message
from evalq.producer.importers.answer import ImportAnswer
from evalq.producer.importers.apply import import_file
from evalq.producer.importers.formats import MAPPED
from evalq.producer.importers.source import MAX_IMPORT_BYTES

router = APIRouter(prefix="/v1/imports", tags=["imports"])

IMPORT_BODY = {
    "required": True,
    "description": "The file, as the tool wrote it: a promptfoo results file, an Inspect AI "
    "log (.eval or .json), an OpenAI Evals export (JSON or JSON Lines), or JSON Lines / CSV "
    "mapped by the *_col parameters.",
    "content": {"application/octet-stream": {"schema": {"type": "string", "format": "binary"}}},
}
MEDIA_TYPES = (
    "",
    "application/octet-stream",
    "application/json",
    "application/jsonl",
    "application/x-ndjson",
    "application/zip",
    "text/csv",
    "text/plain",
)
"""The Content-Types an import file may come as (none at all is one: the file is sniffed)."""
Column = Annotated[str | None, Query(description="jsonl and csv: see `evalq import jsonl`.")]


@router.post(
    "/{format}",
    summary="Import another tool's results: a dry run unless apply=true",
    response_model=ImportAnswer,
    dependencies=[Depends(require("write"))],
    openapi_extra={"requestBody": IMPORT_BODY},
    responses={
        413: {"model": Message, "description": "Body larger than 64 MiB or the API's limit."},
        415: {"model": Message, "description": "A Content-Type no import file comes as."},
        **ERROR_RESPONSES,
    },
)
async def import_results(
    format: str,
    request: Request,
    client: ClientDep,
    apply: Annotated[bool, Query(description="Store and enqueue what is new.")] = False,
    output_col: Column = None,
    task_col: Column = None,
    task_id: Column = None,
    score_col: Column = None,
    id_col: Column = None,
    model_col: Column = None,
    model: Column = None,
    tool_col: Column = None,
    tool: Column = None,
    input_tokens_col: Column = None,
    output_tokens_col: Column = None,
    total_tokens_col: Column = None,
    where: Column = None,
) -> ImportAnswer:
    """Map the file (format: promptfoo, inspect, openai-evals, jsonl, csv), check it against
    the store, and with ``apply=true`` create the new tasks and store and enqueue the new runs.

    Every record is mapped before anything is stored: a record that cannot be (422, each
    problem named by its line or JSON path) stores nothing. Runs stored before are left
    alone, so importing a file twice creates nothing new. The answer is the CLI's.
    """
    named = {
        "output_col": output_col,
        "task_col": task_col,
        "task_id": task_id,
        "score_col": score_col,
        "id_col": id_col,
        "model_col": model_col,
        "model": model,
        "tool_col": tool_col,
        "tool": tool,
        "input_tokens_col": input_tokens_col,
        "output_tokens_col": output_tokens_col,
        "total_tokens_col": total_tokens_col,
        "where": where,
    }
    columns = {name: value for name, value in named.items() if value is not None}
    if media_type(request.headers.get("content-type")) not in MEDIA_TYPES:
        raise HTTPException(
            415, f"Content-Type must be none or one of {', '.join(MEDIA_TYPES[1:])}"
        )
    raw = await _bounded_body(request, MAX_IMPORT_BYTES)
    answer, _ = await run_in_threadpool(
        import_file,
        client,
        format,
        raw,
        columns=columns if columns or format in MAPPED else None,
        apply=apply,
    )
    return answer


async def _bounded_body(request: Request, limit: int) -> bytes:
    """The body, read chunk by chunk and refused (413) once past ``limit`` bytes."""
    chunks = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise HTTPException(413, f"import file larger than {limit} bytes: split it")
        chunks.append(chunk)
    return b"".join(chunks)
