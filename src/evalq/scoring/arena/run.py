"""The raw figures of one submission that the Arena scores (spec 000) are computed from."""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime

from evalq.core.errors import InvalidInput
from evalq.core.pricing import price_submission
from evalq.core.profile import Profile
from evalq.core.schemas import Submission


@dataclass(frozen=True)
class ArenaRun:
    """One submission reduced to what the Arena needs.

    ``execution_time`` and ``cost_usd`` may be None (not reported). Following the spec, a value of
    0 also counts as missing: use `measured_time` / `measured_cost`, which fold both into None.

    Attributes:
        submission_id: the submission's id.
        task_id: the task it ran.
        total_tokens: tokens used (input + output).
        tool_calls: tool/function calls made.
        iterations: attempts/refinements, at least 1 (docs/scoring/arena.md).
        execution_time: wall time in seconds, or None.
        cost_usd: cost in dollars, or None.
        tool: the AI tool that ran.
        model: the model behind it.
        evaluated_at: when it was evaluated, if known (the spec's ranking tie-break field).
        usage_collected: its usage comes from a trace evalq's OTLP intake collected under a key
            its task trusts (``submissions.trace_provenance`` ``collected``); under
            ``arena.usage = "traced"`` only such runs count in the baseline.
    """

    submission_id: str
    task_id: str
    total_tokens: int
    tool_calls: int
    iterations: int = 1
    execution_time: float | None = None
    cost_usd: float | None = None
    tool: str = ""
    model: str = ""
    evaluated_at: datetime | None = None
    usage_collected: bool = False

    def __post_init__(self) -> None:
        problems: list[tuple[str, str]] = []
        if self.total_tokens < 0:
            problems.append(("total_tokens", "must be >= 0"))
        if self.tool_calls < 0:
            problems.append(("tool_calls", "must be >= 0"))
        if self.iterations < 1:
            problems.append(("iterations", "must be >= 1"))
        for name, value in (("execution_time", self.execution_time), ("cost_usd", self.cost_usd)):
            if value is not None and not (math.isfinite(value) and value >= 0):
                problems.append((name, "must be a finite number >= 0 or None"))
        if problems:
            raise InvalidInput(problems)

    @property
    def measured_time(self) -> float | None:
        """Execution time in seconds, or None when absent or 0 (the spec's "missing")."""
        return self.execution_time or None

    @property
    def measured_cost(self) -> float | None:
        """Cost in dollars, or None when absent or 0 (the spec's "missing")."""
        return self.cost_usd or None

    @classmethod
    def of(cls, sub: Submission, cost_usd: float | None) -> ArenaRun:
        """The Arena figures of a validated submission whose cost was priced at submit
        (`price_submission`, stored on its row). An execution time of 0 becomes None."""
        usage = sub.usage
        return cls(
            submission_id=sub.id,
            task_id=sub.task_id,
            total_tokens=usage.tokens,
            tool_calls=usage.tool_calls,
            iterations=usage.iterations,
            execution_time=usage.execution_time or None,
            cost_usd=cost_usd,
            tool=sub.tool,
            model=sub.model,
        )

    @classmethod
    def from_submission(cls, sub: Submission, profile: Profile) -> ArenaRun:
        """`of` with the cost priced now (`price_submission`): for submissions not yet stored."""
        return cls.of(sub, price_submission(sub, profile))
