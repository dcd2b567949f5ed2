"""Student's t quantiles in plain Python agree with scipy's."""

from __future__ import annotations

import itertools
import math

import pytest
from scipy.stats import t as scipy_t

from evalq.core.errors import InvalidInput
from evalq.stats.student_t import regularized_beta, student_t_quantile

DEGREES = [*range(1, 41), 0.5, 2.5, 250, 1_000, 10_000, 100_000, 1_000_000]
PROBABILITIES = [0.55, 0.8, 0.9, 0.95, 0.975, 0.99, 0.995, 0.9995, 0.99999, 0.025, 1e-6]


@pytest.mark.parametrize(("df", "p"), list(itertools.product(DEGREES, PROBABILITIES)))
def test_the_quantile_is_scipy_s(df: float, p: float) -> None:
    assert student_t_quantile(p, df) == pytest.approx(float(scipy_t.ppf(p, df)), rel=5e-9)


@pytest.mark.parametrize("p", [0.5 + 1e-7, 0.5 + 1e-4, 0.6, 0.975, 0.5 - 1e-7])
def test_closed_forms_near_the_centre_too(p: float) -> None:
    # scipy's ppf (and stdtr) drift by up to 4e-4 relative within 1e-6 of p = 0.5; one and two
    # degrees of freedom have closed forms.
    assert student_t_quantile(p, 1) == pytest.approx(math.tan(math.pi * (p - 0.5)), rel=1e-8)
    two = (2 * p - 1) / math.sqrt(2 * p * (1 - p))
    assert student_t_quantile(p, 2) == pytest.approx(two, rel=1e-8)


def test_the_centre_and_the_symmetry() -> None:
    assert student_t_quantile(0.5, 7) == 0.0
    assert student_t_quantile(0.1, 7) == -student_t_quantile(0.9, 7)


def test_the_incomplete_beta_at_its_ends() -> None:
    assert regularized_beta(2.0, 3.0, 0.0) == 0.0
    assert regularized_beta(2.0, 3.0, 1.0) == 1.0
    assert regularized_beta(1.0, 1.0, 0.3) == pytest.approx(0.3, rel=1e-15)


@pytest.mark.parametrize(("p", "df", "field"), [(0.0, 3, "p"), (1.0, 3, "p"), (0.9, 0, "df")])
def test_out_of_range_arguments_are_refused(p: float, df: float, field: str) -> None:
    with pytest.raises(InvalidInput) as refused:
        student_t_quantile(p, df)
    assert refused.value.problems[0][0] == field
