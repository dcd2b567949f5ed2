"""Judge-human agreement: alpha on the 1-5 scale, bias, the bootstrap interval, people's own
agreement, and 'not validated' below the profile's minimum."""

from __future__ import annotations

import random

import pytest

from evalq.judge.agreement import krippendorff_alpha
from evalq.judge.validation import (
    HumanScore,
    JudgedRun,
    judge_agreement,
    nearest_step,
    on_label_scale,
)

RUBRIC = "constructiveness"


def normalised(step: int) -> float:
    return (step - 1) / 4


def runs_and_labels(
    truth: list[int], judge_shift: int = 0, task: str = "t", labellers: int = 1
) -> tuple[list[JudgedRun], list[HumanScore]]:
    judged = [
        JudgedRun(f"{task}-{i}", task, "m", {RUBRIC: normalised(min(5, t + judge_shift))})
        for i, t in enumerate(truth)
    ]
    humans = [
        HumanScore(f"{task}-{i}", f"p{k}", RUBRIC, t)
        for i, t in enumerate(truth)
        for k in range(labellers)
    ]
    return judged, humans


def test_the_scale_round_trips() -> None:
    assert [on_label_scale(normalised(s)) for s in range(1, 6)] == [1, 2, 3, 4, 5]
    assert [nearest_step(v) for v in (1.0, 1.49, 1.5, 4.6, 5.0)] == [1, 1, 2, 5, 5]


def test_a_judge_that_agrees_is_validated_once_there_are_enough_labels() -> None:
    truth = [1, 2, 3, 4, 5] * 6
    judged, humans = runs_and_labels(truth)
    report = judge_agreement(judged, humans, tasks=["t"], min_labels=30, min_alpha=0.667)
    [entry] = report.rubrics
    assert (entry.alpha, entry.bias, entry.pairs, entry.runs) == (1.0, 0.0, 30, 30)
    assert entry.validated and entry.note.startswith("validated: alpha 1.00 over 30")
    fewer = judge_agreement(judged, humans, tasks=["t"], min_labels=31, min_alpha=0.667)
    assert not fewer.rubrics[0].validated
    assert fewer.rubrics[0].note == "not validated: 30 labelled pairs, the profile asks for 31"


def test_a_kind_judge_shows_its_bias_and_loses_agreement() -> None:
    rng = random.Random(1)
    truth = [rng.randint(1, 4) for _ in range(40)]
    judged, humans = runs_and_labels(truth, judge_shift=1)
    [entry] = judge_agreement(judged, humans, tasks=["t"], min_labels=10, min_alpha=0.9).rubrics
    assert entry.bias == pytest.approx(1.0)
    expected = krippendorff_alpha(
        [[float(t + 1) for t in truth], [float(t) for t in truth]], "ordinal"
    )
    assert entry.alpha == pytest.approx(expected) and entry.alpha is not None and entry.alpha < 0.9
    assert not entry.validated and "below the profile's 0.900" in entry.note


def test_a_noisy_judge_gets_an_interval_around_its_alpha() -> None:
    rng = random.Random(2)
    truth = [rng.randint(1, 5) for _ in range(60)]
    noisy = [min(5, max(1, t + rng.choice((-1, 0, 0, 1)))) for t in truth]
    judged = [JudgedRun(f"r{i}", "t", "m", {RUBRIC: normalised(j)}) for i, j in enumerate(noisy)]
    humans = [HumanScore(f"r{i}", "ann", RUBRIC, t) for i, t in enumerate(truth)]
    [entry] = judge_agreement(judged, humans, tasks=["t"], min_labels=10, min_alpha=0.5).rubrics
    assert entry.alpha is not None and entry.alpha_ci is not None
    low, high = entry.alpha_ci
    assert low < entry.alpha < high and 0.02 < high - low < 0.5
    again = judge_agreement(judged, humans, tasks=["t"], min_labels=10, min_alpha=0.5)
    assert again.rubrics[0].alpha_ci == entry.alpha_ci  # seeded


def test_people_agreeing_among_themselves_is_the_ceiling() -> None:
    judged = [JudgedRun(f"r{i}", "t", "m", {RUBRIC: 0.5}) for i in range(6)]
    humans = [HumanScore(f"r{i}", "ann", RUBRIC, s) for i, s in enumerate([1, 2, 3, 4, 5, 5])]
    humans += [HumanScore(f"r{i}", "bob", RUBRIC, s) for i, s in enumerate([1, 2, 3, 4, 5, 4])]
    [entry] = judge_agreement(judged, humans, tasks=["t"], min_labels=1, min_alpha=0.5).rubrics
    assert entry.human_runs == 6 and entry.pairs == 12
    assert entry.human_alpha == pytest.approx(
        krippendorff_alpha([[1, 2, 3, 4, 5, 5], [1, 2, 3, 4, 5, 4]], "ordinal")
    )
    assert entry.alpha is not None and entry.alpha < 0.1  # a judge that always says 3


def test_few_runs_get_no_interval_and_several_tasks_are_pooled() -> None:
    judged_a, humans_a = runs_and_labels([1, 5, 3], task="a")
    judged_b, humans_b = runs_and_labels([2, 4, 1, 5], task="b")
    report = judge_agreement(
        judged_a + judged_b, humans_a + humans_b, tasks=["a", "b"], min_labels=5, min_alpha=0.5
    )
    assert [(e.task_id, e.pairs) for e in report.rubrics] == [("a", 3), ("b", 4), (None, 7)]
    assert all(e.alpha_ci is None for e in report.rubrics[:2])
    assert report.rubrics[2].alpha_ci is not None
    assert [e.task_id for e in report.not_validated()] == []
    assert [e.validated for e in report.rubrics] == [False, False, True]


def test_people_own_agreement_is_reported_before_any_judge_has_scored() -> None:
    humans = [HumanScore(f"r{i}", "ann", RUBRIC, s) for i, s in enumerate([1, 2, 3, 4, 5, 5])]
    humans += [HumanScore(f"r{i}", "bob", RUBRIC, s) for i, s in enumerate([1, 2, 3, 4, 5, 4])]
    humans += [HumanScore("r9", "ann", "technical_accuracy", 3)]  # labelled once: no ceiling
    report = judge_agreement([], humans, tasks=["t"], min_labels=1, min_alpha=0.5)
    assert report.rubrics == []
    ceiling = {entry.rubric: (entry.alpha, entry.runs) for entry in report.people}
    assert ceiling == {
        RUBRIC: (
            pytest.approx(krippendorff_alpha([[1, 2, 3, 4, 5, 5], [1, 2, 3, 4, 5, 4]], "ordinal")),
            6,
        ),
        "technical_accuracy": (None, 0),
    }
