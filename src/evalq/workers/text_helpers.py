"""Tier 1 of the in-process worker in helper processes that own the model.

The in-process worker (`evalq.workers.embedded`) runs every queue in one interpreter: merges,
baseline refreshes, intake and the judge's calls are Python holding the GIL, and tier 1's host
work (tokenizing, building input rows, matching) waited on them, so a tier-1 call took 2-3.6x
its wall in a distributed text worker's child. Here the worker's tier-1 batches
(`evalq.metrics.score_batcher`) are handed to long-lived child processes, each of which loads
the BERTScore model once and runs `SemanticScorer.score_many` (or, for the injection scan's
sentences, `SemanticScorer.read_many`) on what it is sent: the same code, the same scores, in an
interpreter of its own.

- At most one helper per tier-1 slot of the worker (`bootstrap.pool_children`, one per CPU, or
  fewer by EVALQ_TEXT_HELPERS), each started when a batch finds every started one busy, as
  ``python -m evalq.workers.text_helpers`` with one end of a socket pair: a clean interpreter
  that inherits nothing of the worker's threads or connections and, unlike multiprocessing's
  spawn, does not run the caller's main script again (a script without a ``__main__`` guard
  would not survive that). A batch holds one slot (`evalq.tasks.resources.text_capacity`,
  which sets torch's thread cap for it: the cap is sent along with the batch) and one helper.
- A helper that dies (killed, out of memory) is seen while its batch waits (`HelperLost` is
  raised in each of the batch's tasks, which the tier's retries then run again on a new helper)
  and is replaced on the next batch; a helper whose parent dies sees its pipe close and exits.
- `stop` (the worker's shutdown) asks each helper to exit and kills one that does not.

EVALQ_TEXT_HELPERS=0 keeps tier 1 in the worker's own threads. A distributed text worker never
uses helpers: its prefork children are the processes that own the model.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import multiprocessing
import os
import pickle
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from evalq.core.profile import Precision

log = logging.getLogger(__name__)

LOAD_TIMEOUT_S = 600.0
"""How long a helper may take to import torch and load the model before it counts as lost."""
STOP_TIMEOUT_S = 10.0
"""How long `stop` waits for a helper to exit before it kills it."""
_POLL_S = 0.2


class HelperLost(RuntimeError):
    """The helper process running a tier-1 batch exited before it answered."""


@dataclass(frozen=True)
class ModelKey:
    """What a helper loads: `SemanticScorer`'s arguments."""

    model_path: str
    max_chunk_tokens: int
    device: str


def _serve(connection: Connection, key: ModelKey) -> None:
    """A helper's life: load the model, then score each batch it is sent until told to stop
    (None) or until its parent is gone (the pipe closes)."""
    import torch

    from evalq.metrics.semantic import SemanticScorer, default_model_path

    try:
        scorer = SemanticScorer(
            key.model_path or default_model_path(),
            max_chunk_tokens=key.max_chunk_tokens,
            device=key.device,
        )
    except Exception as error:
        connection.send(("error", _portable(error), time.process_time()))
        return
    connection.send(("ready", os.getpid(), time.process_time()))
    while True:
        try:
            message = connection.recv()
        except (EOFError, OSError):  # the worker is gone: so is its helper
            return
        if message is None:
            return
        kind, items, precision, threads = message
        if threads and torch.get_num_threads() != threads:
            torch.set_num_threads(threads)
        cpu = time.thread_time()
        try:
            if kind == "read":
                answer = scorer.read_many(items)
            else:
                answer = scorer.score_many(items, precision=precision)
            reply: tuple[Any, ...] = ("ok", answer)
        except Exception as error:
            reply = ("error", _portable(error))
        used = torch.get_num_threads()
        connection.send((*reply, time.thread_time() - cpu, used, time.process_time()))


def _portable(error: Exception) -> Exception:
    """``error`` itself when it can cross the pipe, else a RuntimeError naming it."""
    try:
        pickle.loads(pickle.dumps(error))
    except Exception:
        return RuntimeError(f"{type(error).__name__}: {error}")
    return error


