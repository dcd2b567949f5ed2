"""The LRU of token embeddings: bounded in tokens and in entries, least recently used first."""

from __future__ import annotations

import torch

from evalq.metrics.embedding_cache import EmbeddingCache
from evalq.metrics.semantic import Embedding


def rows(tokens: int) -> Embedding:
    return Embedding(torch.ones(tokens, 4), chunks=1)


def test_evicts_the_least_recently_used_beyond_the_token_budget() -> None:
    cache = EmbeddingCache(max_tokens=5)
    cache.put("a", rows(2))
    cache.put("b", rows(2))
    assert cache.get("a") is not None  # "b" is now the least recently used
    cache.put("c", rows(2))
    assert cache.get("b") is None
    assert cache.get("a") is not None and cache.get("c") is not None
    assert (len(cache), cache.tokens) == (2, 4)


def test_evicts_beyond_the_entry_budget() -> None:
    cache = EmbeddingCache(max_tokens=1_000, max_entries=2)
    for key in ("a", "b", "c"):
        cache.put(key, rows(1))
    assert [cache.get(key) is not None for key in ("a", "b", "c")] == [False, True, True]
    assert cache.tokens == 2


def test_an_embedding_over_the_whole_budget_is_not_stored() -> None:
    cache = EmbeddingCache(max_tokens=3)
    cache.put("a", rows(1))
    cache.put("big", rows(4))
    assert cache.get("big") is None
    assert cache.get("a") is not None
    assert cache.tokens == 1


def test_a_key_stored_twice_counts_once_and_clear_forgets() -> None:
    cache = EmbeddingCache(max_tokens=10)
    first = rows(3)
    cache.put("a", first)
    cache.put("a", rows(3))
    assert cache.get("a") is first
    assert cache.tokens == 3
    cache.clear()
    assert (len(cache), cache.tokens, cache.get("a")) == (0, 0, None)
