"""The judge-human agreement on the published HANNA slice: the bundled file is what its README
says, and the figures the page shows are the ones an independent computation gives."""

from __future__ import annotations

import json
import math

import pytest

from evalq.judge.agreement import krippendorff_alpha
from evalq.read.published_agreement import HANNA, JUDGE, SOURCE, hanna_agreement

CRITERIA = {"relevance", "coherence", "empathy", "surprise", "engagement", "complexity"}


def stories() -> list[dict]:
    return [json.loads(line) for line in HANNA.read_text().splitlines()]


def test_the_slice_is_the_first_12_stories_of_each_of_the_11_sources() -> None:
    read = stories()
    assert len(read) == 132
    assert [s["story"] for s in read] == [96 * k + i for k in range(11) for i in range(12)]
    assert len({s["system"] for s in read}) == 11
    for story in read:
        assert set(story["judge"]) == set(story["people"]) == CRITERIA
        assert all(1 <= value <= 5 for value in story["judge"].values())
        for ratings in story["people"].values():
            assert len(ratings) == 3 and all(r in (1, 2, 3, 4, 5) for r in ratings)


def nearest(value: float) -> int:
    return min(5, max(1, math.floor(value + 0.5)))


def test_each_figure_is_the_one_computed_independently_from_the_file() -> None:
    shown = {entry.rubric: entry for entry in hanna_agreement().rubrics}
    assert set(shown) == CRITERIA
    read = stories()
    for criterion, entry in shown.items():
        judge = [s["judge"][criterion] for s in read for _ in range(3)]
        people = [r for s in read for r in s["people"][criterion]]
        assert entry.model == JUDGE
        assert (entry.pairs, entry.runs, entry.human_runs) == (396, 132, 132)
        # ordinal alpha of the judge (rounded to the 1-5 step) against each person's rating
        alpha = krippendorff_alpha([[nearest(j) for j in judge], people])
        assert entry.alpha == pytest.approx(alpha, abs=1e-9), criterion
        assert entry.alpha_ci is not None
        assert entry.alpha_ci[0] <= entry.alpha <= entry.alpha_ci[1]
        bias = sum(j - p for j, p in zip(judge, people, strict=True)) / len(people)
        assert entry.bias == pytest.approx(bias, abs=1e-9)
        slots = [[s["people"][criterion][slot] for s in read] for slot in range(3)]
        assert entry.human_alpha == pytest.approx(krippendorff_alpha(slots), abs=1e-9)
        assert not entry.validated  # alpha far below 0.667 on every criterion
    assert "dig-team/hanna-benchmark-asg" in SOURCE and "MIT" in SOURCE
