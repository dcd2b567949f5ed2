"""A least-recently-used store of token embeddings, bounded in tokens and in entries.

`SemanticScorer` keeps two per worker process: one for references (reused by every submission
of a task) and a smaller one for candidates (a redelivered tier-1 task, or an output identical
to one already scored, is not encoded again). Keys name the text and the precision; the scorer
that owns a cache fixes the model.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from evalq.metrics.semantic import Embedding


class EmbeddingCache:
    """Embeddings by key, least recently used evicted first; safe to share between threads.

    Args:
        max_tokens: token rows the cache may hold in total (a 384-dimensional float32 row is
            1.5 KiB). An embedding longer than this is never stored.
        max_entries: embeddings it may hold, whatever their size.
    """

    def __init__(self, max_tokens: int, max_entries: int | None = None) -> None:
        self.max_tokens = max_tokens
        self.max_entries = max_entries
        self.tokens = 0
        self._entries: OrderedDict[str, Embedding] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: str) -> Embedding | None:
        """The embedding stored under ``key`` (now the most recently used), or None."""
        with self._lock:
            embedding = self._entries.get(key)
            if embedding is not None:
                self._entries.move_to_end(key)
            return embedding

    def put(self, key: str, embedding: Embedding) -> None:
        """Store ``embedding`` unless it alone exceeds the budget; evict until within bounds."""
        if embedding.tokens > self.max_tokens:
            return
        with self._lock:
            if key in self._entries:
                return
            self._entries[key] = embedding
            self.tokens += embedding.tokens
            while self.tokens > self.max_tokens or (
                self.max_entries is not None and len(self._entries) > self.max_entries
            ):
                self.tokens -= self._entries.popitem(last=False)[1].tokens

    def clear(self) -> None:
        """Forget every embedding."""
        with self._lock:
            self._entries.clear()
            self.tokens = 0
