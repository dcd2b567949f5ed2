"""Tier 1 read relative to the task's own references: their agreement is the human ceiling."""

from __future__ import annotations

import pytest

from evalq.core.profile import TextProfile
from evalq.metrics.text import (
    cached_reference_agreement,
    calibrated_similarity,
    overall_similarity,
    reference_agreement,
    task_success,
    text_metrics,
    text_result,
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
    ("raw", "ceiling", "expected"),
    [(0.2, 0.4, 0.5), (0.4, 0.4, 1.0), (0.6, 0.4, 1.0), (0.3, None, None), (0.3, 0.0, None)],
)
def test_calibrated_similarity_is_the_share_of_the_ceiling_capped_at_1(
    raw: float, ceiling: float | None, expected: float | None
) -> None:
    assert calibrated_similarity(raw, ceiling) == expected


def test_task_success_reads_the_calibrated_similarity_when_there_is_a_ceiling() -> None:
    output = REFERENCES[0]  # as close to the others as a reference is: at the ceiling
    metrics = text_metrics(output, REFERENCES[1:], profile=PROFILE, semantic=None)
    ceiling = reference_agreement(REFERENCES[1:], profile=PROFILE, semantic=None)
    assert overall_similarity(metrics, PROFILE) < PROFILE.success_threshold  # raw: a failure
    assert task_success(metrics, PROFILE) == 0.0
    assert task_success(metrics, PROFILE, ceiling=ceiling) == 1.0


def test_the_stored_result_keeps_the_raw_values_beside_the_calibrated_one() -> None:
    result = text_result(REFERENCES[0], REFERENCES[1:], 30.0, profile=PROFILE, semantic=None)
    assert result.overall_similarity is not None and result.reference_agreement is not None
    assert result.calibrated_similarity == pytest.approx(
        min(1.0, result.overall_similarity / result.reference_agreement)
    )
    assert result.task_success == 1.0


def test_the_ceiling_is_computed_once_per_set_of_references() -> None:
    first = cached_reference_agreement(REFERENCES, profile=PROFILE, semantic=None)
    again = cached_reference_agreement(REFERENCES, profile=PROFILE, semantic=None)
    assert first == again == reference_agreement(REFERENCES, profile=PROFILE, semantic=None)
    other = cached_reference_agreement(REFERENCES[:2], profile=PROFILE, semantic=None)
    assert other == reference_agreement(REFERENCES[:2], profile=PROFILE, semantic=None)
