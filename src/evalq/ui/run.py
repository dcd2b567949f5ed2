"""One run as its page shows it: the read side's `SubmissionResult` plus what that reply leaves
out (the output, the trace, the usage, the task's references), read from the same rows.

The trace is summarised for the page: steps grouped under their agent, at most `SHOWN_STEPS`
listed per agent with the rest counted, and the tool and agent graph as counted edges, so a run
with thousands of steps renders a page of bounded size.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy.orm import Session

from evalq.core.labels import Label
from evalq.core.profile import profile_named
from evalq.core.redact import redact_data
from evalq.core.results import JudgeResult, PriceSource
from evalq.core.schemas import STORED, Submission, Task
from evalq.core.sessions import SessionResult
from evalq.core.settings import Settings
from evalq.core.trajectory import TrajectoryMatch
from evalq.read import served
from evalq.read.ranked import RankedBy, ranked_by
from evalq.read.sessions import run_session
from evalq.read.submission import SubmissionResult
from evalq.read.suite_scenarios import ScenarioRow, suite_scenarios
from evalq.store import queries
from evalq.store.labels import list_labels

SHOWN_STEPS = 200
"""Steps listed per agent on a run page; the others are counted, not rendered."""
SHOWN_EDGES = 60
"""Edges of the tool graph and of the agent graph listed, the most frequent first."""

MEANINGS: dict[str, str] = {
    "cosine": "TF-IDF cosine similarity to the closest reference (0-1)",
    "jaccard": "word-set overlap with the closest reference (0-1)",
    "semantic": "BERTScore F1 against the references on the local model (0-1)",
    "references": "how many references the output was compared with",
    "overall_similarity": "the weighted similarity tier 1 reports (0-1)",
    "task_success": "success criteria met, weighted as the spec's task_success (0-1)",
    "tier_score": "the tier's own score (0-1)",
    "reference_agreement": "how alike the references are to each other (0-1)",
    "calibrated_similarity": "similarity placed between unrelated reviews (0) and the "
    "references' agreement (0.8)",
    "unrelated_agreement": "how close reviews of unrelated papers come to the references (0-1)",
    "original_similarity": "the calibrated similarity of what the run did not copy (0-1)",
    "copy_note": "why the run reads as copying rather than reviewing",
    "path_convergence": "shortest reference path / steps taken from start to end (0-1)",
    "tool_selection_accuracy": "share of judged steps that used the context's optimal tool",
    "communication_overhead": "coordination messages / all messages (lower is better)",
    "central_agent": "the agent with the highest centrality",
    "max_coordination_centrality": "that agent's mean centrality",
    "task_distribution_balance": "1 - stdev / mean of steps per agent (1: even)",
    "tool_efficiency": "PeerRead composite input from the trace",
    "coordination_quality": "PeerRead composite input from the agent graph",
}
"""What each tier figure means, shown beside it (docs/scoring/)."""


@dataclass(frozen=True)
class AgentSteps:
    """One agent's steps in the trace tree (``None``: steps that name no agent)."""

    agent: str | None
    total: int
    steps: list[dict[str, Any]]

    @property
    def hidden(self) -> int:
        """Steps not listed on the page."""
        return self.total - len(self.steps)


@dataclass(frozen=True)
class TraceSummary:
    """A trace as a tree of agents and their steps, and its graphs as counted edges."""

    steps: int
    agents: list[AgentSteps]
    tool_edges: list[tuple[str, str, int]]
    agent_edges: list[tuple[str, str, int]]
    hidden_edges: int


@dataclass(frozen=True)
class RunPage:
    """Everything a run's page shows."""

    result: SubmissionResult
    submission: Submission
    task: Task
    priced_by: PriceSource | None
    judge: JudgeResult | None
    trace: TraceSummary | None
    figures: dict[str, list[tuple[str, Any, str]]] = field(default_factory=dict)
    labels: list[Label] = field(default_factory=list)
    """People's labels of the run, by labeller."""
    trajectory: TrajectoryMatch | None = None
    ranked: RankedBy | None = None
    """The number the run's board ranks it by, with its weights (None: not evaluated)."""
    scenarios: list[ScenarioRow] = field(default_factory=list)
    """A suite run's scenarios, each with its score and whether it passed."""
    session: SessionResult | None = None
    """The session the run is a turn of (docs/sessions.md); None: it names no conversation."""


