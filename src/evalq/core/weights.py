"""Weighted means over the parts that are present: the one mechanism every composite uses."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class Weighted:
    """A weighted mean and what went into it.

    Attributes:
        value: the mean over the present parts, weights renormalised by their sum; None when no
            part with a positive weight is present.
        used: names of the parts that contributed.
        missing: names of weighted parts that were absent (None), so the caller can say so.
    """

    value: float | None
    used: tuple[str, ...]
    missing: tuple[str, ...]


def weighted_mean(values: Mapping[str, float | None], weights: Mapping[str, float]) -> Weighted:
    """Mean of ``values`` weighted by ``weights``, renormalised over the values present.

    Weights are divided by their sum (so 0.167 x 6 is an exact mean, docs/scoring.md). Parts whose
    value is None are left out and named in ``missing``; parts with zero weight never count.
    Values without a weight are ignored.
    """
    total = 0.0
    weight_sum = 0.0
    used: list[str] = []
    missing: list[str] = []
    for name, weight in weights.items():
        if weight <= 0:
            continue
        value = values.get(name)
        if value is None:
            missing.append(name)
            continue
        total += value * weight
        weight_sum += weight
        used.append(name)
    mean = total / weight_sum if weight_sum > 0 else None
    return Weighted(mean, tuple(used), tuple(missing))
