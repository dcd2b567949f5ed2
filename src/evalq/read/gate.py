"""`evalq gate` / GET /v1/gate: does a candidate group regress against a baseline group?

A gate is `evalq.read.compare` with a decision: the same groups (``model``, ``tool``,
``variant`` or ``metadata.KEY``), the same score (each task's ranking score; a suite's
scenarios), the same tests. Each task both groups were scored on is compared on its own (its
repeat runs, or a suite's scenarios), and the tasks' p-values are corrected together; with two
or more shared tasks, the two groups are also compared over the tasks (paired, as `compare`
does). A comparison is a **regression** when its test rejects at ``alpha`` (corrected: the
decision `compare` draws) and the mean difference ``candidate - baseline`` is below
``-margin`` (a significant drop larger than the one allowed, on the score's own scale); the
interval is reported beside it, not a second decision. A suite task also regresses when the
baseline's latest run passed its gate and the candidate's latest run is blocked. Under
`MIN_PAIRS <evalq.stats.contrast.MIN_PAIRS>` values a side, a comparison is **too few**, which
decides the gate as ``too_few`` says (fail by default: no data is not a pass).

The interval in a task's message is the deciding test inverted (`evalq.stats.permutation`),
drawn at the level the correction over the tasks judged it at (`Corrected.threshold`), so it
excludes 0 exactly when the task's test is rejected: the regression rule adds only the margin.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Literal, get_args

from pydantic import Field
from sqlalchemy.orm import Session

from evalq.core.errors import InvalidInput
from evalq.core.judge_series import JudgeHistory
from evalq.core.judge_validation import JudgeValidation
from evalq.core.settings import Settings, get_settings
from evalq.read.compare import (
    CompareReport,
    LeftOut,
    LoadedTasks,
    check_by,
    check_method,
    compare_loaded,
    group_of,
    load_views,
)
from evalq.read.reply import Reply
from evalq.read.view import TaskView
from evalq.stats.comparison import RESAMPLES, SEED, Correction, correct
from evalq.stats.contrast import GroupComparison

Verdict = Literal["pass", "regression", "too few", "unverified", "judge changed"]
TooFew = Literal["pass", "fail"]
EXIT_STATUS: dict[Verdict | Literal["unusable input"], int] = {
    "pass": 0,
    "regression": 1,
    "unusable input": 2,
    "too few": 3,
    "unverified": 4,
    "judge changed": 5,
}
"""The exit status of `evalq gate` for each outcome (unusable input: a request refused)."""


class TaskGate(Reply):
    """One task's decision and the figures it rests on (differences: candidate - baseline)."""

    task: str
    verdict: Verdict
    design: str = Field(description="paired (a suite's scenarios), unpaired, or too few.")
    n_baseline: int = Field(description="Values the baseline contributed (runs or scenarios).")
    n_candidate: int
    mean_baseline: float
    mean_candidate: float
    difference: float | None = Field(description="Mean difference; None when too few.")
    low: float | None = Field(description="The interval of the difference at ``level``.")
    high: float | None
    p_value: float | None = Field(description="The deciding test's p-value.")
    adjusted_p: float | None = Field(description="After the correction over the tasks.")
    blocking: list[str] = Field(
        description="A suite: the candidate's latest run's blocking failures when the "
        "baseline's latest run passed (a gate that now blocks)."
    )
    message: str = Field(description="The decision in words; a failure names the drop.")


