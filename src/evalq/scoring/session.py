"""A session scored as a unit: the task's rules over every turn of a conversation.

No seed defines sessions; the rules are evalq's (docs/sessions.md, docs/scoring.md):

- a turn succeeds when the task's own rule for a run says so: the suite gate for a suite task,
  the Scylla pass for a scylla task when it has one, otherwise every success criterion of the
  task on the turn's evidence (with none, the evidence's ``success``); a turn whose evaluation
  failed never succeeds;
- the session passes when its **last** turn succeeded (a conversation is judged by where it
  ended), and ``turns_to_success`` is the number of the first turn that succeeded;
- its ``score`` is the mean of the turns' ranking values on 0..1 (the Arena overall / 100);
- tool use is summed over the session: calls, calls per turn, the distinct tools;
- with a judge configured, the judge's rubrics over the session's transcript (`transcript`:
  every turn's output, in order), as the judge reads one run's output.
"""

from __future__ import annotations

from collections.abc import Sequence

from evalq.core.results import EvaluationScores
from evalq.core.schemas import MAX_TEXT_CHARS, Submission, Task
from evalq.core.sessions import SessionScores, SessionTurn
from evalq.scoring.arena.correctness import correctness_score


def session_turn(
    task: Task, submission: Submission, scores: EvaluationScores, status: str
) -> SessionTurn:
    """One merged run as a turn of its session."""
    return SessionTurn(
        submission_id=submission.id,
        status=status,
        success=status != "failed" and _succeeded(task, submission, scores),
        value=_value(scores),
        tool_calls=submission.usage.tool_calls,
        tools=tuple(step.tool for step in (submission.trace.steps if submission.trace else [])),
    )


def _succeeded(task: Task, submission: Submission, scores: EvaluationScores) -> bool:
    if scores.kind == "suite" and scores.suite is not None:
        return scores.suite.passed
    if scores.kind == "scylla" and scores.scylla is not None and scores.scylla.passed is not None:
        return scores.scylla.passed
    if not task.success_criteria:
        return submission.evidence.success
    return correctness_score(task, submission.evidence).score >= 100.0


def _value(scores: EvaluationScores) -> float | None:
    if scores.kind == "peerread" and scores.peerread is not None:
        return scores.peerread.composite
    if scores.kind == "scylla" and scores.scylla is not None:
        return scores.scylla.composite
    if scores.kind == "suite" and scores.suite is not None:
        return scores.suite.final_score
    return scores.arena.unadjusted_score / 100.0


def score_session(turns: Sequence[SessionTurn]) -> SessionScores:
    """The scores of a session whose turns, in order, are ``turns`` (at least one)."""
    if not turns:
        raise ValueError("a session has at least one turn")
    first = next((n for n, turn in enumerate(turns, 1) if turn.success), None)
    values = [turn.value for turn in turns if turn.value is not None]
    calls = sum(turn.tool_calls for turn in turns)
    return SessionScores(
        turns=len(turns),
        passed=turns[-1].success,
        turns_to_success=first,
        success_rate=sum(turn.success for turn in turns) / len(turns),
        score=sum(values) / len(values) if values else None,
        tool_calls=calls,
        tool_calls_per_turn=calls / len(turns),
        tools=tuple(sorted({tool for turn in turns for tool in turn.tools})),
        failed_turns=tuple(t.submission_id for t in turns if t.status != "done"),
        turn_results=tuple(turns),
    )


CUT = "[earlier turns cut]\n"


def transcript(turns: Sequence[Submission]) -> Submission:
    """The session as one submission for the judge: the last turn, its output replaced by every
    turn's output in order (``Turn N (id):``). Past `MAX_TEXT_CHARS` the start is cut: where a
    conversation ended matters most."""
    text = "\n\n".join(f"Turn {n} ({t.id}):\n{t.output}" for n, t in enumerate(turns, 1))
    if len(text) > MAX_TEXT_CHARS:
        text = CUT + text[len(text) - MAX_TEXT_CHARS + len(CUT) :]
    return turns[-1].model_copy(update={"output": text})
