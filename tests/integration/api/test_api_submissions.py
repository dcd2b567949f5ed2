"""POST and GET /v1/submissions against the real server: idempotency, 409, 422, 413, 404."""

from __future__ import annotations

import json

import pytest

from tests.integration.api.conftest import TASK, Server, submission


def problems(response_json: dict) -> dict[str, str]:
    return {p["field"]: p["rule"] for p in response_json["detail"]}


REF_TASK = TASK | {"id": "t-ref", "reference_outputs": ["A careful fix."]}
"""A task whose runs fan out (tier 1 applies): they wait for a worker."""


def test_the_same_submission_twice_is_one_job(api: Server) -> None:
    client = api.client()
    assert client.put("/v1/tasks/t-ref", json=REF_TASK).status_code in (200, 201)
    first = client.post("/v1/submissions", json=submission("idem-1", task_id="t-ref"))
    assert first.status_code == 201
    assert first.json() == {
        "id": "idem-1",
        "created": True,
        "status": "queued",
        "url": "/v1/submissions/idem-1",
    }
    before = api.counts()
    again = client.post("/v1/submissions", json=submission("idem-1", task_id="t-ref"))
    assert again.status_code == 200 and again.json()["created"] is False
    assert api.counts() == before
    assert client.get("/v1/submissions/idem-1").json()["status"] == "queued"


def test_an_unevaluated_submission_has_no_score_keys(api: Server) -> None:
    client = api.client()
    assert client.put("/v1/tasks/t-ref", json=REF_TASK).status_code in (200, 201)
    sent = client.post("/v1/submissions", json=submission("unevaluated-1", task_id="t-ref"))
    assert sent.status_code == 201
    skipped = {
        "judge": "no judge configured (EVALQ_JUDGE_MODEL unset)",
        "graph": "the submission has no trace",
    }
    assert client.get("/v1/submissions/unevaluated-1").json() == {
        "id": "unevaluated-1",
        "task_id": "t-ref",
        "status": "queued",
        "error": None,
        "review": None,
        "review_decisions": [],
        "metadata": {},
        "usage_source": "self-reported",  # no trace: its usage is its own word
        # tiers that cannot apply are stored as skipped at submit (none is sent to a worker)
        "tiers": {
            tier: {"status": "skipped", "metrics": {"reason": reason}, "error": None}
            for tier, reason in skipped.items()
        },
    }


def test_a_submission_with_nothing_to_fan_out_is_evaluated_as_it_is_stored(api: Server) -> None:
    client = api.client()
    sent = client.post("/v1/submissions", json=submission("at-intake-1"))  # no tier applies
    assert sent.status_code == 201
    assert sent.json()["status"] == "done"
    stored = client.get("/v1/submissions/at-intake-1").json()
    assert stored["status"] == "done" and stored["evaluated_at"] is not None


def test_the_same_id_with_other_content_is_409_naming_it(api: Server) -> None:
    client = api.client()
    assert client.post("/v1/submissions", json=submission("conf-1")).status_code == 201
    before = api.counts()
    other = submission("conf-1", output="a different run")
    response = client.post("/v1/submissions", json=other)
    assert response.status_code == 409
    assert "'conf-1'" in response.json()["detail"]
    assert api.counts() == before


def test_an_unknown_task_is_422_on_task_id(api: Server) -> None:
    before = api.counts()
    response = api.client().post("/v1/submissions", json=submission("u-1", task_id="nope"))
    assert response.status_code == 422
    assert problems(response.json()) == {"task_id": "unknown task 'nope'; define it first"}
    assert api.counts() == before


def test_a_batch_is_all_or_nothing(api: Server) -> None:
    client = api.client()
    bad_usage = submission("b-2", usage={"input_tokens": 5, "output_tokens": 5, "total_tokens": 9})
    before = api.counts()
    response = client.post(
        "/v1/submissions", json={"submissions": [submission("b-1"), bad_usage, submission("b-3")]}
    )
    assert response.status_code == 422
    assert problems(response.json()) == {
        "submissions.1.usage": "Value error, total_tokens must equal input_tokens + output_tokens"
    }
    unknown_task = {"submissions": [submission("b-1"), submission("b-4", task_id="nope")]}
    assert client.post("/v1/submissions", json=unknown_task).status_code == 422
    assert api.counts() == before
    assert client.get("/v1/submissions/b-1").status_code == 404

    good = client.post(
        "/v1/submissions", json={"submissions": [submission("b-1"), submission("b-3")]}
    )
    assert good.status_code == 201
    assert [(s["id"], s["created"]) for s in good.json()["submissions"]] == [
        ("b-1", True),
        ("b-3", True),
    ]
    mixed = client.post(
        "/v1/submissions", json={"submissions": [submission("b-1"), submission("b-5")]}
    )
    assert mixed.status_code == 201
    assert [s["created"] for s in mixed.json()["submissions"]] == [False, True]
    known = client.post("/v1/submissions", json={"submissions": [submission("b-3")]})
    assert known.status_code == 200


def test_a_batch_larger_than_the_limit_is_rejected(api: Server) -> None:
    before = api.counts()
    batch = {"submissions": [submission(f"lim-{i}") for i in range(51)]}  # EVALQ_API_MAX_BATCH=50
    response = api.client().post("/v1/submissions", json=batch)
    assert response.status_code == 422
    assert problems(response.json()) == {
        "submissions": "at most 50 submissions per request (EVALQ_API_MAX_BATCH)"
    }
    assert api.counts() == before


