"""Pre-registered runs (issue 47 item 4), replayed on the bundled Scylla task.

The attack: T1 ran about 20 times and sends its best 10, declaring ``planned_runs: 10``. Its
declared plan is its own statement: T0 -> T1 reads "worth it", and every door now says the
verdict is "not pre-registered". Registered instead (20 tickets before the runs), the same 10
best runs leave 10 tickets unused: the verdicts wait while they are pending, and once the
deadline passes they count as failures and T1 is no longer "worth it". A run of a registered
variant sent without a ticket is left out and said.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import bindparam, text, update
from tests.integration.read.test_attacks import passing_t1, steps_of
from tests.integration.read.test_copies import SCYLLA, add_runs, examples
from tests.integration.read.test_held_runs import copy_of
from tests.support.processes import wait_until
from tests.support.settings import configure
from tests.support.ui import sign_in
from typer.testing import CliRunner

from evalq.core.schemas import Submission, Usage
from evalq.core.settings import Settings
from evalq.producer.api.app import create_app
from evalq.producer.cli import app
from evalq.read.boards import projector
from evalq.read.compare import UNTICKETED, compare
from evalq.read.leaderboard import current_figures
from evalq.read.plans import NOT_PRE_REGISTERED
from evalq.read.view import task_context
from evalq.service.client import Client
from evalq.store.db import session_scope
from evalq.store.keys import create_key
from evalq.store.models import BoardFiguresRow, RunTicketRow
from evalq.store.tickets import lapsed_since_drawn
from evalq.tasks.merge import refresh_baseline
from evalq.tasks.tickets import refresh_lapsed
from evalq.workers.bootstrap import worker_app
from evalq.workers.embedded import embedded_worker
from evalq.workers.names import MERGE_QUEUE, TICKET_SWEEP_TASK


def rerun(run: Submission, i: int) -> Submission:
    """Another passing run of T1: other wording, a quarter more tokens (not a copy)."""
    usage = Usage.model_validate(
        run.usage.model_dump(exclude_none=True, exclude={"total_tokens"})
        | {"input_tokens": round((run.usage.input_tokens or 0) * 1.25) + i}
    )
    output = f"Attempt {i + 2}. {run.output}"
    return run.model_copy(update={"id": f"{run.id}-rerun", "usage": usage, "output": output})


def best_ten_of_twenty(**changes: Any) -> list[Submission]:
    """The 10 best of T1's ~20 runs: its 7 passing bundled runs and 3 passing reruns."""
    passing = passing_t1()
    best = passing + [rerun(run, i) for i, run in enumerate(passing[:3])]
    return [run.model_copy(update={"id": f"{run.id}-best"} | changes) for run in best]


def without_t1(url: str) -> None:
    """The store with T1's bundled runs removed: the attack sends its own."""
    t1 = [s.id for s in examples("scylla.jsonl") if s.variant == "T1"]
    with session_scope(url) as session:
        for table in ("standings", "tier_results", "evaluations", "submissions"):
            column = "id" if table == "submissions" else "submission_id"
            session.execute(
                text(f"DELETE FROM {table} WHERE {column} IN :ids").bindparams(
                    bindparam("ids", expanding=True)
                ),
                {"ids": t1},
            )


def doors(url: str) -> dict[str, str]:
    """T0 -> T1 compared as the CLI and the UI print it."""
    cli = CliRunner().invoke(
        app, ["compare", SCYLLA, "--by", "variant", "T0", "T1"], env={"EVALQ_DATABASE_URL": url}
    )
    assert cli.exit_code == 0, cli.output
    with session_scope(url) as session:
        key = create_key(session, name=f"reader-{datetime.now(UTC).timestamp()}", scopes=["read"])
    served = Settings(database_url=url, auth_required=True)
    with TestClient(create_app(served), base_url="https://testserver") as browser:
        assert sign_in(browser, key).status_code == 303
        asked = {"tasks": SCYLLA, "by": "variant", "values": ["T0", "T1"]}
        ui = browser.get("/ui/compare", params=asked).text
    return {"cli": " ".join(cli.output.split()), "ui": ui}


