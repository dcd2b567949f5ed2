"""Tier-1 calls of many threads, run in batches: each thread gets `score`'s answer.

The batches are made deterministic by holding the one compute slot while the threads queue."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from evalq.metrics.score_batcher import ScoreBatcher
from evalq.metrics.semantic import SemanticScorer

OUTPUTS = [
    "The paper proposes a novel method for graph learning.",
    "The experiments are weak and the baselines are outdated.",
    "The writing is clear and the figures are helpful.",
    "Reject.",
    "A thorough study; the ablations support every claim the authors make.",
]
REFERENCES = [
    "This work introduces a new approach to learning on graphs.",
    "Results are not convincing because the baselines are old.",
]


@pytest.fixture(scope="module")
def scorer() -> Iterator[SemanticScorer]:
    yield SemanticScorer()


def run_threads(batcher: ScoreBatcher, slot: threading.Semaphore) -> list[list[float]]:
    """Every output scored from its own thread while the slot is held; then the slot is let go."""
    results: list[list[float] | BaseException] = [[] for _ in OUTPUTS]
    queued = threading.Barrier(len(OUTPUTS) + 1)

    def work(index: int) -> None:
        queued.wait()
        try:
            results[index] = batcher.score(OUTPUTS[index], REFERENCES)
        except BaseException as error:
            results[index] = error

    assert slot.acquire(timeout=5)
    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(OUTPUTS))]
    for thread in threads:
        thread.start()
    queued.wait(60)
    while len(batcher._waiting) < len(OUTPUTS):  # each has queued its call
        threading.Event().wait(0.01)
    slot.release()
    for thread in threads:
        thread.join(120)
    for result in results:
        if isinstance(result, BaseException):
            raise result
    return [r for r in results if not isinstance(r, BaseException)]


def test_calls_waiting_together_run_as_one_batch_with_the_same_scores(
    scorer: SemanticScorer,
) -> None:
    slot = threading.Semaphore(1)
    batcher = ScoreBatcher(scorer, capacity=lambda: slot, max_items=32)
    got = run_threads(batcher, slot)
    assert batcher.batches == [len(OUTPUTS)]
    expected = [scorer.score(output, REFERENCES) for output in OUTPUTS]
    for g, e in zip(got, expected, strict=True):
        assert g == pytest.approx(e, abs=1e-6)


def test_batches_are_bounded(scorer: SemanticScorer) -> None:
    slot = threading.Semaphore(1)
    batcher = ScoreBatcher(scorer, capacity=lambda: slot, max_items=2)
    run_threads(batcher, slot)
    assert sorted(batcher.batches) == [1, 2, 2]


def test_a_call_alone_runs_at_once(scorer: SemanticScorer) -> None:
    batcher = ScoreBatcher(scorer, capacity=lambda: threading.Semaphore(1), max_items=32)
    assert batcher.score(OUTPUTS[0], REFERENCES) == pytest.approx(
        scorer.score(OUTPUTS[0], REFERENCES), abs=1e-6
    )
    assert batcher.batches == [1]


def test_a_failed_batch_raises_in_its_caller(scorer: SemanticScorer) -> None:
    slot = threading.Semaphore(1)
    batcher = ScoreBatcher(scorer, capacity=lambda: slot, max_items=32)
    with pytest.raises(Exception, match="precision"):
        batcher.score(OUTPUTS[0], REFERENCES, precision="fp64")  # type: ignore[arg-type]


def test_sentences_to_read_are_batched_apart_from_scores(scorer: SemanticScorer) -> None:
    """The injection scan's calls (`ScoreBatcher.read`) share the slots and the model, never a
    batch with similarity calls; each gets `read_many`'s answer for its own sentences."""
    slot = threading.Semaphore(1)
    batcher = ScoreBatcher(scorer, capacity=lambda: slot, max_items=32)
    sentences = [OUTPUTS[:2], OUTPUTS[2:3], OUTPUTS[3:]]
    found: list[list[float]] = [[] for _ in sentences]
    scored: list[list[float]] = []
    assert slot.acquire(timeout=5)
    threads = [
        threading.Thread(target=lambda i=i: found.__setitem__(i, batcher.read(sentences[i])))
        for i in range(len(sentences))
    ]
    threads.append(
        threading.Thread(target=lambda: scored.append(batcher.score(OUTPUTS[0], REFERENCES)))
    )
    for thread in threads:
        thread.start()
    while len(batcher._waiting) < len(threads):
        threading.Event().wait(0.01)
    slot.release()
    for thread in threads:
        thread.join(120)
    assert sorted(batcher.batches[-2:]) == [1, 3]  # the reads together, the score alone
    for group, probabilities in zip(sentences, found, strict=True):
        assert probabilities == pytest.approx(scorer.read_many([group])[0], abs=1e-5)
    assert scored == [pytest.approx(scorer.score(OUTPUTS[0], REFERENCES), abs=1e-6)]
    assert batcher.read([]) == []
