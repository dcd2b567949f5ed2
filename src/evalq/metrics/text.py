"""Tier 1 (spec 001): text similarity to the references, what the output copies, time, task
success and the tier score.

Every weight and threshold comes from the profile's ``[text]`` section. See docs/scoring/tier1.md.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

from evalq.core.normalise import normalise_time
from evalq.core.results import CopyRecord, SourceCopy, TextResult
from evalq.core.text_form import text_form
from evalq.core.weights import Weighted, weighted_mean
from evalq.metrics.fragments import fragments, words
from evalq.metrics.similarity import jaccard, tfidf_cosine_many
from evalq.metrics.stuffing import argued_content
from evalq.metrics.unrelated import UNRELATED_REVIEWS

if TYPE_CHECKING:
    from evalq.core.profile import TextProfile
    from evalq.metrics.semantic import TextScorer


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
    semantic: TextScorer | None,
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
    semantic: TextScorer | None,
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


def unrelated_agreement(
    references: Sequence[str],
    *,
    profile: TextProfile,
    semantic: TextScorer | None,
) -> float | None:
    """The floor: how close reviews of unrelated papers (`UNRELATED_REVIEWS`) come to the
    task's references, each scored against them exactly as an output is; the mean of those.

    Review wording alone reaches this (another paper's review, generic praise), so similarity up
    to it earns nothing. None without references.
    """
    if not references:
        return None
    values = [
        overall_similarity(
            text_metrics(review, references, profile=profile, semantic=semantic), profile
        )
        for review in UNRELATED_REVIEWS
    ]
    found = [value for value in values if value is not None]
    return sum(found) / len(found) if found else None


@dataclass(frozen=True)
class Anchors:
    """What a task's references say about similarity: the floor and the ceiling."""

    floor: float | None
    ceiling: float | None


_ANCHORS: OrderedDict[tuple[str, ...], Anchors] = OrderedDict()
_ANCHORS_KEPT = 256
"""Anchors kept per process: they depend only on the references and the scoring, so one
worker computes them once per task, not once per submission."""


def cached_anchors(
    references: Sequence[str],
    *,
    profile: TextProfile,
    semantic: TextScorer | None,
) -> Anchors:
    """`unrelated_agreement` and `reference_agreement`, remembered per (references, profile,
    scorer present), least recently used first out."""
    key = (
        profile.model_dump_json(),
        "semantic" if semantic is not None else "lexical",
        *references,
    )
    if key in _ANCHORS:
        _ANCHORS.move_to_end(key)
        return _ANCHORS[key]
    anchors = Anchors(
        floor=unrelated_agreement(references, profile=profile, semantic=semantic),
        ceiling=reference_agreement(references, profile=profile, semantic=semantic),
    )
    _ANCHORS[key] = anchors
    while len(_ANCHORS) > _ANCHORS_KEPT:
        _ANCHORS.popitem(last=False)
    return anchors


MIN_SPAN = 0.02
"""Smallest distance between floor and ceiling used to scale a similarity (references that agree
no better than unrelated reviews would otherwise divide by about zero)."""


def calibrated_similarity(
    similarity: float | None,
    ceiling: float | None,
    floor: float | None = None,
    *,
    at_ceiling: float = 0.8,
) -> float | None:
    """The similarity placed between the floor and the ceiling, on a curve with no cap.

    ``r = max(0, (similarity - floor) / (ceiling - floor))`` is how far above unrelated reviews
    the output stands, in units of the references' own distance above them (at least
    `MIN_SPAN`); the value is ``1 - (1 - at_ceiling) ** r``: 0 at or below the floor,
    ``at_ceiling`` (0.8) for an output as close to the references as they are to each other,
    and still rising above it (never a plateau where every good review ties). A missing floor
    counts as 0. None without a similarity or a positive ceiling (the raw similarity then
    stands, uncalibrated).
    """
    if similarity is None or ceiling is None or ceiling <= 0:
        return None
    low = floor or 0.0
    span = max(ceiling - low, MIN_SPAN)
    steps = max(0.0, (similarity - low) / span)
    return float(1.0 - (1.0 - at_ceiling) ** steps)


def task_success(
    metrics: TextMetrics,
    profile: TextProfile,
    *,
    ceiling: float | None = None,
    floor: float | None = None,
    originality: float = 1.0,
) -> float | None:
    """How far the similarity reaches ``profile.success_threshold``, in [0, 1].

    The similarity is the calibrated one (`calibrated_similarity`) when the references give a
    ``ceiling``, else the raw overall similarity, times the output's ``originality`` (what it did
    not copy). Spec 001 makes success a step (1.0 at the threshold, else 0.0); evalq ramps it
    linearly over ``profile.success_ramp`` below the threshold (0 at ``threshold - ramp``, 1 at
    the threshold), so a review just below the line loses a little, not the whole input. A ramp
    of 0 is the spec's step. A value within 1e-9 below a bound reaches it. None when no
    similarity could be computed (no references).
    """
    overall = overall_similarity(metrics, profile)
    if overall is None:
        return None
    calibrated = calibrated_similarity(
        overall, ceiling, floor, at_ceiling=profile.similarity_at_ceiling
    )
    value = (overall if calibrated is None else calibrated) * originality
    return success_of(value, profile)


def success_of(similarity: float, profile: TextProfile) -> float:
    """Task success of a (calibrated, original) similarity: the ramp `task_success` describes."""
    threshold, ramp = profile.success_threshold, profile.success_ramp
    if similarity >= threshold - THRESHOLD_TOLERANCE:
        return 1.0
    if ramp <= 0 or similarity <= threshold - ramp:
        return 0.0
    return (similarity - (threshold - ramp)) / ramp


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


def content_words(tokens: Sequence[str]) -> list[str]:
    """The tokens that carry content: not an English stop word, with a letter in it."""
    return [t for t in tokens if t not in ENGLISH_STOP_WORDS and any(c.isalpha() for c in t)]


def copy_record(
    output: str, references: Sequence[str], context: str | None, profile: TextProfile
) -> CopyRecord:
    """How much of ``output`` is copied from the task's references and context.

    ``copied`` is the share of the output's words inside extractive fragments (`fragments`,
    Grusky et al. 2018) of at least ``profile.copy_min_words`` words found in a reference or in
    the context (a splice of several sources counts as one copy does); up to
    ``profile.copy_allowance`` it is a review quoting the paper it summarises. ``borrowed_words``
    is the share of its content words (`content_words`) found anywhere in the references; beyond
    ``profile.borrowed_allowance`` (what an independent expert review shares with the others) it
    is read as words taken from them (a list of the references' terms). ``originality`` is
    ``(1 - copied excess) * (1 - borrowed excess)``, each excess the share above its allowance as
    a share of what lies above it. Each source's own coverage and density are kept in
    ``sources``.
    """
    tokens = words(output)
    sources = {f"reference {i}": words(r) for i, r in enumerate(references, start=1)}
    if context:
        sources["context"] = words(context)
    each = tuple(
        SourceCopy(
            source=name,
            coverage=found.coverage,
            density=found.density,
            copied=found.copied(profile.copy_min_words),
        )
        for name, source in sources.items()
        for found in [fragments(tokens, [source])]
    )
    copied = fragments(tokens, list(sources.values())).copied(profile.copy_min_words)
    vocabulary = {t for name, source in sources.items() if name != "context" for t in source}
    content = content_words(tokens)
    borrowed = sum(1 for t in content if t in vocabulary) / len(content) if content else 0.0
    return CopyRecord(
        copied=copied,
        borrowed_words=borrowed,
        originality=(1 - _excess(copied, profile.copy_allowance))
        * (1 - _excess(borrowed, profile.borrowed_allowance)),
        sources=each,
    )


def _excess(share: float, allowance: float) -> float:
    """How far ``share`` lies above ``allowance``, as a share of what lies above it."""
    return max(0.0, share - allowance) / (1 - allowance) if allowance < 1 else 0.0


def copy_note(record: CopyRecord, profile: TextProfile) -> str | None:
    """The mark of a run that copies rather than reviews: its originality is below
    ``profile.copy_mark`` (None otherwise), or it stuffs a list of the references' words
    (`argued_content`). Names the source it takes most from."""
    if record.stuffed_words:
        return (
            f"stuffs the references' words: {record.stuffed_words} words in passages that list "
            "them rather than argue, left out of its similarity"
        )
    if record.originality >= profile.copy_mark:
        return None
    if record.copied >= 1 - profile.copy_mark or not record.sources:
        top = max(record.sources, key=lambda s: s.copied, default=None)
        share = f"{record.copied:.0%} of its words"
        if top is not None and top.source == "context" and top.copied >= record.copied / 2:
            return f"restates the task's context: {share} in passages copied from it"
        if top is not None and top.copied >= record.copied - 0.05:
            return f"copies {top.source}: {share} in passages copied from it"
        return f"splices the references: {share} in passages copied from them"
    return (
        f"borrows the references' words: {record.borrowed_words:.0%} of its content words are "
        "theirs, more than an independent review shares"
    )


def text_result(
    output: str,
    references: Sequence[str],
    execution_time: float | None,
    *,
    profile: TextProfile,
    semantic: TextScorer | None,
    context: str | None = None,
) -> TextResult:
    """Tier 1's stored result: the raw similarities, the floor and ceiling the references give,
    the calibrated similarity, what the output copies and the similarity of what it did not
    (``original_similarity``, the PeerRead input), task success and the tier score.

    Every text is read in its normal form (`text_form`): a zero-width character inside a word
    or a look-alike letter from another script changes no similarity and hides no copy. Passages
    that list the references' words (`argued_content`) are left out of what is compared, and
    the run is marked for them.
    """
    argued = argued_content(output, references)
    output = text_form(argued.text)
    references = [text_form(reference) for reference in references]
    context = None if context is None else text_form(context)
    metrics = text_metrics(output, references, profile=profile, semantic=semantic)
    anchors = (
        cached_anchors(references, profile=profile, semantic=semantic)
        if references
        else Anchors(floor=None, ceiling=None)
    )
    overall = overall_similarity(metrics, profile)
    calibrated = calibrated_similarity(
        overall, anchors.ceiling, anchors.floor, at_ceiling=profile.similarity_at_ceiling
    )
    record = copy_record(output, references, context, profile) if references else None
    if record is not None and argued.stuffed_words:
        record = record.model_copy(update={"stuffed_words": argued.stuffed_words})
    originality = record.originality if record is not None else 1.0
    base = calibrated if calibrated is not None else overall
    original = None if base is None else base * originality
    tier = tier1_score(metrics, execution_time, profile)
    return TextResult(
        cosine=metrics.cosine,
        jaccard=metrics.jaccard,
        semantic=metrics.semantic,
        references=metrics.references,
        overall_similarity=overall,
        task_success=None if original is None else success_of(original, profile),
        tier_score=tier.value,
        tier_missing=tuple(tier.missing),
        reference_agreement=anchors.ceiling,
        unrelated_agreement=anchors.floor if anchors.ceiling is not None else None,
        calibrated_similarity=calibrated,
        copying=record,
        original_similarity=original,
        copy_note=copy_note(record, profile) if record is not None else None,
    )
