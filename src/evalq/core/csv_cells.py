"""CSV that a spreadsheet opens as data: every CSV evalq writes goes through `write_csv`.

A spreadsheet reads a cell starting with ``=``, ``+``, ``-``, ``@``, a tab, a carriage return or
a line feed as a formula (and one whose sign comes after spaces, or in a full-width or other
compatibility form such as ``＝``), so a tool name, a label note or any other string a write
key sent could run when a person opens an export. As OWASP's "CSV Injection" page recommends,
such a string cell is written with a single quote before it, which spreadsheets take as "this
is text" and do not show. Numbers evalq writes (a ``-3.5`` score) are data and are written as
they are; only strings are neutralised.

`read_cell` undoes it exactly, so an export reads back unchanged (``evalq labels import``). To
keep that exact for a string that itself starts with quotes, a string is quoted when it starts
with any number of ``'`` followed by a formula character (``'=x`` is written ``''=x``), and a
cell is unquoted only when it has that shape after its first ``'``. Other strings that start
with a quote (``'tis``) are written and read as they are.
"""

from __future__ import annotations

import csv
import io
import unicodedata
from collections.abc import Iterable, Mapping, Sequence

FORMULA_LEADS = ("=", "+", "-", "@", "\t", "\r", "\n")
"""First characters that make a spreadsheet read a cell as a formula."""
FORMULA_SIGNS = ("=", "+", "-", "@")
TEXT_MARK = "'"


def _reads_as_formula(text: str) -> bool:
    """True when ``text``, with any leading quotes taken off, starts like a formula.

    Spreadsheets skip what comes before a formula's sign and read look-alike signs as the sign
    itself, so beyond the leads above a cell counts as a formula when its first character after
    any whitespace (a space, a line feed, an ideographic space) is a sign in any of its Unicode
    compatibility forms: the full-width ``＝``, the small ``﹢``, the superscript ``⁼`` (what
    NFKC folds to ``=``, ``+``, ``-`` or ``@``).
    """
    rest = text.lstrip(TEXT_MARK)
    if rest.startswith(FORMULA_LEADS):
        return True
    first = rest.lstrip()[:1]
    return unicodedata.normalize("NFKC", first).startswith(FORMULA_SIGNS)


def cell(value: object) -> object:
    """What is written for ``value``: a string that reads as a formula behind one quote; every
    other value (numbers, booleans, None) as it is."""
    if isinstance(value, str) and _reads_as_formula(value):
        return TEXT_MARK + value
    return value


def read_cell(text: str) -> str:
    """The string `cell` wrote as ``text``: its first quote dropped when `cell` added it."""
    if text.startswith(TEXT_MARK) and _reads_as_formula(text[1:]):
        return text[1:]
    return text


def write_csv(columns: Sequence[str], rows: Iterable[Mapping[str, object]]) -> str:
    """A header of ``columns`` then one line per row (None as an empty cell), each string
    cell neutralised by `cell`.

    Lines end with ``\\r\\n`` (RFC 4180): `csv` quotes a cell holding a character of the line
    ending, and with ``\\n`` alone a carriage return inside a cell was written bare, which
    readers take for the end of the record, so the rest of the cell started a new record (and
    a formula after it was not behind the quote).
    """
    out = io.StringIO(newline="")
    writer = csv.DictWriter(out, fieldnames=columns, lineterminator="\r\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({name: cell(value) for name, value in row.items()})
    return out.getvalue()
