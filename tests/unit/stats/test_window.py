"""A monitor's window statistic: mean, pass rate, and numpy's default (linear) quantile."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from evalq.stats.window import quantile, window_statistic

finite = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False)


@given(st.lists(finite, min_size=1, max_size=50), st.floats(min_value=0.01, max_value=0.99))
def test_the_quantile_is_numpys_linear_one(values: list[float], q: float) -> None:
    assert quantile(values, q) == pytest.approx(float(np.quantile(values, q)), abs=1e-6)


def test_each_statistic_of_a_window_and_an_empty_window() -> None:
    values, passed = [0.2, 0.4, 0.9], [False, True, True]
    assert window_statistic(values, passed, statistic="mean") == pytest.approx(0.5)
    assert window_statistic(values, passed, statistic="pass_rate") == pytest.approx(2 / 3)
    assert window_statistic(values, passed, statistic="quantile", q=0.5) == 0.4
    for statistic in ("mean", "pass_rate", "quantile"):
        assert window_statistic([], [], statistic=statistic, q=0.5) is None  # type: ignore[arg-type]
