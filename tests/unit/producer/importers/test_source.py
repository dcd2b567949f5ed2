"""Reading an import file: the size cap and located syntax errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalq.core.errors import InvalidInput
from evalq.producer.importers.source import read_document


def test_a_file_over_the_cap_is_refused_before_it_is_parsed(tmp_path: Path) -> None:
    path = tmp_path / "big.json"
    path.write_text('{"padding": "' + "x" * 200 + '"}')
    with pytest.raises(InvalidInput) as refused:
        read_document(path, max_bytes=100)
    assert refused.value.problems == [
        ("(file)", "larger than 100 bytes: an import file is read whole; split it")
    ]
    assert read_document(path, max_bytes=1000) == {"padding": "x" * 200}


def test_a_syntax_error_names_its_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text('{\n  "a": 1\n  "b": 2\n}\n')
    with pytest.raises(InvalidInput) as refused:
        read_document(path)
    assert refused.value.problems == [("line 3", "column 3: invalid JSON: Expecting ',' delimiter")]
