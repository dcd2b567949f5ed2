"""Sessions: a conversation sent as one trace per turn through the real OpenTelemetry SDK
exporter into a real `evalq api` (no broker: its own sweep thread) becomes one session, evaluated
as a unit once quiet, served by GET /v1/sessions/{id} and on the task's session board; a late
turn has it evaluated once more. Each run keeps its own evaluation."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Iterator

import httpx
import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.trace import Status, StatusCode

from evalq.core.errors import InvalidInput, NotFound
from evalq.core.sessions import SessionBoard, SessionResult
from evalq.producer.http import AsyncHttpClient, HttpClient
from tests.integration.api.conftest import Server, serve_api
from tests.support.openai_stub import OpenAIStub
from tests.support.processes import HTTP_TIMEOUT, PATIENCE, wait_until
from tests.support.reviews import review_task
from tests.support.ui import sign_in

pytestmark = [pytest.mark.integration, pytest.mark.both_databases]  # the sweep's SQL of each

SETTINGS = {"trace_quiet_s": "1", "trace_sweep_every_s": "0.3", "session_quiet_s": "2"}


@pytest.fixture(scope="module")
def judge() -> Iterator[OpenAIStub]:
    """The judge: the project's OpenAI stub (valid answers, score 4 of 5)."""
    with OpenAIStub() as stub:
        yield stub


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, judge: OpenAIStub
) -> Iterator[Server]:
    directory = tmp_path_factory.mktemp("sessions")
    extra = SETTINGS | {
        "judge_model": "openai:stub-judge",
        "judge_base_url": judge.base_url,
        "judge_api_key": "sk-test",
    }
    with serve_api(request.param, directory, broker=False, extra=extra) as api:
        put = api.client().put("/v1/tasks/review-1", json=review_task("review-1"))
        assert put.status_code in (200, 201), put.text
        yield api


def send_turn(server: Server, conversation: str, *, ok: bool, tools: int = 1) -> str:
    """One turn of a conversation as its own trace (GenAI conventions: the agent span carries
    ``gen_ai.conversation.id``); its trace id. ``ok=False``: the turn's root span is ERROR."""
    provider = TracerProvider(
        resource=Resource.create(
            {"service.name": "chat", "evalq.task_id": "review-1", "evalq.tool": "sdk"}
        )
    )
    provider.add_span_processor(
        SimpleSpanProcessor(
            OTLPSpanExporter(
                endpoint=f"{server.url}/v1/traces",
                headers={"Authorization": f"Bearer {server.keys['write']}"},
                timeout=10 * PATIENCE,  # the exporter's 10 s, retries included, on a busy API
            )
        )
    )
    tracer = provider.get_tracer("agent")
    agent = {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": "helper",
        "gen_ai.conversation.id": conversation,
    }
    with tracer.start_as_current_span("invoke_agent helper", attributes=agent) as root:
        chat = {
            "gen_ai.operation.name": "chat",
            "gen_ai.request.model": "gpt-4o",
            "gen_ai.usage.input_tokens": 500,
            "gen_ai.usage.output_tokens": 80,
        }
        with tracer.start_as_current_span("chat gpt-4o", attributes=chat):
            pass
        for _ in range(tools):
            tool = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "search"}
            with tracer.start_as_current_span("execute_tool search", attributes=tool):
                pass
        root.set_attribute("evalq.output", "Here is what I found.")
        root.set_attribute("evalq.trace.end", True)
        if not ok:
            root.set_status(Status(StatusCode.ERROR, "the tool timed out"))
        trace_id = f"{root.get_span_context().trace_id:032x}"
    provider.shutdown()
    return trace_id


def session_of(server: Server, conversation: str) -> dict[str, object] | None:
    answer = server.client("read").get(f"/v1/sessions/{conversation}")
    if answer.status_code == 404:
        return None
    assert answer.status_code == 200, answer.text
    found: dict[str, object] = answer.json()
    return found


def evaluated_times(server: Server, conversation: str, times: int) -> dict[str, object]:
    """Wait until the session has been evaluated ``times`` times; the session."""

    def reached() -> bool:
        found = session_of(server, conversation)
        return found is not None and found["evaluations"] == times

    wait_until(reached, timeout=180, what=f"session {conversation} evaluated {times} time(s)")
    found = session_of(server, conversation)
    assert found is not None
    return found


def evaluated_with(server: Server, conversation: str, turns: int) -> dict[str, object]:
    """Wait until the session's latest evaluation holds ``turns`` turns; the session."""

    def reached() -> bool:
        found = session_of(server, conversation)
        if found is None or found["status"] != "evaluated":
            return False
        scores = found["scores"]
        return isinstance(scores, dict) and scores["turns"] == turns

    wait_until(reached, timeout=180, what=f"session {conversation} evaluated with {turns} turns")
    found = session_of(server, conversation)
    assert found is not None
    return found


