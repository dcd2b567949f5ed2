"""The import formats by name: one file's bytes to its `ImportPlan`, the same at every door
(CLI, HTTP API, clients)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from evalq.core.errors import InvalidInput
from evalq.producer.importers.plan import ImportPlan
from evalq.producer.importers.source import MAX_IMPORT_BYTES, parse_document, parse_records

if TYPE_CHECKING:
    from evalq.producer.importers.generic import ColumnMap


def _promptfoo(raw: bytes) -> ImportPlan:
    from evalq.producer.importers.promptfoo import plan_promptfoo

    return plan_promptfoo(parse_document(raw))


def _inspect(raw: bytes) -> ImportPlan:
    """A ``.eval`` archive (told by its first bytes) or a ``.json`` log."""
    from evalq.producer.importers.inspect_log import ZIP_MAGIC, plan_inspect, plan_inspect_archive

    if raw.startswith(ZIP_MAGIC):
        return plan_inspect_archive(raw, max_bytes=MAX_IMPORT_BYTES)
    return plan_inspect(parse_document(raw))


def _openai_evals(raw: bytes) -> ImportPlan:
    from evalq.producer.importers.openai_evals import plan_openai_evals

    return plan_openai_evals(parse_records(raw))


PLANNERS: dict[str, Callable[[bytes], ImportPlan]] = {
    "promptfoo": _promptfoo,
    "inspect": _inspect,
    "openai-evals": _openai_evals,
}
"""The formats whose files map without options, by the name `evalq import NAME` uses."""


MAPPED = ("jsonl", "csv")
"""The formats whose files map by the columns a `ColumnMap` names."""
FORMATS = (*PLANNERS, *MAPPED)


def plan_file(name: str, raw: bytes, columns: ColumnMap | None = None) -> ImportPlan:
    """The plan of ``raw``, a file in the format ``name`` (``columns`` for jsonl and csv).

    Raises:
        InvalidInput: the format is unknown, a mapped format lacks its columns, or the file
            cannot be mapped (each problem named by its line or JSON path).
    """
    if name in MAPPED:
        if columns is None:
            raise InvalidInput([("output_col", f"{name} needs its columns named")])
        from evalq.producer.importers.generic import plan_csv, plan_jsonl

        return (plan_jsonl if name == "jsonl" else plan_csv)(raw, columns)
    planner = PLANNERS.get(name)
    if planner is None:
        raise InvalidInput([("format", f"must be one of {', '.join(FORMATS)}")])
    return planner(raw)
