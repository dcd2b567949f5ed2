"""POST /v1/submissions with the broker down: 503 at once; a re-send once it is back enqueues."""

from __future__ import annotations

from pathlib import Path

import httpx
from sqlalchemy import select

from evalq.store.db import session_scope
from evalq.store.keys import create_key
from evalq.store.models import SubmissionRow
from tests.integration.api.conftest import TASK, submission
from tests.support.databases import fresh_database
from tests.support.processes import PATIENCE, free_port, process_env, start, stop, wait_for_http
from tests.support.redis_server import RedisServer
from tests.support.settings import pipeline_settings


def test_a_submit_with_the_broker_down_is_a_503_that_a_resend_finishes(tmp_path: Path) -> None:
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
        headers = {"Authorization": f"Bearer {key}"}
        try:
            wait_for_http(f"{url}/healthz", process, timeout=90, what="evalq api", ok=(200, 503))
            with httpx.Client(base_url=url, headers=headers, timeout=30 * PATIENCE) as http:
                # reference outputs: tier 1 applies, so the submission needs the broker
                fans_out = TASK | {"reference_outputs": ["A careful fix."]}
                assert http.put("/v1/tasks/t1", json=fans_out).status_code in (200, 201)
                broker.stop()

                down = http.post("/v1/submissions", json=submission("b1"))
                assert down.status_code == 503, down.text
                assert "broker is unavailable" in down.json()["detail"]
                with session_scope(db_url) as session:
                    row = session.scalars(select(SubmissionRow)).one()
                    assert (row.status, row.enqueue_count) == ("queued", 0)

                broker.start()
                again = http.post("/v1/submissions", json=submission("b1"))
                assert again.status_code == 200, again.text
                assert again.json()["created"] is False
                assert broker.waiting() == 1  # the re-send enqueued it
        finally:
            stop(process)
            broker.stop()
    log = (tmp_path / "api.log").read_text(errors="replace")
    assert "Traceback" not in log, log[-4000:]