class GateReport(Reply):
    """Body of GET /v1/gate: the candidate against the baseline, task by task and overall."""

    verdict: Verdict = Field(description="The gate's decision (``too few`` as too_few says).")
    exit_status: int = Field(
        description="0 pass, 1 regression, 3 too few, 4 a task unverified, 5 a task's scores "
        "mix judges with a break not yet bridged (2: refused)."
    )
    message: str
    tasks: list[TaskGate] = Field(description="Each task both groups were scored on.")
    not_shared: list[str] = Field(
        description="Tasks named that not both groups were scored on (not gated)."
    )
    overall: GroupComparison | None = Field(
        description="The two groups compared over the shared tasks (two or more)."
    )
    overall_verdict: Verdict | None
    by: str
    baseline: str
    candidate: str
    kind: str
    score: str = Field(description="The score compared (scenario_score in a suite).")
    margin: float = Field(description="The drop allowed, on the score's scale.")
    too_few: TooFew
    correction: Correction
    alpha: float
    level: float
    left_out: list[LeftOut]
    judge_validation: JudgeValidation | None = Field(
        default=None,
        description="The judge's agreement with people's labels (docs/judge.md).",
        exclude_if=lambda value: value is None,
    )
    judge_break: str | None = Field(
        default=None,
        description='"judge changed: ..." when the scores shown mix two or more judges: which, '
        "how many runs each scored, and each break's bridge (docs/judge.md); absent otherwise.",
        exclude_if=lambda value: value is None,
    )


def _regressed(c: GroupComparison, adjusted: float | None, alpha: float, margin: float) -> bool:
    d = c.difference
    return (
        adjusted is not None and adjusted <= alpha and d is not None and d.mean_difference < -margin
    )


def _blocking(view: TaskView, by: str, baseline: str, candidate: str) -> list[str]:
    """A suite's gate that the baseline's latest run passed and the candidate's blocks."""
    latest = {}
    for row in sorted(view.rows, key=lambda r: r.submission.created_at):
        group = group_of(by, row)
        if row.scores.suite is not None and group in (baseline, candidate) and not row.held:
            latest[group] = row.scores.suite
    base, cand = latest.get(baseline), latest.get(candidate)
    if base is None or cand is None or not base.passed or cand.passed:
        return []
    return list(cand.blocking_failures)


def _message(task: str, c: GroupComparison, score: str, level: float, margin: float) -> str:
    d = c.difference
    if d is None:
        return f"{task}: {c.conclusion}"
    n = f"{c.pairs} pairs" if c.pairs else f"n={c.n_reference} vs {c.n_other}"
    return (
        f"{task}: {score} {c.other} - {c.reference} = {d.mean_difference:+.4g} "
        f"({100 * d.level:.4g}% interval [{d.low:+.4g}, {d.high:+.4g}], {n}; "
        f"allowed drop {margin:g})"
    )


def _task_gate(
    view: TaskView,
    compared: GroupComparison,
    adjusted: float | None,
    *,
    report_args: tuple[str, float, float, float],
    groups: tuple[str, str, str],
) -> TaskGate:
    score, level, alpha, margin = report_args
    by, baseline, candidate = groups
    c, d = compared, compared.difference
    message = _message(view.task.id, c, score, level, margin)
    blocking = _blocking(view, by, baseline, candidate) if view.rule.kind == "suite" else []
    verdict: Verdict = "too few" if d is None else "pass"
    if _regressed(c, adjusted, alpha, margin):
        verdict, message = "regression", f"{message}, adjusted p={adjusted:.3g}"
    if blocking:
        verdict = "regression"
        message += f"; the suite gate now blocks: {'; '.join(blocking)}"
    return TaskGate(
        task=view.task.id,
        verdict=verdict,
        design=c.design,
        n_baseline=c.n_reference,
        n_candidate=c.n_other,
        mean_baseline=c.mean_reference,
        mean_candidate=c.mean_other,
        difference=None if d is None else d.mean_difference,
        low=None if d is None else d.low,
        high=None if d is None else d.high,
        p_value=None if c.test is None else c.test.p_value,
        adjusted_p=adjusted,
        blocking=blocking,
        message=message,
    )


def _check(baseline: str, candidate: str, margin: float, too_few: str) -> None:
    problems = []
    if not baseline:
        problems.append(("baseline", "a group's value, not empty"))
    if not candidate or candidate == baseline:
        problems.append(("candidate", "a group's value other than the baseline"))
    if not (math.isfinite(margin) and margin >= 0):  # an infinite margin passes anything
        problems.append(("margin", "a finite number, 0 or more, on the score's scale"))
    if too_few not in get_args(TooFew):
        problems.append(("too_few", f"one of {', '.join(get_args(TooFew))}"))
    if problems:
        raise InvalidInput(problems)


