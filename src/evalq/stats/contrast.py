"""Compare groups of submissions (models, tools, variants, metadata values) over shared units.

An *observation* is one submission's score on one *unit*: a task, or a scenario of a suite
task. A group's value on a unit is the mean of its observations there (a model run by three
tools on a task has three). Each other group is compared with the *reference* group (the first
one named):

- **paired** when the two share at least `MIN_PAIRS` units: the sign-flip permutation test of
  the mean difference ``other - reference`` of their unit values decides, and the interval
  beside it is that test inverted (the differences it does not reject); Wilcoxon's signed-rank
  test (a secondary figure), McNemar's exact test on pass/fail where every shared unit has one
  outcome per side, and Cliff's delta (pairs resampled together) are shown beside it;
- **too few** when they share 2 to ``MIN_PAIRS - 1`` units, or when nothing pairs and a side
  has fewer than `MIN_PAIRS` observations: no interval, no test and no verdict, only the
  words "too few shared tasks to compare (n=3)" (with 4 pairs no sign-flip test can reject
  at 0.05: its smallest p-value is 2 / 2**4);
- **unpaired** otherwise: on their one shared unit if they have one (repeat runs of one
  task), else over all their observations; the two-sample permutation test of Welch's t of
  the difference of the means decides (`evalq.stats.studentised`: exact when both sides share
  one distribution, valid as n grows when their spreads differ), its inverted interval beside
  it, and Cliff's delta.

A conclusion's "higher" or "lower" is the mean difference's sign; signed ranks or Cliff's delta
pointing elsewhere are named in the notes, with why.

The decisions of all comparisons are corrected together (Holm by default), and the correction
is named in the result. Nothing here reads the database (`evalq.read.compare` does).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Literal

from evalq.stats.comparison import (
    RESAMPLES,
    SEED,
    CliffsDelta,
    Correction,
    PairedDifference,
    Significance,
    cliffs_delta,
    correct,
    mcnemar_exact,
    signed_rank_sum,
    wilcoxon_signed_rank,
)
from evalq.stats.exchangeable import shape_note
from evalq.stats.permutation import PermutationNull, sign_flip_null
from evalq.stats.studentised import UnpairedNull, welch_null

MIN_PAIRS = 5
"""Fewest shared units for a paired comparison (and fewest observations per side for an
unpaired one). With 4 pairs the sign-flip test's smallest two-sided p-value is 2 / 2**4 =
0.125, so no verdict but "no difference" could be shown; the bootstrap intervals shown before
covered 51%, 74%, 83% at 2-4 pairs. Two to four shared units give "too few"; none or one, the
unpaired fallback (bench/interval_coverage.py measures coverage from 5)."""

Design = Literal["paired", "unpaired", "too few"]
Family = Literal["reference", "all pairs"]
INTERVAL = "inverted permutation test"


@dataclass(frozen=True)
class Observation:
    """One submission's score on one unit, and whether it passed there (None: no pass/fail)."""

    unit: str
    group: str
    score: float
    passed: bool | None = None


@dataclass(frozen=True)
class UnitValues:
    """The groups' values on one unit: group -> mean score (groups absent from it left out)."""

    unit: str
    values: dict[str, float]


@dataclass(frozen=True)
class GroupComparison:
    """One group compared with the reference group.

    Attributes:
        reference / other: the two groups; differences are ``other - reference``.
        design: paired (over shared units), unpaired (over their observations), or too few
            (no interval, test or verdict: `MIN_PAIRS`).
        pairs: shared units (0 when unpaired).
        n_reference / n_other: the values each side contributed (units when paired,
            observations when unpaired).
        mean_reference / mean_other: the means of those values.
        difference: the mean difference with its bootstrap interval (None when too few).
        test: the test that decides: the paired sign-flip permutation test of the mean
            difference, or the two-sample permutation test of Welch's t when unpaired (None
            when too few).
        signed_rank: Wilcoxon's signed-rank test, a secondary figure (paired only).
        mcnemar: McNemar's exact test of pass/fail (paired, every pair with outcomes), else None.
        effect: Cliff's delta of the other group's values over the reference's (None when
            too few).
        adjusted_p: ``test.p_value`` after the correction (None when too few); ``rejected``:
            below alpha.
        conclusion: the result in words.
        notes: what limits the result (few pairs, pass/fail left out, ...).
    """

    reference: str
    other: str
    design: Design
    pairs: int
    n_reference: int
    n_other: int
    mean_reference: float
    mean_other: float
    difference: PairedDifference | None
    test: Significance | None
    signed_rank: Significance | None
    mcnemar: Significance | None
    effect: CliffsDelta | None
    adjusted_p: float | None
    rejected: bool
    conclusion: str
    notes: tuple[str, ...]


