"""Judgments cached in Redis: the same question to the same judge is asked once.

The key covers everything that can change an answer: the model, the rubric and its version, the
hash of the prompt template (rubric instructions, data instructions, output schema), the hash of
the fenced input texts, and the sampling settings. The per-call fence nonce is not in the key: it
changes the prompt bytes but not the question. The value is the validated verdict's JSON, stored
once (``SET NX``) and returned byte for byte.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import redis

from evalq.judge.prompts import PROMPT_TEMPLATE, PROMPT_VERSION
from evalq.judge.rubrics import Rubric


def _sha256(data: Any) -> str:
    blob = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(blob.encode()).hexdigest()


def prompt_hash(rubric: Rubric, output_mode: str) -> str:
    """Hash of everything fixed about a rubric's prompt: instructions, fence template, schema."""
    return _sha256(
        {
            "rubric_instructions": rubric.instructions,
            "prompt_version": PROMPT_VERSION,
            "template": PROMPT_TEMPLATE,
            "schema": rubric.verdict.model_json_schema(),
            "output_mode": output_mode,
        }
    )


def input_hash(fields: Mapping[str, str]) -> str:
    """Hash of the texts under evaluation, in prompt order."""
    return _sha256(list(fields.items()))


def cache_key(
    *,
    prefix: str,
    model: str,
    rubric: Rubric,
    output_mode: str,
    fields: Mapping[str, str],
    sampling: Mapping[str, Any],
) -> str:
    """The Redis key of one judgment."""
    digest = _sha256(
        {
            "model": model,
            "rubric": rubric.name,
            "version": rubric.version,
            "prompt": prompt_hash(rubric, output_mode),
            "input": input_hash(fields),
            "sampling": dict(sampling),
        }
    )
    return f"{prefix}:cache:{rubric.name}:{digest}"


@dataclass(frozen=True)
class JudgmentCache:
    """Read and write cached verdict JSON.

    Attributes:
        client: the Redis connection.
        ttl_s: lifetime of an entry in seconds; None keeps entries until deleted.
    """

    client: redis.Redis
    ttl_s: int | None = None

    def get(self, key: str) -> bytes | None:
        """The cached verdict JSON, or None on a miss."""
        value = self.client.get(key)
        if isinstance(value, str):  # a client made with decode_responses=True
            return value.encode()
        return value if isinstance(value, bytes) else None

    def put(self, key: str, value: bytes) -> None:
        """Store ``value`` unless the key already holds a judgment (the first answer wins)."""
        self.client.set(key, value, nx=True, ex=self.ttl_s)
