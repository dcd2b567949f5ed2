"""Selective judging with a guarantee: confidence thresholds for a cascade of judges.

Trust or Escalate (Jung, Brahman, Choi; ICLR 2025, arXiv 2407.18370): a judge's verdict is
trusted only when its confidence clears a threshold calibrated on labelled items, chosen so that
among the trusted verdicts the disagreement with the reference (people, or the top judge) is at
most ``alpha`` with probability at least ``1 - delta``. A cascade asks its levels cheapest first;
an item goes up while the level it reached is not confident enough, and an item no level trusts
is left "judge uncertain" (a candidate for a person's label).

`calibrate` is a pure function of labelled judgments: for each calibration item, every level's
(confidence, agreed-with-the-reference) pair. Level j is calibrated on the items the levels below
it did not settle, as the cascade would send them. Its threshold comes from fixed-sequence
testing (the paper's procedure): for candidate thresholds from the highest confidence down (from
the first that trusts ``start_share`` of the level's items, 0.3 by default: `START_SHARE`), the
null hypothesis "risk above alpha" is rejected while the exact binomial p-value
``P(Bin(n, alpha) <= errors)`` of the n items at or above the threshold is at most
``delta / levels`` (a Bonferroni share of delta per level); the threshold is the lowest one
rejected before the first that is not. A level with none rejected is never trusted (it only
escalates, and the cascade leaves it off the route: `Calibration.untrusted`). `search_plan` shows,
from confidences alone, where each level's search starts and how many items it may decide.
See docs/judge.md, "Selective judging", for what the guarantee covers.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, Field

from evalq.core.errors import InvalidInput

Reference = Literal["human", "top judge"]
START_SHARE = 0.3
"""The first candidate threshold trusts at least this share of a level's items (see
`_fixed_sequence`). On real judges (docs/judge.md) the most confident tenth is not the most
often right: Mistral-7B's ten most confident of 500 pairwise verdicts were 40% right, 75% of all;
a search starting there stops at once. Starting at 30% of the items raised the share decided
at alpha 0.15 from 0.16 to 0.40; the start depends on confidences only, so the test keeps its
level."""


@dataclass(frozen=True)
class Judgment:
    """One level's verdict on one labelled item: its confidence and whether it agreed."""

    confidence: float
    agreed: bool


class LevelThreshold(BaseModel):
    """One level's calibrated threshold and what calibration saw of it."""

    level: int = Field(description="0 = the cheapest.")
    threshold: float | None = Field(
        description="Trust the level's verdict when its confidence is at least this; None: "
        "never trusted (every item it sees goes up)."
    )
    reached: int = Field(description="Calibration items the lower levels left to this one.")
    start: float | None = Field(
        default=None,
        description="The first candidate threshold (the search starts here and goes down); "
        "None: too few items reached the level to test any.",
    )
    may_decide: int = Field(
        default=0,
        description="Items at or above the start: the fewest the level decides if trusted at "
        "all (at most ``reached``).",
    )
    trusted: int = Field(description="Of those, at or above the threshold.")
    disagreements: int = Field(description="Of the trusted, how many disagreed.")
    p_value: float | None = Field(
        description="Binomial p-value of 'risk > alpha' at the threshold (at most delta/levels)."
    )


class Calibration(BaseModel):
    """Thresholds per level and the bound they were calibrated to."""

    alpha: float = Field(description="Tolerated disagreement among trusted verdicts.")
    delta: float = Field(description="Allowed probability that the bound fails.")
    items: int = Field(description="Labelled calibration items.")
    reference: Reference = Field(
        description="What agreement is measured against: people's labels, or (without them) "
        "the top level's own verdicts."
    )
    start_share: float = Field(
        default=START_SHARE,
        description="Each level's search starts at the highest threshold trusting this share "
        "of the items that reach it.",
    )
    levels: list[LevelThreshold]
    untrusted: list[int] = Field(
        default_factory=list,
        description="Levels no threshold was accepted for: they decide nothing, so the cascade "
        "leaves them off its route (only audited runs still ask them, to recalibrate).",
    )
    guarantee: str = Field(description="The bound in words.")
    notes: list[str] = Field(
        default_factory=list,
        description="What the calibration means for the route, in words (a level never "
        "trusted is skipped).",
    )


def labels_needed(alpha: float, delta: float, levels: int = 1) -> int:
    """The fewest labelled items with which any threshold can be accepted at all.

    Even if every one of n items agreed, the p-value of the first candidate threshold is
    ``(1 - alpha)^n``; it must be at most ``delta / levels``, so
    ``n >= log(delta / levels) / log(1 - alpha)`` (alpha 0.1, delta 0.1, one level: 22).
    A necessary minimum, not a sufficient one: with errors, more are needed.
    """
    _check_bounds(alpha, delta)
    return math.ceil(math.log(delta / levels) / math.log1p(-alpha))


