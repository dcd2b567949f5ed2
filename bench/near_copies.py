"""Near-copies by similarity: how far apart real distinct runs are, and how near the attacks.

Sketches every bundled example run (`evalq.scoring.near_copy.sketch`) and every real ICLR 2017
review and abstract in bench/data, and prints the highest containment between two runs of one
task with different outputs (bundled), between two real texts, and the lowest containment of a
copy with a sentence appended; and the smallest usage difference between two bundled runs of one
task and one output (what `NEAR_COPY_TOLERANCE` must stay under). ``--quick``: one data file.
"""

from __future__ import annotations

import argparse
import itertools
import json
from pathlib import Path

from _common import figure, parse_args, ratio

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "bench" / "data"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--papers", type=int, default=0, help="0: every paper")
    args = parse_args(parser, quick={"papers": 5})
    from evalq.core.schemas import Submission
    from evalq.core.text_form import text_form
    from evalq.scoring.near_copy import NEAR_CONTAINMENT, containment, sketch

    runs = [
        json.loads(line)
        for path in sorted((ROOT / "src" / "evalq" / "examples").glob("*.jsonl"))
        for line in path.read_text().splitlines()
    ]
    sketches = {r["id"]: sketch(r) for r in runs}
    distinct, appended, usage = 0.0, 1.0, 1.0
    for a, b in itertools.combinations(runs, 2):
        if a["task_id"] != b["task_id"]:
            continue
        sa, sb = sketches[a["id"]], sketches[b["id"]]
        if text_form(a.get("output") or "") != text_form(b.get("output") or ""):
            if sa is not None and sb is not None:
                distinct = max(distinct, containment(sa, sb))
            continue
        ua, ub = Submission.model_validate(a).usage, Submission.model_validate(b).usage
        pairs = [
            (ua.tokens, ub.tokens),
            (ua.tool_calls, ub.tool_calls),
            (ua.iterations, ub.iterations),
            (ua.execution_time, ub.execution_time),
        ]
        apart = max(
            abs(x - y) / max(abs(x), abs(y))
            if x is not None and y is not None and (x or y)
            else float(x != y)
            for x, y in pairs
        )
        usage = min(usage, apart)
    for r in runs:
        longer = dict(r, output=f"{r.get('output') or ''} Every edge case was checked again.")
        sa, sb = sketches[r["id"]], sketch(longer)
        if sa is not None and sb is not None:
            appended = min(appended, containment(sa, sb))
    texts: list[str] = []
    for name in ("peerread_iclr2017_train.json", "peerread_iclr2017_heldout.json"):
        papers = json.loads((DATA / name).read_text())["papers"]
        papers = papers[: args.papers] if args.papers else papers
        texts += [r["text"] for p in papers for r in p["reviews"]] + [p["abstract"] for p in papers]
    real = [sketch({"output": t}) for t in texts]
    highest_real = max(
        containment(a, b)
        for a, b in itertools.combinations(real, 2)
        if a is not None and b is not None
    )
    figure("highest containment, bundled runs with different outputs", distinct)
    figure(f"highest containment, {len(texts)} real reviews and abstracts", highest_real)
    figure("lowest containment, a bundled run with a sentence appended", appended)
    figure("threshold (NEAR_CONTAINMENT)", NEAR_CONTAINMENT)
    figure("smallest usage difference, bundled runs of one output", usage)
    ratio(
        "separation: threshold over the highest distinct containment",
        NEAR_CONTAINMENT / max(distinct, highest_real),
    )


if __name__ == "__main__":
    main()
