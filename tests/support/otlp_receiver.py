"""An OTLP/HTTP logs receiver on 127.0.0.1 for tests: decodes each ``POST /v1/logs`` with the
OpenTelemetry protobuf definitions (as a Collector's OTLP receiver does) and keeps every log
record it saw, with its trace and span ids as hex."""

from __future__ import annotations

import gzip
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from google.protobuf import json_format
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import (
    ExportLogsServiceRequest,
    ExportLogsServiceResponse,
)


@dataclass(frozen=True)
class ReceivedRecord:
    """One log record as received: its event name, trace and span ids (hex, "" when unset),
    attributes (plain values) and the resource's."""

    event_name: str
    trace_id: str
    span_id: str
    attributes: dict[str, Any]
    resource: dict[str, Any]


@dataclass
class LogsReceiver:
    """Where to point an exporter (``url``), and what arrived."""

    url: str
    records: list[ReceivedRecord] = field(default_factory=list)
    requests: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def take(self, body: bytes) -> None:
        request = ExportLogsServiceRequest()
        request.ParseFromString(body)
        found: list[ReceivedRecord] = []
        for resource_logs in request.resource_logs:
            resource = _values(resource_logs.resource.attributes)
            for scope_logs in resource_logs.scope_logs:
                for record in scope_logs.log_records:
                    found.append(
                        ReceivedRecord(
                            event_name=record.event_name,
                            trace_id=record.trace_id.hex(),
                            span_id=record.span_id.hex(),
                            attributes=_values(record.attributes),
                            resource=resource,
                        )
                    )
        with self.lock:
            self.requests += 1
            self.records.extend(found)

    def events(self, name: str = "gen_ai.evaluation.result") -> list[ReceivedRecord]:
        """The records of event ``name`` received so far."""
        with self.lock:
            return [r for r in self.records if r.event_name == name]


def _values(attributes: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for item in attributes:
        value = json_format.MessageToDict(item.value)
        out[item.key] = next(iter(value.values())) if value else None
    return out


@contextmanager
def otlp_logs_receiver() -> Iterator[LogsReceiver]:
    """A threaded OTLP/HTTP (protobuf) logs receiver on a free loopback port for the block."""
    receiver = LogsReceiver(url="")

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("content-length") or 0))
            if self.headers.get("content-encoding") == "gzip":
                body = gzip.decompress(body)
            if self.path != "/v1/logs":
                self.send_response(404)
                self.end_headers()
                return
            receiver.take(body)
            answer = ExportLogsServiceResponse().SerializeToString()
            self.send_response(200)
            self.send_header("content-type", "application/x-protobuf")
            self.send_header("content-length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    receiver.url = f"http://127.0.0.1:{server.server_address[1]}/v1/logs"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield receiver
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)
