"""Which runs of a task count, and which wait for a person: decided from the task's whole set of
evaluated runs, so the answer does not depend on the order in which their merges ran.

- A **duplicate** is a run whose content (`evalq.core.schemas.RUN_CONTENT`: output, trace, usage,
  evidence, scenarios; not its id, labels or metadata) equals an earlier run's: it counts once,
  as the earliest (by submission time, then id).
- A **near-copy** is a run whose every usage figure is within `NEAR_COPY_TOLERANCE` of an
  earlier run's and whose content is that run's: the same shape (`SHAPE_CONTENT`: the content
  without the usage, the output in the normal form) from the same agent, or, from any agent
  (tool, model), a content near it by similarity (`evalq.scoring.near_copy`: MinHash
  containment of the output's shingles, trace and evidence at least `NEAR_CONTAINMENT`), so a
  sentence appended or another model name changes nothing. It counts once, like a duplicate
  (`duplicates` returns both).
- An **outlier** has at least ``outlier_min_flags`` of spec 000's indicators, the token one
  measured against the median tokens of the task's runs (duplicates counted once), not against
  the baseline a merge happened to see.
- **Usage below its trace**: a run whose own trace shows more than it reports (its steps span
  more seconds than its execution time, past `TRACE_TOLERANCE`, or it has more steps, each a
  tool call, than its tool calls) under-reports: held for review with the flag
  `USAGE_BELOW_TRACE`, whatever its indicators. Tokens are not in a submission's trace steps, so
  a run's tokens are checked only where its usage comes from its spans (OTLP).
- **Implausibly fast**: a measured time under what the task's other agents make plausible
  (`evalq.scoring.plausible`): held for review with the flag `IMPLAUSIBLY_FAST`.
- **Instructions judged as written**: tier 1 marked a sentence of the output as an instruction
  to the evaluator by its meaning, and the judge scored the output without leaving it out
  (`evalq.scoring.injection.judged_as_written`): held for review with the flag
  `INSTRUCTIONS_JUDGED_AS_WRITTEN` until a person accepts it.
- A **copied output**: the same output text as an earlier run of another agent (tool or model),
  sent with other usage. Held for review whatever its indicators. Repeated runs of one agent
  may well end with the same text (the bundled Scylla runs do, 10 per variant), so the same
  agent's identical outputs are not flagged.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from evalq.core.profile import ArenaProfile
from evalq.scoring.arena.outliers import run_flags
from evalq.scoring.arena.run import ArenaRun
from evalq.scoring.injection import INSTRUCTIONS_JUDGED_AS_WRITTEN
from evalq.scoring.near_copy import NEAR_CONTAINMENT, Sketch
from evalq.scoring.plausible import IMPLAUSIBLY_FAST, implausibly_fast

DOMINANT_SHARE = 0.5
"""An agent that sent more than this share of a task's counted runs dominates its baseline..."""
DOMINANT_MIN_RUNS = 10
"""...when the task has at least this many counted runs (below it, one agent's few runs are
not a volume to warn about)."""

NEAR_COPY_TOLERANCE = 0.035
"""Usage figures this close (relative to the larger) are the same usage, nudged. Calibrated on
the bundled runs: repeated runs of one agent with one output and evidence differ by at least
3.8% on some figure (Scylla T2's run1 and run6: 25 and 26 tool calls), so a copy 3% off is
caught and no honest repeat is merged (bench/near_copies.py)."""

NEAR_COPY = (
    "near-copies: an earlier run's content (the same output, trace and evidence from the same "
    f"agent, or from any agent a content it contains at least {NEAR_CONTAINMENT:.0%} of by "
    f"MinHash similarity), every usage figure within {NEAR_COPY_TOLERANCE:.1%} of its"
)
"""What every door says of the near-copies it names."""

USAGE_BELOW_TRACE = "usage_below_trace"
"""Review flag: the run reports less time or fewer tool calls than its own trace shows."""
TRACE_TOLERANCE = 0.02
"""Reported time may fall this far (relative) below the trace's span: clocks and rounding."""

INTEGRITY = "integrity"
"""Review flag: a tool call of the run's trace touched what its task protects (tests, runner,
answer keys, the solution's history, the benchmark's sources: `evalq.metrics.graph.integrity`)."""

