"""Tier-1 text metrics per review pair: spec 001's reference style vs evalq, and the FLOP floor.

    python bench/text_metrics.py [--pairs 12] [--words 500] [--short-pairs 24] [--threads 1]
                                 [--matmul-size 2048] [--quick]

Pairs of ~500-word reviews ("long") and of two-sentence outputs ("short", the pipeline
benchmarks' tier-1 input) are drawn deterministically from the bundled PeerRead prose.

1. Reference style (spec 001): a new TfidfVectorizer and a new torchmetrics BERTScore per call
   (`tests.support.reference.reference_bertscore`), plus the word Jaccard. torchmetrics fails
   beyond the model's 512 positions, so on long pairs it gets each text cut at the last sentence
   that fits (less work than evalq does: a conservative comparison). evalq runs `text_metrics`
   with one preloaded `SemanticScorer` on the full texts (chunked): "cold" with empty caches for
   every pair, "warm" with the reference embeddings cached, as in a worker scoring many
   submissions of one task.
2. TF-IDF alone: a vectorizer fitted per pair (the previous implementation) vs evalq's closed
   form, and their largest difference.
3. The FLOP floor: this CPU's matmul rate on the same threads (fp32 and bf16, 2048^3), the
   FLOPs of the encoder passes evalq runs for the candidates (every chunk, from the model's
   config) plus the similarity matrix, and floor time / evalq warm time per pair, long and
   short, fp32 and bf16, with bf16's largest |F1 - F1 fp32| (the option is rejected above 0.005).
4. Micro-batching (measured, not adopted): short candidates encoded 8 per model pass vs one.

Last line: reference / evalq warm speed-up on long pairs at the default precision (target >= 5).
"""

from __future__ import annotations

import argparse
import math
import os
import random
import statistics
import time
from collections.abc import Callable, Sequence
from typing import Any

from _common import figure, parse_args, ratio, review, review_sentences, short_review

BF16_TOLERANCE = 0.005  # largest |dF1| against fp32 at which bf16 may be offered at all
Pair = tuple[str, str]


def fit(text: str, tokenizer: Any, limit: int = 510) -> str:
    """``text`` cut at the last sentence boundary within ``limit`` content tokens."""
    sentences = text.split(". ")
    while len(tokenizer(". ".join(sentences), add_special_tokens=False)["input_ids"]) > limit:
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