def calibrate(
    items: Sequence[Sequence[Judgment]],
    *,
    alpha: float,
    delta: float,
    reference: Reference = "human",
    start_share: float = START_SHARE,
) -> Calibration:
    """Thresholds per level so that trusted verdicts disagree at most ``alpha`` w.p. 1-delta.

    Args:
        items: per calibration item, each level's `Judgment`, cheapest level first; every item
            has one per level.
        alpha: tolerated disagreement with the reference (target agreement 1 - alpha).
        delta: allowed failure probability of the bound.
        reference: ``human`` when ``agreed`` compares with people's labels; ``top judge`` when
            it compares with the top level's verdicts (then so does the guarantee).
        start_share: where each level's search starts (`START_SHARE`); in (0, 1].

    Raises:
        InvalidInput: on ``alpha`` / ``delta`` outside (0, 1), ``start_share`` outside (0, 1],
            on ``items`` when levels differ
            in number or none is given, and on ``labels`` when there are fewer items than
            `labels_needed`, with that number.
    """
    _check_bounds(alpha, delta)
    _check_start(start_share)
    counts = {len(item) for item in items}
    if len(counts) > 1 or 0 in counts:
        raise InvalidInput([("items", "every item needs one judgment per level, and one level")])
    levels = counts.pop() if counts else 1
    needed = labels_needed(alpha, delta, levels)
    if len(items) < needed:
        rule = (
            f"{len(items)} labelled items; agreement >= {1 - alpha:g} with probability "
            f">= {1 - delta:g} over {levels} level(s) needs at least {needed}"
        )
        raise InvalidInput([("labels", rule)])
    remaining = list(range(len(items)))
    thresholds = []
    for level in range(levels):
        judgments = [items[i][level] for i in remaining]
        threshold, p_value = _fixed_sequence(judgments, alpha, delta / levels, start_share)
        trusted = [j for j in judgments if threshold is not None and j.confidence >= threshold]
        start = _start([j.confidence for j in judgments], alpha, delta / levels, start_share)
        thresholds.append(
            LevelThreshold(
                level=level,
                threshold=threshold,
                reached=len(judgments),
                start=start,
                may_decide=sum(start is not None and j.confidence >= start for j in judgments),
                trusted=len(trusted),
                disagreements=sum(not j.agreed for j in trusted),
                p_value=p_value,
            )
        )
        if threshold is not None:
            remaining = [i for i in remaining if items[i][level].confidence < threshold]
    against = "people's labels" if reference == "human" else "the top judge's verdicts"
    guarantee = (
        f"with probability >= {1 - delta:g}, trusted verdicts agree with {against} at least "
        f"{1 - alpha:g} of the time (on items like the {len(items)} calibrated on)"
    )
    untrusted = [t.level for t in thresholds if t.threshold is None]
    notes = [
        f"level {level} is never trusted: with no threshold the cascade leaves it off the route "
        "(it would cost on every run and decide nothing); audited runs still ask it"
        if level < levels - 1
        else f"level {level} (the top) is never trusted: every run it sees is 'judge uncertain'"
        for level in untrusted
    ]
    return Calibration(
        alpha=alpha,
        delta=delta,
        items=len(items),
        reference=reference,
        start_share=start_share,
        levels=thresholds,
        untrusted=untrusted,
        guarantee=guarantee,
        notes=notes,
    )


class PlannedLevel(BaseModel):
    """Where one level's threshold search starts, from its confidences alone."""

    level: int = Field(description="0 = the cheapest.")
    items: int = Field(description="Items with a confidence at this level.")
    start: float | None = Field(
        description="The first candidate threshold; None: too few items to test any."
    )
    may_decide: int = Field(
        description="Items at or above the start: what the level decides at the least if it is "
        "trusted at all, were every item to reach it."
    )


def search_plan(
    confidences: Sequence[Sequence[float]],
    *,
    alpha: float,
    delta: float,
    start_share: float = START_SHARE,
) -> list[PlannedLevel]:
    """Per level, where calibration's search would start if every item reached it.

    Labels are not read: the start depends on confidences only (that is what keeps the test
    valid), so it can be shown before anyone labels. A level whose start trusts items known to
    be weak, or that may decide only a handful, is one to question before paying for labels.

    Args:
        confidences: per item, each level's confidence, cheapest first.
        alpha: tolerated disagreement, as for `calibrate`.
        delta: allowed failure probability, as for `calibrate` (split over the levels).
        start_share: as for `calibrate`.

    Raises:
        InvalidInput: as `calibrate` for the bounds and the shape of ``confidences``.
    """
    _check_bounds(alpha, delta)
    _check_start(start_share)
    counts = {len(item) for item in confidences}
    if len(counts) > 1 or 0 in counts:
        raise InvalidInput([("items", "every item needs one confidence per level, and one level")])
    levels = counts.pop() if counts else 1
    plan = []
    for level in range(levels):
        values = [item[level] for item in confidences]
        start = _start(values, alpha, delta / levels, start_share)
        decided = sum(start is not None and value >= start for value in values)
        plan.append(PlannedLevel(level=level, items=len(values), start=start, may_decide=decided))
    return plan


