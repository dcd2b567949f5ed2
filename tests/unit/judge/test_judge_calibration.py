"""Calibrating a cascade (Trust or Escalate): thresholds by fixed-sequence testing, the number
of labels needed, and the 1-delta guarantee holding over random calibration/test splits."""

from __future__ import annotations

import random

import pytest
from scipy.stats import binom

from evalq.core.errors import InvalidInput
from evalq.judge.calibration import (
    Judgment,
    binomial_cdf,
    calibrate,
    decide,
    labels_needed,
    sample_agreement,
    search_plan,
)


def test_the_labels_needed_follow_from_alpha_and_delta() -> None:
    assert labels_needed(0.1, 0.1) == 22  # 0.9^22 = 0.098 <= 0.1 < 0.9^21
    assert labels_needed(0.1, 0.1, levels=3) == 33  # delta / 3 per level
    assert labels_needed(0.05, 0.05) == 59
    with pytest.raises(InvalidInput) as caught:
        calibrate([[Judgment(1.0, True)]] * 21, alpha=0.1, delta=0.1)
    [(field, rule)] = caught.value.problems
    assert field == "labels" and "21 labelled items" in rule and "at least 22" in rule
    assert len(calibrate([[Judgment(1.0, True)]] * 22, alpha=0.1, delta=0.1).levels) == 1


@pytest.mark.parametrize(("alpha", "delta"), [(0, 0.1), (0.1, 1), (-0.5, 0.1)])
def test_bounds_outside_zero_and_one_are_refused(alpha: float, delta: float) -> None:
    with pytest.raises(InvalidInput) as caught:
        calibrate([[Judgment(1.0, True)]] * 100, alpha=alpha, delta=delta)
    assert {f for f, _ in caught.value.problems} <= {"alpha", "delta"}


@pytest.mark.parametrize(
    ("k", "n", "p"), [(0, 22, 0.1), (3, 40, 0.1), (50, 1000, 0.05), (9, 9, 0.3)]
)
def test_the_binomial_tail_is_scipys(k: int, n: int, p: float) -> None:
    assert binomial_cdf(k, n, p) == pytest.approx(float(binom.cdf(k, n, p)), rel=1e-9)


def test_the_threshold_stops_where_the_verdicts_stop_agreeing() -> None:
    # 60 items at confidence 0.9 and 60 at 0.8 all agree; 60 at 0.6 agree half the time.
    items = (
        [[Judgment(0.9, True)]] * 60
        + [[Judgment(0.8, True)]] * 60
        + [[Judgment(0.6, i % 2 == 0)] for i in range(60)]
    )
    [level] = calibrate(items, alpha=0.1, delta=0.1).levels
    assert level.threshold == 0.8 and level.trusted == 120 and level.disagreements == 0
    assert level.p_value == pytest.approx(0.9**120)


def test_a_cascade_calibrates_each_level_on_what_the_level_below_left() -> None:
    rng = random.Random(0)
    items = []
    for i in range(300):
        easy = i < 150
        cheap = Judgment(0.95 if easy else 0.5, easy or rng.random() < 0.5)
        top = Judgment(0.9, rng.random() < 0.97)
        items.append([cheap, top])
    calibration = calibrate(items, alpha=0.1, delta=0.1, reference="top judge")
    cheap, top = calibration.levels
    assert cheap.threshold == 0.95 and cheap.reached == 300 and cheap.trusted == 150
    assert top.reached == 150 and top.threshold == 0.9
    assert "the top judge's verdicts" in calibration.guarantee
    assert decide([0.95, 0.1], calibration) == 0
    assert decide([0.5, 0.9], calibration) == 1
    assert decide([0.5, 0.2], calibration) is None  # judge uncertain


def test_a_level_that_never_earns_trust_only_escalates() -> None:
    items = [[Judgment(0.9, i % 3 != 0), Judgment(0.99, True)] for i in range(100)]
    low, high = calibrate(items, alpha=0.1, delta=0.1).levels
    assert low.threshold is None and low.trusted == 0
    assert high.reached == 100 and high.threshold == 0.99


def test_sample_agreement_is_the_majority_share() -> None:
    assert sample_agreement(["A", "B", "A", "A"]) == ("A", 0.75)
    assert sample_agreement(["B", "A"]) == ("B", 0.5)
    with pytest.raises(ValueError, match="at least one sample"):
        sample_agreement([])


