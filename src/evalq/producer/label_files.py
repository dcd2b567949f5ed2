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

Each line (a CSV row: every line it spans) is read with a cap of `MAX_ROW_CHARS`, so one huge
line is refused after that many characters, never held whole. CSV is read strictly: a quoted
cell that is never closed (which a lenient reader turns into one note swallowing every row
after it) is refused at the row it starts on, as is any other malformed quoting.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import IO, Any, AnyStr, Generic, Literal, TypeVar

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

MAX_ROW_CHARS = 65_536
"""Longest line of a JSONL file (in bytes) or row of a CSV file (in characters, every line of a
quoted cell that spans lines counted): a label holds a few KiB (a note of 2,000 characters,
each at most 6 bytes of JSON escape); below `csv`'s own cell limit, so that one never fires."""
UNCLOSED_RULE = (
    'a quoted cell starts here and is never closed (an unterminated "): it would swallow every '
    "row after it"
)

NumberedLabel = tuple[int, LabelRequest]
R = TypeVar("R")


def format_of(path: Path, given: LabelFormat | None = None) -> LabelFormat:
    """The file's format: ``given``, else from its suffix (``.csv``; anything else JSONL)."""
    if given is not None:
        return given
    return "csv" if path.suffix.lower() == ".csv" else "jsonl"


UnknownRuns = Callable[[set[str]], dict[str, str]]
"""Which of these run ids are not stored, each with its rule (`Client.unknown_runs`)."""


def read_labels(
    path: Path,
    label_format: LabelFormat | None = None,
    *,
    unknown_runs: UnknownRuns | None = None,
) -> list[NumberedLabel]:
    """Every label of the file with its 1-based line number, or `InvalidInput`.

    Args:
        path: The CSV or JSONL file.
        label_format: ``csv`` or ``jsonl``; by default from the suffix.
        unknown_runs: When given, asked once for the runs the file's valid rows label, so a
            label of a run that is not stored is named with the file's other bad rows, in the
            same list, by line (one pass: the user fixes the file once).

    Raises:
        InvalidInput: the file cannot be read, holds more than `MAX_LABELS` labels (refused at
            the first row past it, the rest unread), or has bad rows: each problem is named
            ``FILE:LINE: field`` (a label of the same run by the same labeller as an earlier
            row, a label of a run ``unknown_runs`` names, too), in line order; nothing is
            returned.
    """
    try:
        if format_of(path, label_format) == "csv":
            with path.open(encoding="utf-8-sig", newline="") as text:
                rows = _csv_rows(_Lines(text, path.name, "(row)"))
                return _read(path, rows, unknown_runs)
        with path.open("rb") as raw:
            return _read(path, _jsonl_rows(_Lines(raw, path.name, "(line)")), unknown_runs)
    except OSError as error:
        raise InvalidInput([("(file)", f"cannot read: {error.strerror}")]) from None
    except UnicodeDecodeError:
        raise InvalidInput([("(file)", "is not UTF-8 text")]) from None


def _read(
    path: Path, rows: Iterator[tuple[int, Any]], unknown_runs: UnknownRuns | None
) -> list[NumberedLabel]:
    good: list[NumberedLabel] = []
    problems: list[tuple[int, str, str]] = []
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
            problems += [(line, field, rule) for field, rule in error.problems]
            continue
        key = (label.submission_id, label.labeller)
        if key in seen:
            problems.append((line, "labeller", f"{TWICE_RULE} (line {seen[key]})"))
        seen.setdefault(key, line)
        good.append((line, label))
    if unknown_runs is not None and good:
        unknown = unknown_runs({label.submission_id for _, label in good})
        problems += [
            (line, "submission_id", unknown[label.submission_id])
            for line, label in good
            if label.submission_id in unknown
        ]
    if problems:
        problems.sort(key=lambda problem: problem[0])  # stable: a row's own order kept
        named = [(f"{path.name}:{line}: {field}", rule) for line, field, rule in problems]
        raise InvalidInput(named[:MAX_PROBLEMS], total=len(named))
    if not good:
        raise InvalidInput([(f"{path.name}", "holds no label")])
    return good


class _Lines(Generic[AnyStr]):
    """The lines of an open file, each read with the `MAX_ROW_CHARS` cap, numbered from 1.

    A row (`next_row` marks where one ends) may span lines, a CSV quoted cell's; the cap is on
    the row. A row past it raises `InvalidInput` naming ``FILE:LINE: what``, its first line,
    once ``MAX_ROW_CHARS + 1`` characters are read: the rest of it is never read.
    """

    def __init__(self, stream: IO[AnyStr], name: str, what: str) -> None:
        self.stream: IO[AnyStr] = stream
        self.name = name
        self.what = what
        self.number = 0
        self.row_start = 1
        self.row_size = 0

    def __iter__(self) -> Iterator[AnyStr]:
        return self

    def __next__(self) -> AnyStr:
        line: AnyStr = self.stream.readline(MAX_ROW_CHARS - self.row_size + 1)
        if not line:
            raise StopIteration
        self.number += 1
        self.row_size += len(line)
        if self.row_size > MAX_ROW_CHARS:
            unit = "bytes" if isinstance(line, bytes) else "characters"
            rule = f"longer than {MAX_ROW_CHARS} {unit} (a label needs a few thousand)"
            raise InvalidInput([(self.where(), rule)])
        return line

    def next_row(self) -> None:
        """The row read so far is whole: the next line starts a row."""
        self.row_start = self.number + 1
        self.row_size = 0

    def where(self) -> str:
        """``FILE:LINE: what`` of the row being read."""
        return f"{self.name}:{self.row_start}: {self.what}"


def _jsonl_rows(lines: _Lines[bytes]) -> Iterator[tuple[int, Any]]:
    for line in lines:
        number = lines.row_start
        lines.next_row()
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


def _csv_rows(lines: _Lines[str]) -> Iterator[tuple[int, Any]]:
    reader = csv.DictReader(lines, strict=True)
    header = _csv_record(lambda: reader.fieldnames, lines) or []
    unknown = [name for name in header if name not in COLUMNS and name not in EXPORTED_ONLY]
    if unknown:
        rule = f"unknown column(s) {', '.join(map(repr, unknown))}; columns: {', '.join(COLUMNS)}"
        raise InvalidInput([("line 1 (header)", rule)])
    lines.next_row()
    while (row := _csv_record(lambda: next(reader, None), lines)) is not None:
        yield lines.row_start, _from_cells(row)
        lines.next_row()


def _csv_record(read: Callable[[], R], lines: _Lines[str]) -> R:
    """``read()``, a CSV error named at the row it happened in."""
    try:
        return read()
    except csv.Error as error:
        unclosed = "end of data" in str(error)  # EOF inside quotes: "unexpected end of data"
        rule = UNCLOSED_RULE if unclosed else f"not valid CSV: {error}"
        raise InvalidInput([(lines.where(), rule)]) from None


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
