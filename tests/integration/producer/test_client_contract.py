"""One contract, two clients: the in-process `Client` and `HttpClient` against a real `evalq api`.

Every test here runs for both clients over the same server's store (SQLite and PostgreSQL),
so the HTTP client is held to the in-process client's idempotency and errors: the same
``created`` answers, `Conflict`, `InvalidInput` with the same ``(field, rule)`` problems and
count, `NotFound`, and nothing stored on a refusal. A few run on `AsyncHttpClient` too.
"""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol, cast

import httpx
import pytest
from tests.integration.api.conftest import ROOT, Server, serve_api, submission
from tests.support.databases import fresh_database
from tests.support.lossy_relay import LossyRelay
from tests.support.otel_runs import as_otlp_json, as_protobuf, trace_id_of, two_agent_run
from tests.support.processes import PATIENCE, free_port, process_env, start, stop, wait_for_http
from tests.support.redis_server import RedisServer
from tests.support.reviews import review_task
from tests.support.settings import pipeline_settings
from typer.testing import CliRunner

from evalq.core.errors import (
    BrokerUnavailable,
    Conflict,
    InvalidInput,
    NotFound,
    Unauthorized,
    UpstreamFailure,
)
from evalq.core.review_decisions import MAX_REASON_CHARS, REASON_RULE, ReviewDecided
from evalq.core.schemas import Task
from evalq.core.settings import get_settings
from evalq.core.storable import NUL_RULE, SURROGATE_RULE
from evalq.core.webhooks import DeliveryInfo, WebhookCreated, WebhookInfo
from evalq.producer.cli import app as cli
from evalq.producer.http import AsyncHttpClient, HttpClient
from evalq.producer.http.wire import Call, error_of
from evalq.read.compare import compare
from evalq.service.client import Client
from evalq.service.submitted import Submitted
from evalq.store.db import session_scope
from evalq.store.keys import create_key
from evalq.store.models import SubmissionRow
from evalq.workers.bootstrap import worker_app
from evalq.workers.embedded import embedded_worker


