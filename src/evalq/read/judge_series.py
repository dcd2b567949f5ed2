"""A task's judges over time (GET /v1/tasks/{id}/judges, `evalq judge series`): which judge
gave which scores, where the series breaks, and the bridge across each break; and the mark
every board, comparison, gate and monitor shows when a task's scores mix judges.

A break is seen in the judged results (`evalq.store.judged`), which are appended and never
updated: a run's score stays its judge's, and a re-judge writes a series beside it. A run held
for review is left out of a bridge's pairs, as out of every comparison.
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Mapping, Sequence
from itertools import pairwise
from typing import TypeVar

from sqlalchemy.orm import Session

from evalq.core.errors import InvalidInput
from evalq.core.judge_series import Bridge, JudgeHistory, JudgeSeries
from evalq.core.profile import profile_named
from evalq.core.settings import Settings, get_settings
from evalq.read.compare import CompareReport
from evalq.read.leaderboard import LeaderboardReport
from evalq.store import queries
from evalq.store.judged import Judged, judged_of_tasks, scoring_series

DEFAULT_DETECT = 0.1
"""The bias a bridge is sized to detect unless asked: a tenth of the judge's [0, 1] scale."""


def check_detect(detect: float | None) -> None:
    """Raises `InvalidInput` naming ``detect`` unless it is None or a number in (0, 1]."""
    if detect is not None and not (math.isfinite(detect) and 0 < detect <= 1):
        raise InvalidInput([("detect", "a number above 0 and at most 1 (the judge's scale)")])


def run_score(scores: Mapping[str, float | None], rubrics: Sequence[str]) -> float | None:
    """A run's judge score: the mean of its scores of ``rubrics`` (None when it has none)."""
    values = [v for r in rubrics if (v := scores.get(r)) is not None]
    return statistics.fmean(values) if values else None


def _series(judged: Sequence[Judged]) -> list[JudgeSeries]:
    by: dict[str, list[Judged]] = defaultdict(list)
    for j in judged:  # oldest first, so series come in the order judges first appeared
        by[j.series].append(j)
    scoring = _scoring(judged)
    return [
        JudgeSeries(
            series=series,
            identity=rows[0].identity,
            scored=sum(1 for s in scoring.values() if s == series),
            rejudged=sum(1 for j in rows if j.source == "rejudge"),
            first_judged_at=rows[0].judged_at,
            last_judged_at=rows[-1].judged_at,
        )
        for series, rows in by.items()
    ]


def _scoring(judged: Sequence[Judged]) -> dict[str, str]:
    """run -> the series its score came from (its latest judge-tier result)."""
    return {j.submission_id: j.series for j in judged if j.source == "tier"}


def _bridge(
    judged: Sequence[Judged], old: str, new: str, *, detect: float, alpha: float, level: float,
    resample: bool,
) -> Bridge:  # fmt: skip
    by_run: dict[str, dict[str, Judged]] = defaultdict(dict)
    for j in judged:
        if not j.held:
            by_run[j.submission_id][j.series] = j
    old_scores, new_scores = [], []
    for runs in by_run.values():
        if old not in runs or new not in runs:
            continue
        a, b = runs[old].scores, runs[new].scores
        both = [r for r in a if a.get(r) is not None and b.get(r) is not None]
        x, y = run_score(a, both), run_score(b, both)
        if x is not None and y is not None:
            old_scores.append(x)
            new_scores.append(y)
    from evalq.judge.bridge import bridge  # the judge package: loaded by a break, not a board

    return bridge(
        old, new, old_scores, new_scores, detect=detect, alpha=alpha, level=level,
        resample=resample,
    )  # fmt: skip


