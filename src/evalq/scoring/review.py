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
from collections.abc import Hashable, Mapping, Sequence
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
    earlier runs a near-copy may repeat are searched in windows of total tokens
    (`_Originals`), so a task of 100,000 runs is not compared pair by pair.
    """
    ordered = sorted((f for f in runs if f.run_hash is not None), key=lambda f: f.order)
    shaped = [f for f in ordered if f.shape_hash is not None]
    by_shape = _Originals(
        shaped, groups=[(f.shape_hash, f.run.tool, f.run.model) for f in shaped], cost="always"
    )
    by_sketch = _Originals(
        [f for f in ordered if f.sketch is not None], groups=None, cost="same agent"
    )
    first: dict[str, str] = {}
    found: dict[str, str] = {}
    for facts in ordered:
        original = first.setdefault(str(facts.run_hash), facts.run.submission_id)
        if original != facts.run.submission_id:
            found[facts.run.submission_id] = original
            continue
        same = by_shape.earliest_near(facts) or by_sketch.earliest_near(facts)
        if same is not None:
            found[facts.run.submission_id] = same
            continue
        by_shape.count(facts)
        by_sketch.count(facts)
    return found


class _Originals:
    """The runs counted so far, searched for the earliest whose usage a run's is within
    `NEAR_COPY_TOLERANCE` of (`same_usage`) and, by groups, of the run's group, or, without
    groups, whose content its content is near (`evalq.scoring.near_copy.near`): what a scan of
    every earlier run finds, read in numpy over the runs whose total tokens are in reach.

    Args:
        runs: every run that may be counted, in the order they are (earliest first).
        groups: each run's group (the same shape from the same agent), or None to compare the
            runs' sketches instead (each of ``runs`` has one then).
        cost: whether the cost is compared ``"always"`` or only between runs of the ``"same
            agent"`` (another model's name re-prices the same tokens).
    """

    def __init__(
        self,
        runs: Sequence[RunFacts],
        *,
        groups: Sequence[Hashable] | None,
        cost: Literal["always", "same agent"],
    ) -> None:
        import numpy as np

        self._ids = [f.run.submission_id for f in runs]
        self._row = {sid: i for i, sid in enumerate(self._ids)}
        self._tokens = np.array([f.run.total_tokens for f in runs], dtype=np.float64)
        self._figures = np.array(
            [[f.run.tool_calls, f.run.iterations, _nan(f.run.measured_time)] for f in runs],
            dtype=np.float64,
        ).reshape(len(runs), 3)
        self._cost = np.array([_nan(f.run.measured_cost) for f in runs], dtype=np.float64)
        agents: dict[tuple[str, str], int] = {}
        self._agent = np.array(
            [agents.setdefault((f.run.tool, f.run.model), len(agents)) for f in runs],
            dtype=np.int64,
        )
        keys: dict[Hashable, int] = {}
        self._group = np.array(
            [keys.setdefault(g, len(keys)) for g in groups]
            if groups is not None
            else [0] * len(runs),
            dtype=np.int64,
        )
        self._always_cost = cost == "always"
        self._hashes = (
            np.stack([_sketch_of(f).minhash.hashvalues for f in runs])
            if groups is None and runs
            else None
        )
        self._sizes = np.array(
            [_sketch_of(f).size if groups is None else 0 for f in runs], dtype=np.float64
        )
        # by group, then by tokens: a run's candidates are one slice of its group's
        self._by_tokens = np.lexsort((self._tokens, self._group))
        self._sorted_groups = self._group[self._by_tokens]
        self._group_size = np.bincount(self._group) if len(runs) else self._group
        self._sorted_tokens = self._tokens[self._by_tokens]
        self._counted = np.full(len(runs), -1, dtype=np.int64)
        self._counted_so_far = 0

    def count(self, facts: RunFacts) -> None:
        """``facts``' run is counted: a later run may repeat it."""
        row = self._row.get(facts.run.submission_id)
        if row is not None:
            self._counted[row] = self._counted_so_far
            self._counted_so_far += 1

    def earliest_near(self, facts: RunFacts) -> str | None:
        """The id of the earliest counted run ``facts``' run is a near-copy of, or None."""
        import numpy as np

        row = self._row.get(facts.run.submission_id)
        if row is None or not self._counted_so_far:
            return None
        tokens, group = self._tokens[row], self._group[row]
        if self._group_size[group] < 2:  # alone in its group: nothing to repeat
            return None
        first = int(np.searchsorted(self._sorted_groups, group, side="left"))
        last = int(np.searchsorted(self._sorted_groups, group, side="right"))
        low, high = tokens * (1 - NEAR_COPY_TOLERANCE), tokens / (1 - NEAR_COPY_TOLERANCE)
        tokens_of_group = self._sorted_tokens[first:last]
        start = first + int(np.searchsorted(tokens_of_group, low * (1 - 1e-9), side="left"))
        end = first + int(np.searchsorted(tokens_of_group, high * (1 + 1e-9), side="right"))
        found = self._by_tokens[start:end]
        found = found[self._counted[found] >= 0]
        if not found.size:
            return None
        keep = _within(self._tokens[found], tokens)
        for column in range(self._figures.shape[1]):
            keep &= _within(self._figures[found, column], self._figures[row, column])
        cost = _within(self._cost[found], self._cost[row])
        keep &= cost if self._always_cost else cost | (self._agent[found] != self._agent[row])
        found = found[keep]
        if found.size and self._hashes is not None:  # no groups: near by content
            j = (self._hashes[found] == self._hashes[row]).sum(axis=1) / self._hashes.shape[1]
            sizes = self._sizes[found]
            smaller = np.minimum(sizes, self._sizes[row])
            contained = np.minimum(1.0, j * (sizes + self._sizes[row]) / ((1 + j) * smaller))
            found = found[contained >= NEAR_CONTAINMENT]
        if not found.size:
            return None
        return self._ids[int(found[np.argmin(self._counted[found])])]