def fitted_cosine(text: str, reference: str) -> float:
    """The previous `tfidf_cosine`: a vectorizer fitted on the pair (spec 001's code)."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.metrics.pairwise import cosine_similarity

    matrix = TfidfVectorizer(stop_words="english", ngram_range=(1, 2)).fit_transform(
        [text, reference]
    )
    return float(cosine_similarity(matrix[0:1], matrix[1:2])[0][0])


def timed(
    function: Callable[..., Any], calls: Sequence[tuple[Any, ...]]
) -> tuple[float, list[Any]]:
    """Mean seconds per call of ``function`` over ``calls`` (after one untimed call), results."""
    function(*calls[0])
    start = time.perf_counter()
    results = [function(*arguments) for arguments in calls]
    return (time.perf_counter() - start) / len(calls), results


def per_call(function: Callable[..., Any], calls: Sequence[tuple[Any, ...]]) -> float:
    """Mean seconds per call of ``function`` over ``calls`` (after one untimed call)."""
    return timed(function, calls)[0]


def matmul_gflops(dtype: Any, size: int = 2048, repeats: int = 5) -> float:
    """Best-of-``repeats`` rate of one ``size``^3 matrix product, in GFLOP/s."""
    import torch

    generator = torch.Generator().manual_seed(0)
    a = torch.randn(size, size, generator=generator).to(dtype)
    b = torch.randn(size, size, generator=generator).to(dtype)
    a @ b
    best = math.inf
    for _ in range(repeats):
        start = time.perf_counter()
        a @ b
        best = min(best, time.perf_counter() - start)
    return 2 * size**3 / best / 1e9


def encoder_flops(tokens: int, chunks: int, config: Any) -> float:
    """Multiply-add FLOPs of the BERT passes over one text's chunks ([CLS]/[SEP] included).

    Per layer and chunk of L positions: the Q, K, V and output projections (8 L H^2), the
    feed-forward block (4 L H I) and attention's two L x L products (4 L^2 H). Embeddings,
    layer norms and softmax are left out (well under 1%).
    """
    if tokens == 0:
        return 0.0
    size = math.ceil(tokens / chunks)  # the scorer's balanced chunks
    lengths = [size] * (chunks - 1) + [tokens - size * (chunks - 1)]
    hidden, inner = config.hidden_size, config.intermediate_size
    per_layer = sum(
        8 * (n + 2) * hidden**2 + 4 * (n + 2) * hidden * inner + 4 * (n + 2) ** 2 * hidden
        for n in lengths
    )
    return float(per_layer * config.num_hidden_layers)


def warm_run(scorer: Any, pairs: list[Pair], profile: Any) -> tuple[float, float, list[float]]:
    """evalq per pair with references cached, candidates not: seconds, FLOPs, F1 scores."""
    from evalq.metrics.text import text_metrics

    precision = profile.precision
    scorer.clear_caches()
    for _, reference in pairs:
        scorer.reference(reference, precision=precision)
    text_metrics("An untimed warm-up output.", [pairs[0][1]], profile=profile, semantic=scorer)
    start = time.perf_counter()
    scores = [
        text_metrics(candidate, [reference], profile=profile, semantic=scorer).semantic
        for candidate, reference in pairs
    ]
    seconds = (time.perf_counter() - start) / len(pairs)
    flops = 0.0
    for candidate, reference in pairs:
        c = scorer.candidate(candidate, precision=precision)
        r = scorer.reference(reference, precision=precision)
        flops += encoder_flops(c.tokens, c.chunks, scorer._config) + 2 * c.tokens * r.tokens * (
            scorer._config.hidden_size
        )
    return seconds, flops / len(pairs), [float(s or 0.0) for s in scores]


def cold_run(scorer: Any, pairs: list[Pair], profile: Any) -> float:
    """evalq seconds per pair with every cache empty (candidate and reference encoded)."""
    from evalq.metrics.text import text_metrics

    total = 0.0
    for candidate, reference in pairs:
        scorer.clear_caches()
        start = time.perf_counter()
        text_metrics(candidate, [reference], profile=profile, semantic=scorer)
        total += time.perf_counter() - start
    return total / len(pairs)


def cache_hit_run(scorer: Any, pairs: list[Pair], profile: Any) -> float:
    """evalq seconds per pair when the same candidate was just scored (a redelivered task)."""
    from evalq.metrics.text import text_metrics

    total = 0.0
    for candidate, reference in pairs:
        text_metrics(candidate, [reference], profile=profile, semantic=scorer)
        start = time.perf_counter()
        text_metrics(candidate, [reference], profile=profile, semantic=scorer)
        total += time.perf_counter() - start
    return total / len(pairs)


def micro_batch_ratio(scorer: Any, texts: list[str], precision: str, batch: int) -> float:
    """Per-text time of one model pass per text over that of ``batch`` texts per pass."""
    model = scorer._model(precision)
    ids = [scorer._tokenizer(t, add_special_tokens=False)["input_ids"] for t in texts]
    groups = [ids[i : i + batch] for i in range(0, len(ids) - batch + 1, batch)]
    single = per_call(lambda chunk: scorer._forward(model, [chunk]), [(i,) for i in ids])
    batched = per_call(lambda group: scorer._forward(model, group), [(g,) for g in groups])
    return single / (batched / batch)


def quiet_transformers() -> None:
    """Errors only from transformers: no per-load weight reports or progress bars."""
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()


def distinct_pairs(make: Callable[[], str], count: int) -> list[Pair]:
    """``count`` pairs whose candidates are all different (a cache hit would flatter evalq)."""
    pairs: list[Pair] = []
    seen: set[str] = set()
    while len(pairs) < count:
        candidate, reference = make(), make()
        if candidate not in seen:
            seen.add(candidate)
            pairs.append((candidate, reference))
    return pairs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=12)
    parser.add_argument("--words", type=int, default=500)
    parser.add_argument("--short-pairs", type=int, default=24)
    parser.add_argument("--batch", type=int, default=8, help="texts per pass, micro-batching")
    parser.add_argument("--threads", type=int, default=1, help="torch threads, both sides")
    parser.add_argument("--matmul-size", type=int, default=2048, help="the FLOP floor's product")
    args = parse_args(
        parser,
        quick={"pairs": 2, "words": 150, "short_pairs": 4, "batch": 2, "matmul_size": 256},
    )

    import torch

    torch.set_num_threads(args.threads)  # 2 spinning OpenMP threads on a busy 2-core box: 10x

    from evalq.core.profile import profile_named
    from evalq.metrics.semantic import SemanticScorer, default_model_path, go_offline
    from evalq.metrics.similarity import tfidf_cosine

    go_offline()
    quiet_transformers()  # torchmetrics reloads the model per call, logging each load
    rng, sentences = random.Random(500), review_sentences()
    long = distinct_pairs(lambda: review(rng, args.words, sentences), args.pairs)
    short = distinct_pairs(lambda: short_review(rng, sentences), args.short_pairs)
    model_path, fp32 = default_model_path(), profile_named("default").text
    bf16 = fp32.model_copy(update={"precision": "bf16"})
    scorer = SemanticScorer(model_path)
    cut = [(fit(a, scorer._tokenizer), fit(b, scorer._tokenizer)) for a, b in long]

    words = statistics.mean(len(a.split()) + len(b.split()) for a, b in long) / 2
    short_words = statistics.mean(len(a.split()) + len(b.split()) for a, b in short) / 2
    cut_words = statistics.mean(len(a.split()) + len(b.split()) for a, b in cut) / 2
    print(f"# {len(long)} long pairs, ~{words:.0f} words per text (~{cut_words:.0f} cut)")
    print(f"# {len(short)} short pairs, ~{short_words:.0f} words per text")
    print(f"# torch threads {torch.get_num_threads()}, load {os.getloadavg()[0]:.1f} on ", end="")
    print(f"{os.cpu_count()} CPUs")

    size = args.matmul_size
    peak = {"fp32": matmul_gflops(torch.float32, size), "bf16": matmul_gflops(torch.bfloat16, size)}
    figure(f"matmul {size}^3 fp32", peak["fp32"], "GFLOP/s")
    figure(f"matmul {size}^3 bf16", peak["bf16"], "GFLOP/s")

    print("## spec 001's reference style vs evalq (fp32)")
    reference_s, reference_f1 = timed(lambda a, b: reference_style(a, b, model_path), cut)
    reference_short = per_call(lambda a, b: reference_style(a, b, model_path), short[:8])
    ours_cut = [scorer.score(a, [b])[0] for a, b in cut]
    gap = max(abs(x - y) for x, y in zip(ours_cut, reference_f1, strict=True))
    figure("max |evalq - torchmetrics| BERTScore F1 on the cut texts", gap)
    cold_s = cold_run(scorer, long, fp32)
    warm = {
        (name, profile.precision): warm_run(scorer, pairs, profile)
        for name, pairs in (("long", long), ("short", short))
        for profile in (fp32, bf16)
    }
    hit_s = cache_hit_run(scorer, long, fp32)
    figure("reference style (new TF-IDF + new BERTScore per call), long", reference_s, "s")
    figure("reference style, short", reference_short, "s")
    figure("evalq text_metrics per pair, caches cold, long", cold_s, "s")
    figure("evalq text_metrics per pair, references cached, long", warm["long", "fp32"][0], "s")
    figure("evalq text_metrics per pair, references cached, short", warm["short", "fp32"][0], "s")
    figure("evalq, candidate scored before (cache hit), long", hit_s, "s")
    figure("speed-up reference / evalq warm, short", reference_short / warm["short", "fp32"][0])

    print("## TF-IDF cosine per pair: vectorizer fitted per pair vs closed form")
    for name, pairs in (("long", long), ("short", short)):
        fitted, fitted_values = timed(fitted_cosine, pairs)
        closed, closed_values = timed(tfidf_cosine, pairs)
        gap = max(abs(a - b) for a, b in zip(fitted_values, closed_values, strict=True))
        print(
            f"{name:<6} fitted {fitted * 1e3:7.3f} ms  closed form {closed * 1e3:7.3f} ms  "
            f"speed-up {fitted / closed:5.1f}x  max |difference| {gap:.1e}"
        )

    print("## FLOP floor: encoder FLOPs per pair / matmul rate, against evalq warm per pair")
    header = ("texts", "precision", "evalq ms", "GFLOP", "floor ms", "floor/evalq", "max |dF1|")
    print("{:<6} {:<9} {:>9} {:>7} {:>9} {:>11} {:>10}".format(*header))
    for (name, precision), (seconds, flops, scores) in warm.items():
        floor = flops / (peak[precision] * 1e9)
        drift = max(abs(a - b) for a, b in zip(scores, warm[name, "fp32"][2], strict=True))
        verdict = "" if drift <= BF16_TOLERANCE else "  REJECTED (> 0.005)"
        print(
            f"{name:<6} {precision:<9} {seconds * 1e3:9.1f} {flops / 1e9:7.2f} "
            f"{floor * 1e3:9.1f} {floor / seconds:11.0%} {drift:10.5f}{verdict}"
        )
    for name in ("long", "short"):
        figure(f"speed-up bf16 / fp32, {name}", warm[name, "fp32"][0] / warm[name, "bf16"][0])

    print(f"## micro-batching: {args.batch} short candidates per model pass vs one (not adopted)")
    candidates = [candidate for candidate, _ in short]
    for precision in ("fp32", "bf16"):
        speedup = micro_batch_ratio(scorer, candidates, precision, args.batch)
        figure(f"per-text speed-up, {precision}", speedup)
    ratio(
        "speed-up reference / evalq warm, long, fp32 (target >= 5)",
        reference_s / warm["long", "fp32"][0],
    )


if __name__ == "__main__":
    main()
