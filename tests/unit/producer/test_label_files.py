"""Label files: CSV and JSONL read with bad rows named by line, and exports that read back."""

from __future__ import annotations

import csv
import io
import json
import tracemalloc
from datetime import UTC, datetime
from pathlib import Path

import pytest

from evalq.core.errors import InvalidInput
from evalq.core.labels import MAX_LABELS, Label
from evalq.producer.label_files import MAX_ROW_CHARS, read_labels, write_labels

HEADER = "submission_id,labeller,technical_accuracy,constructiveness,recommendation,passed,note\n"


def test_csv_rows_become_labels_with_their_lines(tmp_path: Path) -> None:
    path = tmp_path / "l.csv"
    path.write_text(
        HEADER + 'r1,ann,4,,accept,,"two\nlines"\n' + "r2,ann,,2,,fail,\n" + "r1,bob,5,5,,,\n"
    )
    labels = read_labels(path)
    assert [line for line, _ in labels] == [2, 4, 5]  # the quoted note spans lines 2-3
    first = labels[0][1]
    assert first.scores == {"technical_accuracy": 4} and first.recommendation == "accept"
    assert first.note == "two\nlines" and first.passed is None
    assert labels[1][1].passed is False and labels[1][1].scores == {"constructiveness": 2}


def test_every_bad_csv_row_is_named_and_nothing_is_returned(tmp_path: Path) -> None:
    path = tmp_path / "bad.csv"
    path.write_text(
        HEADER
        + "r1,ann,4,,,,\n"
        + "r2,ann,7,,,,\n"  # line 3: out of scale
        + "r3,,3,,,,\n"  # line 4: no labeller
        + "r1,ann,2,,,,\n"  # line 5: ann labels r1 twice
        + "r4,ann,3.5,,,maybe,\n"  # line 6: not an integer, not a flag
    )
    with pytest.raises(InvalidInput) as caught:
        read_labels(path)
    fields = [field for field, _ in caught.value.problems]
    assert fields == [
        "bad.csv:3: scores.technical_accuracy",
        "bad.csv:4: labeller",
        "bad.csv:5: labeller",
        "bad.csv:6: scores.technical_accuracy",
        "bad.csv:6: passed",
    ]
    assert "(line 2)" in caught.value.problems[2][1]


def test_an_unknown_column_is_named_before_any_row(tmp_path: Path) -> None:
    path = tmp_path / "l.csv"
    path.write_text("submission_id,labeller,constructivness\nr1,ann,4\n")
    with pytest.raises(InvalidInput) as caught:
        read_labels(path)
    [(field, rule)] = caught.value.problems
    assert field == "line 1 (header)" and "'constructivness'" in rule


def test_jsonl_lines_are_named_too(tmp_path: Path) -> None:
    path = tmp_path / "l.jsonl"
    good = '{"submission_id": "r1", "labeller": "ann", "passed": true}'
    path.write_text(good + "\n\n{not json\n" + '{"submission_id": "r2", "labeller": "ann"}\n')
    with pytest.raises(InvalidInput) as caught:
        read_labels(path)
    assert [f.split(": ")[0] for f, _ in caught.value.problems] == ["l.jsonl:3", "l.jsonl:4"]
    path.write_text(good + "\n")
    [(line, label)] = read_labels(path)
    assert line == 1 and label.passed is True


@pytest.mark.parametrize("label_format", ["csv", "jsonl"])
def test_an_export_reads_back_as_the_same_labels(tmp_path: Path, label_format: str) -> None:
    at = datetime(2026, 11, 24, tzinfo=UTC)
    stored = [
        Label(
            submission_id="r1",
            task_id="t",
            labeller="ann",
            scores={"technical_accuracy": 2, "planning_rationality": 5},
            recommendation="reject",
            passed=True,
            note='says "no", twice',
            created_at=at,
            updated_at=at,
        ),
        Label(
            submission_id="r2",
            task_id="t",
            labeller="bob",
            scores={},
            recommendation=None,
            passed=False,
            note=None,
            created_at=at,
            updated_at=at,
        ),
    ]
    path = tmp_path / f"out.{label_format}"
    path.write_text(write_labels(stored, label_format))  # type: ignore[arg-type]
    again = [label for _, label in read_labels(path)]
    wanted = ("submission_id", "labeller", "scores", "recommendation", "passed", "note")
    assert [label.model_dump(include=set(wanted)) for label in again] == [
        label.model_dump(include=set(wanted)) for label in stored
    ]


def test_a_csv_export_quotes_formulas_for_spreadsheets_and_reads_back_exactly(
    tmp_path: Path,
) -> None:
    at = datetime(2026, 11, 24, tzinfo=UTC)
    notes = [
        '=HYPERLINK("http://evil.example","open")',
        "-1+2",
        "@SUM(1+1)",
        "'=already quoted by its writer",
        "'tis fine",
        "fine\r=cmd|' /C calc'!A0",  # a bare CR would start a record with the formula
    ]
    stored = [
        Label(
            submission_id=f"r{number}",
            task_id="t",
            labeller="ann",
            scores={"technical_accuracy": 2},
            recommendation=None,
            passed=None,
            note=note,
            created_at=at,
            updated_at=at,
        )
        for number, note in enumerate(notes)
    ]
    text = write_labels(stored, "csv")
    cells = list(csv.DictReader(io.StringIO(text, newline="")))
    assert [c["note"] for c in cells] == [
        "'" + notes[0],
        "'" + notes[1],
        "'" + notes[2],
        "''=already quoted by its writer",
        "'tis fine",
        notes[5],
    ]
    assert {c["technical_accuracy"] for c in cells} == {"2"}  # a number, not quoted
    path = tmp_path / "out.csv"
    path.write_bytes(text.encode())
    again = [label for _, label in read_labels(path)]
    assert [label.note for label in again] == notes
    assert [label.scores for label in again] == [{"technical_accuracy": 2}] * len(notes)
    as_jsonl = [json.loads(line) for line in write_labels(stored, "jsonl").splitlines()]
    assert [row["note"] for row in as_jsonl] == notes  # JSON is exact


