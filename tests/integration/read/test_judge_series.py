"""A change of judge, end to end on both databases (issue 48, part 3): runs judged by one judge
(a model of the OpenAI stub, over real HTTP), the judge changed, more runs judged by the new
one; the break is marked on the board, the comparison, the gate and a monitor; `evalq judge
rejudge` draws the bridging sample as a new series; the old scores are left as they were.

The stub's two judges score each run by the quality the run's output names (``quality=K``):
judge-a gives K, judge-b gives K - 1 (at least 1), so the new judge is stricter by about
0.25 on the [0, 1] scale.
"""

from __future__ import annotations

import asyncio
import html
import json
import re
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select
from tests.support.openai_stub import OpenAIStub, schema_instance
from tests.support.processes import PATIENCE
from tests.support.settings import configure
from tests.support.webhook_receiver import TEST_WEBHOOK_KEY
from typer.testing import CliRunner

from evalq.core.errors import InvalidInput, NotFound
from evalq.core.judge_series import JudgeHistory
from evalq.core.schemas import Task
from evalq.core.settings import Settings
from evalq.producer.api.app import create_app
from evalq.producer.cli import app
from evalq.producer.http.aio import AsyncHttpClient
from evalq.read import monitors, served
from evalq.read.boards.query import BoardQuery
from evalq.report.page import render_html
from evalq.service.client import Client
from evalq.store.db import session_scope
from evalq.store.keys import create_key
from evalq.store.models import (
    EvaluationRow,
    JudgedResultRow,
    TierResultRow,
    WebhookDeliveryRow,
)
from evalq.workers.bootstrap import worker_app
from evalq.workers.embedded import embedded_worker

pytestmark = [pytest.mark.integration, pytest.mark.both_databases]

TASK = Task.model_validate(
    {
        "id": "review-judged",
        "category": "data_analysis",
        "kind": "peerread",
        "success_criteria": [{"type": "file_exists", "file_path": "review.md"}],
    }
)
QUALITY = re.compile(r"quality=(\d)")


def stub_answer(request: dict[str, Any]) -> dict[str, Any]:
    """judge-a: the run's quality; judge-b: one less (at least 1)."""
    text = json.dumps(request["messages"])
    quality = int(QUALITY.findall(text)[-1])
    score = quality if request["model"] == "judge-a" else max(1, quality - 1)
    schema = request["response_format"]["json_schema"]["schema"]
    answer: dict[str, Any] = schema_instance(schema, score=score)
    return answer


def run(sid: str, model: str, quality: int) -> dict[str, Any]:
    return {
        "id": sid,
        "task_id": TASK.id,
        "tool": "reviewer",
        "model": model,
        "usage": {"input_tokens": 900 + 37 * len(sid), "output_tokens": 300, "tool_calls": 3},
        "evidence": {"files_created": ["review.md"]},
        "output": f"Review {sid}: the method is sound, add an ablation. quality={quality}",
    }


def named(model: str) -> str:
    """The judge model without the server it was reached at (``openai:judge-a@http://...``)."""
    return model.split("@")[0]


@pytest.fixture
def stub() -> Iterator[OpenAIStub]:
    with OpenAIStub(answer=stub_answer) as server:
        yield server


