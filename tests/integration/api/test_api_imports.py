"""POST /v1/imports/{format} on a real `evalq api` (both databases): the same answer as
`evalq import` and the HTTP clients give, a dry run by default, a second import creating
nothing, and a bad file refused by line with nothing stored."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from evalq.core.errors import InvalidInput
from evalq.producer.cli import app as cli
from evalq.producer.http import AsyncHttpClient, HttpClient
from evalq.producer.importers.answer import ImportAnswer
from evalq.producer.importers.apply import import_file
from evalq.service.client import Client
from evalq.store import queries
from evalq.store.db import session_scope
from tests.integration.api.conftest import Server

pytestmark = pytest.mark.both_databases  # "imported before" is SQL over each database

SAMPLES = Path(__file__).parents[2] / "data" / "importers"
OPENAI_ID = "openai-evals-outputitem_67e5796c28e081909917bf79f6e6214d"
CASES: list[tuple[str, str, dict[str, str] | None]] = [
    ("promptfoo", "promptfoo_results.json", None),
    ("inspect", "inspect_mmlu.eval", None),
    ("openai-evals", "openai_evals_export.jsonl", None),
    (
        "jsonl",
        "oaieval_record.jsonl",
        {
            "where": "type=match",
            "id_col": "sample_id",
            "task_id": "test-match",
            "output_col": "data.sampled",
            "score_col": "data.correct",
        },
    ),
    (
        "csv",
        "promptfoo_output.csv",
        {"task_id": "pirate", "output_col": "body", "score_col": "RESULT"},
    ),
]


def cli_args(name: str, path: Path, columns: dict[str, str] | None) -> list[str]:
    options = [f"--{key.replace('_', '-')}={value}" for key, value in (columns or {}).items()]
    return ["import", name, str(path), *options]


@pytest.mark.parametrize(("name", "sample", "columns"), CASES)
def test_every_door_gives_the_same_dry_run_answer(
    api: Server, name: str, sample: str, columns: dict[str, str] | None
) -> None:
    raw = (SAMPLES / sample).read_bytes()
    params: dict[str, Any] = dict(columns or {})
    before = api.counts()
    over_http = api.client().post(f"/v1/imports/{name}", content=raw, params=params)
    assert over_http.status_code == 200, over_http.text
    answer = ImportAnswer.model_validate(over_http.json())
    assert not answer.applied and answer.new_submissions
    with HttpClient(api.url, api.keys["rw"]) as http:
        assert http.import_file(name, raw, columns=columns) == answer

    async def from_async() -> ImportAnswer:
        async with AsyncHttpClient(api.url, api.keys["rw"]) as http:
            return await http.import_file(name, raw, columns=columns)

    assert asyncio.run(from_async()) == answer
    with Client() as client:
        assert import_file(client, name, raw, columns=columns)[0] == answer
    printed = CliRunner().invoke(cli, cli_args(name, SAMPLES / sample, columns))
    assert printed.exit_code == 0, printed.output
    assert printed.output.splitlines()[0] == answer.summary()
    assert api.counts() == before  # a dry run stores nothing


def test_an_applied_import_is_stored_once_and_a_bad_file_is_refused_by_line(api: Server) -> None:
    raw = (SAMPLES / "openai_evals_export.jsonl").read_bytes()
    with HttpClient(api.url, api.keys["rw"]) as http:
        applied = http.import_file("openai-evals", raw, apply=True)
        assert (applied.applied, applied.new_submissions) == (True, [OPENAI_ID])
        again = http.import_file("openai-evals", raw, apply=True)
        assert (again.new_tasks, again.new_submissions, again.imported_before) == (
            [],
            [],
            [OPENAI_ID],
        )
        with session_scope(api.db_url) as session:
            row = queries.get_submission_row(session, submission_id=OPENAI_ID)
            assert row.payload["metadata"]["imported_score"] == 1.0

        broken = raw.replace(b'"usage"', b'"u"')
        before = api.counts()
        refused = api.client().post(
            "/v1/imports/openai-evals", content=broken, params={"apply": "true"}
        )
        assert refused.status_code == 422
        assert refused.json()["detail"] == [
            {
                "field": "line 3: data[0].sample.usage",
                "rule": "missing: must be an object (the tokens used)",
            }
        ]
        with pytest.raises(InvalidInput) as caught:
            http.import_file("openai-evals", broken, apply=True)
        assert caught.value.problems == [
            ("line 3: data[0].sample.usage", "missing: must be an object (the tokens used)")
        ]
        with pytest.raises(InvalidInput) as caught:  # refused here, before it is sent
            http.import_file("promptfoo", raw, columns={"output_col": "x"})
        assert caught.value.problems == [("output_col", "only for jsonl and csv")]
        assert api.counts() == before
    assert api.client("read").post("/v1/imports/promptfoo", content=raw).status_code == 403
    unknown = api.client().post("/v1/imports/braintrust", content=raw)
    assert unknown.status_code == 422
    assert unknown.json()["detail"][0]["field"] == "format"


def test_a_body_past_the_import_bound_is_refused_as_it_streams(
    db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from fastapi.testclient import TestClient

    from evalq.core.settings import Settings
    from evalq.producer.api import app as api_app
    from evalq.producer.api.routes import imports
    from evalq.store.keys import create_key

    monkeypatch.setattr(imports, "MAX_IMPORT_BYTES", 1000)
    settings = Settings(database_url=db_url)
    with session_scope(db_url) as session:
        key = create_key(session, name="importer", scopes=["write"])

    def chunks() -> Any:  # no Content-Length: only counting the stream can stop it
        for _ in range(5):
            yield b"x" * 300

    with TestClient(api_app.create_app(settings)) as http:
        refused = http.post(
            "/v1/imports/promptfoo",
            content=chunks(),
            headers={"Authorization": f"Bearer {key}"},
        )
        assert refused.status_code == 413
        assert refused.json()["detail"] == "import file larger than 1000 bytes: split it"
        picture = http.post(
            "/v1/imports/promptfoo",
            content=b"{}",
            headers={"Authorization": f"Bearer {key}", "Content-Type": "image/png"},
        )
        assert picture.status_code == 415
