"""Results out: each merged evaluation sent as one ``gen_ai.evaluation.result`` event (OTLP).

Best effort, by choice: an event is built in the merge's transaction (`record_evaluations`) and
handed, once that transaction has committed (`announce`), to the OpenTelemetry SDK's
`BatchLogRecordProcessor`, which queues it in memory and exports it from its own thread. The
merge never waits for the endpoint and never fails because of it. What that costs: an event
queued in a process that dies before the processor's next export (default every second) is
lost, and a merge that runs twice (a redelivered message) sends its event twice. The stored
evaluation stays the source of truth; the event is a copy for the tracing backend a team
already watches (docs/traces.md, 'Results out'). An outbox like the webhooks' would make it
at-least-once; it is not needed for a copy.

Off unless EVALQ_OTEL_RESULTS_ENDPOINT is set; it needs the ``otel`` extra (the SDK and its
OTLP/HTTP exporter).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

from evalq import __version__
from evalq.core.settings import Settings
from evalq.scoring.evaluation_event import EVENT_NAME, EvaluationEvent

if TYPE_CHECKING:
    from opentelemetry.context import Context
    from opentelemetry.sdk._logs import LoggerProvider

log = logging.getLogger(__name__)
_lock = threading.Lock()
_providers: dict[tuple[str, str], LoggerProvider] = {}


def emit_results(events: Sequence[EvaluationEvent], settings: Settings) -> int:
    """Queue ``events`` for EVALQ_OTEL_RESULTS_ENDPOINT; how many were queued (none when unset).

    Never raises: a missing SDK or a broken endpoint is logged in one line.
    """
    if not events or settings.otel_results_endpoint is None:
        return 0
    try:
        return emit_to(results_provider(settings), events)
    except Exception as error:  # a copy for a tracing backend is never worth a merge
        log.warning("could not send %d evaluation event(s): %r", len(events), error)
        return 0


def results_provider(settings: Settings) -> LoggerProvider:
    """The process's logger provider exporting to the configured endpoint (made once)."""
    from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
    from opentelemetry.sdk._logs import LoggerProvider
    from opentelemetry.sdk._logs.export import BatchLogRecordProcessor
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.util.re import parse_env_headers

    endpoint = settings.otel_results_endpoint or ""
    raw = settings.otel_results_headers
    headers = "" if raw is None else raw.get_secret_value()
    with _lock:
        provider = _providers.get((endpoint, headers))
        if provider is None:
            provider = LoggerProvider(
                resource=Resource.create({"service.name": "evalq", "service.version": __version__})
            )
            exporter = OTLPLogExporter(
                endpoint=endpoint,
                headers=dict(parse_env_headers(headers, liberal=True)),
                timeout=settings.otel_results_timeout_s,
            )
            provider.add_log_record_processor(BatchLogRecordProcessor(exporter))
            _providers[(endpoint, headers)] = provider
    return provider


def emit_to(provider: LoggerProvider, events: Sequence[EvaluationEvent]) -> int:
    """Emit ``events`` through ``provider``'s logger; each linked to its run's trace and span."""
    from opentelemetry._logs import LogRecord, SeverityNumber

    logger = provider.get_logger("evalq", __version__)
    for event in events:
        logger.emit(
            LogRecord(
                timestamp=time.time_ns(),
                context=_run_context(event),
                severity_number=SeverityNumber.INFO,
                event_name=EVENT_NAME,
                attributes=event.attributes,
            )
        )
    return len(events)


def _run_context(event: EvaluationEvent) -> Context | None:
    """A context whose current span is the evaluated run's root span (None: not a trace)."""
    if event.trace_id is None or event.span_id is None:
        return None
    from opentelemetry import trace

    span = trace.NonRecordingSpan(
        trace.SpanContext(
            trace_id=int(event.trace_id, 16),
            span_id=int(event.span_id, 16),
            is_remote=True,
            trace_flags=trace.TraceFlags(trace.TraceFlags.SAMPLED),
        )
    )
    return trace.set_span_in_context(span)
