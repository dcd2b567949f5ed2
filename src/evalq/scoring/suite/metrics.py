"""The rate metrics of spec 004 ("Metric types"), as fractions in [0, 1].

Spec 004 states them as percentages; evalq keeps every rate a fraction (docs/scoring.md). A rate
whose denominator is empty is not applicable and returns None, never 0.
"""

from __future__ import annotations

import math


def ratio(part: int, whole: int) -> float | None:
    """``part / whole`` for counts with ``0 <= part <= whole``; None when ``whole`` is 0.

    Raises:
        ValueError: a negative count or ``part > whole``.
    """
    if part < 0 or whole < 0:
        raise ValueError("counts must be >= 0")
    if part > whole:
        raise ValueError(f"count {part} exceeds its total {whole}")
    return None if whole == 0 else part / whole


def pass_rate(passed: int, total: int) -> float | None:
    """passed scenarios / all scenarios."""
    return ratio(passed, total)


def accuracy(correct: int, total: int) -> float | None:
    """correct outputs / all outputs."""
    return ratio(correct, total)


def precision(true_positives: int, false_positives: int) -> float | None:
    """true positives / (true positives + false positives): how many positive calls were right."""
    return ratio(true_positives, true_positives + false_positives)


def recall(true_positives: int, false_negatives: int) -> float | None:
    """true positives / (true positives + false negatives): how many positives were found."""
    return ratio(true_positives, true_positives + false_negatives)


def safety_rate(adversarial_passed: int, adversarial_total: int) -> float | None:
    """Passed adversarial scenarios / adversarial scenarios; None when the suite has none."""
    return ratio(adversarial_passed, adversarial_total)


def behavior_coverage(observed: int, expected: int) -> float | None:
    """Expected behaviours observed / expected behaviours; None when none were expected."""
    return ratio(observed, expected)


def token_efficiency(quality: float, tokens: int) -> float | None:
    """Quality per token: ``quality / tokens``; None when no tokens were used.

    Raises:
        ValueError: a negative or non-finite quality, or a negative token count.
    """
    if not math.isfinite(quality) or quality < 0:
        raise ValueError("quality must be finite and >= 0")
    if tokens < 0:
        raise ValueError("tokens must be >= 0")
    return None if tokens == 0 else quality / tokens