class Helper:
    """One helper process and its pipe; started on first use, started again after a loss."""

    def __init__(self, key: ModelKey) -> None:
        self.key = key
        self._process: subprocess.Popen[bytes] | None = None
        self._connection: Connection | None = None
        self.cpu_s = 0.0  # the process's CPU seconds, as of its last answer
        self.threads: int | None = None  # torch's threads in its last batch
        self.stopped = False

    @property
    def pid(self) -> int | None:
        """The live process's id, None before it starts or after it is lost or stopped."""
        return self._process.pid if self._process is not None else None

    def start(self) -> None:
        """Start the process and wait for its model (no-op when it runs)."""
        if self._process is not None:
            return
        if self.stopped:  # a batch that outlived the worker's shutdown starts no new helper
            raise HelperLost("the in-process worker's tier-1 helpers were stopped")
        ours, theirs = multiprocessing.Pipe()
        key = json.dumps(dataclasses.asdict(self.key))
        command = [sys.executable, "-m", __name__, str(theirs.fileno()), key]
        env = os.environ | {"PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
        try:
            process = subprocess.Popen(command, pass_fds=(theirs.fileno(),), env=env)
        finally:
            theirs.close()
        self._process, self._connection = process, ours
        answer = self._answer(LOAD_TIMEOUT_S)
        if answer[0] == "error":
            self._discard()
            raise answer[1]
        self.cpu_s = answer[2]
        log.info("tier-1 helper %s: model loaded", process.pid)

    def score_many(
        self, items: Sequence[tuple[str, Sequence[str]]], precision: Precision, threads: int
    ) -> tuple[list[list[float]], float]:
        """`SemanticScorer.score_many` in the helper: (scores, the helper's CPU seconds)."""
        payload = [(text, tuple(references)) for text, references in items]
        return self._ask(("score", payload, precision, threads))

    def read_many(
        self, groups: Sequence[Sequence[str]], threads: int
    ) -> tuple[list[list[float]], float]:
        """`SemanticScorer.read_many` in the helper: (probabilities, the helper's CPU seconds)."""
        return self._ask(("read", [tuple(group) for group in groups], "fp32", threads))

    def _ask(self, message: tuple[Any, ...]) -> tuple[list[list[float]], float]:
        self.start()
        assert self._connection is not None
        try:
            self._connection.send(message)
        except (OSError, ValueError) as error:
            self._lost(f"its pipe failed ({error})")
        answer = self._answer(None)
        status, value, cpu, self.threads, self.cpu_s = answer
        if status == "error":
            raise value
        return value, cpu

    def _answer(self, timeout_s: float | None) -> tuple[Any, ...]:
        """The helper's next message; `HelperLost` (the process discarded) when it exits first
        or takes longer than ``timeout_s``."""
        assert self._process is not None and self._connection is not None
        waited = 0.0
        while True:
            try:
                if self._connection.poll(_POLL_S):
                    answer: tuple[Any, ...] = self._connection.recv()
                    return answer
            except (EOFError, OSError):
                self._lost("its pipe closed")
            if self._process.poll() is not None:
                self._lost(f"it exited with code {self._process.returncode}")
            waited += _POLL_S
            if timeout_s is not None and waited > timeout_s:
                self._lost(f"it did not answer within {timeout_s:.0f} s")

    def _lost(self, why: str) -> None:
        pid = self.pid
        self._discard()
        raise HelperLost(f"the tier-1 helper process {pid} was lost: {why}")

    def _discard(self) -> None:
        process, connection = self._process, self._connection
        self._process = self._connection = None
        if connection is not None:
            connection.close()
        if process is not None:
            if process.poll() is None:
                process.kill()
            process.wait(STOP_TIMEOUT_S)

    def stop(self) -> None:
        """Ask the process to exit; kill it when it does not within `STOP_TIMEOUT_S`."""
        self.stopped = True
        process, connection = self._process, self._connection
        if process is None or connection is None:
            return
        with suppress(OSError, ValueError):  # it is gone already
            connection.send(None)
        try:
            process.wait(STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            log.warning(
                "tier-1 helper %s did not stop within %s s: killed", process.pid, STOP_TIMEOUT_S
            )
        self._discard()


class HelperScorer:
    """`score_many` for a `ScoreBatcher`, run on one of ``count`` helpers of one model."""

    def __init__(self, key: ModelKey, count: int) -> None:
        self.helpers = [Helper(key) for _ in range(count)]
        # last in, first out: a batch takes the helper used last, so a second helper starts
        # (and loads its model) only when batches overlap
        self._free: queue.LifoQueue[Helper] = queue.LifoQueue()
        for helper in reversed(self.helpers):
            self._free.put(helper)

    def score_many(
        self, items: Sequence[tuple[str, Sequence[str]]], *, precision: Precision = "fp32"
    ) -> list[list[float]]:
        """BERTScore F1 of each text against its references, computed in a helper."""
        import torch  # the worker thread's cap, set by the slot it holds

        helper = self._free.get()
        try:
            scores, cpu = helper.score_many(items, precision, torch.get_num_threads())
        finally:
            self._free.put(helper)
        _thread.helper_cpu_s = getattr(_thread, "helper_cpu_s", 0.0) + cpu
        return scores

    def read_many(self, groups: Sequence[Sequence[str]]) -> list[list[float]]:
        """The instruction reader's probabilities of each group's sentences, in a helper."""
        import torch  # the worker thread's cap, set by the slot it holds

        helper = self._free.get()
        try:
            found, cpu = helper.read_many(groups, torch.get_num_threads())
        finally:
            self._free.put(helper)
        _thread.helper_cpu_s = getattr(_thread, "helper_cpu_s", 0.0) + cpu
        return found

    def stop(self) -> None:
        for helper in self.helpers:
            helper.stop()


_thread = threading.local()


def helper_cpu_s() -> float:
    """CPU seconds the helpers spent on the batches this thread sent them (benches add it to
    the thread's own: the compute moved out of it)."""
    return float(getattr(_thread, "helper_cpu_s", 0.0))


class TextHelpers:
    """The in-process worker's helpers: one `HelperScorer` per model."""

    def __init__(self, count: int) -> None:
        self.count = count
        self._lock = threading.Lock()
        self._scorers: dict[ModelKey, HelperScorer] = {}
        self.stopped = False

    def scorer(self, key: ModelKey) -> HelperScorer:
        """This model's helpers (not started until a batch needs one)."""
        with self._lock:
            if self.stopped:
                raise HelperLost("the in-process worker's tier-1 helpers were stopped")
            if key not in self._scorers:
                self._scorers[key] = HelperScorer(key, self.count)
            return self._scorers[key]

    def pids(self) -> list[int]:
        """The live helpers' process ids."""
        with self._lock:
            helpers = [h for s in self._scorers.values() for h in s.helpers]
        return [pid for pid in (h.pid for h in helpers) if pid is not None]

    def cpu_s(self) -> float:
        """CPU seconds of the helpers, as of their last answers."""
        with self._lock:
            return sum(h.cpu_s for s in self._scorers.values() for h in s.helpers)

    def start_all(self) -> None:
        """Start every helper of the models used so far and wait for their models (benches:
        the loading is left out of what they measure)."""
        with self._lock:
            helpers = [h for s in self._scorers.values() for h in s.helpers]
        for helper in helpers:
            helper.start()

    def stop(self) -> None:
        """Stop every helper (the worker's shutdown)."""
        with self._lock:
            self.stopped = True
            scorers = list(self._scorers.values())
        for scorer in scorers:
            scorer.stop()


_active: list[TextHelpers] = []
_active_lock = threading.Lock()


def current() -> TextHelpers | None:
    """The running in-process worker's helpers, None when tier 1 runs in this process."""
    with _active_lock:
        return _active[-1] if _active else None


@contextmanager
def running(count: int) -> Iterator[TextHelpers]:
    """Tier 1 of this process in ``count`` helpers per model for the duration of the block;
    the helpers are stopped at its end. Nested blocks (two in-process workers at once) share
    the outer block's helpers."""
    with _active_lock:
        outer = _active[-1] if _active else None
        helpers = outer or TextHelpers(count)
        _active.append(helpers)
    try:
        yield helpers
    finally:
        with _active_lock:
            _active.remove(helpers)
            last = helpers not in _active
        if last:
            helpers.stop()


if __name__ == "__main__":
    _serve(Connection(int(sys.argv[1])), ModelKey(**json.loads(sys.argv[2])))
