"""`evalq plan TASK --variant T1 --runs N --deadline WHEN`: the tickets printed (and as JSON),
a bad plan refused naming the field and the rule with nothing stored, ``--registered`` lists
them; `evalq submit` of a run that carries one is accepted once, the same ticket on another
run refused naming ``ticket``."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from sqlalchemy import func, select

from evalq.store.db import session_scope
from evalq.store.models import RunTicketRow
from tests.integration.cli.test_errors import evalq
from tests.integration.cli.test_webhooks import store_with_task

DEADLINE = (datetime.now(UTC) + timedelta(days=3)).strftime("%Y-%m-%dT%H:%MZ")


def tickets(url: str) -> int:
    with session_scope(url) as session:
        return int(session.scalar(select(func.count()).select_from(RunTicketRow)) or 0)


def test_a_plan_prints_its_tickets_and_a_bad_one_stores_nothing(tmp_path: Path) -> None:
    url = store_with_task(tmp_path)
    plan = ["plan", "t1", "--variant", "T1", "--runs", "2", "--deadline", DEADLINE]
    printed = evalq([*plan, "--seed", "11", "--seed", "12"], tmp_path, database_url=url)
    assert printed.returncode == 0, printed.stderr
    assert "t1 T1: plan plan_" in printed.stdout and "2 runs due by" in printed.stdout
    assert printed.stdout.count("tkt_") == 2 and "seed 12" in printed.stdout
    as_json = json.loads(evalq([*plan, "--json"], tmp_path, database_url=url).stdout)
    assert as_json["runs"] == 2 and len(as_json["tickets"]) == 2 and tickets(url) == 4
    for bad, said in (
        (["--runs", "0"], "error: runs: Input should be greater than or equal to 1"),
        (["--seed", "1"], "error: (root): Value error, seeds: 1 seeds for 2 runs (one each)"),
        (["--deadline", "2020-01-01T00:00Z"], "error: deadline: must be in the future"),
        (["--variant", "B"], "error: variant: String should match pattern"),
    ):
        refused = evalq([*plan, *bad], tmp_path, database_url=url)
        assert refused.returncode == 2 and refused.stderr.startswith(said), refused.stderr
    missing = evalq(["plan", "t1", "--variant", "T1"], tmp_path, database_url=url)
    assert missing.returncode == 2 and "runs: Field required" in missing.stderr
    assert "deadline: Field required" in missing.stderr
    assert tickets(url) == 4
    listed = evalq(["plan", "t1", "--registered"], tmp_path, database_url=url)
    assert listed.returncode == 0 and listed.stdout.count("tkt_") == 4
    assert as_json["tickets"][0]["id"] in listed.stdout
    unknown = evalq([*plan[:1], "nothing", *plan[2:]], tmp_path, database_url=url)
    assert unknown.returncode == 2 and "task 'nothing' does not exist" in unknown.stderr
    ticket = as_json["tickets"][0]["id"]
    run = {"task_id": "t1", "tool": "a", "model": "m", "variant": "T1", "ticket": ticket}
    run |= {"usage": {"total_tokens": 10, "execution_time": 3}, "output": "done"}
    (tmp_path / "one.jsonl").write_text(json.dumps(run | {"id": "cli-run-1"}) + "\n")
    (tmp_path / "two.jsonl").write_text(json.dumps(run | {"id": "cli-run-2"}) + "\n")
    first = evalq(["submit", "one.jsonl"], tmp_path, database_url=url)
    assert first.returncode == 0, first.stderr
    second = evalq(["submit", "two.jsonl"], tmp_path, database_url=url)
    assert second.returncode == 2
    assert "ticket: the ticket was used by cli-run-1" in second.stderr, second.stderr
