"""Reading submissions and tasks from files, with problems reported by line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from evalq.core.errors import MAX_PROBLEMS, InvalidInput
from evalq.core.schemas import Task, parse_submission, parse_task

LineProblems = tuple[int, list[tuple[str, str]]]


def read_jsonl(path: Path) -> tuple[list[dict[str, Any]], list[LineProblems]]:
    """Parse and validate a JSONL file of submissions.

    Returns:
        The valid submissions (as dicts) and, for each bad line, its 1-based number and
        ``(field, rule)`` problems. Blank lines are ignored.
    """
    good: list[dict[str, Any]] = []
    bad: list[LineProblems] = []
    try:
        lines = path.read_text("utf-8").splitlines()
    except OSError as error:
        raise InvalidInput([(str(path), f"cannot read: {error.strerror}")]) from None
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except json.JSONDecodeError as error:
            bad.append((number, [("(line)", f"not valid JSON: {error.msg}")]))
            continue
        try:
            parse_submission(data)
        except InvalidInput as error:
            bad.append((number, error.problems))
            continue
        good.append(data)
    return good, bad


def read_tasks(path: Path) -> list[Task]:
    """Parse a JSON file holding one task object or a list of them."""
    try:
        data = json.loads(path.read_text("utf-8"))
    except OSError as error:
        raise InvalidInput([(str(path), f"cannot read: {error.strerror}")]) from None
    except json.JSONDecodeError as error:
        raise InvalidInput(
            [(str(path), f"not valid JSON: {error.msg} (line {error.lineno})")]
        ) from None
    items = data if isinstance(data, list) else [data]
    problems: list[tuple[str, str]] = []
    total = 0
    tasks: list[Task] = []
    for index, item in enumerate(items):
        try:
            tasks.append(parse_task(item))
        except InvalidInput as error:
            problems += [(f"[{index}].{field}", rule) for field, rule in error.problems]
            del problems[MAX_PROBLEMS:]
            total += error.total
    if problems:
        raise InvalidInput(problems, total=total)
    return tasks
