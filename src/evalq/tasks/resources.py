"""What a worker process loads once and reuses: profiles, the BERTScore model, the judge."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from celery.signals import worker_process_init

from evalq.core.profile import Profile, profile_named
from evalq.core.settings import Settings, get_settings
from evalq.workers import bootstrap, machine_slots, text_helpers
from evalq.workers.names import TEXT_QUEUE

if TYPE_CHECKING:
    import redis

    from evalq.judge import Judge, JudgeCascade, JudgePanel
    from evalq.metrics.score_batcher import BatchScorer, ScoreBatcher
    from evalq.metrics.semantic import SemanticScorer

_lock = threading.Lock()
log = logging.getLogger(__name__)


@lru_cache(maxsize=4)
def _scorer(model_path: str, max_chunk_tokens: int, device: str) -> SemanticScorer:
    from evalq.metrics.semantic import SemanticScorer, default_model_path

    return SemanticScorer(
        model_path or default_model_path(), max_chunk_tokens=max_chunk_tokens, device=device
    )


def semantic_scorer(profile: Profile, settings: Settings | None = None) -> SemanticScorer:
    """The process's BERTScore scorer for the profile's model on EVALQ_TEXT_DEVICE, loaded on
    first use."""
    device = (settings or get_settings()).text_device
    with _lock:  # threads of one worker share one model
        return _scorer(profile.text.model_path, profile.text.max_chunk_tokens, device)


@lru_cache(maxsize=4)
def _batcher(scorer: BatchScorer, max_items: int) -> ScoreBatcher:
    from evalq.metrics.score_batcher import ScoreBatcher

    return ScoreBatcher(scorer, capacity=text_capacity, max_items=max_items)


def score_batcher(profile: Profile, settings: Settings) -> ScoreBatcher:
    """The process's tier-1 batcher over `semantic_scorer`: the threads of one worker that run
    tier 1 at once share batches (`evalq.metrics.score_batcher`); each batch holds one
    `text_capacity` slot.

    In the in-process worker (`evalq.workers.embedded`) the batches run in its helper processes
    (`evalq.workers.text_helpers`) instead, out of the interpreter its merges and refreshes run
    in; the slots and the batching are the same."""
    return _batcher_of(profile.text.model_path, profile.text.max_chunk_tokens, settings)


def reading_batcher(profile: Profile, settings: Settings) -> ScoreBatcher:
    """The tier-1 batcher whose model reads the injection scan's sentences
    (`evalq.metrics.instructions`, trained on the bundled MiniLM): `score_batcher`'s own when
    the profile scores with the bundled model (the default: one model, one batcher), else one
    over the bundled model beside it, in the same slots."""
    if not profile.text.model_path:
        return score_batcher(profile, settings)
    return _batcher_of("", profile.text.max_chunk_tokens, settings)


def _batcher_of(model_path: str, max_chunk_tokens: int, settings: Settings) -> ScoreBatcher:
    helpers = text_helpers.current()
    scorer: BatchScorer
    if helpers is not None:
        key = text_helpers.ModelKey(model_path, max_chunk_tokens, settings.text_device)
        scorer = helpers.scorer(key)
    else:
        with _lock:  # threads of one worker share one model
            scorer = _scorer(model_path, max_chunk_tokens, settings.text_device)
    with _lock:
        return _batcher(scorer, settings.text_batch_max)


_text_slots: threading.BoundedSemaphore | None = None


@contextmanager
def text_capacity() -> Iterator[None]:
    """Hold one of this process's tier-1 slots, with torch's threads capped for it.

    Wherever tier 1 runs, the CPUs are shared out the same way (`bootstrap.torch_threads`):
    a prefork text worker's child runs one computation at a time with its share of the CPUs;
    a thread-pool worker (the in-process one of `evalq demo`, `evalq submit` and the Python
    `Client` with no broker) runs at most `bootstrap.pool_children` computations at once, one
    per CPU by default, each with the same share. Unbounded, every thread ran torch with one
    OpenMP thread per CPU and tier 1 ran ~9x slower on 2 CPUs.

    torch's cap is per calling thread (OpenMP's), so it is set in the thread about to compute,
    not only once per process. The share counts every tier-1 slot on the machine: each process
    that computes records its own (`evalq.workers.machine_slots`), so two workers on one machine
    take half the threads each. EVALQ_TEXT_THREADS replaces the share.
    """
    global _text_slots
    slots = bootstrap.pool_children()
    settings = get_settings()
    directory = machine_slots.slots_dir(settings)
    with _lock:
        if _text_slots is None:
            _text_slots = threading.BoundedSemaphore(slots)
            machine_slots.record(directory, bootstrap.compute_slots())
        semaphore = _text_slots
    with semaphore:
        import torch

        threads = settings.text_threads or machine_slots.threads_per_slot(slots, directory)
        if torch.get_num_threads() != threads:
            torch.set_num_threads(threads)
        yield


_judges: dict[tuple[str, str], Judge | JudgePanel | JudgeCascade | None] = {}


def judge_for(profile: Profile, settings: Settings) -> Judge | JudgePanel | JudgeCascade | None:
    """The process's judge (or panel) for a profile, or None when no judge model is configured.

    Keyed by the profile's hash and the settings, so new settings (tests, reloads) get a new one.
    """
    if settings.judge_model is None:
        return None
    key = (profile.hash, settings.model_dump_json())
    with _lock:  # threads of one worker share one judge
        if key not in _judges:
            _judges[key] = _build_judge(profile, settings)
        return _judges[key]


def _build_judge(profile: Profile, settings: Settings) -> Judge | JudgePanel | JudgeCascade | None:
    from evalq.judge import build_judge

    redis_client = _redis_at(settings.broker_url, settings.redis_master_name)
    cache_client = _redis_at(settings.judge_cache_url, settings.redis_master_name) or redis_client
    return build_judge(settings, profile, redis=redis_client, cache_redis=cache_client)


def _redis_at(url: str | None, master_name: str | None) -> redis.Redis | None:
    """A client for a Redis URL; None when unset or not Redis (the embedded memory:// broker)."""
    from evalq.workers.redis_url import is_redis_url, redis_client

    if not url or not is_redis_url(url):
        return None
    return redis_client(url, master_name=master_name)


@worker_process_init.connect
def _preload_model(**_: Any) -> None:
    """Load the BERTScore model once per prefork child of a text worker, before its first task."""
    if not bootstrap.consumes(TEXT_QUEUE):
        return
    from evalq.core.errors import InvalidInput

    try:
        with text_capacity():
            scorer = semantic_scorer(profile_named("default"))
    except InvalidInput as error:  # e.g. EVALQ_TEXT_DEVICE=cuda on a machine without one
        log.error("text worker child: the BERTScore model cannot be loaded: %s", error)
        return  # each tier-1 task then fails with the same message, stored with its result
    log.info("text worker child: BERTScore model loaded on %s", scorer.device)
