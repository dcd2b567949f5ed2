"""score_batch: grouping by task, one baseline per task per batch, baseline update, outliers."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from tests.support.arena_batch import score_batch

from evalq.core.errors import InvalidInput, NotFound
from evalq.core.profile import Profile
from evalq.core.schemas import Submission, Task
from evalq.scoring.arena import ArenaRun, Baseline, compute_baseline, score_arena_run

TASKS = {
    "t1": Task(id="t1", category="debugging"),
    "t2": Task(id="t2", category="refactoring", difficulty="advanced"),
}


def sub(sub_id: str, task_id: str, **usage: Any) -> Submission:
    figures = {"total_tokens": 3000, "tool_calls": 6, **usage}
    return Submission.model_validate(
        {"id": sub_id, "task_id": task_id, "tool": "cli", "model": "gpt-4o", "usage": figures}
    )


def history_runs(make_run: Callable[..., ArenaRun]) -> list[ArenaRun]:
    return [
        make_run(submission_id=f"h{i}", total_tokens=1000 * (i + 1), tool_calls=2 * (i + 1))
        for i in range(4)
    ]


def test_scores_match_score_run_and_keep_input_order(
    profile: Profile, make_baseline: Callable[..., Baseline]
) -> None:
    subs = [sub("a", "t1", total_tokens=2000), sub("b", "t2"), sub("c", "t1", execution_time=90.0)]
    stored = {"t1": make_baseline()}
    result = score_batch(subs, TASKS, stored, profile)
    assert [s.submission_id for s in result.scores] == ["a", "b", "c"]
    default_t2 = compute_baseline([], profile.arena)
    for s, score in zip(subs, result.scores, strict=True):
        baseline = stored.get(s.task_id, default_t2)
        run = ArenaRun.from_submission(s, profile)
        assert score == score_arena_run(run, TASKS[s.task_id], s.evidence, baseline, profile.arena)
    assert result.scores[1].baseline_is_default


def test_baseline_is_updated_with_the_batch(
    profile: Profile, make_run: Callable[..., ArenaRun]
) -> None:
    history = {"t1": history_runs(make_run)}  # 4 runs: tokens 1000..4000
    result = score_batch([sub("a", "t1", total_tokens=9000)], TASKS, {}, profile, history=history,
                         last_updated="2026-05-01T00:00:00Z")  # fmt: skip
    # scored against the 4-run (default) baseline ...
    assert result.scores[0].baseline_is_default
    # ... then 4 + 1 = 5 runs reach min_submissions: tokens 1000, 2000, 3000, 4000, 9000
    updated = result.baselines["t1"]
    assert not updated.is_default and updated.submission_count == 5
    assert (updated.min_tokens, updated.median_tokens, updated.max_tokens) == (1000, 3000, 9000)
    assert updated.last_updated == "2026-05-01T00:00:00Z"


def test_resubmitted_id_replaces_its_earlier_run(
    profile: Profile, make_run: Callable[..., ArenaRun]
) -> None:
    history = {"t1": history_runs(make_run)}
    result = score_batch([sub("h3", "t1", total_tokens=500)], TASKS, {}, profile, history=history)
    # h3 replaced, still 4 runs: defaults
    assert result.baselines["t1"].submission_count == 4


def test_order_within_a_batch_does_not_change_scores(
    profile: Profile, make_run: Callable[..., ArenaRun]
) -> None:
    subs = [sub(f"s{i}", "t1", total_tokens=1000 * (i + 1)) for i in range(6)]
    history = {"t1": history_runs(make_run)}
    forward = score_batch(subs, TASKS, {}, profile, history=history)
    backward = score_batch(subs[::-1], TASKS, {}, profile, history=history)
    assert {s.submission_id: s for s in forward.scores} == {
        s.submission_id: s for s in backward.scores
    }


def test_outliers_and_problems_of_the_batch(
    profile: Profile, make_run: Callable[..., ArenaRun]
) -> None:
    # tokens 1000, 2000, 3000, 4000 (history) + 5, 3000 (batch): median 2500, threshold 250
    history = {"t1": history_runs(make_run)}
    suspect = sub("x", "t1", total_tokens=5, tool_calls=1, execution_time=2.0)
    result = score_batch([suspect, sub("ok", "t1")], TASKS, {}, profile, history=history)
    assert [(o.submission_id, len(o.flags)) for o in result.outliers] == [("x", 3)]
    # x: efficiency 100 (5 tokens, 1 call, 1 iteration) and speed 100 (2 s < 60 s), 5 tokens
    assert result.problems == {
        "x": [
            "Suspicious: Both efficiency and speed scores are extremely high",
            "Suspiciously low token count",
        ]
    }


def test_unknown_task_scores_nothing(profile: Profile) -> None:
    with pytest.raises(NotFound, match="t9"):
        score_batch([sub("a", "t1"), sub("b", "t9")], TASKS, {}, profile)


def test_duplicate_ids_rejected(profile: Profile) -> None:
    with pytest.raises(InvalidInput):
        score_batch([sub("a", "t1"), sub("a", "t1")], TASKS, {}, profile)


def test_empty_batch(profile: Profile) -> None:
    result = score_batch([], TASKS, {}, profile)
    assert (result.scores, result.baselines, result.outliers, result.problems) == ([], {}, [], {})
