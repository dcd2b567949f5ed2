"""Any other tool's results as JSON Lines or CSV, mapped by columns named on the command line.

One submission per row (JSON object or CSV record; ``where`` keeps only the rows whose column
holds a value). The row's task, output and (optional) score, id, model, tool and token counts
are read from the columns a `ColumnMap` names (in JSON Lines, ``a.b`` reads ``b`` inside
``a``); a row without an id column is named by a digest of its content, so importing the same
file twice creates nothing new (docs/importers.md, "JSON Lines and CSV").
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, fields
from typing import Any

from evalq.core.errors import InvalidInput
from evalq.producer.importers.fields import child
from evalq.producer.importers.plan import (
    IMPORTED_GRADER,
    IMPORTED_SCORE,
    ImportPlan,
    PlanBuilder,
    source_id,
)
from evalq.producer.importers.source import FILE, decode_text, line_field, parse_records

PREFIX = "import"
MAX_ROW_DIGEST_CHARS = 24


@dataclass(frozen=True)
class ColumnMap:
    """Which column holds what; ``*_col`` fields name columns, the others are constants."""

    output_col: str
    task_col: str | None = None
    task_id: str | None = None
    score_col: str | None = None
    id_col: str | None = None
    model_col: str | None = None
    model: str = "unknown"
    tool_col: str | None = None
    tool: str = "import"
    input_tokens_col: str | None = None
    output_tokens_col: str | None = None
    total_tokens_col: str | None = None
    where: str | None = None
    """``COLUMN=VALUE``: only the rows whose COLUMN holds VALUE (its JSON text if not a string)."""

    def __post_init__(self) -> None:
        """Refuse a map without exactly one source of the task, or with half the token pair.

        Raises:
            InvalidInput: named by the option at fault.
        """
        if (self.task_col is None) == (self.task_id is None):
            raise InvalidInput(
                [("task_col", "name the task's column (--task-col) or one task (--task-id)")]
            )
        if (self.input_tokens_col is None) != (self.output_tokens_col is None):
            raise InvalidInput(
                [("input_tokens_col", "--input-tokens-col and --output-tokens-col go together")]
            )
        if self.where is not None and "=" not in self.where.strip("="):
            raise InvalidInput([("where", "must be COLUMN=VALUE")])

    @classmethod
    def of(cls, columns: Mapping[str, Any]) -> ColumnMap:
        """The map ``columns`` spells out (options unset may be absent or None).

        Raises:
            InvalidInput: an unknown option, a value that is not text, or a map `__init__`
                refuses; named by the option.
        """
        known = [spec.name for spec in fields(cls)]
        problems = [
            (name, f"unknown: the options are {', '.join(known)}")
            for name in columns
            if name not in known
        ]
        problems += [
            (name, "must be text")
            for name, value in columns.items()
            if value is not None and not isinstance(value, str)
        ]
        if not columns.get("output_col"):
            problems.append(("output_col", "missing: the column of the run's output"))
        if problems:
            raise InvalidInput(problems)
        return cls(**{name: value for name, value in columns.items() if value is not None})

    def kept(self, row: dict[str, Any]) -> bool:
        """Whether ``row`` passes ``where`` (a row without its column does not)."""
        if self.where is None:
            return True
        name, _, wanted = self.where.partition("=")
        try:
            value = lookup(row, name)
        except KeyError:
            return False
        return (value if isinstance(value, str) else json.dumps(value)) == wanted

    def columns(self) -> list[str]:
        """The columns named, in option order (the ``where`` column last)."""
        named = [
            value
            for spec in fields(self)
            if spec.name.endswith("_col") and (value := getattr(self, spec.name)) is not None
        ]
        return named + ([self.where.partition("=")[0]] if self.where else [])


def lookup(row: dict[str, Any], name: str) -> Any:
    """``row[name]``, or for ``a.b`` (no such key) ``row["a"]["b"]``.

    Raises:
        KeyError: the row has no such column.
    """
    if name in row:
        return row[name]
    value: Any = row
    for part in name.split("."):
        if not isinstance(value, dict) or part not in value:
            raise KeyError(name)
        value = value[part]
    return value


def plan_jsonl(raw: bytes, columns: ColumnMap) -> ImportPlan:
    """The submissions the JSON Lines in ``raw`` map to, one per line.

    Raises:
        InvalidInput: a line is not a JSON object, or a row cannot be mapped (``line N``).
    """
    records = parse_records(raw)
    if records and records[0][0] == "":  # the whole file is one JSON value
        if not isinstance(records[0][1], dict):
            raise InvalidInput([(FILE, "must be JSON Lines: one JSON object a line")])
        records = [(f"{line_field(1)}:", records[0][1])]
    return _plan(iter(records), columns)


def plan_csv(raw: bytes, columns: ColumnMap) -> ImportPlan:
    """The submissions the CSV in ``raw`` maps to, one per record after the header line.

    Raises:
        InvalidInput: a named column is not in the header, or a row cannot be mapped
            (``line N``, the line the record starts on).
    """
    reader = csv.reader(io.StringIO(decode_text(raw), newline=""))
    try:
        header = next(reader)
    except StopIteration:
        raise InvalidInput([(FILE, "empty: a CSV file needs a header line")]) from None
    except csv.Error as error:
        raise InvalidInput([(line_field(1), f"invalid CSV: {error}")]) from error
    absent = [name for name in columns.columns() if name not in header]
    if absent:
        raise InvalidInput(
            [(line_field(1), f"no column {name!r} in the header") for name in absent]
        )

    def rows() -> Iterator[tuple[str, Any]]:
        start = reader.line_num + 1
        while True:
            try:
                values = next(reader)
            except StopIteration:
                return
            except csv.Error as error:
                raise InvalidInput([(line_field(start), f"invalid CSV: {error}")]) from error
            if values:
                where = f"{line_field(start)}:"
                if len(values) != len(header):
                    yield where, f"has {len(values)} fields, the header {len(header)}"
                else:
                    yield where, dict(zip(header, values, strict=True))
            start = reader.line_num + 1

    return _plan(rows(), columns, text=True)


def _plan(rows: Iterator[tuple[str, Any]], columns: ColumnMap, *, text: bool = False) -> ImportPlan:
    builder = PlanBuilder()
    for where, row in rows:
        if isinstance(row, dict) and not columns.kept(row):
            continue
        try:
            data = _submission(row, where, columns, text=text)
        except InvalidInput as error:
            for name, rule in error.problems:
                builder.problem(name, rule)
            continue
        builder.task(where, {"id": data["task_id"]})
        builder.submission(where, data)
    return builder.plan()


def _submission(row: Any, where: str, columns: ColumnMap, *, text: bool) -> dict[str, Any]:
    if isinstance(row, str):
        raise InvalidInput([(where, row)])
    if not isinstance(row, dict):
        raise InvalidInput([(where, "must be a JSON object (one row)")])

    def cell(name: str | None) -> Any:
        if name is None:
            return None
        try:
            return lookup(row, name)
        except KeyError:
            raise InvalidInput(
                [(child(where, name), "missing: the row has no such column")]
            ) from None

    def label(name: str | None, default: str) -> str:
        value = cell(name)
        return default if value in (None, "") else str(value)

    output = cell(columns.output_col)
    row_id = cell(columns.id_col)
    if columns.id_col is not None and row_id in (None, ""):
        raise InvalidInput([(child(where, columns.id_col), "empty: the row's id")])
    digest = hashlib.sha256(json.dumps(row, sort_keys=True).encode()).hexdigest()
    data: dict[str, Any] = {
        "id": source_id(PREFIX, row_id if row_id is not None else digest[:MAX_ROW_DIGEST_CHARS]),
        "task_id": columns.task_id or label(columns.task_col, ""),
        "tool": label(columns.tool_col, columns.tool),
        "model": label(columns.model_col, columns.model),
        "output": output
        if isinstance(output, str)
        else ""
        if output is None
        else json.dumps(output),
        "usage": _usage(columns, cell, where, text=text),
        "metadata": {IMPORTED_GRADER: PREFIX},
    }
    if columns.score_col is not None:
        score = cell(columns.score_col)
        if score not in (None, ""):
            data["metadata"][IMPORTED_SCORE] = _number(score) if text else score
    return data


def _usage(columns: ColumnMap, cell: Any, where: str, *, text: bool) -> dict[str, int]:
    """The row's token counts; 0 in all when no token column is named (usage unknown)."""
    counts = {
        key: cell(name)
        for key, name in (
            ("input_tokens", columns.input_tokens_col),
            ("output_tokens", columns.output_tokens_col),
            ("total_tokens", columns.total_tokens_col),
        )
        if name is not None
    }
    if not counts:
        return {"total_tokens": 0}
    usage = {}
    for key, value in counts.items():
        count = _count(value) if text else value
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            name = getattr(columns, f"{key}_col")
            raise InvalidInput([(child(where, name), f"must be a token count, not {value!r}")])
        usage[key] = count
    return usage


def _count(value: str) -> int | str:
    try:
        return int(value)
    except ValueError:
        return value


def _number(value: str) -> float | str:
    """A CSV score: a number when it reads as one, else the text (a grade such as "C")."""
    try:
        number = float(value)
    except ValueError:
        return value
    return number if math.isfinite(number) else value
