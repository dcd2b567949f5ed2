"""The source cites only what a reader of the repository can open: its own docs.

A design document outside the repository (DESIGN.md) or an issue number ("issue 18") tells a
reader nothing; the decisions they stood for are in docs/ (docs/scoring.md lists the
departures from the specifications, docs/architecture.md and docs/reliability.md the rest).
"""

from __future__ import annotations

import re
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "evalq"
DOCS = SRC.parents[1] / "docs"
FORBIDDEN = re.compile(r"DESIGN\.md|\bissues? #?\d+", re.IGNORECASE)
CITED_DOC = re.compile(r"docs/[\w/.-]+\.md")


def _source_files() -> list[Path]:
    return sorted(p for p in SRC.rglob("*") if p.is_file() and p.suffix in {".py", ".toml"})


def test_no_source_file_cites_a_design_document_or_an_issue() -> None:
    found = [
        f"{path.relative_to(SRC.parents[1])}:{number}: {line.strip()}"
        for path in _source_files()
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if FORBIDDEN.search(line)
    ]
    assert not found, "cite docs/ instead:\n" + "\n".join(found)


def test_every_doc_the_source_cites_exists() -> None:
    cited = {m for p in _source_files() for m in CITED_DOC.findall(p.read_text(encoding="utf-8"))}
    assert cited  # the source does cite its docs
    missing = sorted(doc for doc in cited if not (DOCS.parent / doc).is_file())
    assert not missing
