"""Reading an import file: the size cap and located syntax errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalq.core.errors import InvalidInput
from evalq.producer.importers.fields import child
from evalq.producer.importers.source import parse_records, read_document


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


def test_json_lines_are_records_named_by_their_line() -> None:
    raw = b'{"a": 1}\n\n[2, 3]\n'
    assert parse_records(raw) == [("line 1:", {"a": 1}), ("line 3:", [2, 3])]
    assert parse_records(b'{"a":\n 1}') == [("", {"a": 1})]
    with pytest.raises(InvalidInput) as refused:
        parse_records(b'{"a": 1}\n{"b": 2}\n{"c": }\n')
    assert refused.value.problems == [("line 3", "column 7: invalid JSON: Expecting value")]


def test_a_path_inside_a_record_reads_after_its_line() -> None:
    assert child("line 3:", "data") == "line 3: data"
    assert child("line 3: data", "[0]") == "line 3: data[0]"
    assert child("samples[0]", "epoch") == "samples[0].epoch"
    assert child("", "eval") == "eval"
