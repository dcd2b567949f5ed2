"""Reading an import file: bounded in size, JSON syntax errors located by line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from evalq.core.errors import InvalidInput

MAX_IMPORT_BYTES = 64 * 1024 * 1024
"""Largest file `read_document` accepts (64 MiB): the whole document is parsed in memory."""
FILE = "(file)"
"""The field of a problem with the file as a whole."""


def line_field(line: int) -> str:
    """The field of a problem found at ``line`` of the file (printed as ``FILE:LINE``)."""
    return f"line {line}"


def read_document(path: Path, *, max_bytes: int = MAX_IMPORT_BYTES) -> Any:
    """The JSON document in ``path``, read without ever holding more than ``max_bytes + 1``.

    Raises:
        InvalidInput: the file cannot be read, is larger than ``max_bytes``, is not UTF-8, or
            is not JSON (the problem names the line and column).
    """
    try:
        with path.open("rb") as stream:
            raw = stream.read(max_bytes + 1)
    except OSError as error:
        raise InvalidInput([(FILE, f"cannot read: {error.strerror}")]) from error
    if len(raw) > max_bytes:
        raise InvalidInput(
            [(FILE, f"larger than {max_bytes} bytes: an import file is read whole; split it")]
        )
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise InvalidInput([(FILE, f"not UTF-8 (byte {error.start})")]) from error
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise InvalidInput(
            [(line_field(error.lineno), f"column {error.colno}: invalid JSON: {error.msg}")]
        ) from error
