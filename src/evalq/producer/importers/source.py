"""Reading an import file: bounded in size, JSON syntax errors located by line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from evalq.core.errors import InvalidInput

MAX_IMPORT_BYTES = 64 * 1024 * 1024
"""Largest file an import accepts (64 MiB): the whole document is parsed in memory."""
FILE = "(file)"
"""The field of a problem with the file as a whole."""


def line_field(line: int) -> str:
    """The field of a problem found at ``line`` of the file (printed as ``FILE:LINE``)."""
    return f"line {line}"


def too_large(max_bytes: int) -> InvalidInput:
    """The refusal of a file larger than ``max_bytes``."""
    return InvalidInput(
        [(FILE, f"larger than {max_bytes} bytes: an import file is read whole; split it")]
    )


def read_bounded(path: Path, *, max_bytes: int = MAX_IMPORT_BYTES) -> bytes:
    """The bytes of ``path``, read without ever holding more than ``max_bytes + 1``.

    Raises:
        InvalidInput: the file cannot be read, or is larger than ``max_bytes``.
    """
    try:
        with path.open("rb") as stream:
            raw = stream.read(max_bytes + 1)
    except OSError as error:
        raise InvalidInput([(FILE, f"cannot read: {error.strerror}")]) from error
    if len(raw) > max_bytes:
        raise too_large(max_bytes)
    return raw


def decode_text(raw: bytes) -> str:
    """``raw`` as UTF-8 text (a byte-order mark dropped).

    Raises:
        InvalidInput: it is not UTF-8 (the problem names the byte).
    """
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise InvalidInput([(FILE, f"not UTF-8 (byte {error.start})")]) from error


def parse_document(raw: bytes) -> Any:
    """The JSON document in ``raw``.

    Raises:
        InvalidInput: it is not UTF-8, or not JSON (the problem names the line and column).
    """
    try:
        return json.loads(decode_text(raw))
    except json.JSONDecodeError as error:
        raise InvalidInput(
            [(line_field(error.lineno), f"column {error.colno}: invalid JSON: {error.msg}")]
        ) from error


def parse_records(raw: bytes) -> list[tuple[str, Any]]:
    """The values in ``raw``, a JSON document or JSON Lines, each with where it was found.

    A JSON document is one record found at ``""``; JSON Lines are one record per non-blank
    line, found at ``"line N:"`` (`fields.child` names what is inside it).

    Raises:
        InvalidInput: it is not UTF-8, or a line is not JSON (named by its line).
    """
    text = decode_text(raw)
    try:
        return [("", json.loads(text))]
    except json.JSONDecodeError as error:
        if error.msg != "Extra data":
            raise InvalidInput(
                [(line_field(error.lineno), f"column {error.colno}: invalid JSON: {error.msg}")]
            ) from error
    records = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            records.append((f"{line_field(number)}:", json.loads(line)))
        except json.JSONDecodeError as error:
            raise InvalidInput(
                [(line_field(number), f"column {error.colno}: invalid JSON: {error.msg}")]
            ) from error
    return records


def read_document(path: Path, *, max_bytes: int = MAX_IMPORT_BYTES) -> Any:
    """The JSON document in ``path``, bounded as `read_bounded` reads.

    Raises:
        InvalidInput: as `read_bounded` and `parse_document` say.
    """
    return parse_document(read_bounded(path, max_bytes=max_bytes))
