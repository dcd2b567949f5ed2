"""PeerRead on real expert reviews: does the composite reward reviewing over copying?

Data: bench/data/peerread_iclr2017_heldout.json by default, excerpts of real ICLR 2017 reviews
from PeerRead's **dev** split (held out: none of its papers is in the train file the scoring was
measured on; bench/data/README.md); ``--data train`` reads the train excerpts instead. One
text-only PeerRead task per paper: its first two reviews are the references, its abstract the
context. Each submission goes through evalq's own path (tier 1: the injection scan by pattern and
by meaning, `scan`, then `text_result` on the output without what it marks, with the bundled
all-MiniLM-L6-v2 BERTScore on CPU; then `evaluate_submission`; no trace, no judge) and reports
the same execution time (60 s), so time does not separate them.

Submissions per task: the paper's third real review, the third review of another paper, the
paper's abstract, a generic praise, and four attacks: the first reference copied, a splice of
the two references' halves, the praise followed by the references' long words, and the context
restated with a one-line verdict.

Printed: each figure under main's rules (similarity ``min(1, sim / ceiling)``, task success a
step at 0.8, no copy measure) and evalq's, over all papers and over those not in the train file:
real review above another paper's review, above the abstract, ranked first of its four; Spearman
between the real review's composite and its reviewer's 1-10 score with a bootstrap interval; the
labels of real reviews and of other papers' reviews; and each attack: ranked above the real
review, marked as copying.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _common import figure, parse_args, ratio

DATA = Path(__file__).resolve().parent / "data"
FILES = {
    "heldout": DATA / "peerread_iclr2017_heldout.json",
    "train": DATA / "peerread_iclr2017_train.json",
}
PRAISE = (
    "This is a well written paper with a clear contribution. The experiments are convincing "
    "and the results are strong. I recommend acceptance."
)
SECONDS = 60.0
KINDS = ("real", "other", "abstract", "praise")
ATTACKS = ("copy", "splice", "praise+words", "restate", "zero-width copy", "homoglyph copy")
STUFFED = "other+30 words"
"""Another paper's review with a line of 30 of the references' words after it (keyword
stuffing): compared with the other paper's review alone, not with the real one."""
ZERO_WIDTH = "\u200b"
HOMOGLYPHS = str.maketrans("aeopcx", "\u0430\u0435\u043e\u0440\u0441\u0445")
"""Latin letters and the Cyrillic letters that render as they do."""


def invisible(text: str, every: int = 3) -> str:
    """``text`` with a zero-width space inside every ``every``-th word of 2+ letters."""
    out = []
    for i, word in enumerate(text.split(" ")):
        if i % every == 0 and len(word) >= 2:
            word = word[:1] + ZERO_WIDTH + word[1:]
        out.append(word)
    return " ".join(out)


def stuffing(paper: dict[str, Any], count: int = 30) -> str:
    """A line of ``count`` distinct words of the paper's references, longest first."""
    seen: list[str] = []
    for review in paper["reviews"][:2]:
        for word in review["text"].replace(",", " ").replace(".", " ").split():
            if word.isalpha() and len(word) >= 5 and word.lower() not in seen:
                seen.append(word.lower())
    return " ".join(sorted(seen, key=lambda w: (-len(w), w))[:count])


