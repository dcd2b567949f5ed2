"""The drills' long tier 1 (tests/drills/hold.py) replaces `tiers.compute_text` in any process
that imports it, a pytest worker included: everything but a held run's first attempt must go
through it unchanged, also outside a Celery task (a unit test calling tier 1 directly in a
worker that ran a drill before failed with AttributeError)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from tests.drills import hold


@pytest.mark.parametrize("sid", ["hold-1", "run-1"])
def test_tier_1_called_outside_a_task_is_computed_at_once(
    sid: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    computed: list[Any] = []
    monkeypatch.setattr(hold, "_compute_text", lambda job: computed.append(job) or "computed")
    monkeypatch.setattr(hold, "_hold", lambda: pytest.fail("held outside a tier task"))
    job: Any = SimpleNamespace(submission=SimpleNamespace(id=sid))
    assert hold._held_compute_text(job) == "computed"
    assert computed == [job]
