"""CSV cells: strings a spreadsheet would run as formulas are quoted, numbers are left as data,
and reading a cell back undoes exactly what writing it did."""

from __future__ import annotations

import csv
import io

import pytest

from evalq.core.csv_cells import cell, read_cell, write_csv

FORMULAS = [
    '=HYPERLINK("http://evil.example","click")',
    "+1+1",
    "-2+3",
    "@SUM(1+1)",
    "\t=1+1",
    "\r=1+1",
    "=cmd|' /C calc'!A0",
    # the fifth probe: a sign after whitespace, or in a full-width / compatibility form
    " =1+1",
    "  @SUM(1+1)",
    "\n=1+1",
    "\n-2+3",
    "\r\n+1",
    " \t=1",
    "\u3000=1+1",  # an ideographic space
    "\u00a0=1+1",  # a no-break space
    '\uff1dHYPERLINK("http://evil.example")',  # full-width equals
    "\uff0b1+1",  # full-width plus
    "\uff0d2+3",  # full-width hyphen-minus
    "\uff20SUM(1)",  # full-width commercial at
    "\ufe66cmd",  # small equals sign
    "\ufe62cmd",  # small plus sign
    "\u207c1",  # superscript equals
    " \uff1d1",
]
AWKWARD = [
    *FORMULAS,
    "'=1+1",  # a genuine value with a quote before a formula
    "''@x",
    "'",
    "'tis plain",
    "plain, with a comma",
    'says "no"',
    "",
    "a=b",
    "-",
    "ok\r=1+1",  # a bare carriage return would end the record: the rest is a new one
    "two\nlines",
    "' =1",  # a quote, a space, then a formula
    "'\uff1d1",
]


@pytest.mark.parametrize("text", FORMULAS)
def test_a_formula_is_written_behind_one_quote(text: str) -> None:
    assert cell(text) == "'" + text


@pytest.mark.parametrize(
    "text",
    ["plain", "a=b", "'tis plain", "", "2026-11-24T10:00:00Z", " plain", "x\n=1", "\u3000text"],
)
def test_other_strings_are_written_as_they_are(text: str) -> None:
    assert cell(text) == text


@pytest.mark.parametrize("number", [-3.5, -1, 0, 2.25, True, None])
def test_numbers_booleans_and_none_are_data_not_formulas(number: object) -> None:
    assert cell(number) is number
    [row] = list(csv.reader(io.StringIO(write_csv(["x"], [{"x": number}]))))[1:]
    assert row == ["" if number is None else str(number)]


@pytest.mark.parametrize("text", AWKWARD)
def test_every_string_reads_back_as_it_was_written(text: str) -> None:
    written = write_csv(["value"], [{"value": text}])
    [row] = list(csv.DictReader(io.StringIO(written, newline="")))  # one record, however split
    assert read_cell(row["value"]) == text
    assert not row["value"].startswith(("=", "+", "-", "@", "\t", "\r", "\n", " "))


def test_a_cell_no_export_quoted_is_read_as_it_is() -> None:
    assert read_cell("'tis plain") == "'tis plain"  # a quote before text, not a formula
    assert read_cell("'=1+1") == "=1+1"  # what a spreadsheet would show too
    assert read_cell("''=1+1") == "'=1+1"
