"""Labels over a real `evalq api`: scopes, 422s naming the field and rule with nothing stored,
and `HttpClient` / `AsyncHttpClient` answering as the in-process client does."""

from __future__ import annotations

import asyncio

import pytest
from sqlalchemy import func, select

from evalq.core.errors import InvalidInput, NotFound
from evalq.core.labels import SCORE_RULE, unknown_run_rule
from evalq.producer.api.routes.labels import BODY_RULE
from evalq.producer.http import AsyncHttpClient, HttpClient
from evalq.store.db import session_scope
from evalq.store.models import LabelRow
from tests.integration.api.conftest import Server, submission

SIX = {"constructiveness": 6}


def stored(api: Server) -> int:
    with session_scope(api.db_url) as session:
        return int(session.scalar(select(func.count()).select_from(LabelRow)) or 0)


@pytest.fixture(scope="module")
def runs(api: Server) -> list[str]:
    ids = ["lab-1", "lab-2"]
    for sid in ids:
        assert api.client().post("/v1/submissions", json=submission(sid)).status_code == 201
    return ids


def test_write_needs_the_write_scope_and_bad_bodies_are_named(api: Server, runs: list[str]) -> None:
    body = {"labels": [{"submission_id": runs[0], "labeller": "ann", "passed": True}]}
    assert api.client("read").post("/v1/labels", json=body).status_code == 403
    assert api.client(None).get("/v1/labels").status_code == 401
    before = stored(api)
    cases = [
        ([], [{"field": "(root)", "rule": BODY_RULE}]),
        ({"labels": [], "x": 1}, [{"field": "(root)", "rule": BODY_RULE}]),
        (
            {"labels": [{"submission_id": runs[0], "labeller": "ann", "scores": {"x": 3}}]},
            None,
        ),
        (
            {"labels": [{"submission_id": "ghost", "labeller": "ann", "passed": True}]},
            [{"field": "[0].submission_id", "rule": unknown_run_rule("ghost")}],
        ),
        (
            {
                "labels": [
                    {"submission_id": runs[0], "labeller": "ann", "passed": True},
                    {
                        "submission_id": runs[1],
                        "labeller": "ann",
                        "scores": {"constructiveness": 6},
                    },
                ]
            },
            [{"field": "[1].scores.constructiveness", "rule": f"Value error, {SCORE_RULE}"}],
        ),
    ]
    for data, detail in cases:
        answer = api.client("write").post("/v1/labels", json=data)
        assert answer.status_code == 422, answer.text
        if detail is None:
            assert [p["field"] for p in answer.json()["detail"]] == ["[0].scores.x.[key]"]
        else:
            assert answer.json()["detail"] == detail
    assert stored(api) == before


def test_http_clients_round_trip_labels(api: Server, runs: list[str]) -> None:
    with HttpClient(api.url, api.keys["rw"]) as http:
        label = http.add_label(
            {"submission_id": runs[0], "labeller": "http", "scores": {"technical_accuracy": 5}}
        )
        assert label.task_id == "t1" and label.scores == {"technical_accuracy": 5}
        with pytest.raises(InvalidInput) as caught:
            http.add_label({"submission_id": "ghost", "labeller": "http", "passed": True})
        assert caught.value.problems == [("submission_id", unknown_run_rule("ghost"))]
        with pytest.raises(InvalidInput) as local:  # refused before it is sent
            http.add_label({"submission_id": runs[0], "labeller": "http", "passed": "y"})
        assert [f for f, _ in local.value.problems] == ["passed"]
        with pytest.raises(NotFound):
            http.labels(task_id="nowhere")

    async def from_asyncio() -> list[str]:
        async with AsyncHttpClient(api.url, api.keys["rw"]) as aio:
            await aio.add_labels(
                [{"submission_id": runs[1], "labeller": "aio", "recommendation": "accept"}]
            )
            return [x.labeller for x in await aio.labels(task_id="t1")]

    assert {"http", "aio"} <= set(asyncio.run(from_asyncio()))
    listed = api.client("read").get("/v1/labels", params={"labeller": "aio"})
    assert listed.status_code == 200
    [only] = listed.json()["labels"]
    assert (only["submission_id"], only["recommendation"]) == (runs[1], "accept")


def test_judge_agreement_is_served(api: Server, runs: list[str]) -> None:
    with HttpClient(api.url, api.keys["read"]) as http:
        report = http.judge_agreement("t1")
        assert report.tasks == ["t1"] and report.min_labels == 30 and report.rubrics == []
        with pytest.raises(InvalidInput) as caught:
            http.judge_agreement("no-such-*")
        assert [f for f, _ in caught.value.problems] == ["tasks"]
    assert api.client(None).get("/v1/judge/agreement", params={"tasks": "t1"}).status_code == 401


def test_the_label_queue_is_served(api: Server, runs: list[str]) -> None:
    with HttpClient(api.url, api.keys["read"]) as http:
        assert http.label_queue("t1").candidates == []  # no cascade: nothing asks for people
        with pytest.raises(NotFound):
            http.label_queue("nowhere")
    answer = api.client("read").get("/v1/labels/queue", params={"task_id": "t1"})
    assert answer.status_code == 200 and answer.json() == {"candidates": []}
