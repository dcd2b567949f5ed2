"""Scylla submissions (spec 003): variants T0-T3 of one task, ten runs each.

T0 is the bare prompt; T1 adds the project's conventions file, T2 tool skills, T3 a reviewer
sub-agent. Later tiers pass more often (5, 7, 8 and 9 runs out of 10) with higher
implementation rates, and T3 pays for its sub-agent in tokens. The numbers come from a seeded
random generator, so regenerating gives the same files.
"""

from __future__ import annotations

import random
from typing import Any

from evalq_examples.common import tests_of, usage
from evalq_examples.tasks import SCYLLA, SCYLLA_TESTS

PASSES = {
    "T0": (1, 0, 1, 0, 0, 1, 1, 0, 1, 0),
    "T1": (1, 1, 0, 1, 1, 0, 1, 1, 1, 0),
    "T2": (1, 1, 1, 0, 1, 1, 1, 1, 0, 1),
    "T3": (1, 1, 1, 1, 1, 0, 1, 1, 1, 1),
}
# variant: (impl_rate of a passing run, input tokens, output tokens, tool calls, seconds)
PROFILE = {
    "T0": (0.80, 205_000, 13_500, 29, 430.0),
    "T1": (0.85, 232_000, 14_200, 26, 405.0),
    "T2": (0.88, 248_000, 15_800, 22, 372.0),
    "T3": (0.91, 338_000, 21_900, 34, 515.0),
}
APPROACH = {
    "T0": "Wrote TokenBucket(capacity, refill_per_second) from the prompt alone",
    "T1": "Followed CONVENTIONS.md (dataclass config, injected clock, no module globals)",
    "T2": "Used the test-runner and type-check skills while writing TokenBucket",
    "T3": "Wrote TokenBucket and had the reviewer sub-agent check locking and clock use",
}
# Index into SCYLLA_TESTS of a test a failing run breaks, and what went wrong.
FAILURES = [
    (
        5,
        "after a long idle period the bucket held more than its capacity: refill was added "
        "before clamping",
    ),
    (6, "time.time() was used, so the test that moves the wall clock backwards fails"),
    (
        7,
        "consume() reads and writes the token count outside the lock; the 16-thread test "
        "over-consumes",
    ),
    (
        4,
        "refill is computed from the first call's timestamp instead of the last refill, so the "
        "bucket overshoots capacity",
    ),
]


def _run(variant: str, index: int, rng: random.Random) -> dict[str, Any]:
    passed = bool(PASSES[variant][index])
    good_impl, inp, out, calls, seconds = PROFILE[variant]
    if passed:
        impl = min(1.0, good_impl + rng.uniform(-0.06, 0.06))
        failing: set[int] = set()
        iterations = rng.choice((1, 1, 2))
        result = f"all {len(SCYLLA_TESTS)} tests pass."
    else:
        impl = rng.uniform(0.35, 0.68)
        broken, why = FAILURES[rng.randrange(len(FAILURES))]
        failing = {broken}
        iterations = rng.choice((2, 3, 4))
        result = f"{len(SCYLLA_TESTS) - 1}/{len(SCYLLA_TESTS)} tests pass; {why}."
    stretch = 1.0 if passed else 1.25  # failing runs flail for longer before giving up
    return {
        "id": f"scylla-{variant}-run{index}",
        "task_id": SCYLLA,
        "tool": "claude-code",
        "model": "claude-sonnet-4",
        "variant": variant,
        "run_index": index,
        "usage": usage(
            input_tokens=int(round(inp * stretch * rng.uniform(0.85, 1.15), -1)),
            output_tokens=int(round(out * stretch * rng.uniform(0.8, 1.2), -1)),
            calls=max(1, round(calls * stretch) + rng.randint(-6, 6)),
            iterations=iterations,
            seconds=round(seconds * stretch * rng.uniform(0.8, 1.25), 1),
        ),
        "output": f"{APPROACH[variant]}; {result}",
        "evidence": {
            "files_created": ["src/ratelimit/token_bucket.py", "src/ratelimit/__init__.py"],
            "success": True,
            "tests": tests_of(SCYLLA_TESTS, failing),
        },
        "passed": passed,
        "impl_rate": round(impl, 2),
    }


def submissions() -> list[dict[str, Any]]:
    """Ten runs of each variant T0-T3, from a fixed seed."""
    rng = random.Random(3)
    return [_run(variant, index, rng) for variant in PASSES for index in range(10)]
