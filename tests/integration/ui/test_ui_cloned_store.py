"""Every page of a store cloned from the bundled examples, crawled over HTTP: no 5xx.

The bundled tasks and runs are evaluated by a real `evalq api` (no broker: in its own process),
then `bench/_clone_store.py` adds a task per example task with runs cloned from its merged ones
(new ids, scaled usage, jittered headline scores, the tier rows and evaluation copied, a real
baseline refresh): a store of every kind as a team's grows, on each database. A client signed in
through the form (as a browser is) opens the tasks, every board, every run page of every run
stored, compare, review, an accept confirmation and the labelling queue, then follows every
same-site link on every page it opens (the run pages all; of each other kind of page, by path
and query keys, the first `PER_SHAPE`), and fails on any 5xx.
"""

from __future__ import annotations

import html
import re
import sys
from collections import Counter, deque
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from sqlalchemy import select

from evalq.store.db import session_scope
from evalq.store.models import SubmissionRow
from tests.integration.api.conftest import Server, evaluate_examples, examples, serve_api
from tests.support.processes import PATIENCE
from tests.support.ui import sign_in

pytestmark = [pytest.mark.browser, pytest.mark.both_databases, pytest.mark.timeout(1500)]

BENCH = Path(__file__).resolve().parents[3] / "bench"
CLONES = 12
"""Runs cloned per example task: every template run of the small tasks, a round of the rest."""
PER_SHAPE = 25
"""Pages opened per kind of page (path shape and query keys) other than a run's own page."""
LINK = re.compile(r'href="([^"]*)"')
NEVER = ("/ui/events", "/ui/logout")
"""Links not to follow: the event stream never ends; signing out ends the crawl's session."""


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    """`evalq api` over the bundled examples, evaluated, and a cloned task per example task."""
    directory = tmp_path_factory.mktemp("cloned")
    with serve_api(request.param, directory, broker=False) as api:
        kinds = ("arena", "scylla", "peerread", "suite")
        statuses = evaluate_examples(api, [run for kind in kinds for run in examples(kind)])
        assert set(statuses.values()) <= {"done", "degraded"}, statuses
        sys.path.insert(0, str(BENCH))
        try:
            from _clone_store import add_clones, read_examples

            created = add_clones(api.db_url, read_examples(api.db_url), CLONES)
        finally:
            sys.path.remove(str(BENCH))
        assert len(created) == 6, created  # the six example tasks, four kinds
        yield api


def shape(url: str) -> str:
    """A page's kind: its path with ids left out, and its query's keys."""
    path, _, query = url.partition("?")
    path = re.sub(r"/(ui/runs|ui/tasks|v1/submissions|v1/tasks)/[^/]+", r"/\1/X", path)
    keys = sorted({pair.split("=")[0] for pair in query.split("&") if pair})
    return f"{path}?{'&'.join(keys)}"


def links(page: str) -> list[str]:
    """The same-site links of an HTML page, without their fragments."""
    found = []
    for raw in LINK.findall(page):
        link = html.unescape(raw).split("#")[0]
        if link.startswith("/") and not link.startswith("//"):
            found.append(link)
    return found


def seeds(server: Server) -> list[str]:
    """The tasks, every board, every run stored, compare, review, an accept, labels."""
    with session_scope(server.db_url) as session:
        rows = session.execute(select(SubmissionRow.id, SubmissionRow.task_id)).all()
    tasks = sorted({task for _, task in rows})
    return [
        "/",
        *(f"/ui/tasks/{task}" for task in tasks),
        *(f"/ui/tasks/{task}?per=200" for task in tasks),
        *(f"/ui/runs/{run}" for run, _ in sorted(rows)),
        *(f"/ui/compare?tasks={task}&by=model" for task in tasks),
        "/ui/compare?tasks=scylla-*&by=variant",
        "/ui/compare?tasks=arena-*&by=tool",
        "/ui/review",
        "/ui/labels",
        *(f"/ui/labels?task={task}" for task in tasks),
    ]


def test_no_page_of_a_cloned_store_answers_5xx(server: Server) -> None:
    failures: list[str] = []
    opened: set[str] = set()
    per_shape: Counter[str] = Counter()
    start = seeds(server)
    queue = deque(start)
    with httpx.Client(base_url=server.url, timeout=120 * PATIENCE) as client:
        assert sign_in(client, server.keys["rw"]).status_code == 303
        while queue:
            url = queue.popleft()
            kind = shape(url)
            if url in opened or any(url.startswith(never) for never in NEVER):
                continue
            if kind != "/ui/runs/X?" and per_shape[kind] >= PER_SHAPE:
                continue
            opened.add(url)
            per_shape[kind] += 1
            answer = client.get(url)
            if answer.status_code >= 500:
                failures.append(f"{url}: {answer.status_code}")
            if answer.headers.get("content-type", "").startswith("text/html"):
                queue.extend(link for link in links(answer.text) if link not in opened)
    assert failures == []
    runs = [url for url in start if url.startswith("/ui/runs/")]
    assert len(runs) >= 85 + 6 * CLONES  # every bundled run and every clone
    assert set(runs) <= opened
    followed = opened - set(start)  # the pages' own links: pages, compare pairs, the agreement
    assert len(followed) >= 30, sorted(followed)
    assert "/ui/agreement/published" in followed