COPIED_OUTPUT = "copied_output"
"""Review flag: the output equals an earlier run's of another agent, with other usage."""


@dataclass(frozen=True)
class RunFacts:
    """What the decision reads of one evaluated run (stored columns, no payload)."""

    run: ArenaRun
    submitted_at: datetime
    run_hash: str | None
    output_hash: str | None
    shape_hash: str | None = None
    trace_seconds: float | None = None
    trace_steps: int | None = None
    integrity_hits: int | None = None
    judged_as_written: int | None = None
    sketch: Sketch | None = None

    @property
    def below_trace(self) -> bool:
        """The run reports less than its own trace shows (`USAGE_BELOW_TRACE`): a reported
        time under the steps' span (past `TRACE_TOLERANCE`), or fewer tool calls than steps. A
        time not reported is not checked (it already counts as the worst)."""
        time = self.run.measured_time
        slower = (
            self.trace_seconds is not None
            and time is not None
            and time < self.trace_seconds * (1 - TRACE_TOLERANCE)
        )
        fewer = self.trace_steps is not None and self.run.tool_calls < self.trace_steps
        return slower or fewer

    @property
    def order(self) -> tuple[datetime, str]:
        """Earliest first; the id breaks ties (a batch shares one timestamp)."""
        return self.submitted_at, self.run.submission_id


def duplicates(runs: Sequence[RunFacts]) -> dict[str, str]:
    """``{id: id of the earliest run it repeats}`` for every duplicate and near-copy run.

    A run is compared with the runs counted before it (a copy is never an original). Runs
    without a run hash (stored before evalq computed one) are never duplicates, runs without a
    shape hash never near-copies by shape, and runs without a sketch never by similarity. The
    pairs of runs a near-copy may be found among are searched once, whatever is counted, in
    numpy and in windows of total tokens (`_near_pairs`), so a task of 100,000 runs is not
    compared pair by pair in Python; then each run, in order, takes the earliest counted run it
    is paired with.
    """
    return duplicates_after([], {}, runs)


def duplicates_after(
    earlier: Sequence[RunFacts], firsts: Mapping[str, str], later: Sequence[RunFacts]
) -> dict[str, str]:
    """`duplicates` of the runs ``later``, all of them ordered after runs already decided:
    what `duplicates` of every run finds for them, given what it found before them.

    Args:
        earlier: the runs decided before that are counted (no copy) and that a run of
            ``later`` may repeat (the others change nothing: a run is compared with counted
            runs only, and by usage only with runs in reach of its own).
        firsts: of each content (run hash) of ``later`` sent before, its earliest run's id.
        later: the runs to decide; only the pairs with one of them are searched.
    """
    ordered = [*sorted(earlier, key=lambda f: f.order)]
    ordered += sorted((f for f in later if f.run_hash is not None), key=lambda f: f.order)
    new = [False] * len(earlier) + [True] * (len(ordered) - len(earlier))
    shaped = [i for i, f in enumerate(ordered) if f.shape_hash is not None]
    sketched = [i for i, f in enumerate(ordered) if f.sketch is not None]
    by_shape = _Earlier(
        shaped,
        _near_pairs(
            [ordered[i] for i in shaped],
            groups=[
                (ordered[i].shape_hash, ordered[i].run.tool, ordered[i].run.model) for i in shaped
            ],
            cost="always",
            only=[new[i] for i in shaped] if earlier else None,
        ),
    )
    by_sketch = _Earlier(
        sketched,
        _near_pairs(
            [ordered[i] for i in sketched],
            groups=None,
            cost="same agent",
            only=[new[i] for i in sketched] if earlier else None,
        ),
    )
    counted = [not is_new for is_new in new]
    first = dict(firsts)
    found: dict[str, str] = {}
    for position in range(len(earlier), len(ordered)):
        facts = ordered[position]
        original = first.setdefault(str(facts.run_hash), facts.run.submission_id)
        if original != facts.run.submission_id:
            found[facts.run.submission_id] = original
            continue
        same = by_shape.earliest(position, counted)
        same = by_sketch.earliest(position, counted) if same is None else same
        if same is not None:
            found[facts.run.submission_id] = ordered[same].run.submission_id
            continue
        counted[position] = True
    return found


