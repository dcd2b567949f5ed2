"""Labels through the Python client on SQLite and PostgreSQL: stored, replaced, listed, and
nothing stored from a batch with one bad label."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import func, select

from evalq.core.errors import InvalidInput, NotFound
from evalq.core.labels import unknown_run_rule
from evalq.core.settings import Settings
from evalq.service.client import Client
from evalq.store.db import session_scope
from evalq.store.models import LabelRow


def stored(url: str) -> int:
    with session_scope(url) as session:
        return int(session.scalar(select(func.count()).select_from(LabelRow)) or 0)


@pytest.fixture
def client(db_url: str, tmp_path: Path) -> Client:
    """A client over a store holding task t (runs r1, r2) and task u (run r3)."""
    client = Client(Settings(database_url=db_url))
    for task in ("t", "u"):
        client.put_task({"id": task, "category": "debugging"})
    runs = [("r1", "t"), ("r2", "t"), ("r3", "u")]
    client.submit_many(
        [
            {"id": sid, "task_id": tid, "tool": "a", "model": "m", "usage": {"total_tokens": 9}}
            for sid, tid in runs
        ]
    )
    return client


def test_labels_are_stored_listed_and_replaced_by_their_labeller(client: Client) -> None:
    first = client.add_label(
        {"submission_id": "r1", "labeller": "ann", "scores": {"constructiveness": 4}}
    )
    assert first.task_id == "t" and first.created_at == first.updated_at
    client.add_labels(
        [
            {"submission_id": "r1", "labeller": "bob", "recommendation": "reject"},
            {"submission_id": "r3", "labeller": "ann", "passed": True, "note": "fine"},
        ]
    )
    again = client.add_label(
        {"submission_id": "r1", "labeller": "ann", "scores": {"technical_accuracy": 2}}
    )
    assert again.scores == {"technical_accuracy": 2}  # replaced, not merged
    assert again.created_at == first.created_at and again.updated_at > first.updated_at
    assert stored(client.url) == 3
    by_task = client.labels(task_id="t")
    assert [(label.submission_id, label.labeller) for label in by_task] == [
        ("r1", "ann"),
        ("r1", "bob"),
    ]
    assert [label.submission_id for label in client.labels(labeller="ann")] == ["r1", "r3"]
    assert [label.labeller for label in client.labels(submission_id="r3")] == ["ann"]


def test_an_unknown_run_is_named_and_a_bad_batch_stores_nothing(client: Client) -> None:
    with pytest.raises(InvalidInput) as one:
        client.add_label({"submission_id": "nope", "labeller": "ann", "passed": False})
    assert one.value.problems == [("submission_id", unknown_run_rule("nope"))]
    with pytest.raises(InvalidInput) as batch:
        client.add_labels(
            [
                {"submission_id": "r1", "labeller": "ann", "passed": True},
                {"submission_id": "r2", "labeller": "ann", "scores": {"constructiveness": 0}},
                {"submission_id": "gone", "labeller": "ann", "passed": True},
            ]
        )
    assert [f for f, _ in batch.value.problems] == ["[1].scores.constructiveness"]
    with pytest.raises(InvalidInput) as unknown:
        client.add_labels(
            [
                {"submission_id": "r1", "labeller": "ann", "passed": True},
                {"submission_id": "gone", "labeller": "ann", "passed": True},
            ]
        )
    assert unknown.value.problems == [("[1].submission_id", unknown_run_rule("gone"))]
    assert stored(client.url) == 0


def test_listing_an_unknown_task_or_run_is_not_found(client: Client) -> None:
    with pytest.raises(NotFound):
        client.labels(task_id="nowhere")
    with pytest.raises(NotFound):
        client.labels(submission_id="nowhere")


def test_peoples_own_agreement_is_served_before_any_judge_has_scored(client: Client) -> None:
    client.add_labels(
        [
            {"submission_id": sid, "labeller": who, "scores": {"constructiveness": score}}
            for sid, scores in (("r1", (4, 4)), ("r2", (2, 3)))
            for who, score in zip(("ann", "bob"), scores, strict=True)
        ]
    )
    report = client.judge_agreement("t")
    assert report.rubrics == []  # no judge score yet
    [people] = report.people
    assert (people.rubric, people.runs) == ("constructiveness", 2)
    assert people.alpha is not None