def attacks(paper: dict[str, Any]) -> dict[str, str]:
    """The four attacks of a submitter who wants a better number, built from the task."""
    first, second = (r["text"] for r in paper["reviews"][:2])
    half = lambda text: text.split()  # noqa: E731
    a, b = half(first), half(second)
    long_words: list[str] = []
    for text in (first, second):
        for word in text.replace(",", " ").replace(".", " ").split():
            if len(word) >= 8 and word.lower() not in long_words:
                long_words.append(word.lower())
    return {
        "copy": first,
        "splice": " ".join(a[: len(a) // 2] + b[len(b) // 2 :]),
        "praise+words": f"{PRAISE} {' '.join(long_words)}",
        "restate": f"{paper['abstract']} I recommend acceptance.",
        "zero-width copy": invisible(first),
        "homoglyph copy": first.translate(HOMOGLYPHS),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--papers", type=int, default=0, help="0: every paper in the data file")
    parser.add_argument("--data", choices=sorted(FILES), default="heldout")
    parser.add_argument("--no-semantic", action="store_true", help="lexical similarity only")
    parser.add_argument("--dump", type=Path, help="write every submission's figures (JSON) here")
    args = parse_args(parser, quick={"papers": 3})

    import torch

    torch.set_num_threads(1)
    from evalq.core.applicable import NO_JUDGE, NO_TRACE
    from evalq.core.normalise import normalise_time
    from evalq.core.profile import Profile
    from evalq.core.results import TierOutcome
    from evalq.core.schemas import Submission, Task
    from evalq.metrics.instructions import InstructionReader
    from evalq.metrics.semantic import SemanticScorer, default_model_path, go_offline
    from evalq.metrics.text import text_result
    from evalq.scoring.arena import compute_baseline
    from evalq.scoring.evaluation import evaluate_submission
    from evalq.scoring.injection import scan
    from evalq.scoring.peerread import peerread_composite

    go_offline()
    papers = json.loads(FILES[args.data].read_text())["papers"]
    papers = papers[: args.papers] if args.papers else papers
    seen = {p["id"] for p in json.loads(FILES["train"].read_text())["papers"]}
    profile = Profile()
    baseline = compute_baseline([], profile.arena)
    scorer = None if args.no_semantic else SemanticScorer(default_model_path())
    reader = None if scorer is None else InstructionReader(lambda s: scorer.read_many([s])[0])
    skipped = {
        "graph": TierOutcome(tier="graph", status="skipped", reason=NO_TRACE),
        "judge": TierOutcome(tier="judge", status="skipped", reason=NO_JUDGE),
    }

    def score(paper: dict[str, Any], output: str, name: str) -> dict[str, Any]:
        refs = [r["text"] for r in paper["reviews"][:2]]
        task = Task.model_validate(
            {
                "id": f"iclr17-{paper['id']}",
                "kind": "peerread",
                "reference_outputs": refs,
                "context": paper["abstract"],
            }
        )
        sub = Submission.model_validate(
            {
                "id": f"{paper['id']}-{re.sub('[^a-z0-9]+', '-', name)}",
                "task_id": task.id,
                "tool": "human",
                "model": "expert",
                "usage": {"total_tokens": len(output.split()), "execution_time": SECONDS},
                "output": output,
            }
        )
        found = scan(output, reader)  # as tier 1 reads it: patterns and meaning
        text = text_result(
            found.clean, refs, SECONDS, profile=profile.text, semantic=scorer, context=task.context
        )
        tiers = {"text": TierOutcome(tier="text", status="ok", result=text), **skipped}
        new = evaluate_submission(sub, task, tiers, baseline, profile, cost_usd=None)
        assert new.scores.peerread is not None
        raw = text.overall_similarity or 0.0
        ceiling = text.reference_agreement
        old_similarity = min(1.0, raw / ceiling) if ceiling else raw
        before = peerread_composite(  # main's rules: capped share of the ceiling, a step
            {
                "time_taken": normalise_time(SECONDS),
                "task_success": 1.0 if old_similarity >= 0.8 - 1e-9 else 0.0,
                "output_similarity": old_similarity,
            },
            profile.peerread,
        )
        return {
            "main": before.composite,
            "main_label": before.recommendation,
            "evalq": new.scores.peerread.composite,
            "evalq_label": new.scores.peerread.recommendation,
            "marked": new.scores.peerread.copied is not None,
            "injection": [mark.note() for mark in found.marks],
            "raw": raw,
            "floor": text.unrelated_agreement,
            "ceiling": ceiling,
        }

    rows = []
    for index, paper in enumerate(papers):
        other = papers[(index + 1) % len(papers)]
        outputs = {
            "real": paper["reviews"][2]["text"],
            "other": other["reviews"][2]["text"],
            "abstract": paper["abstract"],
            "praise": PRAISE,
            **attacks(paper),
            STUFFED: f"{other['reviews'][2]['text']}\n{stuffing(paper)}",
        }
        row = {name: score(paper, text, name) for name, text in outputs.items()}
        row["human"] = paper["reviews"][2]["recommendation"]
        row["unseen"] = paper["id"] not in seen
        rows.append(row)
        real = row["real"]
        print(
            f"paper {paper['id']:>4}{'' if row['unseen'] else ' (in train)'} floor "
            f"{real['floor']:.3f} ceiling {real['ceiling']:.3f} real raw {real['raw']:.3f}: "
            f"main {real['main']:.3f} ({real['main_label']}) -> evalq {real['evalq']:.3f} "
            f"({real['evalq_label']}); human {row['human']}",
            flush=True,
        )

    if args.dump:
        args.dump.write_text(
            json.dumps([{"paper": p["id"], **r} for p, r in zip(papers, rows, strict=True)])
        )
    unseen = [r for r in rows if r["unseen"]]
    print(f"\n{len(rows)} papers, {len(unseen)} not among the papers in bench/data's train file")
    print(f"{'figure':<44} {'main':>16} {'evalq (all)':>16} {'evalq (unseen)':>16}  goal")

    def count(rule: str, test: Callable[[dict[str, Any], str], float], group: list[Any]) -> str:
        total = sum(test(r, rule) for r in group)
        return f"{total:g}/{len(group)}" if group else "-"

    def above(kind: str) -> Callable[[dict[str, Any], str], float]:
        def test(row: dict[str, Any], rule: str) -> float:
            real, rival = row["real"][rule], row[kind][rule]
            return 1.0 if real > rival else 0.5 if real == rival else 0.0

        return test

    def stuffed_below(row: dict[str, Any], rule: str) -> float:
        plain, stuffed = row["other"][rule], row[STUFFED]
        return 1.0 if stuffed[rule] <= plain + 0.005 or stuffed["marked"] else 0.0

    def first(row: dict[str, Any], rule: str) -> float:
        return float(all(row["real"][rule] > row[k][rule] for k in KINDS if k != "real"))

    lines: list[tuple[str, Callable[[dict[str, Any], str], float], str]] = [
        ("real review > another paper's review", above("other"), ">= 95%"),
        ("real review > the paper's abstract", above("abstract"), "> 90%"),
        ("real review > generic praise", above("praise"), "100%"),
        ("real review ranked 1st of its 4", first, "> 90%"),
    ]
    for attack in ATTACKS:
        lines.append((f"real review > attack '{attack}'", above(attack), "100%"))
    lines.append((f"other's review > '{STUFFED}'", stuffed_below, "100% (or marked)"))
    for name, test, goal in lines:
        print(
            f"{name:<44} {count('main', test, rows):>16} {count('evalq', test, rows):>16} "
            f"{count('evalq', test, unseen):>16}  {goal}"
        )
    for row, paper in zip(rows, papers, strict=True):
        if not first(row, "evalq"):
            rivals = [k for k in KINDS if k != "real" and row[k]["evalq"] >= row["real"]["evalq"]]
            print(f"  paper {paper['id']}: the real review is not first (at or below: {rivals})")
    for attack in ATTACKS:
        marked = sum(r[attack]["marked"] for r in rows)
        print(
            f"{'attack ' + repr(attack) + ' marked as copying':<44} {'-':>16} "
            f"{f'{marked}/{len(rows)}':>16} {'':>16}  all"
        )
    for kind in KINDS:
        marked = sum(r[kind]["marked"] for r in rows)
        print(
            f"{kind + ' marked as copying':<44} {'-':>16} "
            f"{f'{marked}/{len(rows)}':>16} {'':>16}  "
            + ("all (it is the context)" if kind == "abstract" else "none")
        )
    for kind in (*KINDS, *ATTACKS, STUFFED):
        injected = sum(bool(r[kind]["injection"]) for r in rows)
        print(f"{kind + ' marked as an injection':<44} {'-':>16} {f'{injected}/{len(rows)}':>16}")
    for rule in ("main", "evalq"):
        for group, label in ((rows, "all"), (unseen, "unseen")):
            scored = [r for r in group if r["human"] is not None]
            rho, low, high = _spearman_interval(
                [r["real"][rule] for r in scored], [r["human"] for r in scored]
            )
            print(
                f"Spearman composite vs reviewer's 1-10, {rule}, {label}: "
                f"{rho:+.2f} [{low:+.2f}, {high:+.2f}] (n={len(scored)}; goal: above 0)"
            )
    humans = Counter(r["human"] for r in rows)
    print(
        "reviewers' 1-10 scores (real reviews):",
        ", ".join(
            f"{k}: {v}"
            for k, v in sorted(humans.items(), key=lambda kv: (kv[0] is None, kv[0] or 0))
        ),
    )
    for rule in ("main", "evalq"):
        for kind in ("real", "other", "abstract", "praise"):
            labels = Counter(r[kind][f"{rule}_label"] for r in rows)
            shown = ", ".join(f"{k} {v}" for k, v in sorted(labels.items()))
            print(f"labels, {kind:<8}, {rule}: {shown}")
    figure("mean floor (unrelated reviews' agreement)", _mean(r["real"]["floor"] for r in rows))
    figure("mean ceiling (references' agreement)", _mean(r["real"]["ceiling"] for r in rows))
    ratio(
        "real review ranked first of its four, evalq",
        sum(first(r, "evalq") for r in rows) / len(rows),
    )


def _mean(values: Any) -> float:
    items = [v for v in values if v is not None]
    return sum(items) / len(items) if items else math.nan


def _spearman_interval(a: list[float], b: list[float]) -> tuple[float, float, float]:
    """Spearman's rho with a 95% percentile bootstrap interval (2,000 resamples, seed 0)."""
    from scipy.stats import spearmanr

    def rho(x: list[float], y: list[float]) -> float:
        if len(x) < 3 or len(set(x)) < 2 or len(set(y)) < 2:
            return math.nan
        return float(spearmanr(x, y).statistic)

    point = rho(a, b)
    draw = random.Random(0)
    values = []
    for _ in range(2000):
        picks = [draw.randrange(len(a)) for _ in a]
        value = rho([a[i] for i in picks], [b[i] for i in picks])
        if not math.isnan(value):
            values.append(value)
    if not values:
        return point, math.nan, math.nan
    values.sort()
    return point, values[int(0.025 * len(values))], values[int(0.975 * len(values)) - 1]


if __name__ == "__main__":
    main()
