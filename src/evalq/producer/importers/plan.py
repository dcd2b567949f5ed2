"""What one import file maps to: tasks and submissions, validated before anything is stored."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from evalq.core.errors import MAX_PROBLEMS, InvalidInput
from evalq.core.metadata import IMPORTED_GRADER as IMPORTED_GRADER
from evalq.core.metadata import IMPORTED_SCORE as IMPORTED_SCORE
from evalq.core.schemas import Submission, Task, parse_submission, parse_task

_UNSAFE = re.compile(r"[^A-Za-z0-9._:\-]")
MAX_ID_CHARS = 128


def source_id(prefix: str, *parts: object) -> str:
    """A deterministic evalq id from the source's own ids: ``PREFIX-PART-PART``.

    Characters an evalq id cannot hold become '_'; an id that had to change that way, or that
    is too long, ends with a digest of the original parts so two source ids never meet.
    """
    raw = "-".join(str(part) for part in parts)
    safe = _UNSAFE.sub("_", raw)
    candidate = f"{prefix}-{safe}"
    if safe == raw and len(candidate) <= MAX_ID_CHARS:
        return candidate
    digest = hashlib.sha256(raw.encode()).hexdigest()[:16]
    return f"{candidate[: MAX_ID_CHARS - 17]}-{digest}"


@dataclass(frozen=True)
class ImportPlan:
    """The tasks and submissions one file maps to, all valid."""

    tasks: tuple[Task, ...]
    submissions: tuple[Submission, ...]


@dataclass
class PlanBuilder:
    """Collects a file's tasks and submissions, and every problem with where it was found."""

    tasks: dict[str, Task] = field(default_factory=dict)
    submissions: list[Submission] = field(default_factory=list)
    problems: list[tuple[str, str]] = field(default_factory=list)
    total: int = 0

    def problem(self, where: str, rule: str) -> None:
        """Record a problem at ``where`` (a JSON path in the source file)."""
        self.total += 1
        if len(self.problems) < MAX_PROBLEMS:
            self.problems.append((where, rule))

    def task(self, where: str, data: Mapping[str, Any]) -> None:
        """Add the task ``data`` (once per id), found at ``where``."""
        if data["id"] in self.tasks:
            return
        try:
            task = parse_task(dict(data))
        except InvalidInput as error:
            for name, rule in error.problems:
                self.problem(where, f"task {name}: {rule}")
            return
        self.tasks[task.id] = task

    def submission(self, where: str, data: Mapping[str, Any]) -> None:
        """Add the submission ``data`` mapped from the record at ``where``."""
        try:
            self.submissions.append(parse_submission(dict(data)))
        except InvalidInput as error:
            for name, rule in error.problems:
                self.problem(where, f"maps to submission {name}: {rule}")

    def plan(self) -> ImportPlan:
        """The plan, or every problem found.

        Raises:
            InvalidInput: a record could not be mapped, or two records map to one id.
        """
        seen: set[str] = set()
        for submission in self.submissions:
            if submission.id in seen:
                self.problem(submission.id, "two records map to this submission id")
            seen.add(submission.id)
        if self.problems:
            raise InvalidInput(self.problems, total=self.total)
        if not self.submissions:
            raise InvalidInput([("(file)", "no records to import")])
        return ImportPlan(tuple(self.tasks.values()), tuple(self.submissions))
