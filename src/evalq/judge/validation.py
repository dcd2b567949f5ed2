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
import random
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from evalq.core.judge_validation import JudgeAgreement, RubricAgreement
from evalq.judge.agreement import krippendorff_alpha

RESAMPLES = 1000
"""Bootstrap resamples of the judge-human alpha's interval."""
MIN_RUNS_FOR_INTERVAL = 5
"""Fewer labelled runs than this: no interval (the bootstrap would resample almost nothing)."""


@dataclass(frozen=True)
class JudgedRun:
    """One judge model's rubric scores of one run, as stored (normalised to [0, 1])."""

    submission_id: str
    task_id: str
    model: str
    scores: Mapping[str, float | None]


@dataclass(frozen=True)
class HumanScore:
    """One person's 1-5 score of one rubric of one run."""

    submission_id: str
    labeller: str
    rubric: str
    score: int


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
        for rubric, model in _rubrics_and_models(in_scope):
            entries.append(
                _one(
                    scope,
                    rubric,
                    model,
                    in_scope,
                    labels,
                    min_labels=min_labels,
                    min_alpha=min_alpha,
                    rng=random.Random(seed),
                    resamples=resamples,
                )
            )
    return JudgeAgreement(
        tasks=list(tasks), min_labels=min_labels, min_alpha=min_alpha, rubrics=entries
    )


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
    rng: random.Random,
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
    interval = _interval(list(pairs_by_run.values()), rng, resamples)
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
    judge = [float(nearest_step(j)) for j, _ in pairs]
    person = [float(h) for _, h in pairs]
    return krippendorff_alpha([judge, person], "ordinal")


def _interval(
    runs: Sequence[Sequence[tuple[float, int]]], rng: random.Random, resamples: int
) -> tuple[float, float] | None:
    """The 2.5th and 97.5th percentiles of alpha over runs resampled with replacement."""
    if len(runs) < MIN_RUNS_FOR_INTERVAL:
        return None
    values = []
    for _ in range(resamples):
        drawn = [pair for _ in runs for pair in runs[rng.randrange(len(runs))]]
        alpha = _pair_alpha(drawn)
        if alpha is not None:
            values.append(alpha)
    if len(values) < resamples // 2:  # mostly undefined (no variation): no honest interval
        return None
    values.sort()
    return _quantile(values, 0.025), _quantile(values, 0.975)


def _quantile(ordered: Sequence[float], q: float) -> float:
    position = q * (len(ordered) - 1)
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


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
