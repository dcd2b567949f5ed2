"""Agreement statistics, checked by hand, against published values, the `krippendorff` package and
scikit-learn."""

from __future__ import annotations

import krippendorff
import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from evalq.judge.agreement import cohen_kappa, fleiss_kappa, krippendorff_alpha

N = None
# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", section C: four observers,
# twelve units, values 1-5, missing values marked.
KRIPPENDORFF_2011 = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, N, N, N],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, N, 3],
    [N, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, N],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, N],
]


def package_alpha(ratings: list[list[int | None]], metric: str) -> float:
    data = np.array([[np.nan if v is None else v for v in row] for row in ratings], dtype=float)
    return float(krippendorff.alpha(reliability_data=data, level_of_measurement=metric))


# -- Krippendorff's alpha --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("metric", "published"), [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849)]
)
def test_alpha_of_krippendorffs_worked_example(metric: str, published: float) -> None:
    alpha = krippendorff_alpha(KRIPPENDORFF_2011, metric)  # type: ignore[arg-type]
    assert alpha == pytest.approx(published, abs=5e-4)
    assert alpha == pytest.approx(package_alpha(KRIPPENDORFF_2011, metric), abs=1e-12)


def test_nominal_alpha_by_hand() -> None:
    # units (1,1), (2,2), (1,2): o11 = o22 = 2, o12 = o21 = 1, n1 = n2 = 3, n = 6.
    # D_o = 2/6, D_e = 2*3*3 / (6*5) = 0.6, alpha = 1 - (1/3) / 0.6 = 4/9.
    alpha = krippendorff_alpha([[1, 2, 1], [1, 2, 2]], "nominal")
    assert alpha == pytest.approx(4 / 9)


def test_ordinal_alpha_of_one_dissenting_judge_by_hand() -> None:
    # The worked example of docs/statistics.md: judges A and B score three criteria 5, 3, 1,
    # judge C scores 1, 1, 1. Coincidences o51 = o15 = o31 = o13 = 1, o55 = o33 = 1, o11 = 3;
    # n1 = 5, n3 = 2, n5 = 2, n = 9. Ordinal distances: d13 = 3.5^2, d35 = 2^2, d15 = 5.5^2.
    # D_o = 2 * (30.25 + 12.25) / 9 = 85/9; D_e = 2 * (10*12.25 + 10*30.25 + 4*4) / 72 = 12.25.
    alpha = krippendorff_alpha([[5, 3, 1], [5, 3, 1], [1, 1, 1]], "ordinal")
    assert alpha == pytest.approx(101 / 441)  # 1 - (85/9) / 12.25 = 0.229
    assert alpha == pytest.approx(package_alpha([[5, 3, 1], [5, 3, 1], [1, 1, 1]], "ordinal"))


def test_perfect_agreement_is_one_and_systematic_disagreement_negative() -> None:
    assert krippendorff_alpha([[5, 3, 1, 2], [5, 3, 1, 2], [5, 3, 1, 2]]) == pytest.approx(1.0)
    # each unit gets 5, 4 and 1: every judge disagrees with every other everywhere.
    # n1 = n4 = n5 = 3, o_ck = 1.5 for c != k; d45 = d14 = 9, d15 = 36: D_o = 18, D_e = 13.5.
    alpha = krippendorff_alpha([[5, 5, 5], [4, 4, 4], [1, 1, 1]])
    assert alpha == pytest.approx(-1 / 3)


def test_missing_values_and_lone_values_are_left_out() -> None:
    base = krippendorff_alpha([[5, 3, 1], [5, 3, 1], [1, 1, 1]])
    with_failed_judge = krippendorff_alpha([[5, 3, 1, N], [5, 3, 1, 4], [1, 1, 1, N], [N] * 4])
    assert with_failed_judge == pytest.approx(base)  # unit 4 has one value: not pairable


def test_alpha_is_undefined_without_pairs_or_without_variation() -> None:
    assert krippendorff_alpha([]) is None
    assert krippendorff_alpha([[1, 2, 3]]) is None  # one coder
    assert krippendorff_alpha([[1, N], [N, 2]]) is None  # no unit with two values
    assert krippendorff_alpha([[4, 4, 4], [4, 4, 4]]) is None  # D_e = 0: nothing varies


