"""PUT /v1/tasks/{id} audits the task it stores, on SQLite and PostgreSQL: a task whose only
criterion an empty output meets is unverified (stored, served by GET and POST .../audit), a
sound one is verified, and an unknown task is a 404."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from evalq.core.settings import Settings
from evalq.producer.api.app import create_app
from evalq.store.db import session_scope
from evalq.store.keys import create_key

pytestmark = pytest.mark.both_databases  # the audit is an upsert of JSON: each database's own

WEAK = {"success_criteria": [{"type": "no_errors"}]}
SOUND = {
    "success_criteria": [
        {"type": "file_exists", "file_path": "src/bucket.py"},
        {"type": "tests_pass", "tests": ["test_refill"]},
    ]
}


def test_a_put_task_is_audited_and_served(db_url: str) -> None:
    with session_scope(db_url) as session:
        key = create_key(session, name="writer", scopes=["read", "write"])
    headers = {"Authorization": f"Bearer {key}"}
    with TestClient(create_app(Settings(database_url=db_url, auth_required=True))) as http:
        assert http.put("/v1/tasks/weak", json=WEAK, headers=headers).status_code == 201
        assert http.put("/v1/tasks/sound", json=SOUND, headers=headers).status_code == 201
        weak = http.get("/v1/tasks/weak/audit", headers=headers).json()
        sound = http.get("/v1/tasks/sound/audit", headers=headers).json()
        again = http.post("/v1/tasks/weak/audit", headers=headers)
        missing = http.post("/v1/tasks/nothing/audit", headers=headers)
    assert weak["status"] == "unverified" and "empty output" in weak["passed"]
    assert "no_errors: passed" in weak["probes"][0]["criteria"][0]
    assert sound["status"] == "verified" and sound["passed"] == []
    # no run is evaluated yet, so no other task's best run to borrow: the 3 own probes
    assert again.status_code == 200 and len(again.json()["probes"]) == 3
    assert again.json()["status"] == "unverified"
    assert missing.status_code == 404
