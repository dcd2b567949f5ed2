"""How much judges agree: Krippendorff's alpha, Cohen's kappa and Fleiss' kappa.

Pure functions of reliability data laid out as Krippendorff lays it out: ``ratings[coder][unit]``,
one row per coder (a judge model), one column per unit (what was scored), None where a coder gave
no value. Each returns None when the statistic is undefined, never a made-up 0 or 1.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence
from itertools import product
from typing import Literal

Metric = Literal["nominal", "ordinal", "interval"]
KappaWeights = Literal["linear", "quadratic"]


def krippendorff_alpha(
    ratings: Sequence[Sequence[float | None]], metric: Metric = "ordinal"
) -> float | None:
    """Krippendorff's alpha, ``1 - D_o / D_e``, over the pairable values of ``ratings``.

    A unit is pairable when at least two coders gave it a value; the values of other units are
    left out (so a coder who failed on a unit is simply missing there). ``D_o`` is the mean
    squared difference within units, from the coincidence matrix; ``D_e`` the one expected by
    chance from the pairable values' marginals (Krippendorff 2011, "Computing Krippendorff's
    Alpha-Reliability").

    Args:
        ratings: ``ratings[coder][unit]``; rows of equal length; None marks a missing value.
        metric: ``nominal`` (any difference counts 1), ``ordinal`` (distance by the number of
            values ranked between the two), ``interval`` (squared numeric difference).

    Returns:
        Alpha, at most 1 (1: perfect agreement, 0: agreement at chance level, below 0:
        systematic disagreement), or None when it is undefined: no unit is pairable, or every
        pairable value is the same (``D_e`` = 0: no variation to agree about).
    """
    units = _units(ratings)
    coincidences: defaultdict[tuple[float, float], float] = defaultdict(float)
    for values in units:
        counts = Counter(values)
        for c, k in product(counts, repeat=2):
            pairs = counts[c] * (counts[k] - (c == k))
            coincidences[c, k] += pairs / (len(values) - 1)
    marginals: defaultdict[float, float] = defaultdict(float)
    for (c, _), o in coincidences.items():
        marginals[c] += o
    if len(marginals) < 2:
        return None
    n = sum(marginals.values())
    delta = _distance(metric, marginals)
    observed = sum(o * delta(c, k) for (c, k), o in coincidences.items()) / n
    expected = sum(
        marginals[c] * marginals[k] * delta(c, k) for c, k in product(marginals, repeat=2)
    ) / (n * (n - 1))
    return 1 - observed / expected


def _units(ratings: Sequence[Sequence[float | None]]) -> list[list[float]]:
    """The values of each pairable unit (two or more values)."""
    if len({len(row) for row in ratings}) > 1:
        raise ValueError("every coder needs one entry (a value or None) per unit")
    columns = zip(*ratings, strict=True)
    units = [[v for v in column if v is not None] for column in columns]
    return [values for values in units if len(values) >= 2]


def _distance(metric: Metric, marginals: Mapping[float, float]) -> Callable[[float, float], float]:
    """The squared difference function delta^2(c, k) of ``metric``."""
    if metric == "nominal":
        return lambda c, k: float(c != k)
    if metric == "interval":
        return lambda c, k: (c - k) ** 2
    ranked = sorted(marginals)

    def ordinal(c: float, k: float) -> float:
        low, high = sorted((ranked.index(c), ranked.index(k)))
        between = sum(marginals[g] for g in ranked[low : high + 1])
        return (between - (marginals[c] + marginals[k]) / 2) ** 2

    return ordinal


def cohen_kappa(
    a: Sequence[int | None],
    b: Sequence[int | None],
    *,
    labels: Sequence[int] | None = None,
    weights: KappaWeights | None = None,
) -> float | None:
    """Cohen's kappa of two raters, ``1 - sum(w * observed) / sum(w * expected)``.

    Unweighted (``w`` = 1 off the diagonal) it is ``(p_o - p_e) / (1 - p_e)``; linear and
    quadratic weights grow with the distance between the categories' positions in ``labels``
    (as in scikit-learn's ``cohen_kappa_score``).

    Args:
        a: the first rater's category per unit; None where it gave none.
        b: the second rater's, unit by unit; units missing from either are left out.
        labels: the categories in order; the sorted categories seen when None.
        weights: None, ``linear`` or ``quadratic``.

    Returns:
        Kappa (1: perfect agreement, 0: chance level, below 0: worse than chance), or None when
        no unit has both values or chance alone predicts perfect agreement (one category).
    """
    if len(a) != len(b):
        raise ValueError("both raters need one entry per unit")
    pairs = [(x, y) for x, y in zip(a, b, strict=True) if x is not None and y is not None]
    order = list(labels) if labels is not None else sorted({v for pair in pairs for v in pair})
    position = {label: i for i, label in enumerate(order)}
    if any(x not in position or y not in position for x, y in pairs):
        raise ValueError("a rating is not one of the labels")
    pairs_of = Counter((position[x], position[y]) for x, y in pairs)
    rows = Counter(position[x] for x, _ in pairs)
    columns = Counter(position[y] for _, y in pairs)
    n = len(pairs)

    def weight(i: int, j: int) -> float:
        gap = abs(i - j)
        return float(gap if weights == "linear" else gap**2 if weights == "quadratic" else gap > 0)

    cells = list(product(range(len(order)), repeat=2))
    observed = sum(weight(i, j) * pairs_of[i, j] for i, j in cells)
    expected = sum(weight(i, j) * rows[i] * columns[j] / n for i, j in cells) if n else 0.0
    return None if expected == 0 else 1 - observed / expected


def fleiss_kappa(ratings: Sequence[Sequence[int | None]]) -> float | None:
    """Fleiss' kappa of any number of raters over nominal categories, ``(P - P_e) / (1 - P_e)``.

    ``P`` is the mean share of agreeing rater pairs per unit, ``P_e`` the sum of the squared
    category shares (Fleiss 1971). Fleiss' kappa needs the same number of ratings per unit: units
    where a rater gave no value are left out.

    Args:
        ratings: ``ratings[rater][unit]``; None marks a missing value.

    Returns:
        Kappa, or None when fewer than two raters or no complete unit remain, or every rating
        is the same category (``P_e`` = 1).
    """
    raters = len(ratings)
    columns = zip(*ratings, strict=True) if ratings else iter(())
    units = [Counter(column) for column in columns if None not in column]
    if raters < 2 or not units:
        return None
    agreement = [
        (sum(c * c for c in counts.values()) - raters) / (raters * (raters - 1)) for counts in units
    ]
    totals: Counter[int | None] = sum(units, Counter())
    chance = sum((count / (len(units) * raters)) ** 2 for count in totals.values())
    if chance == 1:
        return None
    return (sum(agreement) / len(units) - chance) / (1 - chance)
