"""Tier-1 text metrics per review pair: spec 001's reference style vs evalq, same local model.

    python bench/text_metrics.py [--pairs 12] [--words 500] [--threads 1]

Pairs of ~500-word reviews are drawn deterministically from the bundled PeerRead prose. The
reference style is spec 001's: a new TfidfVectorizer and a new torchmetrics BERTScore per call
(`tests.support.reference.reference_bertscore`), plus the word Jaccard. torchmetrics fails beyond
the model's 512 positions, so it gets each text cut at the last sentence that fits (less work
than evalq does: a conservative comparison). evalq runs `text_metrics` with one preloaded
`SemanticScorer` on the full texts (chunked): "cold" with an empty reference cache for every
pair, "warm" with the reference embeddings cached, as in a worker scoring many submissions of
one task. Scores on the cut texts are compared too. Last line: reference / evalq warm speed-up
(target >= 5).
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import time

from _common import figure, review, review_sentences


def fit(text: str, tokenizer: object, limit: int = 510) -> str:
    """``text`` cut at the last sentence boundary within ``limit`` content tokens."""
    sentences = text.split(". ")
    while len(tokenizer(". ".join(sentences), add_special_tokens=False)["input_ids"]) > limit:  # type: ignore[operator]
        sentences.pop()
    return ". ".join(sentences)


def reference_style(candidate: str, reference: str, model_path: str) -> float:
    """Spec 001's tier-1 similarities, every object built per call; returns BERTScore F1."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.metrics.pairwise import cosine_similarity
    from tests.support.reference import reference_bertscore

    matrix = TfidfVectorizer().fit_transform([candidate, reference])
    cosine_similarity(matrix[0:1], matrix[1:2])
    words_a, words_b = set(candidate.lower().split()), set(reference.lower().split())
    _ = len(words_a & words_b) / max(1, len(words_a | words_b))
    return reference_bertscore(candidate, reference, model_path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=12)
    parser.add_argument("--words", type=int, default=500)
    parser.add_argument("--threads", type=int, default=1, help="torch threads, both sides")
    args = parser.parse_args()

    import torch

    torch.set_num_threads(args.threads)  # 2 spinning OpenMP threads on a busy 2-core box: 10x

    from evalq.core.profile import profile_named
    from evalq.metrics.semantic import SemanticScorer, default_model_path, go_offline
    from evalq.metrics.text import text_metrics

    go_offline()
    rng, sentences = random.Random(500), review_sentences()
    pairs = [(review(rng, args.words, sentences), review(rng, args.words, sentences))]
    pairs += [
        (review(rng, args.words, sentences), review(rng, args.words, sentences))
        for _ in range(args.pairs - 1)
    ]
    model_path, profile = default_model_path(), profile_named("default").text
    scorer = SemanticScorer(model_path)
    tokenizer = scorer._tokenizer  # the same tokenizer torchmetrics loads
    cut = [(fit(a, tokenizer), fit(b, tokenizer)) for a, b in pairs]

    reference_style(*cut[0], model_path)  # warm-up: imports, file cache
    start = time.perf_counter()
    reference_scores = [reference_style(a, b, model_path) for a, b in cut]
    reference_s = (time.perf_counter() - start) / len(cut)

    text_metrics(pairs[0][0], [pairs[0][1]], profile=profile, semantic=scorer)  # warm-up
    cold = []
    for candidate, reference in pairs:
        scorer._cache.clear()
        scorer._cached_tokens = 0
        start = time.perf_counter()
        text_metrics(candidate, [reference], profile=profile, semantic=scorer)
        cold.append(time.perf_counter() - start)
    for _, reference in pairs:  # cache every reference, as a worker has after its first runs
        scorer.reference(reference)
    start = time.perf_counter()
    for candidate, reference in pairs:
        text_metrics(candidate, [reference], profile=profile, semantic=scorer)
    warm_s = (time.perf_counter() - start) / len(pairs)
    ours = [scorer.score(a, [b])[0] for a, b in cut]

    words = statistics.mean(len(a.split()) + len(b.split()) for a, b in pairs) / 2
    cut_words = statistics.mean(len(a.split()) + len(b.split()) for a, b in cut) / 2
    print(f"# {len(pairs)} pairs, ~{words:.0f} words per text (~{cut_words:.0f} for torchmetrics)")
    load = os.getloadavg()[0]
    print(f"# torch threads {torch.get_num_threads()}, load {load:.1f} on {os.cpu_count()} CPUs")
    figure(
        "max |evalq - torchmetrics| BERTScore F1 on the cut texts",
        max(abs(x - y) for x, y in zip(ours, reference_scores, strict=True)),
    )
    figure("reference style (new TF-IDF + new BERTScore per call) per pair", reference_s, "s")
    figure("evalq text_metrics per pair, reference cache cold", statistics.mean(cold), "s")
    figure("evalq text_metrics per pair, reference embeddings cached", warm_s, "s")
    figure("speed-up reference / evalq cold", reference_s / statistics.mean(cold))
    figure("speed-up reference / evalq warm (target >= 5)", reference_s / warm_s)


if __name__ == "__main__":
    main()