class _Earlier:
    """The pairs of `_near_pairs` (indices into the runs at ``positions`` of the ordered runs)
    kept by their later run: each run's earlier partners, earliest first."""

    def __init__(self, positions: Sequence[int], pairs: tuple[Any, Any]) -> None:
        import numpy as np

        where = np.asarray(positions, dtype=np.int64)
        a, b = where[pairs[0]], where[pairs[1]]
        later, earlier = np.maximum(a, b), np.minimum(a, b)
        by = np.lexsort((earlier, later))
        self._later, self._earlier = later[by], earlier[by]

    def earliest(self, position: int, counted: Sequence[bool]) -> int | None:
        """The earliest counted run the run at ``position`` is paired with, or None."""
        import numpy as np

        if not self._later.size:
            return None
        start = int(np.searchsorted(self._later, position, side="left"))
        end = int(np.searchsorted(self._later, position, side="right"))
        return next((e for e in self._earlier[start:end].tolist() if counted[e]), None)


def _near_pairs(
    runs: Sequence[RunFacts],
    *,
    groups: Sequence[Hashable] | None,
    cost: Literal["always", "same agent"],
    only: Sequence[bool] | None = None,
) -> tuple[Any, Any]:
    """Every pair of ``runs`` (two arrays of indices into them, each pair once; with ``only``,
    the pairs with at least one run it marks) whose usage is
    within `NEAR_COPY_TOLERANCE` (`same_usage`) and which are of one group (by groups: the same
    shape from the same agent) or, with ``groups`` None, whose contents are near
    (`evalq.scoring.near_copy.near`; each run has a sketch then). ``cost``: compared
    ``"always"``, or only between runs of the ``"same agent"`` (another model's name re-prices
    the same tokens)."""
    import numpy as np

    tokens, figures = _usage_arrays([f.run for f in runs])
    figures = np.column_stack([figures, [_nan(f.run.measured_cost) for f in runs]])
    keys: dict[Hashable, int] = {}
    group = np.array(
        [keys.setdefault(g, len(keys)) for g in groups] if groups is not None else [0] * len(runs),
        dtype=np.int64,
    )
    agents: dict[tuple[str, str], int] = {}
    agent = np.array(
        [agents.setdefault((f.run.tool, f.run.model), len(agents)) for f in runs], dtype=np.int64
    )
    hashes = sizes = None
    if groups is None and runs:
        hashes = np.stack([_sketch_of(f).values for f in runs])
        sizes = np.array([_sketch_of(f).size for f in runs], dtype=np.float64)

    def kept(i: Any, j: Any) -> Any:
        same_cost = _within(figures[i, 3], figures[j, 3])
        keep = same_cost if cost == "always" else same_cost | (agent[i] != agent[j])
        i, j = i[keep], j[keep]
        if hashes is None or sizes is None:
            return keep
        near = np.zeros(i.size, dtype=bool)
        for at in range(0, i.size, SKETCH_BLOCK):
            a, b = i[at : at + SKETCH_BLOCK], j[at : at + SKETCH_BLOCK]
            share = (hashes[a] == hashes[b]).sum(axis=1) / hashes.shape[1]
            smaller = np.minimum(sizes[a], sizes[b])
            with np.errstate(divide="ignore", invalid="ignore"):
                contained = np.minimum(1.0, share * (sizes[a] + sizes[b]) / ((1 + share) * smaller))
            near[at : at + SKETCH_BLOCK] = contained >= NEAR_CONTAINMENT
        keep[np.flatnonzero(keep)[~near]] = False
        return keep

    marked = None if only is None else np.asarray(only, dtype=bool)
    return _pairs_in_usage(tokens, figures[:, :3], group, kept, only=marked)


def near_in_usage(runs: Sequence[ArenaRun]) -> set[str]:
    """The ids of the runs whose usage is within `NEAR_COPY_TOLERANCE` of another's, the cost
    aside (`same_usage` with ``cost=False``): the only runs a near-copy by similarity can be
    found among (`_pairs_in_usage`)."""
    return near_in_usage_of(
        [
            (r.submission_id, r.total_tokens, r.tool_calls, r.iterations, r.measured_time)
            for r in runs
        ]
    )


