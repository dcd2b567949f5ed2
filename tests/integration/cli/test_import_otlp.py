"""`evalq import otlp FILE`: exported SDK traces in, evaluated submissions out (no broker)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from evalq.core.results import GraphResult
from evalq.core.schemas import Task, Trace
from evalq.metrics.graph import graph_metrics
from evalq.store import queries
from evalq.store.db import session_scope
from tests.support.otel_runs import (
    INPUT_TOKENS,
    LLM_COSTS,
    OUTPUT_TOKENS,
    as_otlp_json,
    as_protobuf,
    trace_id_of,
    two_agent_run,
)
from tests.support.processes import EVALQ, PATIENCE, process_env
from tests.support.reviews import review_task

TASK = review_task("review-1")
EXPECTED_TRACE = Trace.model_validate(
    {
        "steps": [
            {"tool": "search", "agent": "manager", "context": "find"},
            {"tool": "read", "agent": "researcher"},
            {"tool": "write", "agent": "researcher", "context": "draft"},
        ],
        "messages": [{"sender": "manager", "receiver": "researcher", "type": "handoff"}],
    }
)


def evalq(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`evalq ARGS` with no EVALQ_* setting: the store is ./evalq.db, evaluation runs here."""
    return subprocess.run(
        [EVALQ, *args],
        cwd=cwd,
        env=process_env({}),
        capture_output=True,
        text=True,
        timeout=300 * PATIENCE,
    )


def test_exported_traces_are_imported_and_evaluated(tmp_path: Path) -> None:
    (tmp_path / "tasks.json").write_text(json.dumps([TASK]))
    assert evalq(tmp_path, "task", "put", "tasks.json").returncode == 0
    openinference = two_agent_run("openinference", resource={"service.name": "x"})
    genai = two_agent_run("genai")
    # the Collector's file exporter: one request per line, a trace split over two batches
    lines = [as_otlp_json(openinference[:5]), as_otlp_json(openinference[5:])]
    (tmp_path / "traces.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    (tmp_path / "trace.pb").write_bytes(as_protobuf(genai))

    json_lines = evalq(
        tmp_path, "import", "otlp", "traces.jsonl", "--task-id", "review-1", "--tool", "oi"
    )
    assert json_lines.returncode == 0, json_lines.stderr
    protobuf = evalq(tmp_path, "import", "otlp", "trace.pb")
    assert protobuf.returncode == 0, protobuf.stderr
    ids = [f"otlp-{trace_id_of(openinference)}", f"otlp-{trace_id_of(genai)}"]
    assert f"imported 1 trace(s) (1 new, 0 existing): {ids[0]}" in json_lines.stdout

    expected_graph = graph_metrics(EXPECTED_TRACE, Task.model_validate(TASK))
    with session_scope(f"sqlite:///{tmp_path / 'evalq.db'}") as session:
        for submission_id in ids:
            row = queries.get_submission_row(session, submission_id=submission_id)
            assert row.status == "done"
            usage = row.payload["usage"]
            assert (usage["input_tokens"], usage["output_tokens"]) == (INPUT_TOKENS, OUTPUT_TOKENS)
            assert (usage["tool_calls"], usage["iterations"], usage["execution_time"]) == (3, 3, 10)
            graph = queries.tier_results(session, submission_id=submission_id)["graph"]
            assert GraphResult.model_validate(graph.metrics) == expected_graph
        oi_row = queries.get_submission_row(session, submission_id=ids[0])
        assert oi_row.payload["tool"] == "oi"
        assert abs(oi_row.payload["usage"]["cost_usd"] - sum(LLM_COSTS)) < 1e-9

    again = evalq(tmp_path, "import", "otlp", "trace.pb")
    assert again.returncode == 0 and "(0 new, 1 existing)" in again.stdout


def test_a_trace_that_cannot_be_mapped_names_file_span_and_attribute(tmp_path: Path) -> None:
    (tmp_path / "tasks.json").write_text(json.dumps([TASK]))
    assert evalq(tmp_path, "task", "put", "tasks.json").returncode == 0
    spans = two_agent_run(skip={"gen_ai.usage.output_tokens"})
    (tmp_path / "trace.pb").write_bytes(as_protobuf(spans))
    first_llm = next(s for s in spans if s.name == "chat gpt-4o")
    span_id = f"{first_llm.context.span_id:016x}"
    result = evalq(tmp_path, "import", "otlp", "trace.pb")
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        f"trace.pb: span {span_id} (chat gpt-4o).gen_ai.usage.output_tokens: missing: an LLM "
        "span carries gen_ai.usage.input_tokens and gen_ai.usage.output_tokens"
    ]
    with session_scope(f"sqlite:///{tmp_path / 'evalq.db'}") as session:
        assert queries.status_counts(session, ids=[f"otlp-{trace_id_of(spans)}"]) == {}
