"""Who counts and who waits for a person: decided from the set of runs, in any order."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta

from evalq.core.profile import ArenaProfile
from evalq.scoring.arena.outliers import EXTREMELY_EFFICIENT_TOKENS, EXTREMELY_FAST
from evalq.scoring.arena.run import ArenaRun
from evalq.scoring.review import (
    COPIED_OUTPUT,
    USAGE_BELOW_TRACE,
    Dominance,
    RunFacts,
    dominant_agent,
    duplicates,
    near_copies,
    review_flags,
)

T0 = datetime(2026, 11, 24, tzinfo=UTC)


def facts(
    sid: str,
    tokens: int,
    *,
    second: int = 0,
    run_hash: str | None = None,
    output_hash: str | None = None,
    time: float | None = 60.0,
    calls: int = 5,
    model: str = "m",
) -> RunFacts:
    run = ArenaRun(sid, "t", tokens, calls, execution_time=time, tool="cli", model=model)
    return RunFacts(run, T0 + timedelta(seconds=second), run_hash or sid, output_hash)


def test_a_copy_counts_once_as_the_earliest_whatever_its_id() -> None:
    runs = [facts("b", 100, second=0, run_hash="h"), facts("a", 100, second=1, run_hash="h")]
    assert duplicates(runs) == {"a": "b"}
    # one timestamp (a batch): the id decides
    same = [facts("b", 100, run_hash="h"), facts("a", 100, run_hash="h"), facts("c", 5)]
    assert duplicates(same) == {"b": "a"}
    assert duplicates([facts("x", 1, run_hash=None)] * 1) == {}


def test_the_token_threshold_is_the_median_of_the_task_runs_in_any_order() -> None:
    arena = ArenaProfile()
    runs = [facts(f"r{i}", 1000 + i) for i in range(9)]
    runs.append(facts("cheat", 50, time=1.0))  # few tokens and fast: two indicators
    expected = {"cheat": (EXTREMELY_EFFICIENT_TOKENS, EXTREMELY_FAST)}
    for order in itertools.islice(itertools.permutations(runs), 0, 5000, 97):
        assert review_flags(list(order), arena) == expected


def test_copies_do_not_move_the_median_that_decides_the_flags() -> None:
    arena = ArenaProfile()
    runs = [facts(f"r{i}", 1000) for i in range(5)] + [facts("low", 150, time=1.0)]
    assert review_flags(runs, arena) == {}  # fast, but 150 tokens is not under 10% of 1000
    # 30 copies of one heavy run would lift the median to 5000 and make "low" an outlier
    copies = [facts(f"copy{i}", 5000, second=i + 1, run_hash="heavy") for i in range(30)]
    assert review_flags([*runs, *copies], arena) == {}
    assert duplicates([*runs, *copies]) == {f"copy{i}": "copy0" for i in range(1, 30)}
    # the same 30 runs, each its own content, do move it: the rule reads the runs that count
    distinct = [facts(f"own{i}", 5000, second=i + 1) for i in range(30)]
    assert review_flags([*runs, *distinct], arena) == {
        "low": (EXTREMELY_EFFICIENT_TOKENS, EXTREMELY_FAST)
    }


def test_another_agents_output_with_other_usage_is_held_for_review() -> None:
    arena = ArenaProfile()
    runs = [
        facts("first", 1000, second=0, output_hash="o", model="a"),
        facts("again", 1050, second=1, output_hash="o", model="a"),  # the same agent: not held
        facts("other", 900, second=2, output_hash="o", model="b"),
        facts("own", 1100, second=3, output_hash="p", model="b"),
    ]
    assert review_flags(runs, arena) == {"other": (COPIED_OUTPUT,)}
    assert review_flags(list(reversed(runs)), arena) == {"other": (COPIED_OUTPUT,)}


def shaped(sid: str, tokens: int, second: int, *, model: str = "m", time: float = 60.0) -> RunFacts:
    """A run of one shape ("s"): its content is its usage, so each usage is its own run hash."""
    run = ArenaRun(sid, "t", tokens, 5, execution_time=time, tool="cli", model=model)
    return RunFacts(run, T0 + timedelta(seconds=second), f"{tokens}/{time}", "o", "s")


def test_near_copies_of_one_agent_count_once_as_the_earliest() -> None:
    original = shaped("a", 200_000, 0)
    nudged = [shaped(f"a+{i}", 200_000 + i, i) for i in range(1, 11)]
    found = duplicates([original, *nudged])
    assert found == {f"a+{i}": "a" for i in range(1, 11)}
    assert near_copies([original, *nudged], found) == found
    # in any order: the earliest is the original
    assert duplicates(list(reversed([original, *nudged]))) == found


def test_near_copy_needs_the_same_agent_and_every_figure_within_the_tolerance() -> None:
    # by shape (no sketch here): the same agent only (another agent's needs the similarity
    # sketch, `test_near_copy.py`), every figure within NEAR_COPY_TOLERANCE (3.5%)
    original = shaped("a", 100_000, 0)
    other_model = shaped("b", 100_001, 1, model="other")  # another agent: copied_output rule
    far = shaped("c", 104_000, 2)  # 4% more tokens: a repeated run of its own
    slower = shaped("d", 100_001, 3, time=70.0)  # tokens nudged, time 17% longer
    near_far = shaped("e", 104_001, 4)  # a near-copy of "c", not of "a"
    found = duplicates([original, other_model, far, slower, near_far])
    assert found == {"e": "c"}
    exact = [shaped("x", 5, 0), shaped("y", 5, 1)]  # same content: a copy, not a near-copy
    assert near_copies(exact, duplicates(exact)) == {}


def test_nothing_to_decide() -> None:
    assert review_flags([], ArenaProfile()) == {}
    assert duplicates([]) == {}


def test_an_agent_with_most_of_the_runs_dominates_the_baseline() -> None:
    many = [("aider", "o3")] * 6 + [("codex", "gpt-4o"), ("aider", "gpt-4o")] * 2
    dominance = dominant_agent(many)
    assert dominance == Dominance("aider", "o3", 6, 10)
    assert "aider / o3 sent 6 of the 10 runs" in dominance.note()


def test_half_the_runs_or_a_small_task_is_no_dominance() -> None:
    assert dominant_agent([("aider", "o3")] * 5 + [("codex", "o3")] * 5) is None
    assert dominant_agent([("aider", "o3")] * 9) is None  # fewer than 10 runs
    assert dominant_agent([]) is None


def test_usage_below_its_own_trace_is_held_whatever_the_indicators() -> None:
    def traced(sid: str, time: float | None, calls: int) -> RunFacts:
        run = ArenaRun(sid, "t", 1000, calls, execution_time=time, tool="cli", model="m")
        return RunFacts(run, T0, sid, None, None, trace_seconds=100.0, trace_steps=10)

    runs = [
        traced("honest", 101.0, 10),
        traced("rounded", 98.5, 10),  # within the 2% tolerance
        traced("quick", 50.0, 10),
        traced("few", 100.0, 9),
        traced("unreported", None, 10),  # no time: counted as the worst, not checked
    ]
    assert review_flags(runs, ArenaProfile()) == {
        "quick": (USAGE_BELOW_TRACE,),
        "few": (USAGE_BELOW_TRACE,),
    }
