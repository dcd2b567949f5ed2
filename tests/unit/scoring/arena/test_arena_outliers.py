"""detect_outliers: the spec's three flags, two needed; 'extremely_fast' needs a real time."""

from __future__ import annotations

from collections.abc import Callable

from evalq.core.profile import ArenaProfile
from evalq.scoring.arena import ArenaRun, OutlierFlag, detect_outliers

Run = Callable[..., ArenaRun]


def normal_runs(make_run: Run, task_id: str = "t1") -> list[ArenaRun]:
    # median tokens 1000 -> threshold 0.1 * 1000 = 100
    return [
        make_run(submission_id=f"{task_id}-n{i}", task_id=task_id, total_tokens=1000,
                 tool_calls=8, execution_time=120.0)
        for i in range(4)
    ]  # fmt: skip


def test_two_flags_make_an_outlier(make_run: Run, arena: ArenaProfile) -> None:
    suspect = make_run(submission_id="x", total_tokens=50, tool_calls=1, execution_time=120.0)
    runs = [*normal_runs(make_run), suspect]
    # tokens [1000 x 4, 50]: median 1000, threshold 100; 50 < 100 and a single tool call
    assert detect_outliers(runs, arena) == [
        OutlierFlag("x", "t1", ("extremely_efficient_tokens", "minimal_tool_usage"))
    ]


def test_one_flag_is_not_enough(make_run: Run, arena: ArenaProfile) -> None:
    lean = make_run(submission_id="x", total_tokens=50, tool_calls=3, execution_time=120.0)
    assert detect_outliers([*normal_runs(make_run), lean], arena) == []


def test_all_three_flags(make_run: Run, arena: ArenaProfile) -> None:
    suspect = make_run(submission_id="x", total_tokens=50, tool_calls=1, execution_time=4.9)
    (flag,) = detect_outliers([*normal_runs(make_run), suspect], arena)
    assert flag.flags == ("extremely_efficient_tokens", "extremely_fast", "minimal_tool_usage")
    assert flag.recommended_action == "manual_review"


def test_missing_time_is_never_extremely_fast(make_run: Run, arena: ArenaProfile) -> None:
    # the spec's default of 0 seconds would flag these two as fast + minimal tool usage
    untimed = make_run(submission_id="u", total_tokens=1000, tool_calls=1, execution_time=None)
    zero = make_run(submission_id="z", total_tokens=1000, tool_calls=1, execution_time=0.0)
    assert detect_outliers([*normal_runs(make_run), untimed, zero], arena) == []
    fast = make_run(submission_id="f", total_tokens=1000, tool_calls=1, execution_time=2.0)
    assert [o.submission_id for o in detect_outliers([*normal_runs(make_run), fast], arena)] == [
        "f"
    ]


def test_thresholds_are_strict(make_run: Run, arena: ArenaProfile) -> None:
    # exactly at the token threshold (100) and exactly 5 seconds: neither flag
    edge = make_run(submission_id="e", total_tokens=100, tool_calls=1, execution_time=5.0)
    assert detect_outliers([*normal_runs(make_run), edge], arena) == []


def test_median_is_per_task(make_run: Run, arena: ArenaProfile) -> None:
    # task t2's runs are all small; judged against t1's median they would all be flagged
    small = [
        make_run(submission_id=f"t2-{i}", task_id="t2", total_tokens=60, tool_calls=1)
        for i in range(3)
    ]
    assert detect_outliers([*normal_runs(make_run), *small], arena) == []


def test_profile_thresholds(make_run: Run) -> None:
    lean = make_run(submission_id="x", total_tokens=50, tool_calls=3, execution_time=120.0)
    one_flag = ArenaProfile(outlier_min_flags=1)
    assert [o.submission_id for o in detect_outliers([*normal_runs(make_run), lean], one_flag)] == [
        "x"
    ]


def test_empty(arena: ArenaProfile) -> None:
    assert detect_outliers([], arena) == []