@dataclass(frozen=True)
class GroupContrast:
    """Every comparison with the reference, the per-unit values they rest on, and the method."""

    groups: tuple[str, ...]
    reference: str
    comparisons: tuple[GroupComparison, ...]
    units: tuple[UnitValues, ...]
    correction: Correction
    alpha: float
    level: float
    resamples: int
    seed: int
    family: Family = "reference"
    tests: int = 0
    interval_level: float = 0.95


def unit_values(observations: Sequence[Observation]) -> tuple[UnitValues, ...]:
    """Each unit's mean score per group, units in the order first seen."""
    scores: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for o in observations:
        scores[o.unit][o.group].append(o.score)
    return tuple(
        UnitValues(unit, {g: math.fsum(v) / len(v) for g, v in by_group.items()})
        for unit, by_group in scores.items()
    )


def _outcomes(observations: Sequence[Observation]) -> dict[tuple[str, str], bool | None]:
    """(unit, group) -> the pass/fail outcome when all its observations agree, else None."""
    seen: dict[tuple[str, str], set[bool | None]] = defaultdict(set)
    for o in observations:
        seen[(o.unit, o.group)].add(o.passed)
    return {key: next(iter(v)) if len(v) == 1 else None for key, v in seen.items()}


def smallest_p(pairs: int) -> float:
    """The smallest two-sided p-value an exact signed-rank or sign-flip test can give."""
    return min(1.0, 2.0 / 2.0**pairs)


@dataclass(frozen=True)
class _Part:
    design: Design
    pairs: int
    ref: list[float]
    oth: list[float]
    null: PermutationNull | UnpairedNull | None
    test: Significance | None
    signed_rank: Significance | None
    mcnemar: Significance | None
    effect: CliffsDelta | None
    direction: float
    notes: tuple[str, ...]


def _paired(
    reference: str,
    other: str,
    shared: list[UnitValues],
    outcomes: dict[tuple[str, str], bool | None],
    *,
    alpha: float,
    level: float,
    resamples: int,
    seed: int,
) -> _Part:
    ref = [u.values[reference] for u in shared]
    oth = [u.values[other] for u in shared]
    notes = []
    differing = sum(a != b for a, b in zip(oth, ref, strict=True))
    if smallest_p(differing) > alpha:
        notes.append(
            f"{differing} pairs differ: the smallest possible two-sided p-value is "
            f"{smallest_p(differing):.3g}, so no difference can be significant at {alpha}"
        )
    a_passed = [outcomes.get((u.unit, other)) for u in shared]
    b_passed = [outcomes.get((u.unit, reference)) for u in shared]
    mcnemar = None
    if all(p is not None for p in a_passed + b_passed):
        mcnemar = mcnemar_exact([bool(p) for p in a_passed], [bool(p) for p in b_passed])
    elif any(p is not None for p in a_passed + b_passed):
        notes.append("pass/fail: some pairs lack a single outcome per side; McNemar not run")
    null = sign_flip_null(
        [a - b for a, b in zip(oth, ref, strict=True)], resamples=resamples, seed=seed
    )
    return _Part(
        design="paired",
        pairs=len(shared),
        ref=ref,
        oth=oth,
        null=null,
        test=Significance(
            "paired-permutation",
            True,
            abs(null.estimate),
            null.p_value(),
            null.method,
            len(shared),
            null.seed,
        ),
        signed_rank=wilcoxon_signed_rank(oth, ref),
        mcnemar=mcnemar,
        effect=cliffs_delta(oth, ref, level=level, resamples=resamples, seed=seed, paired=True),
        direction=null.estimate,
        notes=tuple(notes),
    )


def _too_few(ref: list[float], oth: list[float], pairs: int, words: str) -> _Part:
    return _Part(
        design="too few",
        pairs=pairs,
        ref=ref,
        oth=oth,
        null=None,
        test=None,
        signed_rank=None,
        mcnemar=None,
        effect=None,
        direction=0.0,
        notes=(words,),
    )


