"""Reports people look at: a self-contained HTML page, or the same data as CSV / JSON.

`report_data` reads a task's evaluations from the store; `render` turns them into text.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from evalq.core.errors import InvalidInput
from evalq.read.report_data import ReportData, report_data
from evalq.report.page import render_html
from evalq.report.tabular import render_csv, render_json

Format = Literal["html", "csv", "json"]
RENDERERS: dict[str, Callable[[ReportData], str]] = {
    "html": render_html,
    "csv": render_csv,
    "json": render_json,
}


def render(data: ReportData, fmt: Format | str = "html") -> str:
    """``data`` as an HTML page, CSV rows or JSON.

    Raises:
        InvalidInput: an unknown format.
    """
    if fmt not in RENDERERS:
        raise InvalidInput([("format", f"one of {', '.join(RENDERERS)}")])
    return RENDERERS[fmt](data)


__all__ = ["RENDERERS", "Format", "ReportData", "render", "report_data"]