def test_ordinal_and_interval_alpha_weigh_distance_nominal_does_not() -> None:
    near = [[1, 2, 3, 4, 5], [2, 2, 3, 4, 5]]  # one disagreement by one step
    far = [[1, 2, 3, 4, 5], [5, 2, 3, 4, 5]]  # one disagreement by four steps
    assert krippendorff_alpha(near, "nominal") == pytest.approx(krippendorff_alpha(far, "nominal"))
    for metric in ("ordinal", "interval"):
        assert krippendorff_alpha(near, metric) > krippendorff_alpha(far, metric)  # type: ignore[operator]


def test_rows_of_different_lengths_are_refused() -> None:
    with pytest.raises(ValueError, match="one entry"):
        krippendorff_alpha([[1, 2], [1]])


# -- Cohen's kappa ---------------------------------------------------------------------------

A = [1, 2, 3, 4, 5, 3, 2, 1, 4, 4, 5, 2]
B = [1, 3, 3, 4, 4, 2, 2, 1, 5, 3, 5, 1]


@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
def test_cohen_kappa_matches_scikit_learn(weights: str | None) -> None:
    ours = cohen_kappa(A, B, labels=[1, 2, 3, 4, 5], weights=weights)  # type: ignore[arg-type]
    assert ours == pytest.approx(cohen_kappa_score(A, B, labels=[1, 2, 3, 4, 5], weights=weights))


def test_cohen_kappa_by_hand_and_its_bounds() -> None:
    # p_o = 3/4; marginals (2, 2) and (1, 3): p_e = (2*1 + 2*3) / 16 = 1/2; kappa = 1/2.
    assert cohen_kappa([1, 1, 2, 2], [1, 2, 2, 2]) == pytest.approx(0.5)
    assert cohen_kappa([1, 2, 3], [1, 2, 3]) == pytest.approx(1.0)
    assert cohen_kappa([1, 2, 1, 2], [2, 1, 2, 1]) == pytest.approx(-1.0)


def test_cohen_kappa_leaves_out_missing_units_and_is_undefined_for_one_category() -> None:
    assert cohen_kappa([1, 1, 2, 2, N], [1, 2, 2, 2, 5]) == pytest.approx(0.5)
    assert cohen_kappa([3, 3], [3, 3]) is None
    assert cohen_kappa([N], [1]) is None


# -- Fleiss' kappa ---------------------------------------------------------------------------

# Fleiss' kappa's usual worked example (Wikipedia, "Fleiss' kappa"): 10 subjects, 14 raters,
# counts per category 1-5; P = 0.378, P_e = 0.213, kappa = 0.210.
FLEISS_COUNTS = [
    [0, 0, 0, 0, 14],
    [0, 2, 6, 4, 2],
    [0, 0, 3, 5, 6],
    [0, 3, 9, 2, 0],
    [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0],
    [3, 2, 6, 3, 0],
    [2, 5, 3, 2, 2],
    [6, 5, 2, 1, 0],
    [0, 2, 2, 3, 7],
]


def raters_from_counts(counts: list[list[int]]) -> list[list[int | None]]:
    """``ratings[rater][unit]`` with each unit's categories handed out to the raters in turn."""
    units = [[c + 1 for c, k in enumerate(row) for _ in range(k)] for row in counts]
    return [list(rater) for rater in zip(*units, strict=True)]


def test_fleiss_kappa_of_the_worked_example() -> None:
    assert fleiss_kappa(raters_from_counts(FLEISS_COUNTS)) == pytest.approx(0.20993, abs=5e-5)


def test_fleiss_kappa_by_hand() -> None:
    # units (1,1,1) and (1,1,2): P_1 = 1, P_2 = 1/3; p = (5/6, 1/6), P_e = 13/18; kappa = -1/5.
    assert fleiss_kappa([[1, 1], [1, 1], [1, 2]]) == pytest.approx(-0.2)
    assert fleiss_kappa([[1, 2, 3], [1, 2, 3], [1, 2, 3]]) == pytest.approx(1.0)


def test_fleiss_kappa_drops_incomplete_units_and_is_undefined_without_variation() -> None:
    assert fleiss_kappa([[1, 1, 5], [1, 1, N], [1, 2, 4]]) == pytest.approx(-0.2)
    assert fleiss_kappa([[2, 2], [2, 2]]) is None
    assert fleiss_kappa([[1, 2]]) is None  # one rater
    assert fleiss_kappa([[1, N], [N, 2]]) is None  # no complete unit