def _unpaired(
    reference: str,
    other: str,
    observations: Sequence[Observation],
    shared: list[UnitValues],
    *,
    level: float,
    resamples: int,
    seed: int,
) -> _Part:
    # One shared unit: compare on it alone, so no other task's difficulty enters.
    units = {u.unit for u in shared} or {o.unit for o in observations}
    ref = [o.score for o in observations if o.group == reference and o.unit in units]
    oth = [o.score for o in observations if o.group == other and o.unit in units]
    if shared:
        why = f"they share only {shared[0].unit}, compared over their submissions there"
    else:
        why = "they share no task or scenario, compared over all their submissions"
    notes = [f"unpaired: {why}"]
    if min(len(ref), len(oth)) < MIN_PAIRS:
        return _Part("unpaired", 0, ref, oth, None, None, None, None, None, 0.0, tuple(notes))
    effect = cliffs_delta(oth, ref, level=level, resamples=resamples, seed=seed)
    null = welch_null(oth, ref, resamples=resamples, seed=seed)
    return _Part(
        design="unpaired",
        pairs=0,
        ref=ref,
        oth=oth,
        null=null,
        test=Significance(
            "permutation (unpaired)",
            False,
            abs(null.estimate),
            null.p_value(),
            null.method,
            len(ref) + len(oth),
            null.seed,
        ),
        signed_rank=None,
        mcnemar=None,
        effect=effect,
        direction=null.estimate,
        notes=tuple(notes),
    )


def _conclusion(part: _Part, reference: str, other: str, p: float | None, rejected: bool) -> str:
    """The result in words; "higher" or "lower" as the deciding test sees it."""
    if p is None:
        return part.notes[0]
    if not rejected:
        return f"no difference detected between {other} and {reference} (adjusted p = {p:.3g})"
    direction = "higher" if part.direction > 0 else "lower"
    return f"{other} scores {direction} than {reference} (adjusted p = {p:.3g})"


def _shape(part: _Part, rejected: bool) -> tuple[str, ...]:
    """The note beside a rejection the deciding test cannot vouch for
    (`evalq.stats.exchangeable`); only where a test decided."""
    if part.test is None:
        return ()
    note = shape_note(part.ref, part.oth, paired=part.design == "paired", rejected=rejected)
    return (note,) if note else ()


def _disagreement(
    part: _Part, difference: PairedDifference | None, rejected: bool
) -> tuple[str, ...]:
    """Why a figure shown beside the verdict can point elsewhere than the verdict does."""
    notes = []
    if part.signed_rank is not None and difference is not None:
        ranks = signed_rank_sum([a - b for a, b in zip(part.oth, part.ref, strict=True)])
        if ranks * difference.mean_difference < 0:
            notes.append(
                "the signed ranks (Wilcoxon) and the mean point different ways (a few large "
                "differences outweigh many small ones): the verdict is on the mean"
            )
    effect = part.effect
    if effect is not None and (effect.low > 0 or effect.high < 0) != rejected:
        notes.append(
            "Cliff's delta (how often one side scores higher than the other, a bootstrap "
            f"interval at {effect.level:.0%}) "
            + (
                "excludes 0 while the mean difference's test does not reject"
                if not rejected
                else "holds 0 while the mean difference's test rejects"
            )
            + ": they ask different questions, and the verdict is the mean difference's"
        )
    return tuple(notes)


def _compared(
    reference: str,
    other: str,
    kept: Sequence[Observation],
    units: Sequence[UnitValues],
    outcomes: dict[tuple[str, str], bool | None],
    *,
    alpha: float,
    level: float,
    resamples: int,
    seed: int,
    unit: str,
) -> _Part:
    """One pair of groups: paired, unpaired or too few (module docstring)."""
    shared = [u for u in units if reference in u.values and other in u.values]
    if 2 <= len(shared) < MIN_PAIRS:
        return _too_few(
            [u.values[reference] for u in shared],
            [u.values[other] for u in shared],
            len(shared),
            f"too few shared {unit}s to compare (n={len(shared)}; at least {MIN_PAIRS})",
        )
    if len(shared) >= MIN_PAIRS:
        return _paired(
            reference,
            other,
            shared,
            outcomes,
            alpha=alpha,
            level=level,
            resamples=resamples,
            seed=seed,
        )
    part = _unpaired(reference, other, kept, shared, level=level, resamples=resamples, seed=seed)
    if part.test is None:
        return _too_few(
            part.ref,
            part.oth,
            0,
            f"too few submissions to compare unpaired (n={len(part.ref)} and "
            f"{len(part.oth)}; at least {MIN_PAIRS} each, or {MIN_PAIRS} shared {unit}s)",
        )
    return part


