"""What a real `evalq api` writes to its log: one access line per request, secrets redacted.

The redaction filter once replaced every record's arguments, which uvicorn's access formatter
unpacks, so each request logged a traceback instead of its line (issue 23).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from evalq.core.redact import MARKER
from tests.integration.api.conftest import serve_api, submission
from tests.support.webhook_receiver import TEST_WEBHOOK_KEY

ACCESS_LINE = re.compile(r'"(GET|POST|PUT|DELETE) (\S+) HTTP/1\.1" (\d{3})')


@pytest.mark.parametrize("broker", [True, False], ids=["broker", "no-broker"])
def test_a_hundred_requests_write_a_hundred_access_lines_and_no_traceback(
    tmp_path: Path, broker: bool
) -> None:
    sent: list[tuple[str, str, int]] = []
    with serve_api("sqlite", tmp_path, broker=broker, log_level="info") as api:
        rw, nobody = api.client(), api.client(key=None)
        for i in range(20):
            answers = [
                rw.get("/healthz"),
                rw.post("/v1/submissions", json=submission(f"log-{i}")),
                rw.post("/v1/submissions", json=submission(f"bad-{i}", usage={"tool_calls": -1})),
                nobody.get("/v1/tasks/t1/leaderboard"),
                rw.get(f"/v1/submissions/{TEST_WEBHOOK_KEY}-{i}"),  # a secret in the path
            ]
            sent += [(a.request.method, a.request.url.path, a.status_code) for a in answers]
        log = api.log
    # serve_api has stopped the server and asserted "Traceback" is not in its log
    written = log.read_text(errors="replace")
    lines = [m.groups() for m in ACCESS_LINE.finditer(written)]
    start = lines.index(("PUT", "/v1/tasks/t1", "201")) + 1  # after the fixture's own requests
    assert len(sent) == 100
    assert [(m, p.split("?")[0], int(s)) for m, p, s in lines[start:]] == [
        (method, path.replace(TEST_WEBHOOK_KEY, MARKER), status) for method, path, status in sent
    ]
    assert {status for *_, status in sent} == {200, 201, 401, 404, 422}
    assert TEST_WEBHOOK_KEY not in written
    assert "Traceback" not in written and "Error" not in written.replace("Unprocessable", "")
