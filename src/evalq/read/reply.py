"""The base of every reply the read side returns and the HTTP API serves as it is."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Reply(BaseModel):
    """Base of the read side's replies (leaderboard, reports, comparison, submission detail).

    Unknown keys are refused and a reply is frozen: what a read function builds is what the
    routes serve, the clients return and the CLI prints (``model_dump(mode="json")``).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)
