"""Does the judge agree with people? Judge-human and human-human agreement per rubric and model.

A pure function of the judge's stored rubric scores and people's labels (`evalq.core.labels`):

- **judge vs human**: one unit per (run, labeller) pair the judge model also scored, two coders
  (the judge, the person). The judge's rubric score in [0, 1] is put back on the 1-5 scale
  (``1 + 4 x score``) and rounded to the nearest step for Krippendorff's alpha (ordinal), so
  both coders use the same five values; the bias is the mean signed difference judge - person
  on the unrounded value (positive: the judge is more generous). Its 95% interval is a
  percentile bootstrap over runs (a run's pairs move together: one judge score, several people).
- **human vs human** (the ceiling): one unit per run with two or more labellers, one coder per
  labeller. A judge cannot be expected to agree with people more than they agree with each other.
- **validated** when the judge-human pairs reach the profile's ``min_labels`` and alpha its
  ``min_alpha``; otherwise its scores are "not validated" wherever they are shown, with the
  reason in words.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from evalq.core.judge_validation import (
    HumanScore,
    JudgeAgreement,
    JudgedRun,
    PeopleAgreement,
    RubricAgreement,
)
from evalq.judge.agreement import krippendorff_alpha

RESAMPLES = 1000
"""Bootstrap resamples of the judge-human alpha's interval."""
STEPS = 5
"""The label scale: 1-5."""
MIN_RUNS_FOR_INTERVAL = 5
"""Fewer labelled runs than this: no interval (the bootstrap would resample almost nothing)."""


def on_label_scale(score: float) -> float:
    """A normalised judge score in [0, 1] back on the 1-5 scale of labels: ``1 + 4 x score``."""
    return 1 + 4 * score


def nearest_step(value: float) -> int:
    """The 1-5 step nearest ``value`` (halves round up)."""
    return min(5, max(1, math.floor(value + 0.5)))


def judge_agreement(
    judged: Sequence[JudgedRun],
    humans: Sequence[HumanScore],
    *,
    tasks: Sequence[str],
    min_labels: int,
    min_alpha: float,
    seed: int = 0,
    resamples: int = RESAMPLES,
    pairs: Mapping[str, set[tuple[str, str]]] | None = None,
) -> JudgeAgreement:
    """Agreement per task, rubric and judge model, and pooled over the tasks when several.

    Args:
        judged: every judge model's scores of the tasks' runs.
        humans: every person's rubric scores of those runs.
        tasks: the task ids asked for, in order.
        min_labels: judge-human pairs needed before a judge can be validated.
        min_alpha: lowest judge-human alpha that validates it.
        seed: of the bootstrap.
        resamples: bootstrap resamples.
        pairs: each task's (rubric, model) pairs a judge scored, when ``judged`` holds only
            the runs people labelled (the others pair with no label: they add an entry, not
            a pair); None: the pairs ``judged`` has.

    Returns:
        One entry per (task, rubric, model) with at least one judge score; pooled entries
        (``task_id`` None) after them when two or more tasks are asked for.
    """
    task_of = {run.submission_id: run.task_id for run in judged}
    scopes: list[str | None] = [*tasks, *([None] if len(tasks) > 1 else [])]
    entries = []
    for scope in scopes:
        in_scope = [r for r in judged if scope is None or r.task_id == scope]
        labels = [
            h for h in humans if scope is None or task_of.get(h.submission_id, scope) == scope
        ]
        seen = set(_rubrics_and_models(in_scope))
        for task_id, found in (pairs or {}).items():
            seen |= found if scope is None or task_id == scope else set()
        for rubric, model in sorted(seen):
            entries.append(
                _one(
                    scope,
                    rubric,
                    model,
                    in_scope,
                    labels,
                    min_labels=min_labels,
                    min_alpha=min_alpha,
                    seed=seed,
                    resamples=resamples,
                )
            )
    return JudgeAgreement(
        tasks=list(tasks),
        min_labels=min_labels,
        min_alpha=min_alpha,
        rubrics=entries,
        people=people_agreement(humans),
    )


def people_agreement(humans: Sequence[HumanScore]) -> list[PeopleAgreement]:
    """Per rubric, people's own agreement over the runs two or more of them labelled."""
    by_rubric: defaultdict[str, defaultdict[str, dict[str, int]]] = defaultdict(
        lambda: defaultdict(dict)
    )
    for h in humans:
        by_rubric[h.rubric][h.submission_id][h.labeller] = h.score
    found = []
    for rubric in sorted(by_rubric):
        alpha, runs = _human_alpha(by_rubric[rubric])
        found.append(PeopleAgreement(rubric=rubric, alpha=alpha, runs=runs))
    return found


def _rubrics_and_models(judged: Iterable[JudgedRun]) -> list[tuple[str, str]]:
    seen = {
        (rubric, run.model)
        for run in judged
        for rubric, score in run.scores.items()
        if score is not None
    }
    return sorted(seen)


