"""Label files: read CSV or JSONL labels with problems named by line, and write them back.

A file is all or nothing: `read_labels` names every bad row as ``FILE:LINE: field`` and returns
nothing when one is bad. The columns of a CSV file (a header row first) are ``submission_id``,
``labeller``, one per rubric (``technical_accuracy``, ``constructiveness``,
``planning_rationality``: 1-5, empty for none), ``recommendation``, ``passed`` (true/false,
pass/fail, yes/no, 1/0) and ``note``. A JSONL file holds one label object per line. What
`write_labels` exports reads back as it is (its extra columns ``task_id``, ``created_at`` and
``updated_at`` are ignored on import; a cell the export quoted so that a spreadsheet shows it
as text, not as a formula, is unquoted: `evalq.core.csv_cells`).

A file holds at most `MAX_LABELS` labels (what one import stores, all or nothing). The file is
read a line at a time and refused as soon as a row past the limit is met, so a file of any
size is refused in bounded memory, before it is parsed whole; split larger files.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, Literal

from evalq.core.csv_cells import read_cell, write_csv
from evalq.core.errors import MAX_PROBLEMS, InvalidInput
from evalq.core.labels import MAX_LABELS, TWICE_RULE, Label, LabelRequest, parse_label
from evalq.core.schemas import RUBRIC_NAMES
from evalq.core.storable import decode_json

LabelFormat = Literal["csv", "jsonl"]
COLUMNS = ("submission_id", "labeller", *RUBRIC_NAMES, "recommendation", "passed", "note")
EXPORTED_ONLY = ("task_id", "created_at", "updated_at")
"""Columns an export adds that an import ignores (the store sets them)."""
TRUE = {"true", "pass", "passed", "yes", "1"}
FALSE = {"false", "fail", "failed", "no", "0"}
INTEGER = re.compile(r"^[+-]?\d+$")

NumberedLabel = tuple[int, LabelRequest]


def format_of(path: Path, given: LabelFormat | None = None) -> LabelFormat:
    """The file's format: ``given``, else from its suffix (``.csv``; anything else JSONL)."""
    if given is not None:
        return given
    return "csv" if path.suffix.lower() == ".csv" else "jsonl"


def read_labels(path: Path, label_format: LabelFormat | None = None) -> list[NumberedLabel]:
    """Every label of the file with its 1-based line number, or `InvalidInput`.

    Raises:
        InvalidInput: the file cannot be read, holds more than `MAX_LABELS` labels (refused at
            the first row past it, the rest unread), or has bad rows: each problem is named
            ``FILE:LINE: field`` (a label of the same run by the same labeller as an earlier
            row, too); nothing is returned.
    """
    try:
        if format_of(path, label_format) == "csv":
            with path.open(encoding="utf-8-sig", newline="") as text:
                return _read(path, _csv_rows(text))
        with path.open("rb") as raw:
            return _read(path, _jsonl_rows(raw))
    except OSError as error:
        raise InvalidInput([("(file)", f"cannot read: {error.strerror}")]) from None
    except UnicodeDecodeError:
        raise InvalidInput([("(file)", "is not UTF-8 text")]) from None


def _read(path: Path, rows: Iterator[tuple[int, Any]]) -> list[NumberedLabel]:
    good: list[NumberedLabel] = []
    problems: list[tuple[str, str]] = []
    seen: dict[tuple[str, str], int] = {}
    for count, (line, data) in enumerate(rows, start=1):
        if count > MAX_LABELS:
            rule = (
                f"holds more than {MAX_LABELS} labels (line {line} is past them): one import "
                f"stores at most {MAX_LABELS}, all or nothing; split the file"
            )
            raise InvalidInput([(path.name, rule)])
        try:
            if isinstance(data, InvalidInput):  # a line that is not JSON, a row too long
                raise data
            label = parse_label(data)
        except InvalidInput as error:
            problems += [(f"{path.name}:{line}: {field}", rule) for field, rule in error.problems]
            continue
        key = (label.submission_id, label.labeller)
        if key in seen:
            problems.append((f"{path.name}:{line}: labeller", f"{TWICE_RULE} (line {seen[key]})"))
        seen.setdefault(key, line)
        good.append((line, label))
    if problems:
        raise InvalidInput(problems[:MAX_PROBLEMS], total=len(problems))
    if not good:
        raise InvalidInput([(f"{path.name}", "holds no label")])
    return good


def _jsonl_rows(raw: Iterable[bytes]) -> Iterator[tuple[int, Any]]:
    for number, line in enumerate(raw, start=1):
        if not line.strip():
            continue
        try:
            data = decode_json(line, where="(line)")
        except InvalidInput as error:
            yield number, error
            continue
        if isinstance(data, dict):
            data = {k: v for k, v in data.items() if k not in EXPORTED_ONLY}
        yield number, data


def _csv_rows(text: Iterable[str]) -> Iterator[tuple[int, Any]]:
    reader = csv.DictReader(text)
    header = reader.fieldnames or []
    unknown = [name for name in header if name not in COLUMNS and name not in EXPORTED_ONLY]
    if unknown:
        rule = f"unknown column(s) {', '.join(map(repr, unknown))}; columns: {', '.join(COLUMNS)}"
        raise InvalidInput([("line 1 (header)", rule)])
    start = reader.line_num
    for row in reader:
        yield start + 1, _from_cells(row)
        start = reader.line_num


def _from_cells(row: dict[str | Any, Any]) -> dict[str, Any] | InvalidInput:
    """A CSV row as a label object: empty cells left out, scores and ``passed`` typed."""
    if None in row:  # more cells than the header has columns
        return InvalidInput([("(row)", "has more cells than the header has columns")])
    cells = {
        k: read_cell(v) for k, v in row.items() if v not in (None, "") and k not in EXPORTED_ONLY
    }
    scores = {name: cells.pop(name) for name in RUBRIC_NAMES if name in cells}
    data: dict[str, Any] = dict(cells)
    if scores:
        data["scores"] = {
            name: int(value) if INTEGER.match(value.strip()) else value
            for name, value in scores.items()
        }
    if "passed" in data:
        flag = data["passed"].strip().lower()
        data["passed"] = True if flag in TRUE else False if flag in FALSE else data["passed"]
    return data


def write_labels(labels: Sequence[Label], label_format: LabelFormat) -> str:
    """The labels as a CSV file (the import's columns plus ``task_id`` and the times) or JSONL.

    CSV string cells that a spreadsheet would read as formulas are quoted (`write_csv`), and
    `read_labels` unquotes them: the file reads back as the same labels. JSONL is exact.
    """
    if label_format == "jsonl":
        return "".join(label.model_dump_json() + "\n" for label in labels)
    return write_csv([*COLUMNS, *EXPORTED_ONLY], (_cells(label) for label in labels))


def _cells(label: Label) -> dict[str, object]:
    cells: dict[str, object] = label.model_dump(mode="json", exclude={"scores"})
    cells |= {name: label.scores.get(name) for name in RUBRIC_NAMES}
    cells["passed"] = None if label.passed is None else str(label.passed).lower()
    return cells
