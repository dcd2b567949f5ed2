"""Tier 1 (spec 001): text similarity to the references, time, task success and the tier score.

Every weight and threshold comes from the profile's ``[text]`` section. See docs/scoring/tier1.md.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from evalq.core.normalise import normalise_time
from evalq.core.results import TextResult
from evalq.core.weights import Weighted, weighted_mean
from evalq.metrics.similarity import jaccard, tfidf_cosine_many

if TYPE_CHECKING:
    from evalq.core.profile import TextProfile
    from evalq.metrics.semantic import SemanticScorer


@dataclass(frozen=True)
class TextMetrics:
    """Tier-1 similarities of one output, each the best over the references.

    Attributes:
        cosine: TF-IDF cosine; None without references.
        jaccard: word-set Jaccard; None without references.
        semantic: BERTScore F1; None without references or when no scorer was given.
        references: how many references the output was compared with.
    """

    cosine: float | None
    jaccard: float | None
    semantic: float | None
    references: int


def text_metrics(
    output: str,
    references: Sequence[str],
    *,
    profile: TextProfile,
    semantic: SemanticScorer | None,
) -> TextMetrics:
    """Compare ``output`` with each reference; keep the maximum of each metric separately.

    Each metric takes its own best reference (the output is as good as its closest reference by
    that measure). Without references every metric is None (not applicable, never 0).

    Args:
        output: the agent's output text.
        references: the task's reference texts.
        profile: the ``[text]`` profile section (n-grams, stop words, model precision).
        semantic: the loaded scorer, or None to skip the semantic metric.
    """
    if not references:
        return TextMetrics(cosine=None, jaccard=None, semantic=None, references=0)
    cosines = tfidf_cosine_many(
        output, references, ngram_range=profile.ngram_range, stop_words=profile.stop_words
    )
    jaccards = [jaccard(output, reference) for reference in references]
    semantics = (
        semantic.score(output, references, precision=profile.precision)
        if semantic is not None
        else None
    )
    return TextMetrics(
        cosine=max(cosines),
        jaccard=max(jaccards),
        semantic=max(semantics) if semantics else None,
        references=len(references),
    )


def _similarities(metrics: TextMetrics) -> dict[str, float | None]:
    return {"semantic": metrics.semantic, "cosine": metrics.cosine, "jaccard": metrics.jaccard}


def overall_similarity(metrics: TextMetrics, profile: TextProfile) -> float | None:
    """Weighted mean of the similarities present, with ``profile.success_weights``."""
    return weighted_mean(_similarities(metrics), profile.success_weights).value


THRESHOLD_TOLERANCE = 1e-9
"""A value this close below a threshold still reaches it (floating-point rounding)."""


def reference_agreement(
    references: Sequence[str],
    *,
    profile: TextProfile,
    semantic: SemanticScorer | None,
) -> float | None:
    """The human ceiling: how much the task's own references agree with one another.

    Each reference is scored as a candidate against the others, exactly as an output is scored
    against all of them (each metric's best reference, then `overall_similarity`); the ceiling
    is the mean of those. Two expert reviews of one paper agree far below 1 (about 0.4 on real
    ICLR 2017 reviews, docs/scoring.md), so a raw similarity is read relative to this. None with
    fewer than two references: one reference has nothing to agree with.
    """
    if len(references) < 2:
        return None
    agreements = []
    for index, reference in enumerate(references):
        others = [*references[:index], *references[index + 1 :]]
        metrics = text_metrics(reference, others, profile=profile, semantic=semantic)
        value = overall_similarity(metrics, profile)
        if value is not None:
            agreements.append(value)
    return sum(agreements) / len(agreements) if agreements else None


_CEILINGS: OrderedDict[tuple[str, ...], float | None] = OrderedDict()
_CEILINGS_KEPT = 256
"""Ceilings kept per process: the references' agreement depends only on the references and
the scoring, so one worker computes it once per task, not once per submission."""


def cached_reference_agreement(
    references: Sequence[str],
    *,
    profile: TextProfile,
    semantic: SemanticScorer | None,
) -> float | None:
    """`reference_agreement`, remembered per (references, profile, scorer present), least
    recently used first out."""
    key = (
        profile.model_dump_json(),
        "semantic" if semantic is not None else "lexical",
        *references,
    )
    if key in _CEILINGS:
        _CEILINGS.move_to_end(key)
        return _CEILINGS[key]
    value = reference_agreement(references, profile=profile, semantic=semantic)
    _CEILINGS[key] = value
    while len(_CEILINGS) > _CEILINGS_KEPT:
        _CEILINGS.popitem(last=False)
    return value


def calibrated_similarity(similarity: float | None, ceiling: float | None) -> float | None:
    """``min(1, similarity / ceiling)``: the similarity as a share of the references' own
    agreement (an output as close to them as they are to each other scores 1). None without a
    similarity or a positive ceiling (the raw similarity then stands, uncalibrated)."""
    if similarity is None or ceiling is None or ceiling <= 0:
        return None
    return min(1.0, similarity / ceiling)


def task_success(
    metrics: TextMetrics, profile: TextProfile, *, ceiling: float | None = None
) -> float | None:
    """1.0 when the similarity reaches ``profile.success_threshold``, else 0.0.

    The similarity is the calibrated one (`calibrated_similarity`) when the references give a
    ``ceiling``, else the raw overall similarity. A similarity within 1e-9 below the threshold
    reaches it (a weighted sum such as 0.7999999999999999 is 0.8), as every other threshold in
    evalq. None when no similarity could be computed (no references).
    """
    overall = overall_similarity(metrics, profile)
    if overall is None:
        return None
    calibrated = calibrated_similarity(overall, ceiling)
    value = overall if calibrated is None else calibrated
    return 1.0 if value >= profile.success_threshold - THRESHOLD_TOLERANCE else 0.0


def tier1_score(
    metrics: TextMetrics, execution_time: float | None, profile: TextProfile
) -> Weighted:
    """Tier-1 score: weighted mean of the similarities and the normalised time.

    Weights are ``profile.tier_weights`` (spec: semantic .4, cosine .3, jaccard .2, time .1),
    renormalised over the parts present; absent parts are named in ``missing``.
    """
    values = _similarities(metrics)
    values["time_taken"] = None if execution_time is None else normalise_time(execution_time)
    return weighted_mean(values, profile.tier_weights)


def text_result(
    output: str,
    references: Sequence[str],
    execution_time: float | None,
    *,
    profile: TextProfile,
    semantic: SemanticScorer | None,
) -> TextResult:
    """Tier 1's stored result: the raw similarities, the references' own agreement (the
    ceiling), the calibrated similarity, task success and the tier score."""
    metrics = text_metrics(output, references, profile=profile, semantic=semantic)
    ceiling = cached_reference_agreement(references, profile=profile, semantic=semantic)
    overall = overall_similarity(metrics, profile)
    tier = tier1_score(metrics, execution_time, profile)
    return TextResult(
        cosine=metrics.cosine,
        jaccard=metrics.jaccard,
        semantic=metrics.semantic,
        references=metrics.references,
        overall_similarity=overall,
        task_success=task_success(metrics, profile, ceiling=ceiling),
        tier_score=tier.value,
        tier_missing=tuple(tier.missing),
        reference_agreement=ceiling,
        calibrated_similarity=calibrated_similarity(overall, ceiling),
    )