@pytest.fixture(scope="module", params=["sqlite", "postgresql", "no-broker"])
def api(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    """The API fixture, and a third server with no broker configured: it evaluates in-process
    (as `evalq api` does out of the box), and keeps the same contract."""
    directory = tmp_path_factory.mktemp("api")
    broker = request.param != "no-broker"
    with serve_api("sqlite" if not broker else request.param, directory, broker=broker) as server:
        yield server


class Producer(Protocol):
    """What both clients offer."""

    def put_task(self, task: dict[str, Any]) -> Task: ...
    def submit(self, submission: dict[str, Any]) -> Submitted: ...
    def submit_many(self, submissions: list[dict[str, Any]]) -> list[Submitted]: ...
    def get_result(self, submission_id: str) -> dict[str, Any]: ...
    def wait(self, ids: list[str], *, timeout: float) -> dict[str, str]: ...
    def leaderboard(self, task_id: str, *, metadata: dict[str, str] = ...) -> dict[str, Any]: ...
    def compare(self, tasks: str, *, by: str, values: list[str]) -> dict[str, Any]: ...
    def add_webhook(self, task_id: str, webhook: dict[str, Any]) -> WebhookCreated: ...
    def webhooks(self, task_id: str) -> list[WebhookInfo]: ...
    def remove_webhook(self, task_id: str, webhook_id: str) -> None: ...
    def webhook_deliveries(self, task_id: str, webhook_id: str) -> list[DeliveryInfo]: ...
    def accept_review(self, submission_id: str, *, reason: str) -> ReviewDecided: ...
    def unaccept_review(self, submission_id: str, *, reason: str) -> ReviewDecided: ...


@pytest.fixture(params=["in-process", "http"])
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def producer(kind: str, api: Server) -> Iterator[Producer]:
    """The in-process client over the server's store and broker, or the HTTP client to it."""
    if kind == "in-process":
        # the api fixture configured this process for the server's store; the HTTP client's
        # decisions are recorded under its key's name, "rw": the in-process one decides as it
        client = Client(get_settings().model_copy(update={"actor": "rw"}))
        yield client
        client.close()
        client.app.close()
    else:
        with HttpClient(api.url, api.keys["rw"]) as http:
            yield http


@contextmanager
def workers_for(api: Server) -> Iterator[None]:
    """A worker for what the server enqueues on its broker; none when it evaluates in-process
    (a second in-process worker here would take the test process's own chords)."""
    if api.in_process:
        yield
        return
    app = worker_app()
    try:
        with embedded_worker(app, concurrency=2):
            yield
    finally:
        app.close()


def run(sid: str, **changes: Any) -> dict[str, Any]:
    return submission(sid, **changes)


def assert_not_stored(producer: Producer, *ids: str) -> None:
    for sid in ids:
        with pytest.raises(NotFound):
            producer.get_result(sid)


def test_a_resend_of_the_same_run_is_not_new(producer: Producer, kind: str) -> None:
    first = producer.submit(run(f"{kind}-same"))
    again = producer.submit(run(f"{kind}-same"))
    assert (first, again) == (Submitted(f"{kind}-same", True), Submitted(f"{kind}-same", False))
    batch = producer.submit_many([run(f"{kind}-same"), run(f"{kind}-same-2")])
    assert [s.created for s in batch] == [False, True]


@pytest.mark.parametrize(
    "changes",
    [{"output": "another answer"}, {"metadata": {"git_sha": "4f2a1c"}}],
    ids=["output", "metadata"],
)
def test_the_same_id_with_other_content_is_a_conflict(
    producer: Producer, kind: str, api: Server, changes: dict[str, Any]
) -> None:
    sid = f"{kind}-conflict-{next(iter(changes))}"
    producer.submit(run(sid, metadata={"git_sha": "0000"}))
    before = api.counts()
    with pytest.raises(Conflict, match="exists with different content"):
        producer.submit(run(sid) | changes)
    with pytest.raises(Conflict):  # in a batch: the new item is not stored either
        producer.submit_many([run(f"{sid}-new"), run(sid) | changes])
    assert api.counts() == before
    assert_not_stored(producer, f"{sid}-new")
    assert producer.get_result(sid)["metadata"] == {"git_sha": "0000"}


@pytest.mark.parametrize(
    ("changes", "field", "rule"),
    [
        ({"output": "a\x00b"}, "output", NUL_RULE),
        ({"model": "gpt\ud8004o"}, "model", SURROGATE_RULE),
        ({"usage": {"input_tokens": 5}}, "usage", None),
        ({"metadata": {"a": {"b": {"c": [1]}}}}, "metadata", "a.b.c: nested deeper than 3 levels"),
        ({"metadata": {"run id": 1}}, "metadata", None),
        ({"task_id": "nope"}, "task_id", "unknown task 'nope'; define it first"),
    ],
)
def test_invalid_input_names_the_field_and_rule_and_stores_nothing(
    producer: Producer,
    kind: str,
    api: Server,
    changes: dict[str, Any],
    field: str,
    rule: str | None,
) -> None:
    before = api.counts()
    with pytest.raises(InvalidInput) as one:
        producer.submit(run(f"{kind}-bad", **changes))
    with pytest.raises(InvalidInput) as batch:
        producer.submit_many([run(f"{kind}-bad-1"), run(f"{kind}-bad-2", **changes)])
    assert [f for f, _ in one.value.problems] == [field]
    # a problem of the whole batch (an unknown task) is not an item's
    assert [f for f, _ in batch.value.problems] == [field if field == "task_id" else f"[1].{field}"]
    if rule is not None:
        assert one.value.problems[0][1] == rule
    assert api.counts() == before


def test_many_problems_are_counted_past_those_listed(producer: Producer, kind: str) -> None:
    empty: list[dict[str, Any]] = [{} for _ in range(30)]  # 4 missing fields each
    with pytest.raises(InvalidInput) as caught:
        producer.submit_many(empty)  # type: ignore[arg-type]
    assert len(caught.value.problems) == 50
    assert caught.value.problems[0] == ("[0].id", "Field required")
    assert caught.value.more == 30 * 5 - 50  # id, task_id, tool, model, usage


def test_a_server_422_is_read_as_the_in_process_client_raises_it(api: Server) -> None:
    """The server's own 422 (not the HTTP client's local check): problems, names and count."""
    items = [{"id": f"x{i}"} for i in range(20)]
    response = api.client().post("/v1/submissions", json={"submissions": items})
    assert response.status_code == 422 and response.json()["more"] > 0
    from_http = error_of(response, Call("POST", "/v1/submissions"))
    with pytest.raises(InvalidInput) as in_process:
        Client().submit_many(items)
    assert isinstance(from_http, InvalidInput)
    assert from_http.problems == in_process.value.problems
    assert (from_http.total, from_http.more) == (in_process.value.total, in_process.value.more)


def test_an_unknown_submission_is_not_found(producer: Producer) -> None:
    with pytest.raises(NotFound, match="'no-such-run' does not exist"):
        producer.get_result("no-such-run")


def test_a_task_with_an_unknown_profile_is_refused(producer: Producer, kind: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        producer.put_task({"id": f"{kind}-t", "profile": "nowhere"})
    assert [f for f, _ in caught.value.problems] == ["profile"]
    assert producer.put_task({"id": f"{kind}-t"}).id == f"{kind}-t"


def test_metadata_is_returned_ranked_by_score_and_filtered_exactly(
    producer: Producer, kind: str, api: Server
) -> None:
    task_id = f"{kind}-meta"
    producer.put_task({"id": task_id, "category": "debugging"})
    runs = [
        run(f"{task_id}-a", task_id=task_id, metadata={"experiment": "v2", "attempt": 1}),
        run(f"{task_id}-b", task_id=task_id, metadata={"experiment": "v2", "attempt": 2})
        | {"usage": {"total_tokens": 50_000, "tool_calls": 40, "execution_time": 900}},
        # its own answer: the same content under other metadata would be a copy of -a
        run(f"{task_id}-c", task_id=task_id, metadata={"experiment": "v1", "attempt": 1})
        | {"output": "another answer, from experiment v1"},
    ]
    assert all(s.created for s in producer.submit_many(runs))
    with workers_for(api):
        statuses = producer.wait([r["id"] for r in runs], timeout=120 * PATIENCE)
    assert set(statuses.values()) == {"done"}
    result = producer.get_result(f"{task_id}-b")
    assert result["metadata"] == {"experiment": "v2", "attempt": 2}

    def board(where: dict[str, str]) -> list[tuple[str, int, float]]:
        entries = producer.leaderboard(task_id, metadata=where)["entries"]
        return [(e["submission_id"], e["rank"], e["overall"]) for e in entries]

    everything = board({})
    v2 = board({"experiment": "v2"})
    assert [e[0] for e in v2] == [f"{task_id}-a", f"{task_id}-b"]  # a is cheaper: ranks first
    assert [e[1] for e in v2] == [1, 2]
    # the filter selects rows; each keeps the score it has on the whole board
    assert {e[0]: e[2] for e in v2}.items() <= {e[0]: e[2] for e in everything}.items()
    assert [e[0] for e in board({"experiment": "v2", "attempt": "2"})] == [f"{task_id}-b"]
    assert board({"experiment": "v3"}) == []
    with pytest.raises(InvalidInput) as caught:
        board({"bad key": "x"})
    assert [f for f, _ in caught.value.problems] == ["metadata.bad key"]

    # both clients answer with the body GET /v1/tasks/{id}/leaderboard and /v1/compare serve
    # (a server that evaluates in-process may still refresh the task's baseline meanwhile)
    def both(client: Producer) -> tuple[dict[str, Any], dict[str, Any]]:
        return client.leaderboard(task_id), client.compare(
            task_id, by="metadata.experiment", values=["v1", "v2"]
        )

    def built() -> dict[str, Any]:  # what `compare` builds, as JSON
        with session_scope() as session:
            found = compare(session, tasks=task_id, by="metadata.experiment", values=["v1", "v2"])
        return cast(dict[str, Any], json.loads(json.dumps(found.model_dump(mode="json"))))

    deadline = time.monotonic() + 30 * PATIENCE
    with HttpClient(api.url, api.keys["read"]) as http:
        while (answers := both(http)) != both(producer) or answers[1] != built():
            assert time.monotonic() < deadline, "the two clients never answered alike"
            time.sleep(0.2)
    served = answers[1]
    # runs of one task, 1 and 2 a side: too few to compare unpaired (at least 5 a side)
    assert served["comparisons"][0]["design"] == "too few"
    assert served["comparisons"][0]["conclusion"].startswith("too few submissions")
    with pytest.raises(InvalidInput) as caught:
        producer.compare(task_id, by="colour", values=["v1", "v2"])
    assert [f for f, _ in caught.value.problems] == ["by"]
    assert_the_cli_filters_and_shows_metadata(task_id)


def assert_the_cli_filters_and_shows_metadata(task_id: str) -> None:
    """`evalq leaderboard TASK --where KEY=VALUE` and `evalq status ID`."""
    runner = CliRunner()
    shown = runner.invoke(cli, ["leaderboard", task_id, "--where", "attempt=1", "--json"])
    assert shown.exit_code == 0, shown.output
    assert f"{task_id}-a" in shown.output and f"{task_id}-c" in shown.output
    assert f"{task_id}-b" not in shown.output
    bad = runner.invoke(cli, ["leaderboard", task_id, "--where", "attempt"])
    assert bad.exit_code == 2 and "KEY=VALUE" in bad.output
    status = runner.invoke(cli, ["status", f"{task_id}-b"])
    assert status.exit_code == 0 and '"experiment": "v2"' in status.output


def test_webhooks_are_registered_listed_and_removed_alike(producer: Producer, kind: str) -> None:
    task_id = f"{kind}-hooks"
    producer.put_task({"id": task_id, "category": "debugging"})
    receiver = "https://93.184.215.14/evalq?token=abcdefgh12345678"  # a public address
    created = producer.add_webhook(task_id, {"url": receiver, "description": "ci"})
    assert created.secret.startswith("whsec_") and created.url.endswith("?token=***")
    [listed] = producer.webhooks(task_id)
    assert listed.id == created.id and listed.description == "ci"
    assert producer.webhook_deliveries(task_id, created.id) == []
    with pytest.raises(InvalidInput) as caught:
        producer.add_webhook(task_id, {"url": "ftp://example.com/hook"})
    assert [f for f, _ in caught.value.problems] == ["url"]
    producer.remove_webhook(task_id, created.id)
    assert producer.webhooks(task_id) == []
    with pytest.raises(NotFound):
        producer.remove_webhook(task_id, created.id)
    with pytest.raises(NotFound):
        producer.webhooks(f"{kind}-no-such-task")


def test_accepting_a_review_answers_alike(producer: Producer, kind: str) -> None:
    producer.submit(run(f"{kind}-not-held"))
    with pytest.raises(InvalidInput) as caught:
        producer.accept_review(f"{kind}-not-held", reason="looked")  # not flagged for review
    assert [f for f, _ in caught.value.problems] == ["review"]
    with pytest.raises(NotFound):
        producer.accept_review(f"{kind}-never-sent", reason="looked")
    with pytest.raises(InvalidInput) as caught:
        producer.unaccept_review(f"{kind}-not-held", reason="looked")  # never accepted
    assert [f for f, _ in caught.value.problems] == ["review"]


def test_a_review_decision_needs_a_reason_is_recorded_and_can_be_undone_alike(
    producer: Producer, kind: str, api: Server
) -> None:
    # one tool call in 1 s: spec 000's outlier, held by its merge
    usage = {"input_tokens": 800, "output_tokens": 200, "tool_calls": 1, "execution_time": 1}
    held = run(f"{kind}-too-fast", usage=usage, output=f"{kind}: done in one call")
    producer.submit(held)
    with workers_for(api):
        producer.wait([held["id"]], timeout=120 * PATIENCE)
    sid = held["id"]
    assert producer.get_result(sid)["review"] == "flagged"

    for reason in ("", "   ", "x" * (MAX_REASON_CHARS + 1)):
        with pytest.raises(InvalidInput) as caught:
            producer.accept_review(sid, reason=reason)
        assert caught.value.problems == [("reason", REASON_RULE)]
    refused = producer.get_result(sid)
    assert (refused["review"], refused["review_decisions"]) == ("flagged", [])

    accepted = producer.accept_review(sid, reason="  checked its logs by hand: a real fast run  ")
    assert (accepted.changed, accepted.review, accepted.task_id) == (True, "accepted", "t1")
    assert accepted.decision is not None
    assert (accepted.decision.action, accepted.decision.by) == ("accept", "rw")
    assert accepted.decision.reason == "checked its logs by hand: a real fast run"
    again = producer.accept_review(sid, reason="again")  # nothing changes, nothing recorded
    assert (again.changed, again.decision) == (False, accepted.decision)

    undone = producer.unaccept_review(sid, reason="the logs were another run's")
    assert (undone.changed, undone.review) == (True, "flagged")
    assert undone.baseline_version > accepted.baseline_version
    shown = producer.get_result(sid)
    assert shown["review"] == "flagged"
    assert [(d["action"], d["by"], d["reason"]) for d in shown["review_decisions"]] == [
        ("unaccept", "rw", "the logs were another run's"),
        ("accept", "rw", "checked its logs by hand: a real fast run"),
    ]
    assert producer.unaccept_review(sid, reason="held already").changed is False


def test_the_http_api_names_a_metadata_filter_given_twice(api: Server) -> None:
    answer = api.client("read").get(
        "/v1/tasks/t1/leaderboard", params=[("metadata.a", "1"), ("metadata.a", "2")]
    )
    assert answer.status_code == 422
    assert answer.json()["detail"][0]["field"] == "metadata.a"


# --- the HTTP client alone: keys, transport failures, asyncio -----------------------------------


def test_a_refused_key_is_unauthorized_and_changes_nothing(api: Server) -> None:
    before = api.counts()
    with HttpClient(api.url, None) as anonymous, pytest.raises(Unauthorized) as missing:
        anonymous.submit(run("unauth-1"))
    with HttpClient(api.url, api.keys["read"]) as reader, pytest.raises(Unauthorized) as scope:
        reader.submit(run("unauth-2"))
    with HttpClient(api.url, "evalq_not-a-key") as stranger, pytest.raises(Unauthorized):
        stranger.get_result("unauth-1")
    assert (missing.value.status, scope.value.status) == (401, 403)
    assert "'write' scope" in str(scope.value)
    assert api.counts() == before


def test_an_api_nobody_listens_on_is_an_upstream_failure_after_the_retries() -> None:
    with (
        HttpClient(f"http://127.0.0.1:{free_port()}", "k", retries=1) as client,
        pytest.raises(UpstreamFailure, match=r"unreachable \(ConnectError\) after 2 attempts"),
    ):
        client.get_result("r1")


def test_the_async_client_keeps_the_same_contract(api: Server) -> None:
    async def scenario() -> None:
        async with AsyncHttpClient(api.url, api.keys["rw"]) as client:
            assert (await client.submit(run("async-1"))).created
            assert not (await client.submit(run("async-1"))).created
            both = await client.submit_many([run("async-1"), run("async-2")])
            assert [s.created for s in both] == [False, True]
            with pytest.raises(Conflict):
                await client.submit(run("async-1", output="other"))
            with pytest.raises(InvalidInput) as caught:
                await client.submit(run("async-3", output="\x00"))
            assert caught.value.problems == [("output", NUL_RULE)]
            with pytest.raises(NotFound):
                await client.get_result("async-3")
            assert (await client.get_result("async-1"))["status"] in ("queued", "running", "done")
            board = await client.leaderboard("t1", metadata={"nobody": "has this"})
            assert board["entries"] == []
        async with AsyncHttpClient(api.url, api.keys["read"]) as reader:
            with pytest.raises(Unauthorized):
                await reader.submit(run("async-4"))

    asyncio.run(scenario())


def test_the_async_client_waits_for_an_evaluation(api: Server) -> None:
    async def scenario() -> dict[str, str]:
        async with AsyncHttpClient(api.url, api.keys["rw"]) as client:
            # reference outputs: tier 1 applies, so the run waits for a worker
            await client.put_task({"id": "t-ref", "reference_outputs": ["A careful fix."]})
            await client.submit(run("async-wait", task_id="t-ref", metadata={"run": "x"}))
            if not api.in_process:  # nothing evaluates it before a worker runs
                with pytest.raises(TimeoutError):
                    await client.wait(["async-wait"], timeout=0.3, poll=0.1)
            with workers_for(api):
                return await client.wait(["async-wait"], timeout=120 * PATIENCE, poll=0.2)

    assert asyncio.run(scenario()) == {"async-wait": "done"}


def test_the_async_client_accepts_and_unaccepts_with_a_reason(api: Server) -> None:
    usage = {"input_tokens": 800, "output_tokens": 200, "tool_calls": 1, "execution_time": 1}
    held = run("async-held", usage=usage, output="async: done in one call")

    async def scenario() -> list[ReviewDecided]:
        async with AsyncHttpClient(api.url, api.keys["rw"]) as client:
            await client.submit(held)
            with workers_for(api):
                await client.wait([held["id"]], timeout=120 * PATIENCE, poll=0.2)
            with pytest.raises(InvalidInput) as caught:
                await client.accept_review(held["id"], reason="")
            assert caught.value.problems == [("reason", REASON_RULE)]
            return [
                await client.accept_review(held["id"], reason="fast, and real"),
                await client.unaccept_review(held["id"], reason="not real after all"),
            ]

    accepted, undone = asyncio.run(scenario())
    assert (accepted.review, accepted.changed) == ("accepted", True)
    assert (undone.review, undone.changed) == ("flagged", True)
    assert undone.decision is not None and undone.decision.reason == "not real after all"


def test_an_error_answer_is_raised_at_once_never_resent(api: Server) -> None:
    """A 4xx is an answer, not a failure: it is raised at once, never re-sent."""
    requests: list[str] = []
    transport = httpx.HTTPTransport()

    class Counting(httpx.BaseTransport):
        def handle_request(self, request: httpx.Request) -> httpx.Response:
            requests.append(request.url.path)
            return transport.handle_request(request)

    with (
        HttpClient(api.url, api.keys["rw"], transport=Counting()) as client,
        pytest.raises(NotFound),
    ):
        client.get_result("never-sent")
    assert requests == ["/v1/submissions/never-sent"]


def test_a_submit_whose_answer_was_lost_is_retried_and_stored_once(api: Server) -> None:
    """A dropped reply after the server stored the run: the retry is safe, it is the same run."""
    relay = LossyRelay(int(api.url.rsplit(":", 1)[1]))
    try:
        with HttpClient(relay.url, api.keys["rw"], retries=2) as client:
            answer = client.submit(run("lost-answer"))
            assert client.get_result("lost-answer")["status"] in ("queued", "running", "done")
    finally:
        relay.close()
    assert relay.lost_answers and relay.lost_answers[0].startswith(b"HTTP/1.1 201")
    assert answer == Submitted("lost-answer", created=False)  # the first attempt stored it
    with session_scope(api.db_url) as session:
        row = session.get(SubmissionRow, "lost-answer")
        assert row is not None and row.enqueue_count == 1  # enqueued once, not twice


def test_without_retries_a_lost_answer_is_an_upstream_failure(api: Server) -> None:
    relay = LossyRelay(int(api.url.rsplit(":", 1)[1]))
    try:
        with (
            HttpClient(relay.url, api.keys["rw"], retries=0) as client,
            pytest.raises(UpstreamFailure, match=r"RemoteProtocolError\) after 1 attempts"),
        ):
            client.submit(run("lost-once"))
    finally:
        relay.close()


def test_a_broker_the_server_cannot_reach_is_broker_unavailable(tmp_path: Path) -> None:
    """The HTTP client's 503: `BrokerUnavailable` naming what to send again, as in-process."""
    broker = RedisServer(tmp_path)
    broker.start()
    with fresh_database("sqlite", tmp_path) as db_url:
        with session_scope(db_url) as session:
            key = create_key(session, name="rw", scopes=["read", "write"])
        port = free_port()
        env = process_env(pipeline_settings(db_url, broker.url))
        args = ["api", "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning"]
        process = start(args, env, tmp_path / "api.log", cwd=tmp_path)
        url = f"http://127.0.0.1:{port}"
        try:
            wait_for_http(f"{url}/healthz", process, timeout=90, what="evalq api", ok=(200, 503))
            with HttpClient(url, key) as client:
                # reference outputs: tier 1 applies, so the submissions need the broker
                client.put_task({"id": "t1", "reference_outputs": ["A careful fix."]})
                broker.stop()
                with pytest.raises(BrokerUnavailable) as caught:
                    client.submit_many([run("b1"), run("b2")])
                assert caught.value.unsent == ["b1", "b2"]
                assert "send them again" in str(caught.value)
                broker.start()
                assert [s.created for s in client.submit_many([run("b1"), run("b2")])] == [
                    False,
                    False,
                ]
                assert broker.waiting() == 2  # the re-send enqueued each once
        finally:
            stop(process)
            broker.stop()


def test_the_readme_service_snippet_runs_as_written(api: Server) -> None:
    """The README's HTTP client example, against a real server (only its URL replaced)."""
    readme = (ROOT / "README.md").read_text()
    using = readme[readme.index("## Using it") :]
    snippet = re.findall(r"```python\n(.*?)```", using, re.S)[1]
    assert "HttpClient(" in snippet
    code = snippet.replace("http://127.0.0.1:8000", api.url)
    with workers_for(api):
        result = subprocess.run(
            [sys.executable, "-c", code],
            env=process_env({"api_key": api.keys["rw"]}),
            capture_output=True,
            text=True,
            timeout=300 * PATIENCE,
        )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "{'run-43': 'done'}"
    with HttpClient(api.url, api.keys["read"]) as client:
        assert client.get_result("run-43")["metadata"]["experiment"] == "prompt-v2"
        board = client.leaderboard("fix-parser", metadata={"experiment": "prompt-v2"})
    assert [e["submission_id"] for e in board["entries"]] == ["run-43"]


@pytest.mark.parametrize("encoding", ["protobuf", "json"])
def test_import_otlp_answers_alike_through_both_clients(
    producer: Producer, kind: str, encoding: str
) -> None:
    """The same SDK trace: new the first time, known the second, the same submission stored;
    a trace that cannot be mapped names its span and attribute and stores nothing."""
    producer.put_task(review_task(f"otlp-{kind}-{encoding}"))
    spans = two_agent_run(
        resource={"evalq.task_id": f"otlp-{kind}-{encoding}", "evalq.tool": "otel-agents"}
    )
    data: bytes | dict[str, Any] = (
        as_protobuf(spans) if encoding == "protobuf" else as_otlp_json(spans)
    )
    importer = cast(Any, producer)
    [first] = importer.import_otlp(data)
    assert first == Submitted(f"otlp-{trace_id_of(spans)}", True)
    assert importer.import_otlp(data) == [Submitted(first.id, False)]
    stored = producer.get_result(first.id)
    assert stored["task_id"] == f"otlp-{kind}-{encoding}"

    broken = two_agent_run(skip=("gen_ai.usage.output_tokens",))
    with pytest.raises(InvalidInput) as caught:
        importer.import_otlp(as_protobuf(broken), task_id="review-1")
    assert any(field.endswith(".gen_ai.usage.output_tokens") for field, _ in caught.value.problems)
    assert_not_stored(producer, f"otlp-{trace_id_of(broken)}")
