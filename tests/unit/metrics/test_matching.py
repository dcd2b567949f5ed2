"""Batched BERTScore matching gives the one-pair path's F1, whatever the sizes and grouping."""

from __future__ import annotations

import pytest
import torch

from evalq.metrics.matching import bertscore_f1_many
from evalq.metrics.semantic import Embedding, bertscore_f1


def embedding(tokens: int, generator: torch.Generator, hidden: int = 16) -> Embedding:
    vectors = torch.randn(tokens, hidden, generator=generator)
    if tokens:
        vectors = vectors / vectors.norm(dim=-1, keepdim=True)
    return Embedding(vectors, chunks=1 if tokens else 0)


@pytest.mark.parametrize("group_cells", [1 << 24, 2_000, 1])
def test_many_pairs_score_as_each_pair_alone(group_cells: int) -> None:
    generator = torch.Generator().manual_seed(7)
    sizes = [(1, 1), (3, 40), (40, 3), (17, 17), (0, 5), (5, 0), (0, 0), (60, 2), (2, 60)]
    pairs = [(embedding(c, generator), embedding(r, generator)) for c, r in sizes * 3]
    expected = [bertscore_f1(candidate, reference) for candidate, reference in pairs]
    got = bertscore_f1_many(pairs, group_cells=group_cells)
    assert len(got) == len(pairs)
    assert max(abs(a - b) for a, b in zip(got, expected, strict=True)) < 1e-6


def test_negative_best_cosines_count_as_zero_in_a_batch() -> None:
    up = Embedding(torch.tensor([[1.0, 0.0]]), chunks=1)
    down = Embedding(torch.tensor([[-1.0, 0.0]]), chunks=1)
    both = Embedding(torch.tensor([[1.0, 0.0], [-1.0, 0.0]]), chunks=1)
    assert bertscore_f1_many([(up, down), (up, both), (both, up)]) == [
        bertscore_f1(up, down),
        bertscore_f1(up, both),
        bertscore_f1(both, up),
    ]


def test_no_pairs() -> None:
    assert bertscore_f1_many([]) == []
