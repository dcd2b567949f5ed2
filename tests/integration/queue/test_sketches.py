"""Each run's content sketch is stored once, at its merge, and the refresh's near-copy search
reads it instead of sketching the payload again (issue 44: at 100,000 runs most of an Arena
refresh was reading and sketching payloads). Real queue, SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from sqlalchemy.orm.attributes import flag_modified
from tests.support.pipeline import TASK, Pipeline, submission
from tests.support.processes import PATIENCE

from evalq.scoring.near_copy import sketch, sketch_bytes
from evalq.store.db import session_scope
from evalq.store.models import SubmissionRow
from evalq.tasks.merge import refresh_baseline
from evalq.workers.embedded import embedded_worker

pytestmark = [pytest.mark.integration, pytest.mark.both_databases]


def test_the_merge_stores_each_runs_sketch_and_the_refresh_reads_it(
    pipeline: Callable[..., Pipeline],
) -> None:
    p = pipeline()
    original = submission("original", tokens=1000, time=30.0)
    # another agent's run of the original with a sentence appended, usage 2% off
    copy = submission("copy", tokens=1020, time=30.6) | {"model": "gpt-4o"}
    copy["output"] = f"{original['output']} Checked twice."
    with embedded_worker(p.app, concurrency=2):
        for sent in (original, copy):  # one after the other: the original is the earlier
            p.client.submit(sent)
            assert p.client.wait([sent["id"]], timeout=240 * PATIENCE) == {sent["id"]: "done"}
    with session_scope(p.db_url) as session:
        for sid in ("original", "copy"):
            row = session.get(SubmissionRow, sid)
            assert row is not None
            found = sketch(row.payload)
            assert found is not None and row.sketch == sketch_bytes(found)
    refresh_baseline(TASK.id)
    with session_scope(p.db_url) as session:
        row = session.get(SubmissionRow, "copy")
        assert row is not None and row.copy_of == "original"
        # the payload no longer says what was merged; the stored sketch still does
        row.payload = {**row.payload, "output": "Nothing of the kind was ever written here."}
        flag_modified(row, "payload")
    refresh_baseline(TASK.id)
    with session_scope(p.db_url) as session:
        row = session.get(SubmissionRow, "copy")
        assert row is not None and row.copy_of == "original"
