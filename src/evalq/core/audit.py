"""A task's verifier audit: probes that no sound check should pass, and which ones did.

Computed by `evalq.scoring.audit` (the probes scored) and `evalq.read.audit` (stored, served);
docs/audit.md.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

ProbeName = Literal["empty output", "echoed task text", "refusal", "another task's best run"]
AuditStatus = Literal["verified", "unverified", "not audited"]


class ProbeOutcome(BaseModel):
    """One probe scored by the task's checks."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    probe: ProbeName
    source: str | None = Field(
        default=None, description="The run a borrowed probe came from (another task's best)."
    )
    passed: bool = Field(description="Every check of the task accepted the probe.")
    criteria: list[str] = Field(description="Each success criterion's outcome, in words.")
    task_success: float | None = Field(
        description="Tier 1's task success against the reference outputs (null: none)."
    )


class TaskAudit(BaseModel):
    """Body of GET /v1/tasks/{id}/audit: the probes, and the task's status."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    task_id: str
    status: AuditStatus = Field(
        description="unverified: some probe passed the task's checks; not audited: the task "
        "has nothing a probe can reach (a suite's scenarios are reported by the run)."
    )
    passed: list[str] = Field(description="The probes that passed (what makes it unverified).")
    probes: list[ProbeOutcome]
    reason: str
    audited_at: datetime | None = None

    def mark(self) -> str | None:
        """The words every board and the gate show for an unverified task; None otherwise."""
        if self.status != "unverified":
            return None
        return f"unverified: {self.reason}"
