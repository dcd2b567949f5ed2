"""Write evalq's bundled example files from the sources in `evalq_examples/`.

Usage: ``python examples/generate.py [--out DIR]`` (default: ``src/evalq/examples``, where the
package ships them). The output is deterministic: the same sources always give byte-identical
files, and every task and submission is validated with evalq's own parsers before anything is
written.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from evalq_examples import arena, peerread, scylla, suite, tasks

from evalq.core.schemas import parse_submission, parse_task

HERE = Path(__file__).resolve().parent
BUNDLED = HERE.parent / "src" / "evalq" / "examples"  # package data: `evalq demo` reads them there
SUBMISSION_FILES = {
    "arena.jsonl": arena.submissions,
    "peerread.jsonl": peerread.submissions,
    "scylla.jsonl": scylla.submissions,
    "suite.jsonl": suite.submissions,
}


def _dump(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, sort_keys=False)


def build() -> dict[str, str]:
    """Every example file's name and text, validated."""
    task_list = tasks.tasks()
    for task in task_list:
        parse_task(task)
    files = {"tasks.json": json.dumps(task_list, ensure_ascii=False, indent=2) + "\n"}
    for name, make in SUBMISSION_FILES.items():
        rows = make()
        for row in rows:
            parse_submission(row)
        files[name] = "".join(_dump(row) + "\n" for row in rows)
    return files


def write(out: Path) -> list[Path]:
    """Write every example file into ``out``; returns the paths written."""
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in build().items():
        path = out / name
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=BUNDLED, help="output directory")
    args = parser.parse_args(argv)
    for path in write(args.out):
        print(f"wrote {path} ({path.stat().st_size:,} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
