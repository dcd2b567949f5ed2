"""PeerRead on real expert reviews: does the composite tell a real review from the wrong one?

Data: bench/data/peerread_iclr2017_train.json, excerpts of real ICLR 2017 reviews (PeerRead's
train split; bench/data/README.md). One text-only PeerRead task per paper: its first two reviews
are the references, its abstract the context. Four submissions per task, each through evalq's
own path (tier 1 `text_result` with the bundled all-MiniLM-L6-v2 BERTScore on CPU, then
`evaluate_submission`; no trace, no judge): the paper's third real review, the third review of
another paper, the paper's abstract, and a generic three-line praise. Every submission reports
the same execution time (60 s), so time does not separate them.

Printed side by side: the composite and its recommendation under main's rules before issue 25
(raw similarity, task success at raw similarity >= 0.8, coordination_quality counted 0) and
evalq's (trace inputs not applicable to a text-only task, similarity read relative to the two
references' agreement). Figures: same-paper vs wrong-paper accuracy (target >= 0.95), generic
praise ranked below the real review (target 100%), real review above the abstract (tier 1 cannot
do this: only a judge can), the spread of recommendation labels for real reviews, and Spearman
between the real reviews' composite and the reviewer's own 1-10 recommendation.
"""

from __future__ import annotations

import argparse
import json
import math
from collections import Counter
from pathlib import Path
from typing import Any

from _common import figure, parse_args, ratio

DATA = Path(__file__).resolve().parent / "data" / "peerread_iclr2017_train.json"
PRAISE = (
    "This is a well written paper with a clear contribution. The experiments are convincing "
    "and the results are strong. I recommend acceptance."
)
SECONDS = 60.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--papers", type=int, default=0, help="0: every paper in the data file")
    args = parse_args(parser, quick={"papers": 3})

    import torch

    torch.set_num_threads(1)
    from evalq.core.applicable import NO_JUDGE, NO_TRACE
    from evalq.core.normalise import normalise_time
    from evalq.core.profile import Profile
    from evalq.core.results import TierOutcome
    from evalq.core.schemas import Submission, Task
    from evalq.metrics.semantic import SemanticScorer, default_model_path, go_offline
    from evalq.metrics.text import text_result
    from evalq.scoring.arena import compute_baseline
    from evalq.scoring.evaluation import evaluate_submission
    from evalq.scoring.peerread import peerread_composite

    go_offline()
    papers = json.loads(DATA.read_text())["papers"]
    papers = papers[: args.papers] if args.papers else papers
    profile = Profile()
    baseline = compute_baseline([], profile.arena)
    scorer = SemanticScorer(default_model_path())
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
                "id": f"{paper['id']}-{name}",
                "task_id": task.id,
                "tool": "human",
                "model": "expert",
                "usage": {"total_tokens": len(output.split()), "execution_time": SECONDS},
                "output": output,
            }
        )
        text = text_result(output, refs, SECONDS, profile=profile.text, semantic=scorer)
        tiers = {"text": TierOutcome(tier="text", status="ok", result=text), **skipped}
        new = evaluate_submission(sub, task, tiers, baseline, profile, cost_usd=None)
        assert new.scores.peerread is not None
        raw = text.overall_similarity or 0.0
        before = peerread_composite(  # main's rules: raw similarity, coordination counted 0
            {
                "time_taken": normalise_time(SECONDS),
                "task_success": 1.0 if raw >= profile.text.success_threshold - 1e-9 else 0.0,
                "output_similarity": raw,
                "coordination_quality": 0.0,
            },
            profile.peerread,
        )
        return {
            "raw": raw,
            "ceiling": text.reference_agreement,
            "new": new.scores.peerread.composite,
            "new_label": new.scores.peerread.recommendation,
            "old": before.composite,
            "old_label": before.recommendation,
        }

    rows = []
    for index, paper in enumerate(papers):
        other = papers[(index + 1) % len(papers)]
        rows.append(
            {
                "human": paper["reviews"][2]["recommendation"],
                "real": score(paper, paper["reviews"][2]["text"], "real"),
                "wrong": score(paper, other["reviews"][2]["text"], "wrong"),
                "abstract": score(paper, paper["abstract"], "abstract"),
                "praise": score(paper, PRAISE, "praise"),
            }
        )
        real = rows[-1]["real"]
        print(
            f"paper {paper['id']:>4} ceiling {real['ceiling']:.3f} real raw {real['raw']:.3f} "
            f"composite main {real['old']:.3f} ({real['old_label']}) -> "
            f"{real['new']:.3f} ({real['new_label']}); human {rows[-1]['human']}",
            flush=True,
        )

    def share(test: Any) -> float:
        return sum(1 for row in rows if test(row)) / len(rows)

    same = share(lambda r: r["real"]["raw"] > r["wrong"]["raw"])
    praise = share(lambda r: r["praise"]["new"] < r["real"]["new"])
    abstract = share(lambda r: r["real"]["raw"] > r["abstract"]["raw"])
    figure("papers", len(rows))
    figure(
        "mean reference agreement (the human ceiling)", _mean(r["real"]["ceiling"] for r in rows)
    )
    figure("mean raw similarity, third real review", _mean(r["real"]["raw"] for r in rows))
    figure("real review above a wrong-paper review (raw)", same)
    figure("generic praise below the real review (composite)", praise)
    figure("real review above the paper's abstract (raw; judge needed)", abstract)
    for rule in ("old", "new"):
        for kind in ("real", "wrong", "abstract", "praise"):
            labels = Counter(r[kind][f"{rule}_label"] for r in rows)
            shown = ", ".join(f"{k} {v}" for k, v in sorted(labels.items()))
            print(f"labels, {kind:<8}, {'main' if rule == 'old' else 'evalq'}: {shown}")
        rho = _spearman(
            [r["real"][rule] for r in rows if r["human"] is not None],
            [r["human"] for r in rows if r["human"] is not None],
        )
        figure(f"Spearman composite vs human recommendation, {rule} rules", rho)
    ratio("same-paper over wrong-paper accuracy (target >= 0.95)", same)


def _mean(values: Any) -> float:
    items = [v for v in values if v is not None]
    return sum(items) / len(items) if items else math.nan


def _spearman(a: list[float], b: list[float]) -> float:
    from scipy.stats import spearmanr

    if len(a) < 3 or len(set(a)) < 2 or len(set(b)) < 2:
        return math.nan
    return float(spearmanr(a, b).statistic)


if __name__ == "__main__":
    main()
