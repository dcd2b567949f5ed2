"""Spans in: `evalq api`'s POST /v1/traces against a bare FastAPI route that only parses them.

    python bench/trace_ingest.py [--spans 6000] [--sizes 10 100 1000] [--batch 512]
                                 [--latency-runs 3] [--quick]

A real `evalq api` (uvicorn, a throwaway SQLite store, no broker: it evaluates in-process and
runs the trace sweep itself) and a bare app (this file, ``--serve-bare PORT``: one route that
parses the ExportTraceServiceRequest protobuf and answers an empty ExportTraceServiceResponse)
run at the same time. For traces of each size (10, 100, 1000 spans: an agent root, then chat
and tool spans taking turns) the same bodies, ``--batch`` spans each (512: the SDK's
BatchSpanProcessor batch), are posted by one client to both servers, taking turns in slices.
Printed per size: spans/s of each and evalq / bare. These traces never end (no quiet period is
reached during the run), so the figure is ingestion alone: every span stored in the database
before the answer, idempotent on (trace id, span id).

Then, ``--latency-runs`` times, a 10-span run carrying ``evalq.trace.end`` is sent in one
request and the time from that answer to its submission being ``done`` is measured (the sweep
runs every 0.2 s here; EVALQ_TRACE_SWEEP_EVERY_S is 5 s by default).

``--quick`` (CI): 1024 spans per size, sizes 10 and 100, one latency run.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import httpx
from _common import figure, parse_args, ratio
from fastapi import FastAPI, Request, Response
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, Span
from tests.support.databases import fresh_database
from tests.support.processes import HTTP_TIMEOUT, free_port, process_env, start, stop, wait_for_http

PROTOBUF = {"Content-Type": "application/x-protobuf"}
TASK = {"id": "t1", "category": "debugging", "success_criteria": [{"type": "no_errors"}]}
SLICES = 4


def resource_spans(*, end_marker: bool) -> ResourceSpans:
    """An empty ResourceSpans with the service's resource."""
    block = ResourceSpans()
    for key, value in (("service.name", "bench"), ("evalq.task_id", "t1"), ("evalq.tool", "b")):
        pair = block.resource.attributes.add(key=key)
        pair.value.string_value = value
    block.scope_spans.add()
    return block


def trace_spans(number: int, size: int, *, end_marker: bool = False) -> list[Span]:
    """One run of ``size`` spans: an agent root and chat / tool spans under it, a second each."""
    trace_id = (number + 1).to_bytes(8, "big") + time.time_ns().to_bytes(8, "big")
    start = time.time_ns() - size * 10**9
    root = Span(trace_id=trace_id, span_id=(1).to_bytes(8, "big"), name="invoke_agent bench")
    root.start_time_unix_nano, root.end_time_unix_nano = start, start + size * 10**9
    _attributes(root, {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "bench"})
    if end_marker:
        marker = root.attributes.add(key="evalq.trace.end")
        marker.value.bool_value = True
    spans = []
    for index in range(1, size):
        span = Span(
            trace_id=trace_id,
            span_id=(index + 1).to_bytes(8, "big"),
            parent_span_id=root.span_id,
            start_time_unix_nano=start + index * 10**9,
            end_time_unix_nano=start + index * 10**9 + 5 * 10**8,
        )
        if index % 2:
            span.name = "chat gpt-4o"
            _attributes(
                span,
                {
                    "gen_ai.operation.name": "chat",
                    "gen_ai.request.model": "gpt-4o",
                    "gen_ai.usage.input_tokens": 120,
                    "gen_ai.usage.output_tokens": 30,
                },
            )
        else:
            span.name = "execute_tool search"
            _attributes(span, {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "s"})
        spans.append(span)
    return [*spans, root]  # the root ends last, as the SDK exports it


def _attributes(span: Span, values: dict[str, str | int]) -> None:
    for key, value in values.items():
        pair = span.attributes.add(key=key)
        if isinstance(value, int):
            pair.value.int_value = value
        else:
            pair.value.string_value = value