def _shared(loaded: LoadedTasks, units: list[tuple[str, set[str]]], groups: set[str]) -> list[str]:
    """The tasks on which both groups have a value (a suite's: on one of its scenarios)."""
    both = [unit for unit, present in units if groups <= present]
    return [
        v.task.id
        for v in loaded.views
        if any(u == v.task.id or u.startswith(f"{v.task.id}/") for u in both)
    ]


def gate(
    session: Session,
    *,
    tasks: str,
    by: str,
    baseline: str,
    candidate: str,
    margin: float = 0.0,
    too_few: TooFew = "fail",
    correction: Correction = "holm",
    alpha: float = 0.05,
    seed: int = SEED,
    include_held: bool = False,
    settings: Settings | None = None,
) -> GateReport:
    """Gate ``candidate`` against ``baseline`` (two values of ``by``) over ``tasks``.

    The request is checked, and the tasks loaded, under `compare`'s rules and limits.

    Raises:
        InvalidInput: on ``tasks``, ``by``, ``baseline``, ``candidate``, ``margin``,
            ``too_few``, ``correction``, ``alpha`` or ``seed``, naming the rule broken (a
            group with no complete evaluation, no task both were scored on, a limit).
    """
    settings = settings or get_settings()
    check_by(by)
    _check(baseline, candidate, margin, too_few)
    check_method(correction, alpha, None, RESAMPLES)
    if not 0 <= seed < 2**32:
        raise InvalidInput([("seed", "from 0 to 2**32 - 1")])
    values = [baseline, candidate]
    loaded = load_views(session, tasks=tasks, by=by, values=values, settings=settings)

    def compared(
        these: LoadedTasks, threshold: float | None = None
    ) -> tuple[GroupComparison, CompareReport]:
        found = compare_loaded(
            these,
            by=by,
            values=values,
            correction="none",
            alpha=alpha,
            seed=seed,
            settings=settings,
            include_held=include_held,
            threshold=threshold,
        )
        return found.comparisons[0], found

    overall, whole = compared(loaded)
    shared = _shared(loaded, [(u.unit, set(u.values)) for u in whole.units], set(values))
    if not shared:
        rule = f"no task has a complete evaluation of both {baseline!r} and {candidate!r}"
        raise InvalidInput([("tasks", rule)])
    per_task = [compared(loaded.only(t))[0] for t in shared]
    decided = {i: c.test.p_value for i, c in enumerate(per_task) if c.test is not None}
    adjusted: dict[int, float] = {}
    if decided:
        found = correct(list(decided.values()), correction=correction, alpha=alpha)
        adjusted = dict(zip(decided, found.adjusted, strict=True))
        if found.threshold != alpha:  # each task's interval at the level it was judged at
            per_task = [compared(loaded.only(t), found.threshold)[0] for t in shared]
    views = {v.task.id: v for v in loaded.views}
    gates = [
        _task_gate(
            views[t],
            c,
            adjusted.get(i),
            report_args=(whole.score, whole.level, alpha, margin),
            groups=(by, baseline, candidate),
        )
        for i, (t, c) in enumerate(zip(shared, per_task, strict=True))
    ]
    overall_verdict: Verdict | None = None
    if len(shared) > 1:
        p = None if overall.test is None else overall.test.p_value
        overall_verdict = (
            "too few"
            if overall.difference is None
            else "regression"
            if _regressed(overall, p, alpha, margin)
            else "pass"
        )
    verdicts = [g.verdict for g in gates] + ([overall_verdict] if overall_verdict else [])
    verdict: Verdict = (
        "regression"
        if "regression" in verdicts
        else "too few"
        if "too few" in [g.verdict for g in gates] and too_few == "fail"
        else "pass"
    )
    return GateReport(
        verdict=verdict,
        exit_status=EXIT_STATUS[verdict],
        message=_summary(verdict, gates, overall, overall_verdict, candidate, baseline),
        tasks=gates,
        not_shared=[t for t in loaded.named if t not in shared],
        overall=overall if len(shared) > 1 else None,
        overall_verdict=overall_verdict,
        by=by,
        baseline=baseline,
        candidate=candidate,
        kind=whole.kind,
        score=whole.score,
        margin=margin,
        too_few=too_few,
        correction=correction,
        alpha=alpha,
        level=whole.level,
        left_out=whole.left_out,
    )