def _start(confidences: Sequence[float], alpha: float, delta: float, share: float) -> float | None:
    """The first candidate threshold of `_fixed_sequence` (None: no candidate)."""
    ordered = sorted(confidences, reverse=True)
    needed = _first_candidate(len(ordered), alpha, delta, share)
    for index in range(needed - 1, len(ordered)):
        if index + 1 == len(ordered) or ordered[index + 1] < ordered[index]:
            return ordered[index]
    return None


def _first_candidate(items: int, alpha: float, delta: float, share: float) -> int:
    """How many items the first candidate threshold must trust: ``share`` of them, and at least
    enough that an error-free run of them could reject 'risk > alpha' at all."""
    return max(math.ceil(math.log(delta) / math.log1p(-alpha)), math.ceil(share * items))


def _fixed_sequence(
    judgments: Sequence[Judgment], alpha: float, delta: float, share: float = START_SHARE
) -> tuple[float | None, float | None]:
    """The lowest threshold reached by rejecting 'risk > alpha' from the top down.

    The sequence starts at the highest threshold that trusts at least ``share`` of the items
    and at least enough to be rejected at all (`labels_needed`): a threshold above fewer items
    could never be rejected, or would be stopped by the first error or two among a handful
    (on real judges the most confident few are not the most often right), ending the sequence
    before it reaches the thresholds worth having. The candidates depend on the confidences
    only, never on the labels, so the test keeps its level.
    """
    ordered = sorted(judgments, key=lambda j: j.confidence, reverse=True)
    needed = _first_candidate(len(ordered), alpha, delta, share)
    chosen: tuple[float | None, float | None] = (None, None)
    errors = 0
    for index, judgment in enumerate(ordered):
        errors += not judgment.agreed
        last_of_its_value = (
            index + 1 == len(ordered) or ordered[index + 1].confidence < judgment.confidence
        )
        if not last_of_its_value or index + 1 < needed:  # a threshold takes all of its value
            continue
        p_value = binomial_cdf(errors, index + 1, alpha)
        if p_value > delta:
            break
        chosen = (judgment.confidence, p_value)
    return chosen


def binomial_cdf(k: int, n: int, p: float) -> float:
    """``P(X <= k)`` for X ~ Binomial(n, p), summed in log space (no overflow at large n)."""
    if k >= n:
        return 1.0
    log_p, log_q = math.log(p), math.log1p(-p)
    terms = [
        math.lgamma(n + 1) - math.lgamma(x + 1) - math.lgamma(n - x + 1) + x * log_p
        + (n - x) * log_q
        for x in range(k + 1)
    ]  # fmt: skip
    top = max(terms)
    return min(1.0, math.exp(top) * sum(math.exp(t - top) for t in terms))


def decide(confidences: Sequence[float], calibration: Calibration) -> int | None:
    """The level whose verdict is trusted (the first confident enough), or None: uncertain."""
    for level, confidence in zip(calibration.levels, confidences, strict=False):
        if level.threshold is not None and confidence >= level.threshold:
            return level.level
    return None


def sample_agreement(verdicts: Sequence[Hashable]) -> tuple[Hashable, float]:
    """A level's verdict and confidence from k samples: the most common verdict and the share
    of samples that gave it (ties go to the verdict seen first).

    Raises:
        ValueError: no samples.
    """
    if not verdicts:
        raise ValueError("confidence from samples needs at least one sample")
    counts = Counter(verdicts)
    top = max(counts.values())
    verdict = next(v for v in verdicts if counts[v] == top)
    return verdict, top / len(verdicts)


def _check_start(start_share: float) -> None:
    if not 0 < start_share <= 1:
        raise InvalidInput([("start_share", "must be above 0 and at most 1")])


def _check_bounds(alpha: float, delta: float) -> None:
    problems = [
        (name, "must be strictly between 0 and 1")
        for name, value in (("alpha", alpha), ("delta", delta))
        if not 0 < value < 1
    ]
    if problems:
        raise InvalidInput(problems)