def bodies(size: int, total: int, batch: int) -> list[bytes]:
    """Requests of ``batch`` spans holding ``total`` spans of ``size``-span traces."""
    spans = [s for n in range(max(1, total // size)) for s in trace_spans(n, size)]
    out = []
    for first in range(0, len(spans), batch):
        request = ExportTraceServiceRequest()
        block = request.resource_spans.add()
        block.CopyFrom(resource_spans(end_marker=False))
        block.scope_spans[0].spans.extend(spans[first : first + batch])
        out.append(request.SerializeToString())
    return out


def bare_app() -> object:
    """The bare route: parse the protobuf, answer an empty ExportTraceServiceResponse."""
    app = FastAPI()

    @app.post("/v1/traces")
    async def traces(request: Request) -> Response:
        parsed = ExportTraceServiceRequest.FromString(await request.body())
        assert parsed.resource_spans
        answer = ExportTraceServiceResponse().SerializeToString()
        return Response(answer, media_type="application/x-protobuf")

    @app.get("/healthz")
    async def health() -> dict[str, str]:
        return {"status": "ok"}

    return app


@contextmanager
def servers(directory: Path) -> Iterator[tuple[str, str, str]]:
    """(evalq URL, its write key, bare URL), both running until the block ends."""
    from evalq.store.db import session_scope
    from evalq.store.keys import create_key

    with ExitStack() as stack:
        db_url = stack.enter_context(fresh_database("sqlite", directory))
        with session_scope(db_url) as session:
            key = create_key(session, name="bench", scopes=["read", "write"])
        env = process_env(
            {
                "database_url": db_url,
                "trace_quiet_s": "3600",
                "trace_sweep_every_s": "0.2",
            }
        )
        evalq_port, bare_port = free_port(), free_port()
        evalq = start(
            ["api", "--host", "127.0.0.1", "--port", str(evalq_port), "--log-level", "warning"],
            env,
            directory / "api.log",
            cwd=directory,
        )
        stack.callback(stop, evalq)
        argv = [sys.executable, __file__, "--serve-bare", str(bare_port)]
        bare = _start_python(argv, directory / "bare.log")
        stack.callback(stop, bare)
        evalq_url, bare_url = f"http://127.0.0.1:{evalq_port}", f"http://127.0.0.1:{bare_port}"
        wait_for_http(f"{evalq_url}/healthz", evalq, timeout=90, what="evalq api", ok=(200, 503))
        wait_for_http(f"{bare_url}/healthz", bare, timeout=60, what="the bare app")
        put = httpx.put(
            f"{evalq_url}/v1/tasks/t1",
            json=TASK,
            headers={"Authorization": f"Bearer {key}"},
            timeout=HTTP_TIMEOUT,
        )
        put.raise_for_status()
        yield evalq_url, key, bare_url


def _start_python(argv: list[str], log: Path) -> object:
    import subprocess

    with log.open("wb") as out:
        return subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)


def post_all(client: httpx.Client, url: str, requests: list[bytes]) -> float:
    """Seconds to post ``requests`` one after another (each answered 200, nothing refused)."""
    began = time.perf_counter()
    for body in requests:
        answer = client.post(url, content=body, headers=PROTOBUF)
        if answer.status_code != 200:
            raise RuntimeError(f"{url}: {answer.status_code} {answer.text[:300]}")
        if ExportTraceServiceResponse.FromString(answer.content).HasField("partial_success"):
            raise RuntimeError(f"{url}: spans refused: {answer.content[:300]!r}")
    return time.perf_counter() - began


def latency(client: httpx.Client, evalq_url: str, number: int) -> float:
    """Seconds from the answer to a whole end-marked run's POST to its submission being done."""
    request = ExportTraceServiceRequest()
    block = request.resource_spans.add()
    block.CopyFrom(resource_spans(end_marker=True))
    spans = trace_spans(10_000 + number, 10, end_marker=True)
    block.scope_spans[0].spans.extend(spans)
    post_all(client, f"{evalq_url}/v1/traces", [request.SerializeToString()])
    sent = time.perf_counter()
    url = f"{evalq_url}/v1/submissions/otlp-{spans[0].trace_id.hex()}"
    while time.perf_counter() - sent < 300:
        answer = client.get(url)
        if answer.status_code == 200 and answer.json()["status"] in ("done", "degraded"):
            return time.perf_counter() - sent
        time.sleep(0.05)
    raise RuntimeError(f"{url} not done after 300 s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spans", type=int, default=6000, help="spans per trace size")
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 100, 1000])
    parser.add_argument("--batch", type=int, default=512)
    parser.add_argument("--latency-runs", type=int, default=3)
    parser.add_argument("--serve-bare", type=int, metavar="PORT")
    args = parse_args(parser, quick={"spans": 1024, "sizes": [10, 100], "latency_runs": 1})
    if args.serve_bare:
        import uvicorn

        uvicorn.run(bare_app(), host="127.0.0.1", port=args.serve_bare, log_level="warning")  # type: ignore[arg-type]
        return
    last = 0.0
    with tempfile.TemporaryDirectory() as tmp, servers(Path(tmp)) as (evalq_url, key, bare_url):
        headers = {"Authorization": f"Bearer {key}"}
        with httpx.Client(timeout=120, headers=headers) as client:
            for size in args.sizes:
                requests = bodies(size, args.spans, args.batch)
                spans = sum(
                    len(
                        ExportTraceServiceRequest.FromString(b)
                        .resource_spans[0]
                        .scope_spans[0]
                        .spans
                    )
                    for b in requests
                )
                post_all(client, f"{bare_url}/v1/traces", requests[:1])  # warm both up
                times = {"evalq": 0.0, "bare": 0.0}
                step = max(1, len(requests) // SLICES)
                for first in range(0, len(requests), step):
                    part = requests[first : first + step]
                    times["evalq"] += post_all(client, f"{evalq_url}/v1/traces", part)
                    times["bare"] += post_all(client, f"{bare_url}/v1/traces", part)
                evalq_rate, bare_rate = spans / times["evalq"], spans / times["bare"]
                figure(f"traces of {size} spans, {spans} spans: evalq spans/s", evalq_rate)
                figure(f"traces of {size} spans: bare parse-only route spans/s", bare_rate)
                last = evalq_rate / bare_rate
                figure(f"traces of {size} spans: evalq / bare", last)
            waits = [latency(client, evalq_url, n) for n in range(args.latency_runs)]
            figure(
                "last span -> done, median of runs (s, sweep every 0.2 s)", statistics.median(waits)
            )
    ratio(f"evalq / bare spans/s, traces of {args.sizes[-1]} spans, batches of {args.batch}", last)


if __name__ == "__main__":
    main()
