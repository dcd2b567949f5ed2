"""Tier 1 batched across submissions: BERTScore pairs per CPU-second, one submission at a time
(`SemanticScorer.score`, today's path per tier-1 task) against batches of many
(`SemanticScorer.score_many`, what the tier-1 batcher runs), on the bundled examples.

    python bench/text_batch.py [--submissions 64] [--batch 32] [--threads 1] [--quick]

A task's stream of submissions: ``--submissions`` distinct outputs drawn from the sentences of
the bundled examples' reviews and references, long (~500 words, as the PeerRead reviews) and
short (two sentences, as the other kinds' answers), each scored against the bundled PeerRead
task's references (cached first, as a worker has them after a task's first submission). Two
scorers over one model: one scores the outputs one at a time (`score`, today's path per tier-1
task), the other in batches of ``--batch`` (`score_many`); CPU time is the process's (every
torch thread counted). The F1 of both paths are compared (largest difference printed).

Last line: batched / one at a time, pairs per CPU-second on the short texts (goal >= 3).
"""

from __future__ import annotations

import argparse
import json
import random
import time
from collections.abc import Sequence

import torch
from _common import figure, parse_args, ratio, review, review_sentences, short_review

from evalq.metrics.semantic import SemanticScorer
from evalq.producer.cli.demo import EXAMPLES

Item = tuple[str, list[str]]


def references() -> list[str]:
    """The bundled PeerRead task's reference reviews."""
    tasks = json.loads((EXAMPLES / "tasks.json").read_text())
    found = [
        task["reference_outputs"] for task in tasks if len(task.get("reference_outputs", [])) > 1
    ]
    return list(found[0])


def outputs(count: int, *, long: bool, seed: int) -> list[str]:
    """``count`` distinct outputs of review prose, long or short."""
    rng, sentences = random.Random(seed), review_sentences()
    drawn: dict[str, None] = {}
    while len(drawn) < count:
        drawn[review(rng, 500, sentences) if long else short_review(rng, sentences)] = None
    return list(drawn)


def one_at_a_time(scorer: SemanticScorer, items: Sequence[Item]) -> tuple[float, list[float]]:
    started = time.process_time()
    scores = [f1 for text, references in items for f1 in scorer.score(text, references)]
    return time.process_time() - started, scores


def batched(scorer: SemanticScorer, items: Sequence[Item], batch: int) -> tuple[float, list[float]]:
    started = time.process_time()
    scores = []
    for start in range(0, len(items), batch):
        for row in scorer.score_many(items[start : start + batch]):
            scores += row
    return time.process_time() - started, scores


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--submissions", type=int, default=64, help="outputs per length")
    parser.add_argument("--batch", type=int, default=32, help="submissions per batch")
    parser.add_argument("--threads", type=int, default=1, help="torch intra-op threads")
    args = parse_args(parser, quick={"submissions": 8})
    torch.set_num_threads(args.threads)
    task_references = references()
    single, batching = SemanticScorer(), SemanticScorer()  # one model, caches of their own
    for scorer in (single, batching):
        scorer.score("warm up", task_references)  # the model's first call; references cached
    print(f"# {args.submissions} long and short outputs each, {len(task_references)} references;")
    print(f"# torch threads {args.threads}; batches of {args.batch}; CPU s of this process")
    ratios = {}
    for seed, (name, long) in enumerate((("long", True), ("short", False))):
        items = [
            (text, task_references) for text in outputs(args.submissions, long=long, seed=seed)
        ]
        pairs = len(items) * len(task_references)
        cpu_one, expected = one_at_a_time(single, items)
        cpu_many, got = batched(batching, items, args.batch)
        worst = max(abs(a - b) for a, b in zip(got, expected, strict=True))
        figure(f"{name}: pairs per CPU-s, one at a time", pairs / cpu_one)
        figure(f"{name}: pairs per CPU-s, batched", pairs / cpu_many)
        figure(f"{name}: max |F1 batched - F1 one at a time|", worst)
        ratios[name] = cpu_one / cpu_many
        figure(f"{name}: batched / one at a time (goal >= 3)", ratios[name], "x")
    ratio("short texts: batched / one at a time, pairs per CPU-s (goal >= 3)", ratios["short"], "x")


if __name__ == "__main__":
    main()
