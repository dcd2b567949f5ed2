"""The bridge between two judges (`evalq.judge.bridge`): counts from the power arithmetic,
bias and agreement with intervals, and what it says with no or few pairs."""

from __future__ import annotations

import random

import pytest

from evalq.judge.bridge import bridge, bridge_start
from evalq.stats.power import paired_power, pairs_needed


def test_no_pairs_is_not_bridged_and_says_how_many_to_start_with() -> None:
    found = bridge("a", "b", [], [], detect=0.1, alpha=0.05, level=0.95)
    assert (found.status, found.pairs, found.needed, found.bias) == ("not bridged", 0, None, None)
    assert f"at least {bridge_start(0.05)}" in found.note


def test_the_count_is_the_power_plans_on_the_pairs_own_spread() -> None:
    draw = random.Random(3)
    old = [draw.uniform(0.2, 0.9) for _ in range(12)]
    new = [min(1.0, max(0.0, o - 0.05 + draw.gauss(0, 0.08))) for o in old]
    found = bridge("a", "b", old, new, detect=0.1, alpha=0.05, level=0.95)
    diffs = [n - o for o, n in zip(old, new, strict=True)]
    mean = sum(diffs) / len(diffs)
    sd = (sum((d - mean) ** 2 for d in diffs) / (len(diffs) - 1)) ** 0.5
    assert found.needed == pairs_needed(sd=sd, detect=0.1, alpha=0.05)
    assert found.needed is not None
    assert paired_power(found.needed, sd=sd, detect=0.1, alpha=0.05) >= 0.8
    assert found.status == ("bridged" if found.needed <= 12 else "bridging")
    assert found.bias == pytest.approx(mean)
    assert found.bias_low is not None and found.bias_high is not None
    assert found.bias_low < mean < found.bias_high
    assert found.agreement is not None and found.agreement > 0.5
    assert found.agreement_low is not None and found.agreement_high is not None
    assert found.agreement_low <= found.agreement <= found.agreement_high


def test_a_stricter_judge_is_said_to_score_differently() -> None:
    old = [0.25, 0.5, 0.75, 1.0, 0.5, 0.75, 0.25, 1.0]
    new = [o - 0.25 for o in old]
    found = bridge("a", "b", old, new, detect=0.1, alpha=0.05, level=0.95)
    assert found.status == "bridged" and found.needed == bridge_start(0.05)
    assert found.bias == pytest.approx(-0.25)
    assert "scores these runs differently" in found.note


def test_without_resampling_the_agreement_has_no_interval() -> None:
    old = [0.25, 0.5, 0.75, 1.0, 0.5, 0.75]
    found = bridge("a", "b", old, old, detect=0.1, alpha=0.05, level=0.95, resample=False)
    assert found.agreement == pytest.approx(1.0)
    assert found.agreement_low is None and found.agreement_high is None