@pytest.mark.parametrize(
    ("body", "field", "rule"),
    [
        (
            submission("v-1", usage={"total_tokens": -1}),
            "usage.total_tokens",
            "greater than or equal to 0",
        ),
        (
            submission("v-1", usage={"total_tokens": 2**40}),
            "usage.total_tokens",
            "less than or equal to 2147483647",  # the wire model's bound, as at every door
        ),
        (
            submission("v-1", usage={"total_tokens": 10, "iterations": 0}),
            "usage.iterations",
            "greater than or equal to 1",
        ),
        (submission("v-1", variant="X1"), "variant", "should match pattern"),
        (submission("v-1", id=""), "id", "at least 1 character"),
        (submission("v-1", tool="a\x00b"), "tool", "NUL"),
        (submission("v-1", surprise=1), "surprise", "Extra inputs are not permitted"),
        ({k: v for k, v in submission("v-1").items() if k != "usage"}, "usage", "Field required"),
        ([submission("v-1")], "(root)", "valid dictionary"),
        ("just a string", "(root)", "valid dictionary"),
        ({"submissions": []}, "submissions", "at least 1 item"),
    ],
)
def test_invalid_fields_are_422_with_field_and_rule(
    api: Server, body: object, field: str, rule: str
) -> None:
    before = api.counts()
    response = api.client().post("/v1/submissions", json=body)
    assert response.status_code == 422, response.text
    found = problems(response.json())
    assert field in found and rule in found[field], found
    assert api.counts() == before


@pytest.mark.parametrize(
    ("raw", "rule"),
    [
        (b'{"id": "x",', "not valid JSON"),
        (b'{"id": NaN}', "NaN is not allowed"),
        (b'{"id": Infinity}', "Infinity is not allowed"),
        (b'{"n": 1e999}', "number must be finite"),
        (b'{"n": ' + b"9" * 5000 + b"}", "integer out of range"),
        (b"[" * 100_000 + b"]" * 100_000, "nested deeper"),
        (b'{"tool": "\\ud800"}', "lone surrogates"),
        (b"\xff\xfe{}", "UTF-8"),
        (b"", "not valid JSON"),
    ],
)
def test_malformed_json_is_422_never_500(api: Server, raw: bytes, rule: str) -> None:
    before = api.counts()
    response = api.client().post(
        "/v1/submissions", content=raw, headers={"Content-Type": "application/json"}
    )
    assert response.status_code == 422, response.text
    assert any(rule in p["rule"] for p in response.json()["detail"]), response.text
    assert api.counts() == before


def test_a_body_over_the_limit_is_413_before_it_is_read(api: Server) -> None:
    before = api.counts()
    huge = json.dumps(submission("big-1", output="x" * (5 * 1024 * 1024))).encode()
    declared = api.client().post(
        "/v1/submissions", content=huge, headers={"Content-Type": "application/json"}
    )
    assert declared.status_code == 413
    assert "EVALQ_API_MAX_BODY_BYTES" in declared.json()["detail"]

    def chunks():  # no Content-Length: counted as it arrives
        for start in range(0, len(huge), 65536):
            yield huge[start : start + 65536]

    streamed = api.client().post(
        "/v1/submissions", content=chunks(), headers={"Content-Type": "application/json"}
    )
    assert streamed.status_code == 413
    assert api.counts() == before


def test_a_wrong_content_type_is_415(api: Server) -> None:
    body = json.dumps(submission("ct-1"))
    for content_type in ("text/plain", "application/x-www-form-urlencoded", "multipart/form-data"):
        response = api.client().post(
            "/v1/submissions", content=body, headers={"Content-Type": content_type}
        )
        assert response.status_code == 415
    ok = api.client().post(
        "/v1/submissions", content=body, headers={"Content-Type": "application/json; charset=utf-8"}
    )
    assert ok.status_code == 201


def test_unknown_submissions_are_404(api: Server) -> None:
    client = api.client()
    for sid in ("missing", "a/b/c", "x" * 300, "ünïcode"):
        response = client.get(f"/v1/submissions/{sid}")
        assert response.status_code == 404, sid
        assert "does not exist" in response.json()["detail"]
    nul = client.get("/v1/submissions/%00")  # no id the store can hold (test_api_params.py)
    assert nul.status_code == 422 and nul.json()["detail"][0]["field"] == "submission_id"


def test_put_task_path_and_body_ids(api: Server) -> None:
    client = api.client()
    created = client.put("/v1/tasks/t-put", json={"category": "refactoring"})
    assert created.status_code == 201
    assert created.json()["task"]["id"] == "t-put" and created.json()["changed"] is True
    same = client.put("/v1/tasks/t-put", json={"id": "t-put", "category": "refactoring"})
    assert same.status_code == 200 and same.json() == {
        **created.json(),
        "created": False,
        "changed": False,
    }
    before = api.counts()
    mismatch = client.put("/v1/tasks/t-put", json={"id": "other", "category": "refactoring"})
    assert mismatch.status_code == 422
    assert problems(mismatch.json()) == {"id": "must equal the task id in the path ('t-put')"}
    profile = client.put("/v1/tasks/t-put", json={"category": "refactoring", "profile": "strict"})
    assert profile.status_code == 422 and "profile" in problems(profile.json())
    category = client.put("/v1/tasks/t-put", json={"category": "cooking"})
    assert category.status_code == 422 and "category" in problems(category.json())
    assert api.counts() == before