def _one(
    scope: str | None,
    rubric: str,
    model: str,
    judged: Sequence[JudgedRun],
    humans: Sequence[HumanScore],
    *,
    min_labels: int,
    min_alpha: float,
    seed: int,
    resamples: int,
) -> RubricAgreement:
    judge = {
        r.submission_id: on_label_scale(s)
        for r in judged
        if r.model == model and (s := r.scores.get(rubric)) is not None
    }
    people: defaultdict[str, dict[str, int]] = defaultdict(dict)
    for h in humans:
        if h.rubric == rubric:
            people[h.submission_id][h.labeller] = h.score
    pairs_by_run = {
        run: [(judge[run], score) for score in people[run].values()]
        for run in sorted(judge)
        if people.get(run)
    }
    pairs = [pair for run_pairs in pairs_by_run.values() for pair in run_pairs]
    alpha = _pair_alpha(pairs)
    interval = _interval(list(pairs_by_run.values()), seed, resamples)
    bias = sum(j - h for j, h in pairs) / len(pairs) if pairs else None
    human_alpha, human_runs = _human_alpha(people)
    validated, note = _verdict(len(pairs), alpha, human_alpha, min_labels, min_alpha)
    return RubricAgreement(
        task_id=scope,
        rubric=rubric,
        model=model,
        pairs=len(pairs),
        runs=len(pairs_by_run),
        alpha=alpha,
        alpha_ci=interval,
        bias=bias,
        human_alpha=human_alpha,
        human_runs=human_runs,
        validated=validated,
        note=note,
    )


def _pair_alpha(pairs: Sequence[tuple[float, int]]) -> float | None:
    """Ordinal alpha of the judge (rounded to 1-5 steps) and the people, one unit per pair."""
    if not pairs:
        return None
    value = float(_alpha_of_counts(_pair_counts(pairs))[()])
    return None if math.isnan(value) else value


def _pair_counts(pairs: Sequence[tuple[float, int]]) -> np.ndarray:
    """The 5 x 5 table of (judge step, person's score) counts."""
    counts = np.zeros((STEPS, STEPS))
    for judge, person in pairs:
        counts[nearest_step(judge) - 1, person - 1] += 1
    return counts


def _alpha_of_counts(counts: np.ndarray) -> np.ndarray:
    """Krippendorff's alpha (ordinal) of two coders from tables of pair counts ``[..., 5, 5]``.

    With two values per unit the coincidence matrix is the table plus its transpose; the
    ordinal distance of steps c <= k is ``(sum of n_g for c <= g <= k - (n_c + n_k) / 2)^2``
    (Krippendorff 2011), so the whole computation is a few 5 x 5 array operations and a
    bootstrap of a thousand tables costs milliseconds. The same value as
    `evalq.judge.agreement.krippendorff_alpha` on the pairs (tested); NaN where it is undefined.
    """
    coincidences = counts + np.swapaxes(counts, -1, -2)
    marginals = coincidences.sum(axis=-1)
    total = marginals.sum(axis=-1)
    cumulative = np.cumsum(marginals, axis=-1)
    low = np.minimum.outer(np.arange(STEPS), np.arange(STEPS))
    high = np.maximum.outer(np.arange(STEPS), np.arange(STEPS))
    below_low = np.where(low > 0, np.take(cumulative, np.maximum(low - 1, 0), axis=-1), 0.0)
    between = np.take(cumulative, high, axis=-1) - below_low
    ends = (marginals[..., :, None] + marginals[..., None, :]) / 2
    delta = (between - ends) ** 2
    observed = (coincidences * delta).sum(axis=(-1, -2)) / total
    chance = (marginals[..., :, None] * marginals[..., None, :] * delta).sum(axis=(-1, -2))
    expected = chance / (total * (total - 1))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(expected > 0, 1 - observed / expected, np.nan)


def _interval(
    runs: Sequence[Sequence[tuple[float, int]]], seed: int, resamples: int
) -> tuple[float, float] | None:
    """The 2.5th and 97.5th percentiles of alpha over runs resampled with replacement."""
    if len(runs) < MIN_RUNS_FOR_INTERVAL or resamples < 1:
        return None
    per_run = np.stack([_pair_counts(pairs) for pairs in runs])  # runs x 5 x 5
    drawn = np.random.default_rng(seed).integers(0, len(runs), size=(resamples, len(runs)))
    offsets = np.arange(resamples)[:, None] * len(runs)
    weights = np.bincount((drawn + offsets).ravel(), minlength=resamples * len(runs))
    weights = weights.reshape(resamples, len(runs))
    tables = np.einsum("rn,nij->rij", weights, per_run)
    values = _alpha_of_counts(tables)
    values = values[~np.isnan(values)]
    if len(values) < resamples // 2:  # mostly undefined (no variation): no honest interval
        return None
    low, high = np.quantile(values, [0.025, 0.975])
    return float(low), float(high)


def _human_alpha(people: Mapping[str, Mapping[str, int]]) -> tuple[float | None, int]:
    """Alpha among labellers over runs labelled by two or more (coders: the labellers)."""
    runs = [run for run, by in people.items() if len(by) >= 2]
    labellers = sorted({name for run in runs for name in people[run]})
    if not runs:
        return None, 0
    ratings = [
        [float(people[run][name]) if name in people[run] else None for run in runs]
        for name in labellers
    ]
    return krippendorff_alpha(ratings, "ordinal"), len(runs)


def _verdict(
    pairs: int, alpha: float | None, ceiling: float | None, min_labels: int, min_alpha: float
) -> tuple[bool, str]:
    if pairs < min_labels:
        return False, f"not validated: {pairs} labelled pairs, the profile asks for {min_labels}"
    if alpha is None:
        return False, "not validated: alpha is undefined (no variation in the scores)"
    if alpha < min_alpha:
        ceiling_note = "" if ceiling is None else f" (people among themselves: {ceiling:.2f})"
        return False, (
            f"not validated: alpha {alpha:.2f} is below the profile's {min_alpha:.3f}"
            + ceiling_note
        )
    return True, f"validated: alpha {alpha:.2f} over {pairs} labelled pairs"
