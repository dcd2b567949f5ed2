"""Online evaluation rules on a real `evalq api`: a task takes streamed traces that name no task
by filters and a deterministic sample; a backfill applies a new rule to stored traces; traces no
rule takes are kept for their retention, then dropped. Through HTTP, both clients and the CLI."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime, timedelta

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from sqlalchemy import func, select
from typer.testing import CliRunner

from evalq.core.errors import InvalidInput, NotFound
from evalq.core.trace_rules import ORDER_RULE, sampled
from evalq.producer.cli import app as cli
from evalq.producer.http import HttpClient
from evalq.service.client import Client
from evalq.service.trace_sweep import sweep_traces
from evalq.store import traces
from evalq.store.db import session_scope
from evalq.store.models import SubmissionRow, TraceRow
from tests.integration.api.conftest import TASK, Server

PROTOBUF = {"Content-Type": "application/x-protobuf"}
START = datetime(2026, 11, 20, 12, tzinfo=UTC)
BACKFILL_MAX = 100
API_SETTINGS = {"trace_backfill_max_traces": str(BACKFILL_MAX)}


def runs(
    service: str, count: int, *, salt: str, start: datetime = START
) -> tuple[ExportTraceServiceRequest, list[str]]:
    """``count`` two-span runs (an agent and one chat) of ``service``, naming no task, started a
    minute apart from ``start``; the request and their trace ids."""
    body = ExportTraceServiceRequest()
    resource = body.resource_spans.add()
    for key, value in (("service.name", service), ("evalq.tool", "online")):
        pair = resource.resource.attributes.add(key=key)
        pair.value.string_value = value
    spans = resource.scope_spans.add().spans
    ids = []
    for number in range(count):
        trace_id = hashlib.md5(f"{salt}{number}".encode()).digest()
        ids.append(trace_id.hex())
        began = int((start + timedelta(minutes=number)).timestamp() * 1e9)
        root = spans.add(trace_id=trace_id, span_id=b"\1" * 8, name="invoke_agent helper")
        root.start_time_unix_nano, root.end_time_unix_nano = began, began + 2 * 10**9
        chat = spans.add(trace_id=trace_id, span_id=b"\2" * 8, parent_span_id=b"\1" * 8)
        chat.name, chat.start_time_unix_nano, chat.end_time_unix_nano = "chat", began, began + 10**9
        for key, value in (("gen_ai.operation.name", "chat"), ("gen_ai.request.model", "gpt-4o")):
            pair = chat.attributes.add(key=key)
            pair.value.string_value = value
        for key, tokens in (("gen_ai.usage.input_tokens", 100), ("gen_ai.usage.output_tokens", 9)):
            pair = chat.attributes.add(key=key)
            pair.value.int_value = tokens
    return body, ids


def send(server: Server, body: ExportTraceServiceRequest) -> None:
    posted = server.client().post("/v1/traces", content=body.SerializeToString(), headers=PROTOBUF)
    assert posted.status_code == 200 and posted.content == b"", posted.content


def sweep(**changes: object) -> list[str]:
    client = Client()
    settings = client.settings.model_copy(update={"trace_quiet_s": 0, **changes})
    return sweep_traces(client, settings)


def submissions_of(server: Server, task_id: str) -> set[str]:
    with session_scope(server.db_url) as session:
        query = select(SubmissionRow.id).where(SubmissionRow.task_id == task_id)
        return set(session.scalars(query))


def statuses(server: Server, ids: list[str]) -> dict[str, int]:
    with session_scope(server.db_url) as session:
        query = (
            select(TraceRow.status, func.count())
            .where(TraceRow.trace_id.in_(ids))
            .group_by(TraceRow.status)
        )
        return {status: int(count) for status, count in session.execute(query).all()}


def test_a_quarter_sample_takes_about_100_of_400_the_ones_every_process_picks(
    api: Server,
) -> None:
    client = api.client()
    assert client.put("/v1/tasks/online", json=TASK | {"id": "online"}).status_code in (200, 201)
    rule = {"service_name": "helper", "sample_rate": 0.25}
    put = client.put("/v1/tasks/online/trace-rule", json=rule)
    assert put.status_code == 200, put.text
    assert put.json() == {
        "task_id": "online",
        "rule": {"service_name": "helper", "span_names": [], "attributes": {}, "sample_rate": 0.25},
    }
    body, ids = runs("helper", 400, salt="a")
    others, other_ids = runs("elsewhere", 20, salt="b")
    send(api, body)
    send(api, others)
    sweep()
    taken = submissions_of(api, "online")
    expected = {f"otlp-{t}" for t in ids if sampled(t, 0.25)}
    assert taken == expected and 80 <= len(taken) <= 120, len(taken)
    assert statuses(api, ids) == {"finalised": len(taken), "untaken": 400 - len(taken)}
    assert statuses(api, other_ids) == {"untaken": 20}

    # A new rule, backfilled over the first 10 minutes of the runs: those of "elsewhere" only.
    with HttpClient(api.url, api.keys["rw"]) as http:
        http.put_task(TASK | {"id": "backfilled"})
        http.put_trace_rule("backfilled", {"service_name": "elsewhere"})
        done = http.backfill_traces("backfilled", since=START, until=START + timedelta(minutes=10))
        assert done.examined == 10 + sum(1 for t in ids[:10] if not sampled(t, 0.25))
        assert sorted(done.taken) == sorted(f"otlp-{t}" for t in other_ids[:10])
        again = http.backfill_traces("backfilled", since=START, until=START + timedelta(hours=1))
        assert sorted(again.taken) == sorted(f"otlp-{t}" for t in other_ids[10:])
        with pytest.raises(NotFound, match="has no trace rule"):
            http.trace_rule("t1")

    # Kept for the retention period, then dropped by the sweep: with its spans.
    assert statuses(api, ids)["untaken"] == 400 - len(taken)
    sweep(trace_retention_s=0)
    assert statuses(api, ids) == {"finalised": len(taken)}
    assert statuses(api, other_ids) == {"finalised": 20}


def one_span_traces(
    service: str, count: int, *, salt: str
) -> tuple[ExportTraceServiceRequest, list[str]]:
    """``count`` one-span traces of ``service`` naming no task, as an instrumented web server
    exports its health checks; the request and their trace ids."""
    body = ExportTraceServiceRequest()
    resource = body.resource_spans.add()
    pair = resource.resource.attributes.add(key="service.name")
    pair.value.string_value = service
    spans = resource.scope_spans.add().spans
    ids = []
    began = int(START.timestamp() * 1e9)
    for number in range(count):
        trace_id = hashlib.md5(f"{salt}{number}".encode()).digest()
        ids.append(trace_id.hex())
        span = spans.add(trace_id=trace_id, span_id=b"\3" * 8, name="GET /healthz")
        span.start_time_unix_nano, span.end_time_unix_nano = began, began + 10**6
    return body, ids


def test_a_run_sent_after_a_flood_of_unrelated_traces_is_the_sweeps_only_work(
    api: Server,
) -> None:
    client = api.client()
    assert client.put("/v1/tasks/flooded", json=TASK | {"id": "flooded"}).status_code in (200, 201)
    assert client.put("/v1/tasks/flooded/trace-rule", json={"service_name": "reviewer"}).is_success
    flood, flood_ids = one_span_traces("health", 2000, salt="flood")
    send(api, flood)
    # Decided as they arrived: no sweep has run, and none of them is left for one to read.
    assert statuses(api, flood_ids) == {"untaken": 2000}

    real, [real_id] = runs("reviewer", 1, salt="real")
    marker = real.resource_spans[0].scope_spans[0].spans[0].attributes.add(key="evalq.trace.end")
    marker.value.bool_value = True
    send(api, real)
    with session_scope(api.db_url) as session:
        due = traces.due_traces(session, quiet=timedelta(days=1), reclaim_after=timedelta(days=1))
    assert due == [real_id]  # end-marked: due at once, and the only trace the sweep reads

    # One sweep after its end marker (quiet for an hour would not be reached) makes its run.
    assert sweep(trace_quiet_s=3600) == [f"otlp-{real_id}"]
    assert statuses(api, [real_id]) == {"finalised": 1}
    with session_scope(api.db_url) as session:
        row = session.get(SubmissionRow, f"otlp-{real_id}")
        assert row is not None and row.task_id == "flooded"
        # Nothing to fan out (no references, no judge, a trace): merged as it was submitted.
        assert row.status == "done"


def test_bad_rules_are_refused_at_every_door_and_nothing_is_stored(api: Server) -> None:
    client = api.client()
    refused = client.put("/v1/tasks/t1/trace-rule", json={"sample_rate": 2, "colour": "red"})
    assert refused.status_code == 422
    fields = sorted(problem["field"] for problem in refused.json()["detail"])
    assert fields == ["colour", "sample_rate"]
    assert client.get("/v1/tasks/t1/trace-rule").status_code == 404
    assert client.put("/v1/tasks/nope/trace-rule", json={}).status_code == 404
    backwards = client.post(
        "/v1/tasks/t1/trace-rule/backfill",
        json={"since": "2026-11-21T00:00:00Z", "until": "2026-11-20T00:00:00Z"},
    )
    assert backwards.status_code == 422, backwards.text
    assert backwards.json()["detail"] == [{"field": "until", "rule": ORDER_RULE}]
    with HttpClient(api.url, api.keys["rw"]) as http:
        with pytest.raises(InvalidInput) as caught:
            http.put_trace_rule("t1", {"sample_rate": -0.1})
        assert [field for field, _ in caught.value.problems] == ["sample_rate"]
    result = CliRunner().invoke(cli, ["rule", "set", "t1", "--sample", "3"])
    assert result.exit_code == 2
    assert "sample_rate" in result.output
    assert client.get("/v1/tasks/t1/trace-rule").status_code == 404


@pytest.mark.parametrize(
    ("since", "until", "field"),
    [
        ("2026-11-20T00:00:00Z", "2300-01-01T00:00:00Z", "until"),
        ("1600-01-01T00:00:00Z", "2026-11-20T00:00:00Z", "since"),
        ("1677-09-21T00:12:43+00:00", "2026-11-20T00:00:00+01:00", "since"),
    ],
)
def test_a_bound_past_int64_nanoseconds_is_a_422_on_the_field_at_every_door(
    api: Server, since: str, until: str, field: str
) -> None:
    client = api.client()
    rule = {"service_name": "none such"}  # with no rule, a backfill is a 404 before any query
    assert client.put("/v1/tasks/t1/trace-rule", json=rule).status_code == 200
    body = {"since": since, "until": until}
    refused = client.post("/v1/tasks/t1/trace-rule/backfill", json=body)
    assert refused.status_code == 422, refused.text
    [problem] = refused.json()["detail"]
    assert problem["field"] == field
    assert "from 1678-01-01T00:00:00Z to 2262-01-01T00:00:00Z" in problem["rule"]
    window = {name: datetime.fromisoformat(text) for name, text in body.items()}
    with HttpClient(api.url, api.keys["rw"]) as http, pytest.raises(InvalidInput) as caught:
        http.backfill_traces("t1", **window)
    assert [name for name, _ in caught.value.problems] == [field]
    with pytest.raises(InvalidInput) as caught:
        Client().backfill_traces("t1", **window)
    assert [name for name, _ in caught.value.problems] == [field]
    result = CliRunner().invoke(cli, ["rule", "backfill", "t1", "--since", since, "--until", until])
    assert result.exit_code == 2, result.output
    assert f"--{field}: must be from 1678-01-01T00:00:00Z" in result.output
    assert client.get("/v1/tasks/t1/trace-rule").status_code == 200  # the server lives on
    assert client.delete("/v1/tasks/t1/trace-rule").status_code == 200


def test_a_range_of_more_traces_than_the_setting_is_refused_whole(api: Server) -> None:
    start = START - timedelta(days=30)  # apart from the other tests' runs
    body, ids = runs("bulk", BACKFILL_MAX + 1, salt="bulk", start=start)
    send(api, body)
    sweep()
    assert statuses(api, ids) == {"untaken": BACKFILL_MAX + 1}
    client = api.client()
    assert client.put("/v1/tasks/bulk", json=TASK | {"id": "bulk"}).status_code in (200, 201)
    assert client.put("/v1/tasks/bulk/trace-rule", json={"service_name": "bulk"}).status_code == 200
    day = {"since": start.isoformat(), "until": (start + timedelta(days=1)).isoformat()}
    refused = client.post("/v1/tasks/bulk/trace-rule/backfill", json=day)
    assert refused.status_code == 422, refused.text
    [problem] = refused.json()["detail"]
    assert problem["field"] == "until"
    assert f"more than {BACKFILL_MAX} untaken traces" in problem["rule"]
    assert "EVALQ_TRACE_BACKFILL_MAX_TRACES" in problem["rule"]
    with pytest.raises(InvalidInput, match="EVALQ_TRACE_BACKFILL_MAX_TRACES"):
        Client().backfill_traces("bulk", since=start, until=start + timedelta(days=1))
    assert statuses(api, ids) == {"untaken": BACKFILL_MAX + 1}  # nothing was taken
    assert submissions_of(api, "bulk") == set()

    # As many as the setting allows, then the rest: every trace taken once.
    with HttpClient(api.url, api.keys["rw"]) as http:
        first = http.backfill_traces(
            "bulk", since=start, until=start + timedelta(minutes=BACKFILL_MAX)
        )
        rest = http.backfill_traces(
            "bulk", since=start + timedelta(minutes=BACKFILL_MAX), until=start + timedelta(days=1)
        )
    assert (first.examined, len(first.taken), rest.examined, len(rest.taken)) == (100, 100, 1, 1)
    assert submissions_of(api, "bulk") == {f"otlp-{t}" for t in ids}


def test_the_cli_sets_shows_backfills_and_removes_a_rule(api: Server) -> None:
    runner = CliRunner()
    made = runner.invoke(
        cli,
        ["rule", "set", "t1", "--service", "cli-svc", "--attr", "tier=2", "--sample", "0.5"],
    )
    assert made.exit_code == 0, made.output
    shown = api.client().get("/v1/tasks/t1/trace-rule").json()["rule"]
    assert shown == {
        "service_name": "cli-svc",
        "span_names": [],
        "attributes": {"tier": 2},
        "sample_rate": 0.5,
    }
    deep = "[" * 3000 + "]" * 3000  # past the JSON parser's recursion limit: kept as text
    again = runner.invoke(cli, ["rule", "set", "t1", "--attr", f"deep={deep}", "--attr", "n=2"])
    assert again.exit_code == 0, again.output[-2000:]
    attributes = api.client().get("/v1/tasks/t1/trace-rule").json()["rule"]["attributes"]
    assert attributes == {"deep": deep, "n": 2}
    filled = runner.invoke(
        cli, ["rule", "backfill", "t1", "--since", "2026-11-20T00:00:00+00:00", "--until", "x"]
    )
    assert filled.exit_code == 2 and "--until" in filled.output
    removed = runner.invoke(cli, ["rule", "remove", "t1"])
    assert removed.exit_code == 0, removed.output
    assert api.client().get("/v1/tasks/t1/trace-rule").status_code == 404


def test_the_async_client_sets_reads_and_removes_a_rule(api: Server) -> None:
    import asyncio

    from evalq.producer.http import AsyncHttpClient

    async def roundtrip() -> tuple[object, object]:
        async with AsyncHttpClient(api.url, api.keys["rw"]) as http:
            stored = await http.put_trace_rule("t1", {"span_names": ["plan"], "sample_rate": 0.5})
            read = await http.trace_rule("t1")
            await http.remove_trace_rule("t1")
            with pytest.raises(NotFound):
                await http.trace_rule("t1")
            return stored, read

    stored, read = asyncio.run(roundtrip())
    assert stored == read
    assert read.rule.span_names == ["plan"] and read.rule.sample_rate == 0.5  # type: ignore[attr-defined]
