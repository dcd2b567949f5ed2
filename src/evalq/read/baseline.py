"""A task's current Arena baseline: the newest stored snapshot, or the profile's defaults."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy.orm import Session

from evalq.core.profile import Profile
from evalq.scoring.arena import Baseline, compute_baseline
from evalq.store import queries
from evalq.store.models import BaselineRow


@dataclass(frozen=True)
class CurrentBaseline:
    """The baseline scores are computed against, and where it came from.

    Attributes:
        baseline: the snapshot.
        version: its stored version; 0 when no refresh has stored one (the profile's defaults).
        submission_count: how many evaluated submissions it was computed from.
        created_at: when it was stored; None for the defaults.
    """

    baseline: Baseline
    version: int
    submission_count: int
    created_at: datetime | None


def current_baseline(session: Session, *, task_id: str, profile: Profile) -> CurrentBaseline:
    """The task's newest baseline snapshot, or version 0: the defaults of ``profile``."""
    return _current(queries.current_baseline(session, task_id=task_id), profile)


def current_baselines(
    session: Session, *, profiles: Mapping[str, Profile]
) -> dict[str, CurrentBaseline]:
    """`current_baseline` of every task in ``profiles`` (task id -> its profile), read together."""
    rows = queries.current_baselines(session, task_ids=list(profiles))
    return {t: _current(rows.get(t), profile) for t, profile in profiles.items()}


def _current(row: BaselineRow | None, profile: Profile) -> CurrentBaseline:
    if row is None:
        return CurrentBaseline(compute_baseline([], profile.arena), 0, 0, None)
    return CurrentBaseline(
        Baseline.model_validate(row.data), row.version, row.submission_count, row.created_at
    )