def with_unverified(report: GateReport, marks: Mapping[str, str]) -> GateReport:
    """``report`` failing on each gated task whose verifier audit left it unverified
    (`evalq.read.audit`): a score its checks cannot tell from noise gates nothing. A
    regression elsewhere still decides the exit status."""
    if not any(t.task in marks for t in report.tasks):
        return report
    tasks = [
        t.model_copy(update={"verdict": "unverified", "message": f"{t.task}: {marks[t.task]}"})
        if t.task in marks
        else t
        for t in report.tasks
    ]
    verdict: Verdict = "regression" if report.verdict == "regression" else "unverified"
    message = _summary(
        verdict, tasks, report.overall, report.overall_verdict, report.candidate, report.baseline
    )
    return report.model_copy(
        update={
            "tasks": tasks,
            "verdict": verdict,
            "exit_status": EXIT_STATUS[verdict],
            "message": message,
        }
    )


def with_judge_changes(report: GateReport, mixed: Mapping[str, JudgeHistory]) -> GateReport:
    """``report`` saying so on each gated task whose scores mix judges (`evalq.read.judge_series`):
    a break not yet bridged turns the task's pass or regression into "judge changed" (its
    difference may be the judges'), a bridged one keeps its verdict; both name the judges and
    the bridge in the message. A regression elsewhere still decides the exit status."""
    if not any(t.task in mixed for t in report.tasks):
        return report
    tasks = []
    for t in report.tasks:
        history = mixed.get(t.task)
        if history is None:
            tasks.append(t)
            continue
        failing = not all(b.status == "bridged" for b in history.bridges)
        decided = t.verdict in ("pass", "regression")
        verdict: Verdict = "judge changed" if failing and decided else t.verdict
        tasks.append(
            t.model_copy(update={"verdict": verdict, "message": f"{t.message}; {history.mark}"})
        )
    verdicts = {t.verdict for t in tasks}
    overall: Verdict = report.verdict
    if "regression" in verdicts or report.overall_verdict == "regression":
        overall = "regression"
    elif "unverified" in verdicts:
        overall = "unverified"
    elif "judge changed" in verdicts:
        overall = "judge changed"
    message = _summary(
        overall, tasks, report.overall, report.overall_verdict, report.candidate, report.baseline
    )
    marks = " | ".join(f"{t}: {h.mark}" for t, h in mixed.items())
    return report.model_copy(
        update={
            "tasks": tasks,
            "verdict": overall,
            "exit_status": EXIT_STATUS[overall],
            "message": message,
            "judge_break": marks,
        }
    )


def _summary(
    verdict: Verdict,
    gates: list[TaskGate],
    overall: GroupComparison | None,
    overall_verdict: Verdict | None,
    candidate: str,
    baseline: str,
) -> str:
    counts = {v: sum(g.verdict == v for g in gates) for v in get_args(Verdict)}
    tally = ", ".join(f"{n} {v}" for v, n in counts.items() if n)
    head = f"{verdict}: {candidate} against {baseline} over {len(gates)} task(s) ({tally})"
    if overall is not None and overall_verdict == "regression" and overall.difference:
        d = overall.difference
        head += (
            f"; over the tasks {d.mean_difference:+.4g} [{d.low:+.4g}, {d.high:+.4g}] (regression)"
        )
    return head