def test_three_turns_sent_as_three_traces_are_one_session_scored_as_a_unit(
    server: Server, judge: OpenAIStub
) -> None:
    conversation = f"conv-{uuid.uuid4().hex}"
    traces = [
        send_turn(server, conversation, ok=False),
        send_turn(server, conversation, ok=True, tools=2),
        send_turn(server, conversation, ok=True),
    ]
    # a turn whose evaluation ends last (the in-process worker's first tier 1 starts the model)
    # may miss the first evaluation: the session is evaluated again once it is merged, so the
    # test waits for the evaluation that holds all three turns, not for the first one
    found = evaluated_with(server, conversation, len(traces))
    assert found["task_id"] == "review-1"
    assert found["status"] == "evaluated"
    assert found["turns"] == [f"otlp-{t}" for t in traces]  # in turn order
    scores = found["scores"]
    assert isinstance(scores, dict)
    assert (scores["turns"], scores["passed"], scores["turns_to_success"]) == (3, True, 2)
    assert scores["success_rate"] == pytest.approx(2 / 3)
    assert (scores["tool_calls"], scores["tools"]) == (4, ["search"])
    turn_values = [turn["value"] for turn in scores["turn_results"]]
    # the judge read the whole transcript, every turn's output in order
    judged = scores["judge"]  # the stub answers 4 of 5: (4 - 1) / 4
    assert (judged["planning_rationality"], judged["constructiveness"]) == (0.75, 0.75)
    assert scores["judge_failed"] is False
    heard = [json.dumps(body) for _, body in judge.requests_seen]
    marks = [f"Turn {n} (otlp-{t})" for n, t in enumerate(traces, 1)]
    assert any(all(mark in body for mark in marks) for body in heard)
    assert scores["score"] == pytest.approx(sum(turn_values) / 3)
    # each run keeps its own evaluation, and names its conversation
    client = server.client("read")
    for trace_id in traces:
        run = client.get(f"/v1/submissions/otlp-{trace_id}").json()
        assert run["status"] == "done"
        assert run["metadata"]["gen_ai.conversation.id"] == conversation
        assert run["scores"]["peerread"] is not None
    board = client.get("/v1/tasks/review-1/sessions").json()
    [row] = [r for r in board["sessions"] if r["session_id"] == conversation]
    assert (row["rank"], row["turns"], row["passed"], row["turns_to_success"]) == (1, 3, True, 2)
    assert row["score"] == pytest.approx(scores["score"])
    # the UI: the task's session board, and the session's section on each run's page
    with httpx.Client(base_url=server.url, timeout=HTTP_TIMEOUT) as browser:
        assert sign_in(browser, server.keys["read"]).status_code == 303
        page = browser.get("/ui/tasks/review-1/sessions")
        assert page.status_code == 200, page.text
        assert f'data-session="{conversation}"' in page.text
        run = browser.get(f"/ui/runs/otlp-{traces[1]}")
        assert run.status_code == 200 and 'id="session"' in run.text
        assert "Turn 2 of 3 of session" in run.text
        assert "first success at turn 2" in run.text


def test_a_late_turn_has_the_session_evaluated_once_more(server: Server) -> None:
    conversation = f"conv-{uuid.uuid4().hex}"
    send_turn(server, conversation, ok=True)
    send_turn(server, conversation, ok=True)
    first = evaluated_with(server, conversation, 2)
    late = send_turn(server, conversation, ok=False)
    again = evaluated_with(server, conversation, 3)
    assert again["evaluations"] > first["evaluations"]  # type: ignore[operator]
    assert again["turns"][-1] == f"otlp-{late}"  # type: ignore[index]
    scores = again["scores"]
    assert isinstance(scores, dict)
    assert (scores["turns"], scores["passed"], scores["turns_to_success"]) == (3, False, 1)
    # Another session evaluated after it says the sweeps went on: this one was not again.
    other = f"conv-{uuid.uuid4().hex}"
    send_turn(server, other, ok=True)
    evaluated_times(server, other, 1)
    found = session_of(server, conversation)
    assert found is not None and found["evaluations"] == again["evaluations"]
    board = server.client("read").get("/v1/tasks/review-1/sessions").json()
    [row] = [r for r in board["sessions"] if r["session_id"] == conversation]
    assert row["passed"] is False and row["turns"] == 3


def test_unknown_session_and_bad_board_limit_are_refused(server: Server) -> None:
    client = server.client("read")
    assert client.get("/v1/sessions/no-such-conversation").status_code == 404
    assert client.get("/v1/tasks/no-such-task/sessions").status_code == 404
    answer = client.get("/v1/tasks/review-1/sessions", params={"limit": 0})
    assert answer.status_code == 422 and "limit" in answer.text
    with HttpClient(server.url, server.keys["read"]) as http:
        with pytest.raises(NotFound):
            http.session("no-such-conversation")
        with pytest.raises(InvalidInput) as bad:
            http.session_board("review-1", limit=0)
        assert bad.value.problems[0][0] == "limit"


def test_the_http_clients_serve_what_the_api_serves(server: Server) -> None:
    conversation = f"conv-{uuid.uuid4().hex}"
    send_turn(server, conversation, ok=True)
    found = evaluated_times(server, conversation, 1)
    with HttpClient(server.url, server.keys["read"]) as http:
        session = http.session(conversation, task_id="review-1")
        board = http.session_board("review-1", limit=1000)
    assert session.model_dump(mode="json") == found
    assert conversation in [row.session_id for row in board.sessions]

    async def read() -> tuple[SessionResult, SessionBoard]:
        async with AsyncHttpClient(server.url, server.keys["read"]) as aio:
            return await aio.session(conversation), await aio.session_board("review-1")

    aio_session, aio_board = asyncio.run(read())
    assert aio_session == session and aio_board.evaluated == board.evaluated