def near_in_usage(runs: Sequence[ArenaRun]) -> set[str]:
    """The ids of the runs whose usage is within `NEAR_COPY_TOLERANCE` of another's, the cost
    aside (`same_usage` with ``cost=False``): the only runs a near-copy by similarity can be
    found among. Each run is compared, in numpy, with the runs whose total tokens are in reach
    of its own."""
    import numpy as np

    ordered = sorted(runs, key=lambda run: run.total_tokens)
    tokens = np.array([run.total_tokens for run in ordered], dtype=np.float64)
    figures = np.array(
        [[run.tool_calls, run.iterations, _nan(run.measured_time)] for run in ordered],
        dtype=np.float64,
    ).reshape(len(ordered), 3)
    reach = np.searchsorted(tokens, tokens / (1 - NEAR_COPY_TOLERANCE) * (1 + 1e-9), "right")
    wanted: set[int] = set()
    for i in range(len(ordered)):
        others = np.arange(i + 1, int(reach[i]))
        if not others.size:
            continue
        keep = _within(tokens[others], tokens[i])
        for column in range(figures.shape[1]):
            keep &= _within(figures[others, column], figures[i, column])
        if keep.any():
            wanted.add(i)
            wanted.update(int(j) for j in others[keep])
    return {ordered[i].submission_id for i in wanted}


def _nan(value: float | None) -> float:
    return float("nan") if value is None else float(value)


def _sketch_of(facts: RunFacts) -> Sketch:
    assert facts.sketch is not None
    return facts.sketch


def _within(values: Any, value: float) -> Any:
    """Which of ``values`` are within `NEAR_COPY_TOLERANCE` of ``value`` as `same_usage`
    compares two figures (NaN: not reported, the same only as another not reported)."""
    import numpy as np

    if value != value:  # not reported
        return np.isnan(values)
    with np.errstate(invalid="ignore"):
        return np.abs(values - value) <= NEAR_COPY_TOLERANCE * np.maximum(
            np.abs(values), abs(value)
        )


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
