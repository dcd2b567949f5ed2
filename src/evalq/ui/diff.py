"""A run-vs-run diff of two outputs, line by line, for the compare page."""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Literal

from sqlalchemy.orm import Session

from evalq.core.redact import redact_data
from evalq.core.settings import Settings
from evalq.store import queries

MAX_LINES = 2000
"""Lines of each output compared; the rest is counted, not shown."""
Change = Literal["same", "changed", "removed", "added"]


@dataclass(frozen=True)
class DiffLine:
    """One row of the side-by-side diff: the left run's line, the right run's, and how."""

    left: str | None
    right: str | None
    change: Change


@dataclass(frozen=True)
class OutputDiff:
    """Two runs' outputs side by side."""

    left_id: str
    right_id: str
    lines: list[DiffLine]
    cut: int

    @property
    def changed(self) -> int:
        """Rows that differ."""
        return sum(line.change != "same" for line in self.lines)


def _output(session: Session, submission_id: str, settings: Settings | None) -> str:
    row = queries.get_submission_row(session, submission_id=submission_id)  # NotFound names it
    text = redact_data(row.payload, settings).get("output") or ""
    return str(text)


def output_diff(
    session: Session, *, left: str, right: str, settings: Settings | None
) -> OutputDiff:
    """The outputs of runs ``left`` and ``right`` aligned line by line; `NotFound` for an
    unknown run."""
    a = _output(session, left, settings).splitlines()
    b = _output(session, right, settings).splitlines()
    cut = max(0, len(a) - MAX_LINES) + max(0, len(b) - MAX_LINES)
    a, b = a[:MAX_LINES], b[:MAX_LINES]
    lines: list[DiffLine] = []
    matcher = difflib.SequenceMatcher(a=a, b=b, autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            lines += [DiffLine(x, x, "same") for x in a[i1:i2]]
            continue
        left_part, right_part = a[i1:i2], b[j1:j2]
        for k in range(max(len(left_part), len(right_part))):
            x = left_part[k] if k < len(left_part) else None
            y = right_part[k] if k < len(right_part) else None
            change: Change = (
                "changed"
                if x is not None and y is not None
                else ("removed" if y is None else "added")
            )
            lines.append(DiffLine(x, y, change))
    return OutputDiff(left_id=left, right_id=right, lines=lines, cut=cut)
