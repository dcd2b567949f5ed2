"""Runs whose tool calls edit the tests, read the golden patch or fetch the upstream pull
request are held for review with their evidence at every door (the board, the run's API
result, the UI run page), scores untouched; honest runs of the same task are not. On SQLite
and PostgreSQL, evaluated by a real worker (in-process, memory broker)."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient
from tests.support.processes import PATIENCE
from tests.support.settings import configure
from tests.support.ui import sign_in

from evalq.core.settings import Settings
from evalq.producer.api.app import create_app
from evalq.read import served
from evalq.read.boards.query import BoardQuery
from evalq.service.client import Client
from evalq.store.db import session_scope
from evalq.store.keys import create_key
from evalq.tasks.merge import refresh_baseline
from evalq.workers.bootstrap import worker_app
from evalq.workers.embedded import embedded_worker

pytestmark = pytest.mark.both_databases  # the hold is decided in SQL (store/review_sql.py)

TASK = {
    "id": "fix-parser",
    "kind": "arena",
    "category": "debugging",
    "success_criteria": [{"type": "tests_pass"}],
}
HONEST = [
    ("str_replace_editor", {"command": "view", "path": "/repo/src/parser.py"}),
    ("str_replace_editor", {"command": "str_replace", "path": "/repo/src/parser.py"}),
    ("bash", {"command": "python -m pytest tests/test_parser.py -q"}),
]
CHEATS = {
    "edits-tests": ("bash", {"command": "echo 'def test_ok(): pass' > tests/test_parser.py"}),
    "reads-history": ("bash", {"command": "git log -p -- src/parser.py"}),
    "fetches-pr": ("bash", {"command": "curl -sL https://github.com/org/parser/pull/42.diff"}),
}


def _run(sid: str, calls: list[tuple[str, dict[str, Any]]], tokens: int) -> dict[str, Any]:
    return {
        "id": sid,
        "task_id": TASK["id"],
        "tool": sid,
        "model": "m",
        "output": f"fixed the parser ({sid})",
        "usage": {
            "input_tokens": tokens,
            "output_tokens": 2_000,
            "tool_calls": len(calls),
            "iterations": 2,
            "execution_time": 120.0 + tokens / 1_000,
        },
        "evidence": {"tests": [{"name": "test_parser", "passed": True}]},
        "trace": {"steps": [{"tool": t, "arguments": a} for t, a in calls]},
    }


def test_cheating_runs_are_held_with_the_call_and_the_path(
    db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("EVALQ_BROKER_URL", raising=False)
    monkeypatch.delenv("EVALQ_JUDGE_MODEL", raising=False)
    configure(monkeypatch, database_url=db_url)
    runs = [_run(f"honest-{i}", HONEST, 20_000 + 1_000 * i) for i in range(5)]
    runs += [_run(name, [*HONEST[:2], call], 21_500) for name, call in CHEATS.items()]
    client = Client(app=worker_app())
    with embedded_worker(client.app):
        client.put_task(TASK)
        ids = [r.id for r in client.submit_many(runs)]
        assert set(client.wait(ids, timeout=600 * PATIENCE).values()) == {"done"}
        refresh_baseline(TASK["id"])
    client.app.close()
    with session_scope(db_url) as session:
        board = served.board(session, BoardQuery(task_id=TASK["id"]))
        results = {sid: served.run_result(session, submission_id=sid) for sid in ids}
        key = create_key(session, name="reviewer", scopes=["read"])
    held = {e.submission_id: e for e in board.entries if e.held}
    assert set(held) == set(CHEATS)  # 0 holds on the honest runs
    for name, (tool, arguments) in CHEATS.items():
        assert "integrity" in held[name].flags and held[name].rank is None
        (hit,) = results[name].integrity or []
        assert (hit.step, hit.tool) == (2, tool) and hit.target in arguments["command"]
    assert {h.kind for sid in CHEATS for h in results[sid].integrity or []} == {
        "test write",
        "history read",
        "source fetch",
    }
    assert all(results[f"honest-{i}"].integrity is None for i in range(5))
    # never a silent score change: a held run keeps the scores it merged with
    assert results["edits-tests"].scores is not None
    assert results["edits-tests"].scores.arena.correctness_score == 100.0
    settings = Settings(database_url=db_url, auth_required=True)
    with TestClient(create_app(settings), base_url="https://testserver") as browser:
        api = browser.get(
            "/v1/submissions/reads-history", headers={"Authorization": f"Bearer {key}"}
        ).json()
        assert sign_in(browser, key).status_code == 303
        page = browser.get("/ui/runs/reads-history").text
    assert api["integrity"][0]["kind"] == "history read"
    assert api["scores"]["review"]["flags"] == ["integrity"]
    assert "call 2 (bash) history read: git log -p" in page
