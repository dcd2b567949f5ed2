"""The answer of an import, the same at every door (CLI, HTTP API, Python clients)."""

from __future__ import annotations

from pydantic import BaseModel, Field


class ImportAnswer(BaseModel):
    """What an import found in its file, and (applied) what it stored."""

    format: str = Field(description="The file's format.")
    applied: bool = Field(description="False for a dry run: nothing was stored.")
    new_tasks: list[str] = Field(description="Tasks the file names that were not stored.")
    new_submissions: list[str] = Field(description="Runs of the file that were not stored.")
    imported_before: list[str] = Field(
        description="Runs of the file already stored (left alone, whatever their content)."
    )

    def summary(self) -> str:
        """The line `evalq import` prints: counts, then the new tasks' ids."""
        verb = "creating" if self.applied else "would create"
        line = (
            f"{verb} {len(self.new_tasks)} task(s), {len(self.new_submissions)} "
            f"submission(s); {len(self.imported_before)} imported before"
        )
        return line + (": " + ", ".join(self.new_tasks) if self.new_tasks else "")