def test_a_200000_row_file_is_refused_in_bounded_memory_before_it_is_parsed_whole(
    tmp_path: Path,
) -> None:
    row = '{"submission_id": "run-%d", "labeller": "ann", "scores": {"constructiveness": 4}}\n'
    jsonl = tmp_path / "many.jsonl"
    csv_file = tmp_path / "many.csv"
    with jsonl.open("w") as out:
        out.writelines(row % i for i in range(200_000))
    with csv_file.open("w") as out:
        out.write("submission_id,labeller,constructiveness\n")
        out.writelines(f"run-{i},ann,4\n" for i in range(200_000))
    for path, past in ((jsonl, 1001), (csv_file, 1002)):
        assert path.stat().st_size > 3_000_000
        tracemalloc.start()
        try:
            with pytest.raises(InvalidInput) as caught:
                read_labels(path)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        [(field, rule)] = caught.value.problems
        assert field == path.name and f"more than {MAX_LABELS} labels" in rule
        assert f"line {past} is past them" in rule  # refused at the first row past the limit
        assert peak < 2_000_000  # a whole parse holds 200,000 labels: hundreds of MB
    # At the limit the file is read whole and stored all or nothing, as before.
    with (tmp_path / "limit.jsonl").open("w") as out:
        out.writelines(row % i for i in range(MAX_LABELS))
    assert len(read_labels(tmp_path / "limit.jsonl")) == MAX_LABELS


def test_an_unterminated_quote_is_named_at_its_row_and_nothing_is_returned(
    tmp_path: Path,
) -> None:
    """A lenient reader made one note of every row after the quote, and imported it."""
    path = tmp_path / "open.csv"
    path.write_text(
        HEADER + "r1,ann,4,,,,fine\n" + 'r2,ann,3,,,,"never closed\n' + "r3,ann,2,,,,\n"
    )
    with pytest.raises(InvalidInput) as caught:
        read_labels(path)
    [(field, rule)] = caught.value.problems
    assert field == "open.csv:3: (row)"
    assert "never closed" in rule and "unterminated" in rule
    # a quote closed rows later, where nothing may follow it, is malformed quoting
    path.write_text(HEADER + 'r1,ann,4,,,,"swallows\nr2,ann,3,,,,"x"y\n')
    with pytest.raises(InvalidInput) as caught:
        read_labels(path)
    [(field, rule)] = caught.value.problems
    assert field == "open.csv:2: (row)" and rule.startswith("not valid CSV:")


@pytest.mark.parametrize("suffix", ["csv", "jsonl"])
def test_an_oversized_cell_is_named_at_its_row(tmp_path: Path, suffix: str) -> None:
    """Past `csv`'s own limit it ended "unexpected Error: field larger than field limit"."""
    note = "n" * (MAX_ROW_CHARS + 10)
    path = tmp_path / f"big.{suffix}"
    good = {"submission_id": "r1", "labeller": "ann"}
    if suffix == "csv":
        path.write_text(HEADER + "r1,ann,4,,,,\n" + f'r2,ann,3,,,,"{note}"\n')
    else:
        path.write_text(json.dumps(good) + "\n" + json.dumps(good | {"note": note}) + "\n")
    with pytest.raises(InvalidInput) as caught:
        read_labels(path)
    [(field, rule)] = caught.value.problems
    assert field == ("big.csv:3: (row)" if suffix == "csv" else "big.jsonl:2: (line)")
    assert f"longer than {MAX_ROW_CHARS}" in rule


@pytest.mark.parametrize("suffix", ["csv", "jsonl"])
def test_a_huge_line_is_refused_in_bounded_memory(tmp_path: Path, suffix: str) -> None:
    """A 300 MiB line cost about 1 GiB; here 32 MiB, read no further than the cap."""
    path = tmp_path / f"huge.{suffix}"
    with path.open("w") as out:
        out.write(HEADER if suffix == "csv" else "")
        out.write('r1,ann,4,,,,"' if suffix == "csv" else '{"submission_id": "r1", "note": "')
        for _ in range(32):
            out.write("x" * 2**20)
        out.write('"\n' if suffix == "csv" else '"}\n')
    tracemalloc.start()
    try:
        with pytest.raises(InvalidInput) as caught:
            read_labels(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    [(field, rule)] = caught.value.problems
    assert field.startswith(f"huge.{suffix}:") and f"longer than {MAX_ROW_CHARS}" in rule
    assert peak < 2_000_000, peak


def test_quoted_cells_spanning_lines_still_read(tmp_path: Path) -> None:
    """Strict reading keeps what the export writes: quotes, doubled quotes, line breaks."""
    path = tmp_path / "ok.csv"
    path.write_text(HEADER + 'r1,ann,4,,,,"says ""hi""\nand, then\r\nmore"\n')
    [(line, label)] = read_labels(path)
    assert line == 2 and label.note == 'says "hi"\nand, then\r\nmore'