def near_in_usage_of(rows: Sequence[tuple[str, int, int, int, float | None]]) -> set[str]:
    """`near_in_usage` of the runs as stored: ``(id, total tokens, tool calls, iterations,
    execution time)`` each (a time of 0 or None: not reported)."""
    import numpy as np

    tokens = np.array([row[1] for row in rows], dtype=np.float64)
    figures = np.array(
        [(row[2], row[3], _nan(row[4] or None)) for row in rows], dtype=np.float64
    ).reshape(len(rows), 3)
    i, j = _pairs_in_usage(tokens, figures, np.zeros(len(rows), dtype=np.int64), None)
    return {rows[k][0] for k in np.union1d(i, j).tolist()}


EXACT_BELOW = (1 - NEAR_COPY_TOLERANCE) / NEAR_COPY_TOLERANCE
"""Whole numbers below this are within `NEAR_COPY_TOLERANCE` of another only when equal (27
and 28 differ by 3.6% of 28; 28 and 29 by 3.4% of 29)."""
PAIR_BLOCK = 1_000_000
"""Pairs of runs `_pairs_in_usage` compares in one numpy step (a few arrays of this length)."""
SKETCH_BLOCK = 20_000
"""Pairs of sketches compared in one numpy step (a 128-column array of this many rows)."""


def _usage_arrays(runs: Sequence[ArenaRun]) -> tuple[Any, Any]:
    """The runs' total tokens, and their tool calls, iterations and time (NaN: not reported)."""
    import numpy as np

    tokens = np.array([run.total_tokens for run in runs], dtype=np.float64)
    figures = np.array(
        [[run.tool_calls, run.iterations, _nan(run.measured_time)] for run in runs],
        dtype=np.float64,
    ).reshape(len(runs), 3)
    return tokens, figures


def _pairs_in_usage(
    tokens: Any,
    figures: Any,
    group: Any,
    kept: Callable[[Any, Any], Any] | None,
    *,
    only: Any = None,
) -> tuple[Any, Any]:
    """The pairs ``(i, j)`` (two index arrays, each pair once) of one ``group`` whose tokens and
    every column of ``figures`` are within `NEAR_COPY_TOLERANCE` (`same_usage`), and that
    ``kept`` (a mask over arrays of ``i`` and ``j``) keeps; with ``only`` (a mask over the
    runs), only the pairs with at least one run it marks.

    Sorted by group and then tokens, a run's partners lie in the slice of its group between
    the fewest and the most tokens it is within reach of (with every run searched, only the
    part above it: each pair once); the slices' pairs are formed and compared in numpy,
    `PAIR_BLOCK` at a time, so the work is the pairs in reach, not every pair."""
    import numpy as np

    n = len(tokens)
    found_i: list[Any] = [np.zeros(0, dtype=np.int64)]
    found_j: list[Any] = [np.zeros(0, dtype=np.int64)]
    # of a figure counted in whole numbers (tool calls, iterations), two under (1 - tolerance) /
    # tolerance (27.6) are within it only when equal, and a figure not reported is only within
    # another not reported: runs apart on either never pair, so they are searched apart (most
    # of the pairs a window of tokens holds are apart on tool calls)
    keys = [np.asarray(group, dtype=np.float64)]
    for column in range(figures.shape[1]):
        values = figures[:, column]
        missing = np.isnan(values)
        with np.errstate(invalid="ignore"):
            whole = (values == np.floor(values)) & (values >= 0)
        if bool(np.all(whole | missing)):
            keys.append(np.where(whole & (values < EXACT_BELOW), values, -1.0))
        keys.append(missing.astype(np.float64))
    if n:
        group = np.unique(np.column_stack(keys), axis=0, return_inverse=True)[1].reshape(n)
    order = np.lexsort((tokens, group))
    sorted_tokens, sorted_groups = tokens[order], group[order]
    high = sorted_tokens / (1 - NEAR_COPY_TOLERANCE) * (1 + 1e-9)
    low = sorted_tokens * (1 - NEAR_COPY_TOLERANCE) * (1 - 1e-9)
    position = np.arange(n, dtype=np.int64)
    reach, floor = position + 1, position.copy()  # alone in its group: no partner
    edges = np.r_[0, np.flatnonzero(np.diff(sorted_groups)) + 1, n].astype(np.int64)
    for first, last in zip(edges[:-1].tolist(), edges[1:].tolist(), strict=True):
        if last - first > 1:
            slice_ = sorted_tokens[first:last]
            reach[first:last] = first + np.searchsorted(slice_, high[first:last], side="right")
            floor[first:last] = first + np.searchsorted(slice_, low[first:last], side="left")
    searched = marked = None
    if only is None:
        rows, starts = position, position + 1
    else:
        marked = np.asarray(only, dtype=bool)[order]
        searched = np.flatnonzero(marked)
        rows, starts = searched, floor[searched]
    counts = reach[rows] - starts
    ends = np.cumsum(counts)
    start = 0
    while start < len(rows):
        before = int(ends[start - 1]) if start else 0
        stop = max(start + 1, int(np.searchsorted(ends, before + PAIR_BLOCK, side="right")))
        block = counts[start:stop]
        total = int(block.sum())
        if total:
            p = np.repeat(rows[start:stop], block)
            q = np.repeat(starts[start:stop], block)
            q = q + np.arange(total) - np.repeat(np.cumsum(block) - block, block)
            keep = _within(sorted_tokens[p], sorted_tokens[q])
            if marked is not None:  # itself, and a pair of two marked runs once
                keep &= (q != p) & ~(marked[q] & (q < p))
            i, j = order[p], order[q]
            for column in range(figures.shape[1]):
                keep &= _within(figures[i, column], figures[j, column])
            i, j = i[keep], j[keep]
            if kept is not None and i.size:
                keep = kept(i, j)
                i, j = i[keep], j[keep]
            found_i.append(i)
            found_j.append(j)
        start = stop
    return np.concatenate(found_i), np.concatenate(found_j)