def true_risk(threshold: float) -> float:
    """Disagreement above ``threshold`` of the simulated judge below, exactly: confidence c is
    uniform on [0, 1] (shown rounded to 0.01) and the judge agrees with probability 0.55 + 0.45c,
    so the risk of c >= t is the mean of 0.45 (1 - c) over [t, 1]."""
    low = threshold - 0.005  # the rounded confidence clears t from here
    return 0.45 * (1 - low) / 2


def test_the_guarantee_holds_over_random_calibration_sets() -> None:
    """Over 200 calibration sets of 1,000 labels, the true disagreement above the calibrated
    threshold is <= alpha in >= 1 - delta of them (with slack for 200 draws); choosing the
    lowest threshold whose calibration disagreement is <= alpha, untested, fails far more."""
    rng = random.Random(7)
    alpha, delta, splits = 0.1, 0.1, 200
    held = found = naive_held = 0
    for _ in range(splits):
        items = []
        for _ in range(1000):
            confidence = rng.random()
            agreed = rng.random() < 0.55 + 0.45 * confidence
            items.append([Judgment(round(confidence, 2), agreed)])
        # This judge's most confident are its most often right: the search may start high.
        threshold = calibrate(items, alpha=alpha, delta=delta, start_share=0.1).levels[0].threshold
        found += threshold is not None
        held += threshold is None or true_risk(threshold) <= alpha
        naive_held += true_risk(naive_threshold(items, alpha)) <= alpha
    assert held / splits >= 1 - delta - 0.04
    assert found / splits >= 0.9  # and it does trust something nearly always
    assert naive_held / splits < 0.75


def naive_threshold(items: list[list[Judgment]], alpha: float) -> float:
    ordered = sorted((item[0] for item in items), key=lambda j: -j.confidence)
    best, errors = ordered[0].confidence, 0
    for index, judgment in enumerate(ordered):
        errors += not judgment.agreed
        if errors / (index + 1) <= alpha:
            best = judgment.confidence
    return best


def test_the_search_starts_where_a_share_of_the_items_is_trusted() -> None:
    # Of 400 items, the four most confident are wrong (as Mistral-7B's most confident
    # often are on real pairwise judgments); the next 296 are right, the last 100 wrong. A search
    # starting at the top tenth (40 items, 4 errors) stops at once; starting at 30% (120 items,
    # the same 4 errors) is rejected and goes down to the wrong ones.
    items = [[Judgment(1.0 - i / 1000, i >= 4)] for i in range(300)]
    items += [[Judgment(0.5 - i / 1000, False)] for i in range(100)]
    at_tenth = calibrate(items, alpha=0.1, delta=0.1, start_share=0.1)
    at_third = calibrate(items, alpha=0.1, delta=0.1, start_share=0.3)
    assert at_tenth.levels[0].threshold is None and at_tenth.untrusted == [0]
    assert at_third.untrusted == [] and at_third.levels[0].trusted >= 300
    assert at_third.levels[0].disagreements / at_third.levels[0].trusted <= 0.1
    # The start and what the level may decide are the plan's, computed without the labels.
    [planned] = search_plan([[j.confidence for j in item] for item in items], alpha=0.1, delta=0.1)
    assert planned.start == at_third.levels[0].start == pytest.approx(1.0 - 119 / 1000)
    assert planned.may_decide == at_third.levels[0].may_decide == 120
    flipped = [[Judgment(j.confidence, not j.agreed) for j in item] for item in items]
    assert calibrate(flipped, alpha=0.1, delta=0.1).levels[0].start == planned.start


def test_a_start_share_outside_its_range_is_refused() -> None:
    for share in (0.0, 1.5):
        with pytest.raises(InvalidInput) as caught:
            calibrate([[Judgment(1.0, True)]] * 100, alpha=0.1, delta=0.1, start_share=share)
        assert [f for f, _ in caught.value.problems] == ["start_share"]


def test_calibration_names_the_levels_it_never_trusts() -> None:
    # Level 0 is right half the time whatever its confidence; level 1 always.
    items = [[Judgment(i / 200, i % 2 == 0), Judgment(0.9, True)] for i in range(200)]
    calibration = calibrate(items, alpha=0.1, delta=0.1)
    assert calibration.untrusted == [0]
    [note] = calibration.notes
    assert note.startswith("level 0 is never trusted") and "off the route" in note
    assert calibration.levels[1].threshold == 0.9 and calibration.levels[1].reached == 200