def test_the_best_ten_of_twenty_are_worth_it_and_not_pre_registered(
    store: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = copy_of(store, tmp_path)
    without_t1(url)
    add_runs(url, best_ten_of_twenty(planned_runs=10), monkeypatch)
    after = steps_of(url)
    step = after["step"]
    assert step.verdict == "worth it" and not step.withheld
    assert step.reason.startswith(f"{NOT_PRE_REGISTERED}: T0, T1")
    assert any(n.startswith(f"{NOT_PRE_REGISTERED}: T0, T1") for n in after["run_plans"])
    assert any(n.startswith(f"{NOT_PRE_REGISTERED}: T0, T1") for n in after["compared"].notes)
    assert NOT_PRE_REGISTERED in after["page"]
    seen = doors(url)
    assert f"{NOT_PRE_REGISTERED}: T0, T1" in seen["cli"]
    assert f"{NOT_PRE_REGISTERED}: T0, T1" in seen["ui"]


def test_registered_runs_count_the_tickets_never_used_as_failures(
    store: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = copy_of(store, tmp_path)
    without_t1(url)
    monkeypatch.delenv("EVALQ_BROKER_URL", raising=False)
    configure(monkeypatch, database_url=url)
    due = datetime.now(UTC) + timedelta(days=1)
    plan = Client().register_plan(SCYLLA, {"variant": "T1", "runs": 20, "deadline": due})
    tickets = [t.id for t in plan.tickets or []]
    best = [
        run.model_copy(update={"ticket": ticket})
        for run, ticket in zip(best_ten_of_twenty(), tickets, strict=False)
    ]
    unticketed = rerun(passing_t1()[3], 9)  # one more good run, sent without a ticket
    add_runs(url, [*best, unticketed], monkeypatch)

    pending = steps_of(url)
    assert pending["step"].withheld and pending["step"].verdict == "inconclusive"
    assert "T1: 10 of 20 tickets pending" in pending["step"].reason
    assert "T1: 1 runs sent without a ticket are not counted" in pending["step"].reason
    assert f"{NOT_PRE_REGISTERED}: T0" in pending["step"].reason  # T0 registered nothing

    with session_scope(url) as session:  # the deadline passes, 10 tickets unused
        session.execute(
            update(RunTicketRow).values(deadline=datetime.now(UTC) - timedelta(minutes=1))
        )
    refresh_baseline(SCYLLA)  # as the next refresh does: the board's figures drawn again
    after = steps_of(url)
    step = after["step"]
    assert not step.withheld and step.verdict != "worth it"
    assert "T1: 10 of 20 registered runs due (the 10 tickets" in step.reason
    assert after["t1"].runs == 20 and (after["t1"].pass_rate or 0) <= 0.5
    assert after["best_value"] != "T1"
    with session_scope(url) as session:
        left_out = compare(session, tasks=SCYLLA, by="variant", values=["T0", "T1"]).left_out
    assert [(x.group, x.count) for x in left_out if x.reason == UNTICKETED] == [("T1", 1)]
    assert "registered runs due" in after["page"]
    assert "registered runs due" in doors(url)["cli"]


def test_a_deadline_passing_brings_the_stored_board_up_to_date_through_the_ticket_sweep(
    store: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Nothing is written when a deadline passes: the beat's ticket sweep finds the task whose
    stored figures predate it and schedules its refresh once; then the board is current again."""
    url = copy_of(store, tmp_path)
    monkeypatch.delenv("EVALQ_BROKER_URL", raising=False)
    configure(monkeypatch, database_url=url)
    due = datetime.now(UTC) + timedelta(days=1)
    Client().register_plan(SCYLLA, {"variant": "T2", "runs": 3, "deadline": due})
    refresh_baseline(SCYLLA)  # the figures drawn with 3 tickets pending

    def lapsed() -> list[str]:
        with session_scope(url) as session:
            return lapsed_since_drawn(session)

    def current() -> bool:
        with session_scope(url) as session:
            return current_figures(session, task_context(session, task_id=SCYLLA)) is not None

    assert lapsed() == [] and current()
    now = datetime.now(UTC)
    with session_scope(url) as session:  # drawn an hour ago, the deadline passed a minute ago
        session.execute(update(BoardFiguresRow).values(computed_at=now - timedelta(hours=1)))
        session.execute(update(RunTicketRow).values(deadline=now - timedelta(minutes=1)))
    assert lapsed() == [SCYLLA] and not current()

    client = Client(app=worker_app())
    with embedded_worker(client.app, queues=(MERGE_QUEUE,)):
        client.app.send_task(TICKET_SWEEP_TASK, queue=MERGE_QUEUE)  # as the beat sends it
        wait_until(lambda: not lapsed(), timeout=120, what="the swept task's refresh")
    client.app.close()
    assert current()
    assert refresh_lapsed() == []  # the next sweep has nothing to do


def test_a_deadline_that_passes_while_the_board_is_drawn_is_swept_after(
    store: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The figures hold the tickets as read when the drawing began: a deadline that passes
    before they are stored is one they do not count, so the sweep still finds the task."""
    url = copy_of(store, tmp_path)
    monkeypatch.delenv("EVALQ_BROKER_URL", raising=False)
    configure(monkeypatch, database_url=url)
    due = datetime.now(UTC) + timedelta(days=1)
    Client().register_plan(SCYLLA, {"variant": "T2", "runs": 2, "deadline": due})
    with session_scope(url) as session:
        context = task_context(session, task_id=SCYLLA)  # the tickets read: both pending
        passes = context.read_at + timedelta(milliseconds=1)  # while the figures are drawn
        session.execute(update(RunTicketRow).values(deadline=passes))
        projector.project_task(session, context)
    with session_scope(url) as session:
        drawn = session.get(BoardFiguresRow, SCYLLA).computed_at  # type: ignore[union-attr]
        assert (drawn.replace(tzinfo=UTC) if drawn.tzinfo is None else drawn) < passes
        assert lapsed_since_drawn(session) == [SCYLLA]