def _nan(value: float | None) -> float:
    return float("nan") if value is None else float(value)


def _sketch_of(facts: RunFacts) -> Sketch:
    assert facts.sketch is not None
    return facts.sketch


def _within(a: Any, b: Any) -> Any:
    """Which pairs of ``a`` and ``b`` are within `NEAR_COPY_TOLERANCE` of each other as
    `same_usage` compares two figures (NaN: not reported, the same only as another not
    reported)."""
    import numpy as np

    with np.errstate(invalid="ignore"):
        close = np.abs(a - b) <= NEAR_COPY_TOLERANCE * np.maximum(np.abs(a), np.abs(b))
    return close | (np.isnan(a) & np.isnan(b))


def near_copies(runs: Sequence[RunFacts], found: Mapping[str, str]) -> dict[str, str]:
    """The near-copies among ``found`` (`duplicates` of ``runs``): the copies whose content is
    not their original's (their usage differs a little)."""
    hashes = {f.run.submission_id: f.run_hash for f in runs}
    return {
        copy: original
        for copy, original in found.items()
        if hashes.get(copy) is not None and hashes.get(copy) != hashes.get(original)
    }


def same_agent(a: ArenaRun, b: ArenaRun) -> bool:
    """Whether two runs name one agent (tool and model)."""
    return (a.tool, a.model) == (b.tool, b.model)


def same_usage(a: ArenaRun, b: ArenaRun, *, cost: bool = True) -> bool:
    """Whether every usage figure of ``b`` is within `NEAR_COPY_TOLERANCE` of ``a``'s (tokens,
    tool calls, iterations, time and, with ``cost``, cost; a figure one reports and the other
    not differs). Across agents the cost is left out: it is priced by the model's name, which
    a relabelled copy changes."""
    pairs: tuple[tuple[float | None, float | None], ...] = (
        (a.total_tokens, b.total_tokens),
        (a.tool_calls, b.tool_calls),
        (a.iterations, b.iterations),
        (a.measured_time, b.measured_time),
        *(((a.measured_cost, b.measured_cost),) if cost else ()),
    )
    for x, y in pairs:
        if x is None or y is None:
            if x is not y:
                return False
            continue
        if abs(x - y) > NEAR_COPY_TOLERANCE * max(abs(x), abs(y)):
            return False
    return True


def held_indicators(
    facts: RunFacts, token_threshold: float, profile: ArenaProfile
) -> tuple[str, ...]:
    """The run's outlier indicators if there are at least ``outlier_min_flags`` of them, else ()."""
    flags = run_flags(facts.run, token_threshold, profile)
    return flags if len(flags) >= profile.outlier_min_flags else ()


