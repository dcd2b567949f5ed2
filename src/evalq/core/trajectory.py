"""Tool calls against a plan: the expected calls a task names and how a run's trace matched.

A task may name the tool calls it expects, in order, each with the arguments that must match
(a subset: the call may pass more). A run's calls are matched in one of four modes
(`evalq.metrics.graph.trajectory`):

- ``exact``: the same calls in the same order, nothing else; score: calls equal at their
  position / the longer list.
- ``in_order``: the expected calls appear in order, others may come between; score: expected
  calls matched in order / expected calls.
- ``any_order``: the same calls in any order, nothing else; score: calls paired / the longer
  list.
- ``subset``: every call made is an expected one (some may be skipped); score: calls made that
  were expected / calls made.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from evalq.core.storable import storable_string

TrajectoryMode = Literal["exact", "in_order", "any_order", "subset"]
ArgValue = str | int | float | bool | None
ToolName = Annotated[str, Field(min_length=1, max_length=200), BeforeValidator(storable_string)]


class ToolCall(BaseModel):
    """One tool call: the tool, and the arguments that must match (expected) or were passed."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    tool: ToolName
    arguments: dict[Annotated[str, Field(max_length=200)], ArgValue] | None = Field(
        default=None, max_length=50, description="Expected: these must match; None: any."
    )

    def label(self) -> str:
        """The call as people read it: ``tool`` or ``tool(key=value, ...)``."""
        if not self.arguments:
            return self.tool
        inner = ", ".join(f"{k}={v!r}" for k, v in sorted(self.arguments.items()))
        return f"{self.tool}({inner})"


class ToolLoop(BaseModel):
    """A cycle of calls repeated back to back: ``cycle`` made ``repeats`` times from ``start``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    cycle: list[str]
    repeats: int
    start: int = Field(description="The index of the cycle's first call in the trace.")


class TrajectoryMatch(BaseModel):
    """How a run's tool calls matched its task's expected ones."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    mode: TrajectoryMode
    score: float = Field(ge=0, le=1, description="The mode's share of calls matched.")
    passed: bool = Field(description="The mode's rule held (see the table).")
    matched: list[str] = Field(description="Expected calls the run made (as the mode pairs).")
    missing: list[str] = Field(description="Expected calls the run did not make.")
    unexpected: list[str] = Field(description="Calls made that no expected call matched.")
    loops: list[ToolLoop] = Field(description="Repeated call cycles found in the trace.")
