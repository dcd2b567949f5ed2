"""Helpers the benchmarks share: worker subprocesses, RSS, Redis databases, review-like texts.

Every benchmark prints figures and ends with one ratio line (`ratio`); figures are measured side
by side in one run because the machines are shared and noisy. Every benchmark takes ``--quick``
(`parse_args`): a few iterations, so CI runs each one (tests/integration/test_benchmarks.py).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # the benchmarks share tests/support with the test suite
    sys.path.insert(0, str(ROOT))
BIN = Path(sys.executable).parent
REDIS = os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379").rstrip("/")
"""The Redis server the benchmarks use (the test suite passes its own)."""
BENCH_DBS = (11, 12, 13)  # the only Redis databases a benchmark may flush


def redis_url(db: int) -> str:
    """URL of a benchmark Redis database (11, 12 or 13 only)."""
    if db not in BENCH_DBS:
        raise ValueError(f"benchmarks use Redis databases {BENCH_DBS}, not {db}")
    return f"{REDIS}/{db}"


def flush(db: int) -> None:
    """Empty one benchmark Redis database."""
    import redis

    client = redis.Redis.from_url(redis_url(db))
    client.flushdb()
    client.close()


def evalq_env(**settings: str) -> dict[str, str]:
    """This process's environment with ``EVALQ_*`` settings set (and others' EVALQ_ removed)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("EVALQ_")}
    env |= {f"EVALQ_{key.upper()}": value for key, value in settings.items()}
    env["HF_HUB_OFFLINE"] = "1"
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT / "bench"), env.get("PYTHONPATH")]))
    return env


def apply_env(env: dict[str, str]) -> None:
    """Make this process use ``env``'s EVALQ_* settings (and drop the cached Settings)."""
    for key in [k for k in os.environ if k.startswith("EVALQ_")]:
        del os.environ[key]
    os.environ.update({k: v for k, v in env.items() if k.startswith("EVALQ_")})
    from evalq.core.settings import get_settings

    get_settings.cache_clear()


class Worker:
    """A Celery worker subprocess in its own process group, its log in a file."""

    def __init__(self, argv: Sequence[str], env: dict[str, str], log: Path) -> None:
        self.log = log
        self._file = log.open("wb")
        self.process = subprocess.Popen(
            list(argv),
            env=env,
            cwd=ROOT,
            stdout=self._file,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    @property
    def pid(self) -> int:
        """Pid of the worker's main process."""
        return self.process.pid

    def wait_ready(self, timeout: float = 180.0) -> None:
        """Block until the worker logs ``ready.``; RuntimeError with the log tail otherwise."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            text = self.log.read_text(errors="replace")
            if " ready." in text:
                return
            if self.process.poll() is not None:
                break
            time.sleep(0.2)
        raise RuntimeError(f"worker not ready:\n{self.log.read_text(errors='replace')[-3000:]}")

    def children(self) -> list[int]:
        """Pids of the main process's direct children (the prefork pool)."""
        pid = self.process.pid
        found: list[int] = []
        for task in Path(f"/proc/{pid}/task").iterdir():
            found += [int(c) for c in (task / "children").read_text().split()]
        return sorted(found)

    def stop(self) -> None:
        """Warm shutdown (TERM), then KILL the process group this worker started, if needed."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(10)
        self._file.close()


@contextmanager
def worker(argv: Sequence[str], env: dict[str, str], log: Path) -> Iterator[Worker]:
    """Start a worker, wait until it is ready, stop it on exit."""
    started = Worker(argv, env, log)
    try:
        started.wait_ready()
        yield started
    finally:
        started.stop()


def rss_kib(pid: int) -> int:
    """Resident set size of a process in KiB (``VmRSS`` of /proc/PID/status)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for pid {pid}")


def review_sentences() -> list[str]:
    """Sentences of the bundled PeerRead reviews and references (real review prose)."""
    from evalq.producer.cli.demo import EXAMPLES

    texts = [json.loads(line)["output"] for line in (EXAMPLES / "peerread.jsonl").open()]
    for task in json.loads((EXAMPLES / "tasks.json").read_text()):
        texts += task.get("reference_outputs", [])
    sentences = {s.strip() for t in texts for s in re.split(r"(?<=[.!?])\s+|\n+", t)}
    return sorted(s for s in sentences if len(s.split()) >= 4)


def review(rng: random.Random, words: int, sentences: Sequence[str]) -> str:
    """A review of about ``words`` words: sentences drawn with ``rng`` up to that count."""
    chosen: list[str] = []
    count = 0
    while count < words:
        sentence = rng.choice(sentences)
        chosen.append(sentence)
        count += len(sentence.split())
    return " ".join(chosen)


def short_review(rng: random.Random, sentences: Sequence[str]) -> str:
    """A short output (two sentences, ~20-60 words), the pipeline benchmarks' tier-1 input."""
    return " ".join(rng.sample(list(sentences), 2))


def figure(name: str, value: float, unit: str = "") -> None:
    """Print one measured figure, aligned."""
    print(f"{name:<58} {value:>12.4f} {unit}".rstrip(), flush=True)


def ratio(name: str, value: float, unit: str = "") -> None:
    """Print the benchmark's ratio line: its last line, ``ratio <name> <value>``."""
    figure(f"ratio {name}", value, unit)


def _shown(value: Any) -> str:
    return " ".join(map(str, value)) if isinstance(value, list) else str(value)


def parse_args(parser: argparse.ArgumentParser, *, quick: dict[str, Any]) -> argparse.Namespace:
    """The command line, with ``--quick``: the options named in ``quick`` take those values
    unless given explicitly (a few iterations, seconds; the figures then only show it runs)."""
    parser.add_argument(
        "--quick",
        action="store_true",
        help="a few iterations (CI's smoke run): "
        + " ".join(f"--{k.replace('_', '-')} {_shown(v)}" for k, v in quick.items()),
    )
    args = parser.parse_args()
    if args.quick:
        parser.set_defaults(**quick)
        args = parser.parse_args()
    return args
