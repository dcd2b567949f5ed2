"""Each fixed set of values is typed once, as a `Literal`; the lists of it are derived."""

from __future__ import annotations

import subprocess
import sys
from typing import get_args

from evalq.core.profile import JudgeProfile, RubricProfile
from evalq.core.results import FinalTierStatus, TierStatus
from evalq.core.schemas import RUBRIC_NAMES, RubricName
from evalq.core.status import (
    FINAL_STATUSES,
    PENDING_STATUSES,
    STATUSES,
    EvaluationStatus,
    PendingStatus,
    Status,
)
from evalq.service.submitted import FINAL_STATUSES as SUBMITTED_FINAL


def test_a_submission_status_is_pending_or_final_in_the_order_it_goes_through_them() -> None:
    assert get_args(Status) == STATUSES == (*PENDING_STATUSES, *FINAL_STATUSES)
    assert PENDING_STATUSES == get_args(PendingStatus) == ("queued", "running")
    assert FINAL_STATUSES == get_args(EvaluationStatus) == ("done", "degraded", "failed")
    assert frozenset(FINAL_STATUSES) == SUBMITTED_FINAL


def test_a_tier_status_is_running_or_final() -> None:
    assert get_args(TierStatus) == ("running", *get_args(FinalTierStatus))


def test_the_status_module_imports_nothing_heavy() -> None:
    """The CLI's start-up reads it (`evalq task submissions --help`): no pydantic."""
    code = "import sys, evalq.core.status; print('pydantic' in sys.modules)"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "False"


def test_every_rubric_has_its_section_of_the_judge_profile() -> None:
    assert get_args(RubricName) == RUBRIC_NAMES
    for name in RUBRIC_NAMES:
        assert JudgeProfile.model_fields[name].annotation is RubricProfile
    weights = JudgeProfile().rubric_weights()
    assert tuple(weights) == RUBRIC_NAMES
    assert weights["technical_accuracy"] == JudgeProfile().technical_accuracy.weights