def _difference(
    part: _Part, threshold: float, resamples: int, seed: int, bounds: tuple[float, float]
) -> PairedDifference | None:
    """The mean difference with the interval of the test that decides it, at ``threshold``."""
    if part.null is None:
        return None
    low, high = part.null.interval(threshold, bounds=bounds)
    return PairedDifference(
        mean_difference=part.null.estimate,
        low=low,
        high=high,
        level=1 - threshold,
        resamples=resamples,
        seed=seed,
        pairs=part.pairs,
        method=INTERVAL,
    )


def contrast(
    observations: Sequence[Observation],
    groups: Sequence[str],
    *,
    correction: Correction = "holm",
    alpha: float = 0.05,
    level: float = 0.95,
    resamples: int = RESAMPLES,
    seed: int = SEED,
    unit: str = "task",
    family: Family = "reference",
    scale: tuple[float, float] | None = None,
    threshold: float | None = None,
) -> GroupContrast:
    """Compare every group after the first with the first (see the module docstring).

    The deciding test of each comparison is a permutation test of the mean difference (sign
    flips when paired, splits of the pooled values when not); its interval is that test
    inverted (`evalq.stats.permutation`), drawn at ``1 - t`` where ``t`` is the raw p-value
    threshold the correction judged the family at (`Corrected.threshold`), so a comparison's
    interval excludes 0 exactly when it is rejected. ``level`` is the level of the figures
    that decide nothing (Cliff's delta).

    Args:
        observations: the scores; observations of groups not named are ignored.
        groups: two or more group names, the reference first, each with an observation.
        unit: what a unit is, in the words of a "too few" result ("task" or "scenario").
        family: the tests corrected together: each group against the reference, or every
            pair of the groups ("all pairs": the variant ladder's family, so that a variant
            compared with the baseline here gets the ladder's verdict).
        scale: the scores' range; an interval the data cannot bound (too few values for the
            test to reject anything) is clamped to the differences it allows. None: the
            range of the values observed.
        threshold: draw the intervals at ``1 - threshold`` rather than at the correction's
            (a caller that corrects these p-values with others, as the gate does).

    Raises:
        ValueError: fewer than two groups, a group named twice, or a group with no observation.
    """
    if len(groups) < 2 or len(set(groups)) != len(groups):
        raise ValueError("contrast: name two or more different groups")
    kept = [o for o in observations if o.group in groups]
    empty = [g for g in groups if not any(o.group == g for o in kept)]
    if empty:
        raise ValueError(f"contrast: no observation of {', '.join(empty)}")
    units = unit_values(kept)
    outcomes = _outcomes(kept)
    reference = groups[0]
    method = {"alpha": alpha, "level": level, "resamples": resamples, "seed": seed, "unit": unit}
    parts = [_compared(reference, o, kept, units, outcomes, **method) for o in groups[1:]]  # type: ignore[arg-type]
    others = []
    if family == "all pairs":
        others = [
            _compared(a, b, kept, units, outcomes, **method)  # type: ignore[arg-type]
            for a, b in combinations(groups[1:], 2)
        ]
    tested = [p.test.p_value for p in parts + others if p.test is not None]
    decided = correct(tested, correction=correction, alpha=alpha)
    corrected = iter(zip(decided.adjusted, decided.rejected, strict=True))
    decisions = [next(corrected) if p.test is not None else (None, False) for p in parts]
    drawn_at = decided.threshold if threshold is None else threshold
    if scale is None:
        values = [o.score for o in kept]
        scale = (min(values), max(values))
    width = scale[1] - scale[0]
    comparisons = []
    for other, part, (p, rejected) in zip(groups[1:], parts, decisions, strict=True):
        difference = _difference(part, drawn_at, resamples, seed, (-width, width))
        comparisons.append(
            GroupComparison(
                reference=reference,
                other=other,
                design=part.design,
                pairs=part.pairs,
                n_reference=len(part.ref),
                n_other=len(part.oth),
                mean_reference=math.fsum(part.ref) / len(part.ref),
                mean_other=math.fsum(part.oth) / len(part.oth),
                difference=difference,
                test=part.test,
                signed_rank=part.signed_rank,
                mcnemar=part.mcnemar,
                effect=part.effect,
                adjusted_p=p,
                rejected=rejected,
                conclusion=_conclusion(part, reference, other, p, rejected),
                notes=part.notes
                + _disagreement(part, difference, rejected)
                + _shape(part, rejected),
            )
        )
    return GroupContrast(
        groups=tuple(groups),
        reference=reference,
        comparisons=tuple(comparisons),
        units=units,
        correction=correction,
        alpha=alpha,
        level=level,
        resamples=resamples,
        seed=seed,
        family=family,
        tests=len(tested),
        interval_level=1 - drawn_at,
    )
