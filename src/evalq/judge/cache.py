"""Judgments cached in Redis: the same question to the same judge is asked once.

The key covers everything that can change an answer: the model, the rubric and its version, the
hash of the prompt template (rubric instructions, data instructions, output schema), the hash of
the fenced input texts, and the sampling settings. The per-call fence nonce is not in the key: it
changes the prompt bytes but not the question. The value is the validated verdict's JSON, stored
once (``SET NX``) and returned byte for byte.

The cache is bounded twice, so it cannot fill a Redis it shares with the broker (whose
``noeviction`` policy would then refuse new messages): every entry lives ``ttl_s`` seconds, and a
sorted set of keys by insertion time keeps at most ``max_entries`` of them, the oldest dropped
first. Both happen in one Lua script per insert, so concurrent workers cannot overshoot the bound.
"""

from __future__ import annotations

import hashlib
import json
import time
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


# KEYS[1] the entry, KEYS[2] the index; ARGV: value, ttl_s, max_entries, now (seconds).
# Returns 1 when the entry was stored, 0 when the key already held a judgment.
_PUT = """
if not redis.call('SET', KEYS[1], ARGV[1], 'NX', 'EX', ARGV[2]) then return 0 end
local now = tonumber(ARGV[4])
redis.call('ZADD', KEYS[2], now, KEYS[1])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now - tonumber(ARGV[2]))
local excess = redis.call('ZCARD', KEYS[2]) - tonumber(ARGV[3])
if excess > 0 then
  local oldest = redis.call('ZPOPMIN', KEYS[2], excess)
  for i = 1, #oldest, 2 do redis.call('DEL', oldest[i]) end
end
redis.call('EXPIRE', KEYS[2], ARGV[2])
return 1
"""


def index_key(prefix: str) -> str:
    """The sorted set of cached judgment keys, scored by insertion time."""
    return f"{prefix}:cache-index"


@dataclass(frozen=True)
class JudgmentCache:
    """Read and write cached verdict JSON, within a lifetime and a count bound.

    Attributes:
        client: the Redis connection (`Settings.judge_cache_url`, the broker's by default).
        ttl_s: lifetime of an entry in seconds.
        max_entries: most entries kept; inserting past it drops the oldest.
        prefix: the judge's key prefix (the index lives at `index_key`).
    """

    client: redis.Redis
    ttl_s: int = 30 * 24 * 3600
    max_entries: int = 50_000
    prefix: str = "evalq:judge"

    def __post_init__(self) -> None:
        if self.ttl_s <= 0 or self.max_entries <= 0:
            raise ValueError("judge cache ttl_s and max_entries must be positive")

    def get(self, key: str) -> bytes | None:
        """The cached verdict JSON, or None on a miss."""
        value = self.client.get(key)
        if isinstance(value, str):  # a client made with decode_responses=True
            return value.encode()
        return value if isinstance(value, bytes) else None

    def put(self, key: str, value: bytes) -> None:
        """Store ``value`` unless the key already holds a judgment (the first answer wins), then
        drop index entries past their lifetime and the oldest entries past ``max_entries``."""
        self.client.eval(
            _PUT, 2, key, index_key(self.prefix), value, self.ttl_s, self.max_entries, time.time()
        )

    def size(self) -> int:
        """Entries the index holds (those inserted within the lifetime, up to the bound)."""
        return int(self.client.zcard(index_key(self.prefix)))
