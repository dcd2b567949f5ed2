"""Tier 1 batched across submissions: the `score` calls of a process's threads, gathered.

A text worker running tier 1 in threads (the in-process worker, or ``evalq worker --queues
evalq.text --pool threads``) has several submissions' tier 1 under way at once. `ScoreBatcher`
gives each thread `SemanticScorer.score`'s answer, but runs the calls that are waiting together
as one `SemanticScorer.score_many` (one tokenizer call, a few padded forward passes, batched
matching) instead of one model pass per text.

No window is waited: a call takes a compute slot (``capacity``) at once when one is free, with
every call waiting at that moment (up to ``max_items``), and runs them; calls that arrive while
the slots are busy gather until one frees. Idle, a call runs alone as soon as it comes; loaded,
the batches grow by themselves.

The injection scan's sentences (`evalq.metrics.instructions`) go through the same batcher
(`read`): one output's sentences are one call, batched with other outputs' sentences, in the
same slots, on the same model; a batch holds calls of one kind.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Literal, Protocol

from evalq.core.profile import Precision


class BatchScorer(Protocol):
    """What a batch runs on: `SemanticScorer`, or one in another process (the in-process
    worker's helpers, `evalq.workers.text_helpers`)."""

    def score_many(
        self, items: Sequence[tuple[str, Sequence[str]]], *, precision: Precision = "fp32"
    ) -> list[list[float]]:
        """Each item's `SemanticScorer.score`, in order."""
        ...

    def read_many(self, groups: Sequence[Sequence[str]]) -> list[list[float]]:
        """Each group's `SemanticScorer.read_many`, in order."""
        ...


Kind = Literal["score", "read"]
"""What a call asks: similarity scores, or the instruction reader's probabilities."""


@dataclass(eq=False)
class _Call:
    text: str
    references: tuple[str, ...]
    precision: Precision
    kind: Kind = "score"
    sentences: tuple[str, ...] = ()
    done: threading.Event = field(default_factory=threading.Event)
    taken: bool = False
    scores: list[float] | None = None
    error: BaseException | None = None


class ScoreBatcher:
    """`score` for many threads, run in batches on one `SemanticScorer`.

    Args:
        scorer: the process's scorer (or its helpers').
        capacity: enters one of the process's compute slots (`evalq.tasks.resources.
            text_capacity`): a batch runs inside it.
        max_items: calls per batch at most.
    """

    def __init__(
        self,
        scorer: BatchScorer,
        *,
        capacity: Callable[[], AbstractContextManager[object]],
        max_items: int = 32,
    ) -> None:
        self.scorer = scorer
        self._capacity = capacity
        self.max_items = max_items
        self._lock = threading.Lock()
        self._waiting: list[_Call] = []
        self.batches: list[int] = []  # sizes of the batches run (bounded): benches and tests

    def score(
        self, text: str, references: Sequence[str], *, precision: Precision = "fp32"
    ) -> list[float]:
        """BERTScore F1 of ``text`` against each reference, as `SemanticScorer.score` gives it."""
        return self._wait(_Call(text, tuple(references), precision))

    def read(self, sentences: Sequence[str]) -> list[float]:
        """For each sentence, the probability that it instructs its evaluator, as
        `SemanticScorer.read_many` gives it; no model pass for none."""
        if not sentences:
            return []
        return self._wait(_Call("", (), "fp32", kind="read", sentences=tuple(sentences)))

    def _wait(self, call: _Call) -> list[float]:
        with self._lock:
            self._waiting.append(call)
        while not call.done.is_set():
            with self._capacity():
                batch = self._take(call)
                if batch:
                    self._run(batch)
            if not batch:  # another thread took this call into its batch
                call.done.wait()
        if call.error is not None:
            raise call.error
        assert call.scores is not None
        return call.scores

    def _take(self, call: _Call) -> list[_Call]:
        """``call`` and the calls waiting of its kind and precision, up to ``max_items``; none when
        ``call`` was already taken by another thread."""
        with self._lock:
            if call.taken:
                return []
            batch = [call]
            for other in self._waiting:
                if len(batch) >= self.max_items:
                    break
                if (
                    other is not call
                    and other.precision == call.precision
                    and other.kind == call.kind
                ):
                    batch.append(other)
            for taken in batch:
                taken.taken = True
                self._waiting.remove(taken)
            return batch

    def _run(self, batch: list[_Call]) -> None:
        try:
            if batch[0].kind == "read":
                results = self.scorer.read_many([call.sentences for call in batch])
            else:
                items = [(call.text, call.references) for call in batch]
                results = self.scorer.score_many(items, precision=batch[0].precision)
        except BaseException as error:  # each waiting task gets the failure (and retries)
            for call in batch:
                call.error = error
        else:
            for call, scores in zip(batch, results, strict=True):
                call.scores = scores
        finally:
            self.batches = [*self.batches[-999:], len(batch)]
            for call in batch:
                call.done.set()
