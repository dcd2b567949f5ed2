"""Reading submissions and tasks from files, with problems reported by line.

Files are read as bytes and decoded by `evalq.core.storable.decode_json`, the HTTP API's own
decoder, then validated by the same wire models: a file is held to exactly the API's rules.
"""

from __future__ import annotations

from pathlib import Path

from evalq.core.errors import MAX_PROBLEMS, InvalidInput
from evalq.core.schemas import Submission, Task, parse_submission, parse_task
from evalq.core.storable import decode_json

Problems = list[tuple[str, str]]
LineProblems = tuple[int, Problems]
NumberedSubmission = tuple[int, Submission]


def read_jsonl(path: Path) -> tuple[list[NumberedSubmission], list[LineProblems]]:
    """Parse and validate a JSONL file of submissions.

    Lines end at ``\\n`` only: a JSON text cannot hold a raw newline, while U+2028, U+0085 and
    the other characters `str.splitlines` also splits at are ordinary characters of a string.
    Blank lines are ignored.

    Returns:
        The valid submissions and, for each bad line, the ``(field, rule)`` problems; both
        with their 1-based line numbers.

    Raises:
        InvalidInput: the file cannot be read.
    """
    good: list[NumberedSubmission] = []
    bad: list[LineProblems] = []
    try:
        with path.open("rb") as handle:
            for number, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                try:
                    good.append((number, parse_submission(decode_json(line, where="(line)"))))
                except InvalidInput as error:
                    bad.append((number, error.problems))
    except OSError as error:
        raise InvalidInput([("(file)", f"cannot read: {error.strerror}")]) from None
    return good, bad


def read_tasks(path: Path) -> list[Task]:
    """Parse a JSON file holding one task object or a list of them.

    Raises:
        InvalidInput: the file cannot be read or decoded (field ``(file)``), or a task is
            invalid (fields ``[index].field``); every problem is named.
    """
    try:
        raw = path.read_bytes()
    except OSError as error:
        raise InvalidInput([("(file)", f"cannot read: {error.strerror}")]) from None
    data = decode_json(raw, where="(file)")
    items = data if isinstance(data, list) else [data]
    problems: Problems = []
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