def judged_by(db_url: str, base_url: str, model: str, runs: list[dict[str, Any]]) -> None:
    """Evaluate ``runs`` in-process with the judge ``model`` of the stub."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.delenv("EVALQ_BROKER_URL", raising=False)
        configure(
            monkeypatch, database_url=db_url, judge_model=f"openai:{model}", judge_base_url=base_url
        )
        client = Client(app=worker_app())
        with embedded_worker(client.app):
            client.put_task(TASK)
            ids = [r.id for r in client.submit_many(runs)]
            assert set(client.wait(ids, timeout=300 * PATIENCE).values()) == {"done"}
        client.app.close()
    configure(pytest.MonkeyPatch())


def stored_scores(url: str) -> dict[str, Any]:
    with session_scope(url) as session:
        evaluations = {
            e.submission_id: e.scores
            for e in session.scalars(select(EvaluationRow).where(EvaluationRow.task_id == TASK.id))
        }
        tiers = {
            t.submission_id: t.metrics
            for t in session.scalars(select(TierResultRow).where(TierResultRow.tier == "judge"))
        }
    return {"evaluations": evaluations, "judge tiers": tiers}


async def remote_history(api: Any, key: str) -> JudgeHistory:
    """The history through `AsyncHttpClient` (its wire calls are the sync client's too)."""
    transport = httpx.ASGITransport(app=api)
    async with AsyncHttpClient("http://testserver", api_key=key, transport=transport) as remote:
        return await remote.judge_history(TASK.id)


def gate(url: str, monkeypatch: pytest.MonkeyPatch) -> tuple[int, str]:
    configure(monkeypatch, database_url=url)
    args = ["gate", TASK.id, "--by", "model", "--baseline", "m-old", "--candidate", "m-new"]
    result = CliRunner().invoke(app, args)
    return result.exit_code, " ".join(result.output.split())


def test_a_judge_change_is_bridged_marked_at_every_door_and_old_scores_stay(
    db_url: str, stub: OpenAIStub, monkeypatch: pytest.MonkeyPatch
) -> None:
    qualities = [2, 3, 4, 5, 3, 4, 2, 5, 4, 3]
    before = [run(f"old-{i}", "m-old", q) for i, q in enumerate(qualities)]
    before += [run(f"new-{i}", "m-new", q) for i, q in enumerate(qualities)]
    judged_by(db_url, stub.base_url, "judge-a", before)
    hooks = {"webhook_key": TEST_WEBHOOK_KEY, "webhook_allow_private": True}
    client = Client(Settings(database_url=db_url, **hooks))
    one = client.judge_history(TASK.id)
    assert [named(s.identity.model) for s in one.series] == ["openai:judge-a"]
    assert not one.mixed and one.mark is None and one.bridges == []
    status, output = gate(db_url, monkeypatch)
    assert status == 0, output
    assert "judge changed" not in output

    # the judge changes: the candidate's next runs are scored by judge-b
    after = [run(f"later-{i}", "m-new", q) for i, q in enumerate(qualities)]
    judged_by(db_url, stub.base_url, "judge-b", after)
    old_scores = stored_scores(db_url)
    history = client.judge_history(TASK.id)
    assert [(named(s.identity.model), s.scored) for s in history.series] == [
        ("openai:judge-a", 20),
        ("openai:judge-b", 10),
    ]
    assert history.mixed and history.mark is not None
    (bridge,) = history.bridges
    assert (bridge.status, bridge.pairs, bridge.needed) == ("not bridged", 0, None)
    assert history.mark.startswith("judge changed: scores of 2 judges mixed")
    assert "not bridged" in history.mark

    # every door says so
    with session_scope(db_url) as session:
        board = served.board(session, BoardQuery(task_id=TASK.id))
        compared = served.comparison(session, tasks=TASK.id, by="model", values=["m-old", "m-new"])
        report = served.report(session, task_id=TASK.id)
    assert board.judge_break == history.mark
    assert compared.judge_break == history.mark
    assert report.leaderboard.judge_break == history.mark
    assert f'<p class="note judge-break">{html.escape(history.mark)}</p>' in render_html(report)
    status, output = gate(db_url, monkeypatch)
    assert status == 5, output  # a break not bridged: the difference may be the judges'
    assert "judge changed" in output and "not bridged" in output
    shown = CliRunner().invoke(app, ["leaderboard", TASK.id])
    assert "judge changed: scores of 2 judges mixed" in " ".join(shown.output.split())
    hook = client.add_webhook(TASK.id, {"url": "http://127.0.0.1:9/hook"})
    client.set_monitor("judged", {"tasks": TASK.id, "alert": 1e9, "min_n": 1, "last_runs": 5})
    with session_scope(db_url) as session:  # checked as it is set, and again: one event
        monitors.check(session, settings=client.settings, task_ids=[TASK.id])
    with session_scope(db_url) as session:
        (state,) = monitors.get_monitor(session, name="judged").states
        (event,) = session.scalars(
            select(WebhookDeliveryRow.payload).where(WebhookDeliveryRow.submission_id.is_(None))
        ).all()
    assert state.state == "alert" and state.judge_break == history.mark
    assert event is not None and event["monitors"][0]["judge_break"] == history.mark
    client.remove_webhook(TASK.id, hook.id)  # read, not sent: no receiver listens

    # the bridge: judge-b re-judges the runs judge-a scored, as many as the power needs
    configure(monkeypatch, database_url=db_url, judge_model="openai:judge-b")
    configure(monkeypatch, judge_base_url=stub.base_url)
    rejudged = CliRunner().invoke(app, ["judge", "rejudge", TASK.id, "--json"])
    assert rejudged.exit_code == 0, rejudged.output
    bridged = json.loads(rejudged.output)
    (bridge_json,) = bridged["bridges"]
    assert bridge_json["status"] == "bridged", bridge_json
    assert bridge_json["pairs"] >= bridge_json["needed"] >= 6
    assert bridge_json["bias"] < 0 and bridge_json["bias_high"] < 0  # judge-b is stricter
    assert bridge_json["bias_low"] <= -0.2 <= bridge_json["bias_high"] + 0.05
    assert bridge_json["agreement"] is not None and bridge_json["agreement_low"] is not None
    assert bridged["series"][1]["rejudged"] == bridge_json["pairs"]

    # old scores unchanged: evaluations, judge tiers, and judge-a's series all as they were
    assert stored_scores(db_url) == old_scores
    with session_scope(db_url) as session:
        rows = session.scalars(select(JudgedResultRow)).all()
    by_source = {(named(r.identity["model"]), r.source) for r in rows}
    assert by_source == {
        ("openai:judge-a", "tier"),
        ("openai:judge-b", "tier"),
        ("openai:judge-b", "rejudge"),
    }
    assert sum(named(r.identity["model"]) == "openai:judge-a" for r in rows) == 20

    # after the bridge: the gate decides on the scores again, and still names the break
    status, output = gate(db_url, monkeypatch)
    assert status != 5, output
    assert "judge changed" in output and " bridged (" in output

    # the HTTP API and its client serve the same history; a bad detect is refused
    with session_scope(db_url) as session:
        key = create_key(session, name="judges", scopes=["read"])
    settings = Settings(database_url=db_url, auth_required=True)
    headers = {"Authorization": f"Bearer {key}"}
    expected = Client(settings).judge_history(TASK.id)
    with TestClient(create_app(settings)) as http:
        served_body = http.get(f"/v1/tasks/{TASK.id}/judges", headers=headers)
        bad = http.get(f"/v1/tasks/{TASK.id}/judges", params={"detect": 2}, headers=headers)
        leaderboard = http.get(f"/v1/tasks/{TASK.id}/leaderboard", headers=headers).json()
    assert asyncio.run(remote_history(create_app(settings), key)) == expected
    assert served_body.status_code == 200
    assert served_body.json() == expected.model_dump(mode="json")
    assert bad.status_code == 422 and "detect" in bad.text
    assert leaderboard["judge_break"] == expected.mark
    with TestClient(create_app(settings)) as ui:  # the board page, signed in
        first = ui.get(f"/ui/tasks/{TASK.id}")
        csrf = re.findall(r'name="csrf" value="([^"]+)"', first.text)[0]
        signed = {"api_key": key, "next": f"/ui/tasks/{TASK.id}", "csrf": csrf}
        page = ui.post("/ui/login", data=signed)
    assert page.status_code == 200
    assert 'id="judge-break"' in page.text and "judge changed: scores of 2 judges" in page.text
    refused = CliRunner().invoke(app, ["judge", "series", TASK.id, "--detect", "0"])
    assert refused.exit_code == 2 and "detect" in refused.output


def test_bad_requests_are_refused_naming_the_field_and_store_nothing(
    db_url: str, stub: OpenAIStub, monkeypatch: pytest.MonkeyPatch
) -> None:
    Client(Settings(database_url=db_url)).put_task(TASK)
    judged = Client(Settings(database_url=db_url, judge_model="openai:judge-b"))
    unjudged = Client(Settings(database_url=db_url))
    with pytest.raises(InvalidInput) as runs:
        judged.rejudge(TASK.id, runs=0)
    with pytest.raises(InvalidInput) as detect:
        judged.judge_history(TASK.id, detect=1.5)
    with pytest.raises(InvalidInput) as judge:
        unjudged.rejudge(TASK.id)
    with pytest.raises(NotFound):
        judged.judge_history("no-such-task")
    assert [p[0] for p in runs.value.problems] == ["runs"]
    assert [p[0] for p in detect.value.problems] == ["detect"]
    assert [p[0] for p in judge.value.problems] == ["judge_model"]
    configure(monkeypatch, database_url=db_url, judge_model="openai:judge-b")
    configure(monkeypatch, judge_base_url=stub.base_url)
    refused = CliRunner().invoke(app, ["judge", "rejudge", TASK.id, "--runs", "0"])
    assert refused.exit_code == 2 and "runs" in refused.output
    with session_scope(db_url) as session:
        assert session.scalars(select(JudgedResultRow)).all() == []
    assert stub.requests == 0  # nothing was asked of the judge
