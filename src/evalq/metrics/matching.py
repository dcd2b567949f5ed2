"""BERTScore F1 of many (candidate, reference) pairs at once: padded batched matching.

`bertscore_f1_many` gives what `evalq.metrics.semantic.bertscore_f1` gives pair by pair (to
float32 rounding: the sums are taken in another order), with one batched matrix product per
group of pairs of similar sizes instead of a Python loop per pair. Pairs whose similarity
matrix alone would exceed a group's budget go through the one-pair path.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import torch

if TYPE_CHECKING:
    from evalq.metrics.semantic import Embedding

GROUP_CELLS = 1 << 24
"""Similarity cells (candidate tokens x reference tokens, padding included) per batched product:
64 MiB of float32, so memory stays bounded whatever the pairs."""


def bertscore_f1_many(
    pairs: Sequence[tuple[Embedding, Embedding]], *, group_cells: int = GROUP_CELLS
) -> list[float]:
    """F1 of each (candidate, reference) pair, in order, as `bertscore_f1` defines it."""
    from evalq.metrics.semantic import bertscore_f1

    scores: list[float | None] = [None] * len(pairs)
    batchable = []
    for index, (candidate, reference) in enumerate(pairs):
        cells = candidate.tokens * reference.tokens
        if cells == 0 or cells > group_cells:
            scores[index] = bertscore_f1(candidate, reference)
        else:
            batchable.append(index)
    batchable.sort(key=lambda i: (pairs[i][0].tokens, pairs[i][1].tokens))
    group: list[int] = []
    widest = (0, 0)
    for index in batchable:
        candidate, reference = pairs[index]
        wider = (max(widest[0], candidate.tokens), max(widest[1], reference.tokens))
        if group and (len(group) + 1) * wider[0] * wider[1] > group_cells:
            _score_group(pairs, group, scores)
            group, wider = [], (candidate.tokens, reference.tokens)
        group.append(index)
        widest = wider
    if group:
        _score_group(pairs, group, scores)
    return [score for score in scores if score is not None]


def _score_group(
    pairs: Sequence[tuple[Embedding, Embedding]], group: list[int], scores: list[float | None]
) -> None:
    """Fill ``scores`` for the pairs of ``group`` (none of them without tokens)."""
    candidates, candidate_mask = _padded([pairs[i][0].vectors for i in group])
    references, reference_mask = _padded([pairs[i][1].vectors for i in group])
    similarity = candidates @ references.transpose(1, 2)  # (pairs, candidate, reference)
    hidden = ~(candidate_mask[:, :, None] & reference_mask[:, None, :])
    similarity = similarity.masked_fill(hidden, float("-inf"))
    # A best cosine below 0 counts as 0, as in the one-pair path (and torchmetrics).
    best_for_candidate = similarity.max(dim=2).values.clamp(min=0) * candidate_mask
    best_for_reference = similarity.max(dim=1).values.clamp(min=0) * reference_mask
    precision = best_for_candidate.sum(dim=1) / candidate_mask.sum(dim=1)
    recall = best_for_reference.sum(dim=1) / reference_mask.sum(dim=1)
    for row, index in enumerate(group):
        p, r = float(precision[row]), float(recall[row])
        scores[index] = 0.0 if p + r <= 0 else min(1.0, max(0.0, 2 * p * r / (p + r)))


def _padded(rows: list[torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
    """Stack (tokens, hidden) tensors into (n, longest, hidden), zero-padded, with a mask."""
    longest = max(int(vectors.shape[0]) for vectors in rows)
    first = rows[0]
    stacked = first.new_zeros((len(rows), longest, int(first.shape[1])))
    mask = torch.zeros((len(rows), longest), dtype=torch.bool, device=first.device)
    for row, vectors in enumerate(rows):
        stacked[row, : vectors.shape[0]] = vectors
        mask[row, : vectors.shape[0]] = True
    return stacked, mask
