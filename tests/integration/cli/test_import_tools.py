"""`evalq import promptfoo|inspect PATH` on the tools' own published files (tests/data/importers,
README there names their source): dry run, apply, evaluation here (no broker), the imported
score beside evalq's in the API and on the run page, a second import changing nothing, a
malformed file refused with its location."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from evalq.core.settings import Settings
from evalq.producer.api.app import create_app
from evalq.store import queries
from evalq.store.db import session_scope
from evalq.store.keys import create_key
from tests.support.processes import EVALQ, PATIENCE, process_env
from tests.support.ui import sign_in

pytestmark = pytest.mark.both_databases  # "imported before" and the batch intake are SQL

SAMPLES = Path(__file__).parents[2] / "data" / "importers"
PROMPTFOO_IDS = {
    "promptfoo-b7df157c-b0cd-4852-a41a-72523ea294e7": ("openai:gpt-5-mini", 0.75, 282),
    "promptfoo-aa60b488-0ac5-4282-aebc-2203d04fc219": ("openai:gpt-5", 0.5, 241),
}


def evalq(cwd: Path, store: str, *args: str) -> subprocess.CompletedProcess[str]:
    """`evalq ARGS` on ``store`` with no broker: evaluation runs here."""
    return subprocess.run(
        [EVALQ, *args],
        cwd=cwd,
        env=process_env({"database_url": store}),
        capture_output=True,
        text=True,
        timeout=300 * PATIENCE,
    )


def stored_ids(store: str) -> set[str]:
    with session_scope(store) as session:
        rows = queries.status_counts(session, ids=[*PROMPTFOO_IDS, *INSPECT_IDS, OPENAI_ID])
    return set(rows)


INSPECT_IDS = {
    "inspect-8zXjbRzCWrL9GXiXo2vus9-1-e1": ("inspect-input_task", "C", 99),
    "inspect-9eTnG3tV8jGRYoTPMH54Ee-1-e1": ("inspect-popularity", "I", 68),
    "inspect-ZB2vu5GNujYaBdPSReCeop-1-e1": ("inspect-browser", "C", 6122),
}
EVAL_ARCHIVES = {
    "inspect_input_task.eval": ("inspect-hxs4q9azL3ySGkjJirypKZ-1-e1", "C"),
    "inspect_mmlu.eval": ("inspect-Dj4Li7NchTfQSiX7eKXLLN-1-e1", "I"),
}
OPENAI_ID = "openai-evals-outputitem_67e5796c28e081909917bf79f6e6214d"
BROWSER_CALLS = ["web_browser_go", "web_browser_click", "web_browser_click", "web_browser_click"]


def test_promptfoo_results_are_imported_evaluated_and_kept_beside_evalqs(
    tmp_path: Path, db_url: str
) -> None:
    sample = str(SAMPLES / "promptfoo_results.json")
    dry = evalq(tmp_path, db_url, "import", "promptfoo", sample)
    assert dry.returncode == 0, dry.stderr
    assert dry.stdout.splitlines() == [
        "would create 1 task(s), 2 submission(s); 0 imported before: "
        "promptfoo-eval-WJi-2025-10-01T20:08:11",
        "dry run: nothing stored (--apply to import)",
    ]
    assert stored_ids(db_url) == set()

    applied = evalq(tmp_path, db_url, "import", "promptfoo", sample, "--apply")
    assert applied.returncode == 0, applied.stderr
    assert "imported and evaluated 2 run(s)" in applied.stdout

    settings = Settings(database_url=db_url)
    with session_scope(settings.database_url) as session:
        key = create_key(session, name="reader", scopes=["read"])
    headers = {"Authorization": f"Bearer {key}"}
    with TestClient(create_app(settings)) as http:
        assert sign_in(http, key).status_code == 303
        for submission_id, (_, imported, _) in PROMPTFOO_IDS.items():
            body = http.get(f"/v1/submissions/{submission_id}", headers=headers).json()
            assert body["status"] == "done"
            assert body["metadata"]["imported_score"] == imported
            assert body["metadata"]["imported_grader"] == "promptfoo"
            assert body["metadata"]["imported_pass"] is False
            assert body["scores"]["arena"]["overall_score"] is not None  # evalq's own
            page = http.get(f"/ui/runs/{submission_id}")
            assert page.status_code == 200 and "imported_score" in page.text
            assert f'data-score="imported">{imported} from promptfoo,' in page.text
        board = http.get(
            "/v1/tasks/promptfoo-eval-WJi-2025-10-01T20:08:11/leaderboard",
            params={"metadata.imported_grader": "promptfoo"},
            headers=headers,
        ).json()
        assert {(e["submission_id"], e["model"]) for e in board["entries"]} == {
            (sid, model) for sid, (model, _, _) in PROMPTFOO_IDS.items()
        }
        # the board shows the imported score beside evalq's: in the API and on the page
        for entry in board["entries"]:
            imported = PROMPTFOO_IDS[entry["submission_id"]][1]
            assert (entry["imported_score"], entry["imported_grader"]) == (imported, "promptfoo")
            assert isinstance(entry["overall"], float)  # evalq's own, beside it
        page = http.get("/ui/tasks/promptfoo-eval-WJi-2025-10-01T20:08:11").text
        assert "imported score</th>" in page
        for submission_id, (_, imported, _) in PROMPTFOO_IDS.items():
            row = page.split(f'data-run="{submission_id}"')[1].split("</tr>")[0]
            assert f'<td class="num imported" title="promptfoo">{imported}</td>' in row
    with session_scope(settings.database_url) as session:
        for submission_id, (_, _, tokens) in PROMPTFOO_IDS.items():
            row = queries.get_submission_row(session, submission_id=submission_id)
            assert row.payload["usage"]["total_tokens"] == tokens

    again = evalq(tmp_path, db_url, "import", "promptfoo", sample, "--apply")
    assert again.returncode == 0, again.stderr
    assert again.stdout.splitlines() == ["creating 0 task(s), 0 submission(s); 2 imported before"]


def test_inspect_logs_are_imported_and_evaluated_once(tmp_path: Path, db_url: str) -> None:
    for name in ("inspect_input_task.json", "inspect_log_formats.json", "inspect_browser.json"):
        applied = evalq(tmp_path, db_url, "import", "inspect", str(SAMPLES / name), "--apply")
        assert applied.returncode == 0, applied.stderr
        assert "imported and evaluated 1 run(s)" in applied.stdout
    with session_scope(db_url) as session:
        for submission_id, (task_id, imported, tokens) in INSPECT_IDS.items():
            row = queries.get_submission_row(session, submission_id=submission_id)
            assert (row.status, row.payload["task_id"]) == ("done", task_id)
            assert row.payload["usage"]["total_tokens"] == tokens
            assert row.payload["metadata"]["imported_score"] == imported
            assert row.payload["metadata"]["imported_grader"].startswith("inspect_ai/")
        browser_id = [*INSPECT_IDS][2]
        browser = queries.get_submission_row(session, submission_id=browser_id)
        assert [step["tool"] for step in browser.payload["trace"]["steps"]] == BROWSER_CALLS
        assert browser.payload["usage"]["tool_calls"] == len(BROWSER_CALLS)
        assert queries.tier_results(session, submission_id=browser_id)["graph"].status == "ok"
    again = evalq(tmp_path, db_url, "import", "inspect", str(SAMPLES / "inspect_log_formats.json"))
    assert (
        again.stdout.splitlines()[0] == "would create 0 task(s), 0 submission(s); 1 imported before"
    )
    # The .eval archive of that same eval is the same run: imported before, whatever the format.
    twin = evalq(tmp_path, db_url, "import", "inspect", str(SAMPLES / "inspect_log_formats.eval"))
    assert twin.stdout.splitlines()[0] == again.stdout.splitlines()[0]
    for name, (submission_id, imported) in EVAL_ARCHIVES.items():
        applied = evalq(tmp_path, db_url, "import", "inspect", str(SAMPLES / name), "--apply")
        assert applied.returncode == 0, applied.stderr
        assert "imported and evaluated 1 run(s)" in applied.stdout
        with session_scope(db_url) as session:
            row = queries.get_submission_row(session, submission_id=submission_id)
            assert row.status == "done"
            assert row.payload["metadata"]["imported_score"] == imported


def test_an_openai_evals_export_is_imported_with_its_graders_result_once(
    tmp_path: Path, db_url: str
) -> None:
    sample = str(SAMPLES / "openai_evals_export.jsonl")
    dry = evalq(tmp_path, db_url, "import", "openai-evals", sample)
    assert dry.returncode == 0, dry.stderr
    assert dry.stdout.splitlines()[0] == (
        "would create 1 task(s), 1 submission(s); 0 imported before: "
        "openai-evals-eval_67abd54d9b0081909a86353f6fb9317a"
    )
    assert stored_ids(db_url) == set()
    applied = evalq(tmp_path, db_url, "import", "openai-evals", sample, "--apply")
    assert applied.returncode == 0, applied.stderr
    assert "imported and evaluated 1 run(s)" in applied.stdout
    with session_scope(db_url) as session:
        row = queries.get_submission_row(session, submission_id=OPENAI_ID)
        assert (row.status, row.payload["model"], row.payload["output"]) == (
            "done",
            "gpt-4o-mini-2024-07-18",
            "Markets",
        )
        assert row.payload["metadata"]["imported_score"] == 1.0
        assert row.payload["metadata"]["imported_grader"].startswith("openai_evals/String check")
        assert row.payload["usage"]["total_tokens"] == 325
        assert queries.tier_results(session, submission_id=OPENAI_ID)  # evalq's own tiers ran
    again = evalq(tmp_path, db_url, "import", "openai-evals", sample, "--apply")
    assert again.stdout.splitlines() == ["creating 0 task(s), 0 submission(s); 1 imported before"]

    lines = (SAMPLES / "openai_evals_export.jsonl").read_text().splitlines()
    (tmp_path / "bad.jsonl").write_text("\n".join([*lines[:2], lines[2].replace('"usage"', '"u"')]))
    refused = evalq(tmp_path, db_url, "import", "openai-evals", "bad.jsonl", "--apply")
    assert refused.returncode == 2
    assert refused.stderr.splitlines() == [
        "bad.jsonl:3: data[0].sample.usage: missing: must be an object (the tokens used)"
    ]


@pytest.mark.parametrize(
    ("tool", "sample", "break_it", "expected"),
    [
        (
            "promptfoo",
            "promptfoo_results.json",
            lambda d: d["results"]["results"][1]["response"].pop("tokenUsage"),
            "results.results[1].response.tokenUsage: missing: must be an object",
        ),
        (
            "inspect",
            "inspect_log_formats.json",
            lambda d: d["samples"][0].__setitem__("epoch", "one"),
            "samples[0].epoch: must be the epoch (an integer)",
        ),
    ],
)
def test_a_malformed_file_is_refused_with_its_location_and_nothing_stored(
    tmp_path: Path, db_url: str, tool: str, sample: str, break_it: object, expected: str
) -> None:
    document = json.loads((SAMPLES / sample).read_text())
    assert callable(break_it)
    break_it(document)
    (tmp_path / "bad.json").write_text(json.dumps(document))
    refused = evalq(tmp_path, db_url, "import", tool, "bad.json", "--apply")
    assert refused.returncode == 2
    assert refused.stderr.splitlines() == [f"bad.json: {expected}"]

    (tmp_path / "broken.json").write_text('{\n  "evalId": "x",\n  "results": [1,,2]\n}\n')
    syntax = evalq(tmp_path, db_url, "import", tool, "broken.json", "--apply")
    assert syntax.returncode == 2
    assert syntax.stderr.startswith("broken.json:3: column 17: invalid JSON")
    assert stored_ids(db_url) == set()


MATCH_ARGS = (
    "--where",
    "type=match",
    "--id-col",
    "sample_id",
    "--task-id",
    "test-match",
    "--output-col",
    "data.sampled",
    "--score-col",
    "data.correct",
    "--model",
    "auto_gpt_completion_fn",
)
MATCH_IDS = {"import-test-match.s1.0": False, "import-test-match.s1.1": True}


def test_json_lines_and_csv_are_imported_by_the_columns_named(tmp_path: Path, db_url: str) -> None:
    log = str(SAMPLES / "oaieval_record.jsonl")
    applied = evalq(tmp_path, db_url, "import", "jsonl", log, *MATCH_ARGS, "--apply")
    assert applied.returncode == 0, applied.stderr
    assert "imported and evaluated 3 run(s)" in applied.stdout
    with session_scope(db_url) as session:
        for submission_id, correct in MATCH_IDS.items():
            row = queries.get_submission_row(session, submission_id=submission_id)
            assert row.status == "done"
            assert row.payload["metadata"]["imported_score"] is correct
    again = evalq(tmp_path, db_url, "import", "jsonl", log, *MATCH_ARGS, "--apply")
    assert again.stdout.splitlines() == ["creating 0 task(s), 0 submission(s); 3 imported before"]

    pirate = ("--task-id", "pirate", "--score-col", "RESULT", "--output-col")
    column = "Rephrase this from English to Pirate: {{body}}"
    csv_file = str(SAMPLES / "promptfoo_output.csv")
    dry = evalq(tmp_path, db_url, "import", "csv", csv_file, *pirate, column)
    assert dry.stdout.splitlines()[0] == (
        "would create 1 task(s), 2 submission(s); 0 imported before: pirate"
    )
    (tmp_path / "bad.csv").write_text(
        (SAMPLES / "promptfoo_output.csv").read_text().replace(",I'm hungry", "")
    )
    refused = evalq(tmp_path, db_url, "import", "csv", "bad.csv", *pirate, column, "--apply")
    assert refused.returncode == 2
    assert refused.stderr.splitlines() == ["bad.csv:3: has 3 fields, the header 4"]
    with session_scope(db_url) as session:
        assert queries.missing_tasks(session, task_ids={"pirate"}) == {"pirate"}
