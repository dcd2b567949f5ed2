"""Request bodies of the largest size the API takes: valid ones and ones built to be expensive.

The benchmark `bench/api_errors.py` and the API tests share them. Every body is at most ``size``
bytes of ASCII JSON, deterministic for its arguments.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

HEAD = '{"id":"hostile","task_id":"t1","tool":"a","model":"m","usage":{"total_tokens":1},'


def repeated(prefix: str, unit: str, suffix: str, size: int) -> bytes:
    """``prefix + unit,unit,... + suffix``, as many units as fit in ``size`` bytes."""
    count = (size - len(prefix) - len(suffix) + 1) // (len(unit) + 1)
    return (prefix + ",".join([unit] * count) + suffix).encode()


def empty_batch(size: int) -> bytes:
    """A batch of empty objects: five missing fields each, and far over EVALQ_API_MAX_BATCH."""
    return repeated('{"submissions":[', "{}", "]}", size)


def empty_steps(size: int) -> bytes:
    """One submission whose trace has as many empty steps as fit (each misses ``tool``)."""
    return repeated(HEAD + '"trace":{"steps":[', "{}", "]}}", size)


def unknown_keys(size: int) -> bytes:
    """One submission with as many unknown keys as fit (each one a problem, before the cap)."""
    count = (size - len(HEAD) - 1) // len('"k0000000":0,')
    keys = ",".join(f'"k{index:07d}":0' for index in range(count))
    return (HEAD + keys + "}").encode()


def wrong_item(index: int, padding: int) -> dict[str, Any]:
    """A submission with every field of the wrong type and ten unknown keys."""
    return {
        "id": [index],
        "task_id": 1,
        "tool": 2,
        "model": 3,
        "variant": 4,
        "run_index": "x",
        "usage": {"input_tokens": "a", "output_tokens": "b", "tool_calls": "c", "iterations": 0},
        "output": [0] * padding,
        "trace": {"steps": [{"tool": 1, "agent": 2, "started_at": "x"}], "messages": [1]},
        "evidence": {"files_created": 1, "errors": 2, "success": "x", "tests": 3},
        "scenarios": [{"id": 1, "category": 2, "latency_ms": "x"}],
        "passed": "x",
        "impl_rate": "x",
    } | {f"unknown{key}": key for key in range(10)}


def wrong_batch(size: int, items: int) -> bytes:
    """``items`` submissions with every field wrong, padded to ``size`` bytes."""
    return _padded(
        lambda padding: {"submissions": [wrong_item(i, padding) for i in range(items)]}, size
    )


def valid_item(sid: str, steps: int) -> dict[str, Any]:
    """A valid submission of task ``t1`` whose trace has ``steps`` small tool calls."""
    return {
        "id": sid,
        "task_id": "t1",
        "tool": "aider",
        "model": "gpt-4o",
        "usage": {"input_tokens": 800, "output_tokens": 200, "tool_calls": steps},
        "output": "Fixed the date parser and added a regression test.",
        "trace": {
            "steps": [
                {"tool": f"t{i % 7}", "agent": f"a{i % 3}", "context": f"c{i % 5}"}
                for i in range(steps)
            ]
        },
    }


def valid_batch(size: int, items: int, prefix: str) -> bytes:
    """``items`` valid submissions (ids ``PREFIX-0000``...), traces as long as fit in ``size``."""
    return _padded(
        lambda steps: {
            "submissions": [valid_item(f"{prefix}-{i:04d}", steps) for i in range(items)]
        },
        size,
    )


def _padded(build: Callable[[int], Any], size: int) -> bytes:
    """``build(n)`` as compact JSON for the largest ``n`` that fits in ``size`` bytes."""
    low, high = 0, 1
    while len(_dump(build(high))) <= size:
        low, high = high, high * 2
    while high - low > 1:
        middle = (low + high) // 2
        if len(_dump(build(middle))) <= size:
            low = middle
        else:
            high = middle
    body = _dump(build(low))
    if len(body) > size:
        raise ValueError(f"even the smallest body is {len(body)} bytes, over {size}")
    return body


def _dump(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode()


HOSTILE: dict[str, Callable[[int, int], bytes]] = {
    "empty-batch": lambda size, _: empty_batch(size),
    "empty-steps": lambda size, _: empty_steps(size),
    "unknown-keys": lambda size, _: unknown_keys(size),
    "wrong-batch": wrong_batch,
}
"""Each hostile shape by name: ``build(size, max_batch)``."""