def summarise_trace(submission: Submission) -> TraceSummary | None:
    """The run's trace grouped by agent (order of first appearance), graphs counted."""
    trace = submission.trace
    if trace is None:
        return None
    groups: dict[str | None, list[dict[str, Any]]] = {}
    totals: Counter[str | None] = Counter()
    for index, step in enumerate(trace.steps):
        totals[step.agent] += 1
        listed = groups.setdefault(step.agent, [])
        if len(listed) < SHOWN_STEPS:
            listed.append({"index": index + 1, **step.model_dump(exclude={"agent"})})
    transitions = Counter(
        (a.tool, b.tool) for a, b in zip(trace.steps, trace.steps[1:], strict=False)
    )
    talks = Counter((m.sender, m.receiver) for m in trace.messages)
    tool_edges = [(a, b, n) for (a, b), n in transitions.most_common(SHOWN_EDGES)]
    agent_edges = [(a, b, n) for (a, b), n in talks.most_common(SHOWN_EDGES)]
    hidden = len(transitions) + len(talks) - len(tool_edges) - len(agent_edges)
    return TraceSummary(
        steps=len(trace.steps),
        agents=[AgentSteps(agent, totals[agent], steps) for agent, steps in groups.items()],
        tool_edges=tool_edges,
        agent_edges=agent_edges,
        hidden_edges=hidden,
    )


def _figures(result: SubmissionResult) -> dict[str, list[tuple[str, Any, str]]]:
    """Each ok tier's scalar figures with what they mean (the judge has its own section)."""
    figures: dict[str, list[tuple[str, Any, str]]] = {}
    for name, state in result.tiers.items():
        if name == "judge" or state.status != "ok" or not state.metrics:
            continue
        figures[name] = [
            (key, value, MEANINGS.get(key, ""))
            for key, value in state.metrics.items()
            if not isinstance(value, dict | list)
        ]
    return figures


def run_page(session: Session, *, submission_id: str, settings: Settings | None) -> RunPage:
    """The run ``submission_id`` as its page shows it; `NotFound` when there is none."""
    result = served.run_result(session, submission_id=submission_id, settings=settings)
    row = queries.get_submission_row(session, submission_id=submission_id)
    submission = Submission.model_validate(redact_data(row.payload, settings), context=STORED)
    task = queries.get_task(session, task_id=row.task_id)
    judge_state = result.tiers.get("judge")
    profile = profile_named(task.profile, settings)
    judge = None
    if judge_state is not None and judge_state.status == "ok" and judge_state.metrics:
        judge = JudgeResult.model_validate(judge_state.metrics)
    return RunPage(
        result=result,
        submission=submission,
        task=task,
        priced_by=None if row.priced_by is None else PriceSource.model_validate(row.priced_by),
        judge=judge,
        trace=summarise_trace(submission),
        figures=_figures(result),
        labels=list_labels(session, submission_id=submission_id),
        trajectory=_trajectory(result),
        ranked=None if result.scores is None else ranked_by(result.scores, profile),
        scenarios=suite_scenarios(
            result, submission, task, threshold=profile.suite.scenario_pass_threshold
        ),
        session=run_session(session, submission_id=submission_id),
    )


def _trajectory(result: SubmissionResult) -> TrajectoryMatch | None:
    """The graph tier's trajectory match, when the task names its expected calls."""
    graph = result.tiers.get("graph")
    if graph is None or graph.status != "ok" or not graph.metrics:
        return None
    found = graph.metrics.get("trajectory")
    return None if found is None else TrajectoryMatch.model_validate(found)