def token_threshold(median_tokens: float, profile: ArenaProfile) -> float:
    """Spec 000's token indicator: below this fraction of the task's median tokens."""
    return median_tokens * profile.outlier_token_fraction


def copied_outputs(counted: Sequence[RunFacts]) -> set[str]:
    """Ids of the runs whose output equals an earlier counted run's of another agent (tool or
    model). Only runs with the same output hash decide each other, so any subset holding every
    run of an output's group gives the same answer for that group."""
    agents_of_output: dict[str, set[tuple[str, str]]] = {}
    found = set()
    for facts in sorted(counted, key=lambda f: f.order):
        if facts.output_hash is None:
            continue
        agent = (facts.run.tool, facts.run.model)
        earlier = agents_of_output.setdefault(facts.output_hash, set())
        if earlier - {agent}:
            found.add(facts.run.submission_id)
        earlier.add(agent)
    return found


def review_flags(runs: Sequence[RunFacts], profile: ArenaProfile) -> dict[str, tuple[str, ...]]:
    """``{id: flags}`` for each run held for review; duplicates are left out (they do not
    count, so they are not reviewed either). The same set of runs gives the same answer in any
    order. (`evalq.store.review_sql.settle_reviews` decides the same in the database.)"""
    copies = duplicates(runs)
    counted = [f for f in runs if f.run.submission_id not in copies]
    if not counted:
        return {}
    threshold = token_threshold(statistics.median(f.run.total_tokens for f in counted), profile)
    copied = copied_outputs(counted)
    times = agent_times(counted)
    decided: dict[str, tuple[str, ...]] = {}
    for facts in counted:
        held = held_indicators(facts, threshold, profile)
        if facts.below_trace:
            held = (*held, USAGE_BELOW_TRACE)
        if facts.integrity_hits:
            held = (*held, INTEGRITY)
        if facts.judged_as_written:
            held = (*held, INSTRUCTIONS_JUDGED_AS_WRITTEN)
        if implausibly_fast(facts.run.measured_time, (facts.run.tool, facts.run.model), times):
            held = (*held, IMPLAUSIBLY_FAST)
        if facts.run.submission_id in copied:
            held = (*held, COPIED_OUTPUT)
        if held:
            decided[facts.run.submission_id] = held
    return decided


def agent_times(counted: Sequence[RunFacts]) -> dict[tuple[str, str], float]:
    """Each agent's (tool, model) median measured time over ``counted``; agents without one are
    left out."""
    times: dict[tuple[str, str], list[float]] = {}
    for facts in counted:
        if facts.run.measured_time is not None:
            times.setdefault((facts.run.tool, facts.run.model), []).append(facts.run.measured_time)
    return {agent: statistics.median(values) for agent, values in times.items()}


@dataclass(frozen=True)
class Dominance:
    """One agent (tool, model) sent most of a task's counted runs."""

    tool: str
    model: str
    runs: int
    of: int

    def note(self) -> str:
        """What the board says."""
        return (
            f"{self.tool} / {self.model} sent {self.runs} of the {self.of} runs counted: the "
            "baseline every Arena score is measured against (its medians) leans on that one "
            "agent's runs, so many runs of one agent move the other runs' scores"
        )


def dominant_agent(agents: Sequence[tuple[str, str]]) -> Dominance | None:
    """The agent that sent more than `DOMINANT_SHARE` of the counted runs (one ``(tool, model)``
    per run), if there are at least `DOMINANT_MIN_RUNS` of them. Runs of one agent whose usage
    differs by more than `NEAR_COPY_TOLERANCE` cannot be told from its own repeated runs, so they
    count; their weight in the baseline is what is said."""
    counts: dict[tuple[str, str], int] = {}
    for agent in agents:
        counts[agent] = counts.get(agent, 0) + 1
    return dominant_of(counts)


def dominant_of(counts: Mapping[tuple[str, str], int]) -> Dominance | None:
    """`dominant_agent` from the number of counted runs of each ``(tool, model)``."""
    total = sum(counts.values())
    if total < DOMINANT_MIN_RUNS:
        return None
    (tool, model), runs = max(counts.items(), key=lambda item: (item[1], item[0]))
    if runs <= DOMINANT_SHARE * total:
        return None
    return Dominance(tool, model, runs, total)
