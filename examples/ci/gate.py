"""Submit a run set to an evalq API, wait for it, gate it, write JUnit and Markdown.

Usage: python gate.py RUNS.jsonl TASKS --by model --baseline A --candidate B
Environment: EVALQ_API_URL, EVALQ_API_KEY. Exit status: as `evalq gate` (0 pass, 1 regression,
2 unusable input, 3 too few data).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from evalq.producer.http import HttpClient
from evalq.read.gate import GateReport
from evalq.report.gate_files import junit, markdown


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("runs", type=Path)
    parser.add_argument("tasks")
    parser.add_argument("--by", required=True)
    parser.add_argument("--baseline", required=True)
    parser.add_argument("--candidate", required=True)
    parser.add_argument("--margin", type=float, default=0.0)
    parser.add_argument("--too-few", default="fail")
    parser.add_argument("--junit", type=Path, default=Path("evalq-gate.xml"))
    parser.add_argument("--markdown", type=Path, default=Path("evalq-gate.md"))
    parser.add_argument("--timeout", type=float, default=1800)
    args = parser.parse_args()
    runs = [json.loads(line) for line in args.runs.read_text().splitlines() if line.strip()]
    with HttpClient(os.environ["EVALQ_API_URL"], os.environ.get("EVALQ_API_KEY")) as client:
        ids = [s.id for s in client.submit_many(runs)]
        client.wait(ids, timeout=args.timeout)
        report = GateReport.model_validate(
            client.gate(
                args.tasks,
                by=args.by,
                baseline=args.baseline,
                candidate=args.candidate,
                margin=args.margin,
                too_few=args.too_few,
            )
        )
    args.junit.write_text(junit(report), encoding="utf-8")
    args.markdown.write_text(markdown(report), encoding="utf-8")
    print(report.message)
    return report.exit_status


if __name__ == "__main__":
    sys.exit(main())
