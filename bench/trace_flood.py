"""One OTLP request of many one-span traces: what `POST /v1/traces` costs per trace.

    python bench/trace_flood.py [--traces 10000] [--requests 3] [--backend sqlite] [--quick]

A real `evalq api` (uvicorn, a throwaway store, no broker, the trace sweep idle during the
measurement) is sent ``--requests`` bodies, one after another, each of ``--traces`` one-span
traces (new trace ids each time, end-marked and naming a task, as the probe's flood was), by
one client. Printed per request: seconds from the send to the answer; then the median traces/s
(the ratio line). Every span is stored before the answer.

``--quick`` (CI): 500 traces, 2 requests.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import httpx
from _common import figure, parse_args, ratio
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from tests.support.databases import fresh_database
from tests.support.processes import free_port, process_env, start, stop, wait_for_http

PROTOBUF = {"Content-Type": "application/x-protobuf"}
TASK = {"id": "t1", "category": "debugging", "success_criteria": [{"type": "no_errors"}]}


def flood(traces: int, salt: int) -> bytes:
    """``traces`` one-span traces, each end-marked, on a resource naming the task."""
    body = ExportTraceServiceRequest()
    resource = body.resource_spans.add()
    for key, value in (("service.name", "flood"), ("evalq.task_id", "t1"), ("evalq.tool", "f")):
        pair = resource.resource.attributes.add(key=key)
        pair.value.string_value = value
    spans = resource.scope_spans.add().spans
    began = time.time_ns() - 10**9
    for number in range(traces):
        trace_id = salt.to_bytes(8, "big") + (number + 1).to_bytes(8, "big")
        span = spans.add(trace_id=trace_id, span_id=(number + 1).to_bytes(8, "big"), name="junk")
        span.start_time_unix_nano, span.end_time_unix_nano = began, began + 1000
        marker = span.attributes.add(key="evalq.trace.end")
        marker.value.bool_value = True
    data: bytes = body.SerializeToString()
    return data


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--traces", type=int, default=10_000)
    parser.add_argument("--requests", type=int, default=3)
    parser.add_argument("--backend", choices=["sqlite", "postgresql"], default="sqlite")
    args = parse_args(parser, quick={"traces": 500, "requests": 2})
    from evalq.store.db import session_scope
    from evalq.store.keys import create_key

    with (
        tempfile.TemporaryDirectory() as tmp,
        fresh_database(args.backend, Path(tmp)) as db_url,
    ):
        with session_scope(db_url) as session:
            key = create_key(session, name="flood", scopes=["read", "write"])
        settings = {
            "database_url": db_url,
            "trace_sweep_every_s": "3600",  # intake alone: no sweep during the measurement
            "trace_max_request_spans": str(max(args.traces, 10_000)),
            "api_max_body_bytes": str(64 * 1024 * 1024),
            "trace_max_open_per_key": str(args.traces * args.requests),  # one key sends all
        }
        port = free_port()
        api = start(
            ["api", "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning"],
            process_env(settings),
            Path(tmp) / "api.log",
            cwd=Path(tmp),
        )
        try:
            url = f"http://127.0.0.1:{port}"
            wait_for_http(f"{url}/healthz", api, timeout=90, what="evalq api", ok=(200, 503))
            headers = {"Authorization": f"Bearer {key}"}
            with httpx.Client(base_url=url, headers=headers, timeout=600) as client:
                client.put("/v1/tasks/t1", json=TASK).raise_for_status()
                rates = []
                for salt in range(1, args.requests + 1):
                    body = flood(args.traces, salt)
                    began = time.perf_counter()
                    answer = client.post("/v1/traces", content=body, headers=PROTOBUF)
                    took = time.perf_counter() - began
                    answer.raise_for_status()
                    figure(f"request {salt}: {args.traces} one-span traces", took, "s")
                    rates.append(args.traces / took)
        finally:
            stop(api)
    ratio("median traces/s", statistics.median(rates), "traces/s")


if __name__ == "__main__":
    main()
