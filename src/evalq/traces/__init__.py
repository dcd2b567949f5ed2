"""OpenTelemetry traces in: OTLP trace data (protobuf or JSON) -> evalq submissions.

Pure (it imports only `evalq.core`): the HTTP API's ``POST /v1/traces``, `evalq import otlp`
and `Client.import_otlp` decode with `parse_protobuf` / `parse_json` / `parse_export` and
convert with `submissions_from_otlp`, then submit as any other submission. docs/traces.md.
"""

from evalq.traces.convert import (
    ImportedTrace,
    TraceDefaults,
    submissions_from_otlp,
    unknown_task_problems,
)
from evalq.traces.otlp import count_traces, parse_export, parse_json, parse_protobuf

__all__ = [
    "ImportedTrace",
    "TraceDefaults",
    "count_traces",
    "parse_export",
    "parse_json",
    "parse_protobuf",
    "submissions_from_otlp",
    "unknown_task_problems",
]