def history_of(
    task_id: str,
    judged: Sequence[Judged],
    *,
    alpha: float,
    level: float,
    detect: float = DEFAULT_DETECT,
    resample: bool = True,
) -> JudgeHistory:
    """The judge history of one task from its judged results (oldest first)."""
    series = _series(judged)
    bridges = [
        _bridge(
            judged, a.series, b.series, detect=detect, alpha=alpha, level=level,
            resample=resample,
        )
        for a, b in pairwise(series)
    ]  # fmt: skip
    scoring = [s for s in series if s.scored]
    mixed = len(scoring) > 1
    mark = None
    if mixed:
        names = "; ".join(
            f"{s.identity.model} ({s.series[:8]}, from {s.first_judged_at:%Y-%m-%d %H:%M}): "
            f"{s.scored} run(s)"
            for s in scoring
        )
        mark = f"judge changed: scores of {len(scoring)} judges mixed ({names})"
        mark += "; " + "; ".join(_crossing(b) for b in bridges)
        mark += f" (evalq judge series {task_id})"
    return JudgeHistory(task_id=task_id, series=series, mixed=mixed, bridges=bridges, mark=mark)


def _crossing(b: Bridge) -> str:
    """A break in a mark's words: its bridge's status, pairs and bias (the agreement's
    interval, drawn by resampling, is left to the history itself)."""
    needed = "?" if b.needed is None else str(b.needed)
    words = f"{b.old[:8]} -> {b.new[:8]} {b.status} ({b.pairs} of {needed} runs judged by both"
    if b.bias is not None:
        words += f", bias {b.bias:+.3f}"
        if b.bias_low is not None and b.bias_high is not None:
            words += f" [{b.bias_low:+.3f}, {b.bias_high:+.3f}]"
    return words + ")"


def _levels(session: Session, task_id: str, settings: Settings) -> tuple[float, float]:
    profile = profile_named(queries.get_task(session, task_id=task_id).profile, settings)
    level = profile.arena.confidence_level
    return round(1 - level, 12), level


def judge_history(
    session: Session,
    *,
    task_id: str,
    detect: float | None = None,
    settings: Settings | None = None,
) -> JudgeHistory:
    """The judge history of ``task_id`` (what every door serves).

    Raises:
        NotFound: no such task.
        InvalidInput: on ``detect``, as `check_detect`.
    """
    check_detect(detect)
    settings = settings or get_settings()
    alpha, level = _levels(session, task_id, settings)
    judged = judged_of_tasks(session, task_ids=[task_id])
    return history_of(task_id, judged, alpha=alpha, level=level, detect=detect or DEFAULT_DETECT)


def mixed_judges(
    session: Session, *, task_ids: Sequence[str], settings: Settings | None = None
) -> dict[str, JudgeHistory]:
    """The histories of those of ``task_ids`` whose scores mix judges (their ``mark`` set)."""
    settings = settings or get_settings()
    scored = scoring_series(session, task_ids=list(task_ids))
    candidates = [t for t, series in scored.items() if len(series) > 1]
    if not candidates:
        return {}  # one judge (or none) scored each task: nothing to mark, nothing more to read
    by_task: dict[str, list[Judged]] = defaultdict(list)
    for j in judged_of_tasks(session, task_ids=candidates):
        by_task[j.task_id].append(j)
    mixed: dict[str, JudgeHistory] = {}
    for task_id, judged in by_task.items():
        alpha, level = _levels(session, task_id, settings)
        found = history_of(task_id, judged, alpha=alpha, level=level, resample=False)
        if found.mark is not None:
            mixed[task_id] = found
    return mixed


def bridged(history: JudgeHistory) -> bool:
    """Every break of the history is bridged (pairs >= needed)."""
    return all(b.status == "bridged" for b in history.bridges)


Marked = TypeVar("Marked", LeaderboardReport, CompareReport)


def with_judge_break(
    reply: Marked, session: Session, *, task_ids: Sequence[str], settings: Settings
) -> Marked:
    """``reply`` with ``judge_break`` set when any of its tasks mixes judges' scores."""
    marks = {
        t: h.mark for t, h in mixed_judges(session, task_ids=task_ids, settings=settings).items()
    }
    if not marks:
        return reply
    text = " | ".join(f"{t}: {m}" for t, m in marks.items()) if len(task_ids) > 1 else None
    shown = text or next(iter(marks.values()))
    return reply.model_copy(update={"judge_break": shown})
