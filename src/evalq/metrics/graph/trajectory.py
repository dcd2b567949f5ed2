"""Trajectory match (tier 3, deterministic): a run's tool calls against the expected ones.

Modes and scores: `evalq.core.trajectory` (docs/scoring.md, "Trajectory match"). A call
matches an expected one when the tool is the same and every expected argument has the same
value among the call's (a call without recorded arguments matches only an expected call that
names none). Loops: a cycle of 1 to `MAX_CYCLE` calls made `MIN_REPEATS` or more times back
to back (an agent stuck retrying), reported whatever the mode, longest repetition first.
"""

from __future__ import annotations

from collections.abc import Sequence

from evalq.core.trajectory import ToolCall, ToolLoop, TrajectoryMatch, TrajectoryMode

MAX_CYCLE = 4
"""The longest cycle of calls looked for."""
MIN_REPEATS = 3
"""Back-to-back repetitions of a cycle that make a loop."""


def matches(call: ToolCall, expected: ToolCall) -> bool:
    """Whether ``call`` is the ``expected`` one (its tool, and the expected arguments)."""
    if call.tool != expected.tool:
        return False
    if not expected.arguments:
        return True
    given = call.arguments or {}
    return all(k in given and given[k] == v for k, v in expected.arguments.items())


def trajectory_match(
    calls: Sequence[ToolCall], expected: Sequence[ToolCall], mode: TrajectoryMode
) -> TrajectoryMatch:
    """Match ``calls`` (the run's, in order) against ``expected`` in ``mode``.

    An empty expectation is met by no calls (exact, any order) or by any (in order, subset);
    a run with no calls against a non-empty expectation scores 0 (1 in ``subset``: it made no
    unexpected call).
    """
    if mode == "exact":
        paired = _positional(calls, expected)
    elif mode == "in_order":
        paired = _in_order(calls, expected)
    else:
        paired = _any_order(calls, expected)
    used_calls = {c for c, _ in paired}
    used_expected = {e for _, e in paired}
    missing = [expected[i].label() for i in range(len(expected)) if i not in used_expected]
    unexpected = [calls[i].label() for i in range(len(calls)) if i not in used_calls]
    matched = [expected[e].label() for _, e in sorted(paired, key=lambda p: p[1])]
    n = len(paired)
    if mode == "exact":
        passed = n == len(expected) == len(calls)
        score = _share(n, max(len(calls), len(expected)))
    elif mode == "in_order":
        passed = n == len(expected)
        score = _share(n, len(expected))
    elif mode == "any_order":
        passed = n == len(expected) == len(calls)
        score = _share(n, max(len(calls), len(expected)))
    else:
        passed = not unexpected
        score = _share(n, len(calls))
    return TrajectoryMatch(
        mode=mode,
        score=score,
        passed=passed,
        matched=matched,
        missing=missing,
        unexpected=unexpected,
        loops=find_loops(calls),
    )


def _share(part: int, whole: int) -> float:
    return 1.0 if whole == 0 else part / whole


def _positional(calls: Sequence[ToolCall], expected: Sequence[ToolCall]) -> list[tuple[int, int]]:
    return [(i, i) for i, (c, e) in enumerate(zip(calls, expected, strict=False)) if matches(c, e)]


def _in_order(calls: Sequence[ToolCall], expected: Sequence[ToolCall]) -> list[tuple[int, int]]:
    """The longest subsequence of ``expected`` found in order in ``calls`` (dynamic
    programming: a greedy scan can pair an early call with the wrong expected one)."""
    n, m = len(calls), len(expected)
    best = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        for j in range(m - 1, -1, -1):
            best[i][j] = max(
                best[i + 1][j],
                best[i][j + 1],
                best[i + 1][j + 1] + 1 if matches(calls[i], expected[j]) else 0,
            )
    paired, i, j = [], 0, 0
    while i < n and j < m:
        if matches(calls[i], expected[j]) and best[i][j] == best[i + 1][j + 1] + 1:
            paired.append((i, j))
            i, j = i + 1, j + 1
        elif best[i + 1][j] >= best[i][j + 1]:
            i += 1
        else:
            j += 1
    return paired


def _any_order(calls: Sequence[ToolCall], expected: Sequence[ToolCall]) -> list[tuple[int, int]]:
    """A largest pairing of calls with expected calls, order aside (augmenting paths: an
    expected call with arguments is not taken by a call a looser expectation could use)."""
    owner: dict[int, int] = {}  # expected index -> call index

    def take(i: int, seen: set[int]) -> bool:
        for j, e in enumerate(expected):
            if j in seen or not matches(calls[i], e):
                continue
            seen.add(j)
            if j not in owner or take(owner[j], seen):
                owner[j] = i
                return True
        return False

    for i in range(len(calls)):
        take(i, set())
    return sorted((i, j) for j, i in owner.items())


def _primitive(cycle: list[str]) -> bool:
    """Not a shorter cycle repeated (``a b a b`` is ``a b`` twice)."""
    n = len(cycle)
    return not any(n % k == 0 and cycle == cycle[:k] * (n // k) for k in range(1, n))


def find_loops(calls: Sequence[ToolCall]) -> list[ToolLoop]:
    """Cycles of calls repeated back to back at least `MIN_REPEATS` times, none inside
    another one found (the shortest cycle that explains a run of repeats is reported)."""
    labels = [c.label() for c in calls]
    found: list[ToolLoop] = []
    covered = [False] * len(labels)
    for size in range(1, MAX_CYCLE + 1):
        start = 0
        while start + size * MIN_REPEATS <= len(labels):
            cycle = labels[start : start + size]
            repeats = 1
            while labels[start + repeats * size : start + (repeats + 1) * size] == cycle:
                repeats += 1
            span = range(start, start + repeats * size)
            if (
                repeats >= MIN_REPEATS
                and len(set(cycle)) == size
                and not any(covered[k] for k in span)
            ):
                found.append(ToolLoop(cycle=cycle, repeats=repeats, start=start))
                for k in span:
                    covered[k] = True
                start += repeats * size
            else:
                start += 1
    return sorted(found, key=lambda loop: (-loop.repeats * len(loop.cycle), loop.start))
