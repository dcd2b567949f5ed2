"""OTLP trace data -> evalq submissions, one per trace (docs/traces.md has the mapping).

Pure: no store, no broker, no HTTP. Every value that cannot be mapped is an `InvalidInput`
naming the span (id and name) and the attribute, including the wire models' own rules: a
problem on a submission field is renamed after the span attribute the value came from.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from evalq.core.errors import InvalidInput
from evalq.core.schemas import Submission, parse_submission
from evalq.core.sessions import MAX_SESSION_ID_CHARS
from evalq.core.storable import printable
from evalq.traces import names
from evalq.traces.otlp import spans_of
from evalq.traces.output import output_of
from evalq.traces.steps import trace_of
from evalq.traces.tree import SpanTree, trees_of
from evalq.traces.usage import Provenance, usage_of

ID_PREFIX = "otlp-"
"""A trace without ``evalq.submission_id`` becomes submission ``otlp-<trace id>``."""


@dataclass(frozen=True)
class TraceDefaults:
    """Submission fields for traces that do not carry them (the mapping given with a request).

    A trace's own ``evalq.*`` attributes win over these.
    """

    task_id: str | None = None
    tool: str | None = None
    model: str | None = None
    variant: str | None = None


@dataclass(frozen=True)
class ImportedTrace:
    """One trace as a submission, and where each field came from (for error messages)."""

    trace_id: str
    submission: Submission
    sources: dict[str, str]

    def source(self, field: str) -> str:
        """Where ``field`` (dotted) came from: a span attribute, the request, or the trace."""
        return _renamed(field, self.sources, self.trace_id)


def submissions_from_otlp(
    request: ExportTraceServiceRequest, defaults: TraceDefaults | None = None
) -> list[ImportedTrace]:
    """One validated submission per trace in ``request``, in the order the traces appear.

    Raises:
        InvalidInput: a span, an attribute or a trace cannot be mapped; nothing is returned.
    """
    defaults = defaults or TraceDefaults()
    return [imported(tree, defaults) for tree in trees_of(spans_of(request))]


def unknown_task_problems(
    traces: list[ImportedTrace], unknown: dict[str, str]
) -> list[tuple[str, str]]:
    """For each trace whose task is in ``unknown`` (id -> rule), where its id came from."""
    return [
        (t.source("task_id"), unknown[t.submission.task_id])
        for t in traces
        if t.submission.task_id in unknown
    ]


def imported(tree: SpanTree, defaults: TraceDefaults) -> ImportedTrace:
    """One trace's submission, validated by the wire model."""
    where: Provenance = {}
    data: dict[str, Any] = identity(tree, defaults, where)
    data["usage"] = usage_of(tree, where)
    data["trace"] = trace_of(tree, where)
    data["output"] = output_of(tree, where)
    data["evidence"] = evidence_of(tree)
    data["metadata"] = identity_metadata(tree)
    try:
        submission = parse_submission(data)
    except InvalidInput as error:
        problems = [(_renamed(field, where, tree.trace_id), rule) for field, rule in error.problems]
        raise InvalidInput(problems, total=error.total) from None
    return ImportedTrace(tree.trace_id, submission, where)


def identity(tree: SpanTree, defaults: TraceDefaults, where: Provenance) -> dict[str, Any]:
    """id, task_id, tool, model, variant and run_index: attributes first, then ``defaults``."""
    data: dict[str, Any] = {}
    submission_id = tree.first(names.EVALQ_SUBMISSION_ID)
    if submission_id is None:
        data["id"] = f"{ID_PREFIX}{tree.trace_id}"
    else:
        data["id"], where["id"] = submission_id
    for field, key, default in (
        ("task_id", names.EVALQ_TASK_ID, defaults.task_id),
        ("tool", names.EVALQ_TOOL, defaults.tool),
        ("model", names.EVALQ_MODEL, defaults.model),
        ("variant", names.EVALQ_VARIANT, defaults.variant),
        ("run_index", names.EVALQ_RUN_INDEX, None),
    ):
        found = tree.first(key)
        if found is not None:
            data[field], where[field] = found
        elif default is not None:
            data[field], where[field] = default, f"(request).{field}"
    if "model" not in data:
        _model_from_llm_spans(tree, data, where)
    for field, key in (("task_id", names.EVALQ_TASK_ID), ("tool", names.EVALQ_TOOL)):
        if field not in data:
            rule = (
                f"missing: set the span or resource attribute {key}, "
                f"or give {field} with the request"
            )
            raise InvalidInput([(f"{tree.root.label}.{key}", rule)])
    return data


def _model_from_llm_spans(tree: SpanTree, data: dict[str, Any], where: Provenance) -> None:
    """The first LLM span's requested model (else its response model, else OpenInference's)."""
    for span in tree.of_kind("llm"):
        for key in (names.GEN_AI_REQUEST_MODEL, names.GEN_AI_RESPONSE_MODEL, names.OI_MODEL_NAME):
            if key in span.attributes:
                data["model"], where["model"] = span.attributes[key], f"{span.label}.{key}"
                return
    rule = (
        f"missing: set {names.EVALQ_MODEL}, give model with the request, or let an LLM span "
        f"carry {names.GEN_AI_REQUEST_MODEL} / {names.OI_MODEL_NAME}"
    )
    raise InvalidInput([(f"{tree.root.label}.{names.EVALQ_MODEL}", rule)])


def identity_metadata(tree: SpanTree) -> dict[str, Any]:
    """The run's identity in the submission's metadata: its trace id, root span id,
    ``service.name`` and the conversation it is a turn of (``gen_ai.conversation.id``, else
    ``session.id``: docs/sessions.md)."""
    metadata: dict[str, Any] = {"trace_id": tree.trace_id, "span_id": tree.root.span_id}
    service = tree.root.resource.get(names.SERVICE_NAME)
    if isinstance(service, str) and service:
        metadata["service.name"] = service[:200]
    for key in names.SESSION_KEYS:
        found = tree.first(key)
        if found is not None and isinstance(found[0], str) and found[0].strip():
            metadata[key] = printable(found[0].strip()[:MAX_SESSION_ID_CHARS])
            break
    return metadata


def evidence_of(tree: SpanTree) -> dict[str, Any]:
    """Success is the root span's status; each span with an ERROR status is one error."""
    errors = [
        f"{span.name}: {span.status_message}" if span.status_message else span.name
        for span in tree.spans
        if span.failed
    ]
    return {"success": not tree.root.failed, "errors": errors}


def _renamed(field: str, where: Provenance, trace_id: str) -> str:
    """A submission field named by its source: the longest recorded prefix, else the trace."""
    parts = field.split(".")
    for end in range(len(parts), 0, -1):
        prefix = ".".join(parts[:end])
        if prefix in where:
            rest = ".".join(parts[end:])
            source = where[prefix]
            return f"{source} ({rest})" if rest else source
    return f"trace {trace_id}.{field}"
