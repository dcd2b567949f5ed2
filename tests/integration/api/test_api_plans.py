"""Run tickets at every door over a real `evalq api`, on SQLite and PostgreSQL: a plan
registered (POST /v1/tasks/{id}/plans, `HttpClient`, `AsyncHttpClient`) and listed, a bad plan
refused naming the field and the rule with nothing stored, and a run's ticket checked at
intake: unknown, another task's, another variant's, used, or past its deadline is a 422 on
``ticket`` with nothing stored; a run sent again as it was is the same run (idempotent)."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import func, select, update

from evalq.core.errors import InvalidInput, NotFound
from evalq.producer.http import AsyncHttpClient, HttpClient
from evalq.store.db import session_scope
from evalq.store.models import RunTicketRow, SubmissionRow
from tests.integration.api.conftest import Server, submission

pytestmark = pytest.mark.both_databases  # the ticket is used under a unique constraint

OTHER = {"id": "plans-other", "category": "debugging"}


def later(hours: float = 2) -> str:
    return (datetime.now(UTC) + timedelta(hours=hours)).isoformat()


def counts(api: Server) -> dict[str, int]:
    """Runs, tickets and used tickets stored."""
    with session_scope(api.db_url) as session:
        used = select(func.count()).where(RunTicketRow.used_by.is_not(None))
        return {
            "runs": int(session.scalar(select(func.count()).select_from(SubmissionRow)) or 0),
            "tickets": int(session.scalar(select(func.count()).select_from(RunTicketRow)) or 0),
            "used": int(session.scalar(used) or 0),
        }


def register(api: Server, task_id: str = "t1", **changes: Any) -> dict[str, Any]:
    body = {"variant": "T1", "runs": 2, "deadline": later()} | changes
    answer = api.client().post(f"/v1/tasks/{task_id}/plans", json=body)
    assert answer.status_code == 201, answer.text
    found: dict[str, Any] = answer.json()
    return found


def run(sid: str, ticket: str, **changes: Any) -> dict[str, Any]:
    return submission(sid, variant="T1", ticket=ticket, output=f"Fixed it ({sid}).") | changes


def test_a_plan_is_registered_with_its_tickets_and_listed(api: Server) -> None:
    plan = register(api, runs=3, seeds=[7, 8, 9])
    assert (plan["variant"], plan["runs"], plan["issued_by"]) == ("T1", 3, "rw")
    assert [t["seed"] for t in plan["tickets"]] == [7, 8, 9]
    assert len({t["id"] for t in plan["tickets"]}) == 3
    assert (plan["used"], plan["unused"], plan["expired"]) == (0, 3, 0)
    listed = api.client("read").get("/v1/tasks/t1/plans").json()
    mine = next(p for p in listed["plans"] if p["id"] == plan["id"])
    assert mine["tickets"] is None and mine["unused"] == 3
    with_tickets = api.client("read").get("/v1/tasks/t1/plans", params={"tickets": "true"})
    assert plan["tickets"][0]["id"] in with_tickets.text
    assert api.client("read").post("/v1/tasks/t1/plans", json={}).status_code == 403
    assert api.client().get("/v1/tasks/nothing/plans").status_code == 404


@pytest.mark.parametrize(
    ("body", "field", "rule"),
    [
        ({"variant": "T1", "runs": 0}, "runs", "greater than or equal to 1"),
        ({"variant": "B", "runs": 2}, "variant", "should match pattern"),
        ({"variant": "T1", "runs": 2, "seeds": [1]}, "(root)", "1 seeds for 2 runs"),
        ({"variant": "T1", "runs": 2, "deadline": "2020-01-01T00:00Z"}, "deadline", "future"),
        ({"variant": "T1", "runs": 2, "deadline": "2026-12-01T00:00"}, "deadline", "time zone"),
        ({"variant": "T1", "runs": 2, "by": "me"}, "by", "Extra inputs"),
    ],
)
def test_a_bad_plan_is_a_422_naming_the_field_and_nothing_is_stored(
    api: Server, body: dict[str, Any], field: str, rule: str
) -> None:
    before = counts(api)
    answer = api.client().post("/v1/tasks/t1/plans", json={"deadline": later()} | body)
    assert answer.status_code == 422, answer.text
    problems = [(p["field"], p["rule"]) for p in answer.json()["detail"]]
    assert any(f == field and rule in r for f, r in problems), problems
    assert counts(api) == before
    assert api.client().post("/v1/tasks/nothing/plans", json=body).status_code == 404
    assert counts(api) == before


def test_the_python_clients_register_and_refuse_a_bad_plan_before_sending(api: Server) -> None:
    plan = {"variant": "T2", "runs": 2, "deadline": later()}
    with HttpClient(api.url, api_key=api.keys["rw"]) as client:
        found = client.register_plan("t1", plan)
        assert found.issued_by == "rw" and len(found.tickets or []) == 2
        assert any(p.id == found.id for p in client.registered_plans("t1").plans)
        with pytest.raises(InvalidInput) as refused:
            client.register_plan("t1", plan | {"runs": "two"})
        assert refused.value.problems[0][0] == "runs"
        with pytest.raises(NotFound):
            client.registered_plans("nothing")

    async def asynchronously() -> tuple[int, bool]:
        async with AsyncHttpClient(api.url, api_key=api.keys["rw"]) as client:
            found = await client.register_plan("t1", plan | {"variant": "T4"})
            listed = await client.registered_plans("t1", with_tickets=True)
            mine = next(p for p in listed.plans if p.id == found.id)
            return len(mine.tickets or []), found.created

    assert asyncio.run(asynchronously()) == (2, True)


def test_a_plan_sent_again_under_its_id_is_the_same_plan(api: Server) -> None:
    body = {"id": "plan_again-0001", "variant": "T3", "runs": 2, "seeds": [4, 5]}
    first = api.client().post("/v1/tasks/t1/plans", json=body | {"deadline": later()})
    same = body | {"deadline": first.json()["deadline"]}
    again = api.client().post("/v1/tasks/t1/plans", json=same)
    assert (first.status_code, again.status_code) == (201, 200), again.text
    assert again.json()["created"] is False and again.json()["tickets"] == first.json()["tickets"]
    before = counts(api)
    other = api.client().post("/v1/tasks/t1/plans", json=same | {"runs": 3, "seeds": [1, 2, 3]})
    assert other.status_code == 409 and "idempotency" in other.text
    assert counts(api) == before


def refused(api: Server, body: Any) -> str:
    before = counts(api)
    answer = api.client().post("/v1/submissions", json=body)
    assert answer.status_code == 422, answer.text
    (problem,) = answer.json()["detail"]
    assert problem["field"] == "ticket", problem
    assert counts(api) == before  # no run, no ticket used
    return str(problem["rule"])


def test_a_run_s_ticket_is_checked_at_intake(api: Server) -> None:
    assert api.client().put(f"/v1/tasks/{OTHER['id']}", json=OTHER).status_code in (200, 201)
    plan = register(api, runs=3)
    first, second, third = (t["id"] for t in plan["tickets"])
    other = register(api, OTHER["id"], runs=1)["tickets"][0]["id"]
    assert "no such ticket" in refused(api, run("tk-unknown", "tkt_" + "x" * 32))
    assert "for task 'plans-other', not 't1'" in refused(api, run("tk-task", other))
    assert "for variant T1, not T2" in refused(api, run("tk-variant", first, variant="T2"))
    assert "used by one run only" in refused(
        api, {"submissions": [run("tk-a", second), run("tk-b", second)]}
    )
    used = api.client().post("/v1/submissions", json=run("tk-used", first))
    assert used.status_code == 201, used.text
    # sent again as it was: the same run, not a second use
    again = api.client().post("/v1/submissions", json=run("tk-used", first))
    assert again.status_code == 200 and again.json()["created"] is False, again.text
    assert "was used by tk-used" in refused(api, run("tk-twice", first))
    with session_scope(api.db_url) as session:
        session.execute(
            update(RunTicketRow)
            .where(RunTicketRow.id == third)
            .values(deadline=datetime.now(UTC) - timedelta(minutes=1))
        )
    assert "deadline" in refused(api, run("tk-late", third))
    listed = api.client().get("/v1/tasks/t1/plans").json()["plans"]
    mine = next(p for p in listed if p["id"] == plan["id"])
    assert (mine["used"], mine["unused"], mine["expired"]) == (1, 1, 1)
