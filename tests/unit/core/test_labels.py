"""A label's rules: scores 1-5 as integers, known rubrics and decisions, something to say."""

from __future__ import annotations

from typing import Any

import pytest

from evalq.core.errors import InvalidInput
from evalq.core.labels import EMPTY_RULE, SCORE_RULE, TWICE_RULE, parse_label, parse_labels

GOOD = {"submission_id": "r1", "labeller": "ann@example.com", "scores": {"constructiveness": 4}}


def problems(data: Any) -> list[tuple[str, str]]:
    with pytest.raises(InvalidInput) as caught:
        parse_label(data)
    return caught.value.problems


def test_a_label_keeps_what_the_person_said() -> None:
    label = parse_label(GOOD | {"recommendation": "weak_accept", "passed": False, "note": "ok"})
    assert label.scores == {"constructiveness": 4}
    assert (label.recommendation, label.passed, label.note) == ("weak_accept", False, "ok")


@pytest.mark.parametrize("value", [0, 6, 4.0, "4", True, None, 3.5])
def test_a_score_is_an_integer_from_1_to_5(value: Any) -> None:
    found = problems(GOOD | {"scores": {"constructiveness": value}})
    assert found == [("scores.constructiveness", f"Value error, {SCORE_RULE}")]


def test_an_unknown_rubric_is_named() -> None:
    [(field, rule)] = problems(GOOD | {"scores": {"constructivness": 3}})
    assert field == "scores.constructivness.[key]"
    assert "'constructiveness'" in rule and "'technical_accuracy'" in rule


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"recommendation": "strong_accept"}, "recommendation"),
        ({"passed": "yes"}, "passed"),
        ({"labeller": ""}, "labeller"),
        ({"labeller": "a b"}, "labeller"),
        ({"submission_id": "a/b"}, "submission_id"),
        ({"note": "x" * 2001}, "note"),
        ({"score": 3}, "score"),
    ],
)
def test_bad_fields_are_named(change: dict[str, Any], field: str) -> None:
    assert [f for f, _ in problems(GOOD | change)] == [field]


def test_a_label_with_nothing_to_say_is_refused() -> None:
    empty = {"submission_id": "r1", "labeller": "ann", "note": "looked at it"}
    assert problems(empty) == [("scores", EMPTY_RULE)]


def test_a_batch_names_items_by_index_and_refuses_the_same_pair_twice() -> None:
    with pytest.raises(InvalidInput) as caught:
        parse_labels([GOOD, GOOD | {"scores": {"constructiveness": 9}}, GOOD])
    assert [f for f, _ in caught.value.problems] == ["[1].scores.constructiveness", "[2].labeller"]
    assert caught.value.problems[1][1] == TWICE_RULE
    other = GOOD | {"labeller": "bob"}
    assert [label.labeller for label in parse_labels([GOOD, other])] == ["ann@example.com", "bob"]
