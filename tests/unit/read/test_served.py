"""The judge's validation is attached in one place (`evalq.read.served`), so no door can serve a
judge score without it, or with another version of it."""

from __future__ import annotations

from pathlib import Path

SRC = Path(__file__).resolve().parents[3] / "src" / "evalq"


def test_only_the_served_reads_attach_the_judges_validation() -> None:
    attaching = sorted(
        str(path.relative_to(SRC))
        for path in SRC.rglob("*.py")
        if "with_judge_validation(" in path.read_text(encoding="utf-8")
    )
    # defined in judge_agreement, called in served: every door calls served
    assert attaching == ["read/judge_agreement.py", "read/served.py"]
