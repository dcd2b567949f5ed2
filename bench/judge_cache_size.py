"""Bytes one cached judgment takes in Redis, to size the judge cache (docs/deploy.md).

Inserts ``--entries`` verdicts through `JudgmentCache.put` under a fresh key prefix, with the
criterion rationales at a typical (150 chars) and at the longest allowed length (400 chars), and
prints Redis's own ``MEMORY USAGE`` of the entries and of the index per entry. Only the keys under
that prefix are touched, and they are deleted afterwards.

    python bench/judge_cache_size.py [--db 13] [--entries 2000] [--quick]
"""

from __future__ import annotations

import argparse
import sys
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

import redis
from _common import parse_args, ratio, redis_url

from evalq.judge.cache import JudgmentCache, index_key
from evalq.judge.rubrics import RUBRICS


def verdict_json(rationale_chars: int) -> bytes:
    """A technical-accuracy verdict whose rationales are ``rationale_chars`` long."""
    rubric = RUBRICS[0]
    criteria = {name: {"score": 4, "rationale": "x" * rationale_chars} for name in rubric.criteria}
    return rubric.verdict.model_validate(criteria).model_dump_json().encode()


def bytes_per_entry(client: redis.Redis, entries: int, rationale_chars: int) -> tuple[int, float]:
    """(value bytes, Redis bytes per entry: the key with its value plus its index member)."""
    prefix = f"evalq-bench-cache:{uuid.uuid4().hex}"
    cache = JudgmentCache(client, ttl_s=3600, max_entries=entries, prefix=prefix)
    value = verdict_json(rationale_chars)
    keys = [f"{prefix}:cache:technical_accuracy:{i:064x}" for i in range(entries)]
    try:
        for key in keys:
            cache.put(key, value)
        per_key = sum(int(client.memory_usage(k, samples=0) or 0) for k in keys) / entries
        index = int(client.memory_usage(index_key(prefix), samples=0) or 0) / entries
        return len(value), per_key + index
    finally:
        for start in range(0, entries, 500):
            client.delete(*keys[start : start + 500])
        client.delete(index_key(prefix))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", type=int, default=13)
    parser.add_argument("--entries", type=int, default=2000)
    args = parse_args(parser, quick={"entries": 100})
    client = redis.Redis.from_url(redis_url(args.db))
    typical_value, typical = bytes_per_entry(client, args.entries, 150)
    longest_value, longest = bytes_per_entry(client, args.entries, 400)
    print(f"typical verdict ({typical_value} B of JSON): {typical:.0f} B per cached judgment")
    print(f"longest verdict ({longest_value} B of JSON): {longest:.0f} B per cached judgment")
    mib = 5e4 / 2**20
    print(f"50,000 entries: {typical * mib:.0f} MiB typical, {longest * mib:.0f} MiB at most")
    ratio("Redis bytes / JSON bytes (typical)", typical / typical_value)


if __name__ == "__main__":
    main()
