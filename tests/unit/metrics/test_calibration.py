"""Tier 1 read relative to the task's own references: their agreement is the human ceiling."""

from __future__ import annotations

import itertools

import pytest

from evalq.core.profile import TextProfile
from evalq.metrics.text import (
    cached_anchors,
    calibrated_similarity,
    copy_note,
    copy_record,
    overall_similarity,
    reference_agreement,
    success_of,
    task_success,
    text_metrics,
    text_result,
    unrelated_agreement,
)

PROFILE = TextProfile()
REFERENCES = [
    "The method is novel but the experiments lack strong baselines and ablations.",
    "Interesting idea; experiments are weak, missing baselines, and the writing is unclear.",
    "Clear paper with a simple method; the ablations do not isolate the gating effect.",
]


def test_the_ceiling_is_the_mean_agreement_of_each_reference_with_the_others() -> None:
    each = [
        overall_similarity(
            text_metrics(r, [o for o in REFERENCES if o != r], profile=PROFILE, semantic=None),
            PROFILE,
        )
        for r in REFERENCES
    ]
    ceiling = reference_agreement(REFERENCES, profile=PROFILE, semantic=None)
    assert ceiling == pytest.approx(sum(v for v in each if v is not None) / 3)
    assert 0 < ceiling < 1


def test_a_single_reference_has_no_ceiling_and_the_raw_similarity_stands() -> None:
    assert reference_agreement(REFERENCES[:1], profile=PROFILE, semantic=None) is None
    result = text_result("a review", REFERENCES[:1], None, profile=PROFILE, semantic=None)
    assert result.reference_agreement is None and result.calibrated_similarity is None


@pytest.mark.parametrize(
    ("raw", "ceiling", "floor", "expected"),
    [
        (0.2, 0.4, 0.2, 0.0),  # at the floor: nothing
        (0.1, 0.4, 0.2, 0.0),  # below it: nothing, never negative
        (0.3, 0.4, 0.2, 1 - 0.2**0.5),  # half-way
        (0.4, 0.4, 0.2, 0.8),  # as close as the references are to each other
        (0.6, 0.4, 0.2, 1 - 0.2**2),  # beyond: still rising, no cap where good reviews tie
        (0.2, 0.4, None, 1 - 0.2**0.5),  # no floor: 0
        (0.3, None, 0.2, None),
        (0.3, 0.0, 0.0, None),
    ],
)
def test_calibrated_similarity_runs_from_the_floor_to_past_the_ceiling(
    raw: float, ceiling: float | None, floor: float | None, expected: float | None
) -> None:
    value = calibrated_similarity(raw, ceiling, floor)
    assert value == (None if expected is None else pytest.approx(expected))


def test_calibration_is_strictly_increasing_above_the_floor() -> None:
    values = [calibrated_similarity(x / 100, 0.35, 0.2) or 0.0 for x in range(20, 101)]
    assert all(a < b for a, b in itertools.pairwise(values))
    assert values[-1] < 1.0


@pytest.mark.parametrize(
    ("similarity", "expected"),
    [(0.8, 1.0), (0.79, 0.29 / 0.3), (0.65, 0.5), (0.5, 0.0), (0.2, 0.0)],
)
def test_task_success_ramps_below_the_threshold_instead_of_dropping(
    similarity: float, expected: float
) -> None:
    assert success_of(similarity, PROFILE) == pytest.approx(expected)
    step = PROFILE.model_copy(update={"success_ramp": 0.0})  # the spec's step
    assert success_of(similarity, step) == (1.0 if similarity >= 0.8 else 0.0)


def test_task_success_reads_the_calibrated_similarity_when_there_is_a_ceiling() -> None:
    output = REFERENCES[0]  # as close to the others as a reference is: at the ceiling
    metrics = text_metrics(output, REFERENCES[1:], profile=PROFILE, semantic=None)
    ceiling = reference_agreement(REFERENCES[1:], profile=PROFILE, semantic=None)
    assert overall_similarity(metrics, PROFILE) < 0.5  # raw: far below the line
    assert task_success(metrics, PROFILE) == 0.0
    assert task_success(metrics, PROFILE, ceiling=ceiling, floor=0.0) == 1.0


def test_the_stored_result_keeps_the_raw_values_beside_the_calibrated_one() -> None:
    result = text_result(REFERENCES[0], REFERENCES[1:], 30.0, profile=PROFILE, semantic=None)
    assert result.overall_similarity is not None and result.reference_agreement is not None
    assert result.calibrated_similarity == pytest.approx(
        calibrated_similarity(
            result.overall_similarity, result.reference_agreement, result.unrelated_agreement
        )
    )
    assert result.copying is not None
    assert result.original_similarity == pytest.approx(
        (result.calibrated_similarity or 0.0) * result.copying.originality
    )


def test_the_floor_and_ceiling_are_computed_once_per_set_of_references() -> None:
    first = cached_anchors(REFERENCES, profile=PROFILE, semantic=None)
    again = cached_anchors(REFERENCES, profile=PROFILE, semantic=None)
    assert first is again
    assert first.ceiling == reference_agreement(REFERENCES, profile=PROFILE, semantic=None)
    assert first.floor == unrelated_agreement(REFERENCES, profile=PROFILE, semantic=None)
    other = cached_anchors(REFERENCES[:2], profile=PROFILE, semantic=None)
    assert other.ceiling == reference_agreement(REFERENCES[:2], profile=PROFILE, semantic=None)


CONTEXT = (
    "We propose salience gating, which keeps the top sentences before summarising long inputs."
)


def test_a_review_quoting_its_paper_a_little_keeps_all_its_originality() -> None:
    review = (
        "The authors keeps the top sentences before summarising, a simple idea. The ablation "
        "does not isolate the gate, the baselines are weak and the human study is tiny, so I "
        "am not convinced the gain is real; more datasets would help a great deal here."
    )
    record = copy_record(review, REFERENCES, CONTEXT, PROFILE)
    assert 0 < record.copied <= PROFILE.copy_allowance  # a short quote of the paper
    assert record.originality == 1.0
    assert copy_note(record, PROFILE) is None


def test_a_restated_context_loses_its_originality_and_is_marked() -> None:
    record = copy_record(f"{CONTEXT} Accept.", REFERENCES, CONTEXT, PROFILE)
    # 13 of its 14 words copied: (1 - (13/14 - 0.3) / 0.7) = 0.102 of its similarity is left
    assert record.copied == pytest.approx(13 / 14) and record.originality < 0.15
    assert (copy_note(record, PROFILE) or "").startswith("restates the task's context")
    context = next(s for s in record.sources if s.source == "context")
    assert context.coverage > 0.9 and context.density > 10  # one long fragment
