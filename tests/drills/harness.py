"""Fault-drill harness: real worker processes, a private Redis db, a fresh store, row counts.

Workers are ``evalq worker`` subprocesses, each in its own process group (so a drill can kill a
whole worker, children included, like a lost machine). Counts are read from the store, which is
the source of truth; the broker only delivers.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import redis
from celery import Celery
from sqlalchemy import func, select

from evalq.store.db import session_scope
from evalq.store.models import EvaluationRow, SubmissionRow, TierResultRow
from evalq.workers.names import TIER_TASKS
from tests.support.databases import fresh_database
from tests.support.processes import PATIENCE
from tests.support.services import REDIS_HOST, REDIS_PORT, need

REDIS_DRILL_DB = int(os.environ.get("EVALQ_TEST_DRILL_REDIS_DB", "14"))
"""Redis database the drills flush and use (override to run two suites at once)."""
ROOT = Path(__file__).resolve().parents[2]
EVALQ = str(Path(sys.executable).with_name("evalq"))
ALL_QUEUES = "evalq.text,evalq.judge,evalq.graph,evalq.merge,evalq.webhooks"

# Settings every drill runs with (EVALQ_ prefix added by `drill_env`). The visibility timeout is
# the smallest Settings allows (60 s); it exceeds the task limit plus the longest retry countdown
# (40 + 1 * 2**(3-1) = 44 s), which `workers/app.py` enforces.
DRILL_SETTINGS: dict[str, str] = {
    "visibility_timeout_s": "60",
    "task_time_limit_s": "40",
    "tier_max_retries": "3",
    "tier_retry_backoff_s": "1",
    "max_deliveries": "3",
    "unacked_restore_interval_s": "1",
    "stuck_after_s": "10",
    "baseline_refresh_debounce_s": "1",
}


def redis_drill_url() -> str:
    """The drills' Redis database (14): broker and result backend; only it is ever flushed."""
    need(REDIS_HOST, REDIS_PORT, "Redis")
    return f"redis://{REDIS_HOST}:{REDIS_PORT}/{REDIS_DRILL_DB}"


def flush_broker(url: str) -> None:
    """FLUSHDB of the drills' Redis database (never FLUSHALL)."""
    assert url.endswith(f"/{REDIS_DRILL_DB}")
    with redis.Redis.from_url(url) as client:
        client.flushdb()


@contextmanager
def fresh_postgres(directory: Path) -> Iterator[str]:
    """A new, migrated PostgreSQL database, dropped afterwards (retrying while it restarts)."""
    with fresh_database("postgresql", directory, prefix="evalq_drill_") as url:
        yield url


def drill_env(db_url: str, broker_url: str, **overrides: str) -> dict[str, str]:
    """The environment of a drill's processes: EVALQ_* settings on top of this one's."""
    settings = DRILL_SETTINGS | {
        "database_url": db_url,
        "broker_url": broker_url,
        "result_backend": broker_url,
    }
    settings |= overrides
    env = {k: v for k, v in os.environ.items() if not k.startswith("EVALQ_")}
    env |= {f"EVALQ_{k.upper()}": v for k, v in settings.items()}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    env["PYTHONUNBUFFERED"] = "1"
    env["OMP_NUM_THREADS"] = "1"  # four BERTScore children on two cores: no thread oversubscription
    return env


def node_name(worker: str) -> str:
    """The Celery node name a drill's worker runs under (the target of control commands)."""
    return f"{worker}@drill"


@dataclass(frozen=True)
class ActiveTier:
    """A tier task running in a worker's child process."""

    pid: int
    submission_id: str
    tier: str


@dataclass
class Worker:
    """One ``evalq worker`` process group and its log file."""

    name: str
    process: subprocess.Popen[bytes]
    log: Path

    @property
    def hostname(self) -> str:
        """The worker's Celery node name (``--hostname``), the target of control commands."""
        return node_name(self.name)

    @property
    def pid(self) -> int:
        """The worker's main process id (also its process-group id)."""
        return self.process.pid

    def children(self) -> list[int]:
        """Pids of the prefork children of the main process."""
        path = Path(f"/proc/{self.pid}/task/{self.pid}/children")
        try:
            return [int(p) for p in path.read_text().split()]
        except (FileNotFoundError, ProcessLookupError):
            return []

    def active_tier_tasks(self, broker_url: str) -> list[ActiveTier]:
        """The tier tasks this worker's children run right now (``celery inspect active``)."""
        app = Celery(broker=broker_url, set_as_current=False)
        try:
            replies = app.control.inspect(destination=[self.hostname], timeout=2).active() or {}
        finally:
            app.close()
        tiers = {name: tier for tier, name in TIER_TASKS.items()}
        return [
            ActiveTier(pid=int(t["worker_pid"]), submission_id=str(t["args"][0]), tier=tiers[name])
            for t in replies.get(self.hostname, [])
            if (name := t["name"]) in tiers and t.get("worker_pid")
        ]

    def alive(self) -> bool:
        """True while the main process runs."""
        return self.process.poll() is None

    def kill_group(self) -> None:
        """SIGKILL the whole process group (a lost machine: main process and children)."""
        with suppress(ProcessLookupError):
            os.killpg(self.pid, signal.SIGKILL)
        self.process.wait(timeout=30 * PATIENCE)

    def stop(self, timeout: float = 20) -> None:
        """Warm shutdown (SIGTERM), then SIGKILL of the group if it does not exit in time."""
        if self.alive():
            try:
                os.killpg(self.pid, signal.SIGTERM)
                self.process.wait(timeout=timeout)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                pass
        self.kill_group()

    def log_text(self) -> str:
        """Everything the worker logged."""
        return self.log.read_text(errors="replace") if self.log.exists() else ""


@dataclass
class Workers:
    """The workers a drill started; all are stopped when the drill ends."""

    env: Mapping[str, str]
    logs: Path
    started: list[Worker] = field(default_factory=list)

    def start(
        self,
        name: str,
        *,
        queues: str = ALL_QUEUES,
        concurrency: int = 2,
        include: tuple[str, ...] = (),
        ready_timeout: float = 120,
    ) -> Worker:
        """Start ``evalq worker`` in a new process group and wait until its children are up."""
        log = self.logs / f"{name}.log"
        argv = [EVALQ, "worker", "--queues", queues, "--pool", "prefork"]
        argv += ["--hostname", node_name(name)]
        argv += ["--concurrency", str(concurrency), "--loglevel", "INFO"]
        for module in include:
            argv += ["--include", module]
        with log.open("ab") as out:
            process = subprocess.Popen(
                argv,
                cwd=ROOT,
                env=dict(self.env),
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        worker = Worker(name, process, log)
        self.started.append(worker)
        wait_for(
            lambda: " ready." in worker.log_text() or not worker.alive(),
            timeout=ready_timeout,
            what=f"worker {name} ready",
        )
        assert worker.alive(), worker.log_text()[-3000:]
        return worker

    def stop_all(self) -> None:
        """Stop every worker this drill started."""
        for worker in self.started:
            worker.stop()


@contextmanager
def workers(env: Mapping[str, str], logs: Path) -> Iterator[Workers]:
    """A `Workers` whose processes are always stopped (even when the drill fails)."""
    logs.mkdir(parents=True, exist_ok=True)
    pool = Workers(env, logs)
    try:
        yield pool
    finally:
        pool.stop_all()


@contextmanager
def beat(env: Mapping[str, str], logs: Path) -> Iterator[Path]:
    """``evalq beat`` (the recovery sweep every EVALQ_RECOVER_EVERY_S) for the block; its log."""
    log = logs / "beat.log"
    with log.open("ab") as out:
        process = subprocess.Popen(
            [EVALQ, "beat", "--schedule", str(logs / "celerybeat-schedule")],
            cwd=ROOT,
            env=dict(env),
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        yield log
    finally:
        with suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=20 * PATIENCE)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=20 * PATIENCE)


def run_cli(env: Mapping[str, str], *args: str, timeout: float = 120 * PATIENCE) -> str:
    """Run ``evalq ARGS`` as its own process; returns stdout, raises on a non-zero exit."""
    done = subprocess.run(
        [EVALQ, *args],
        cwd=ROOT,
        env=dict(env),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def wait_for(
    predicate: Callable[[], bool], *, timeout: float, what: str, poll: float = 0.5
) -> float:
    """Poll ``predicate`` until true; returns the seconds it took, raises TimeoutError after."""
    started = time.monotonic()
    while True:
        if predicate():
            return time.monotonic() - started
        if time.monotonic() - started > timeout:
            raise TimeoutError(f"{what}: not reached within {timeout:.0f} s")
        time.sleep(poll)


def wait_for_progress(
    progress: Callable[[], object],
    done: Callable[[], bool],
    *,
    still_s: float,
    what: str,
    poll: float = 1.0,
) -> float:
    """Poll until ``done()``; returns the seconds it took.

    No fixed deadline (issue 43: on a busy machine a recovery that runs fine takes several times
    as long): the wait fails only when ``progress()`` has not changed for ``still_s`` seconds,
    and the error says what was stuck and where.

    Raises:
        TimeoutError: nothing moved for ``still_s`` seconds before ``done()``.
    """
    started = moved = time.monotonic()
    last = progress()
    while not done():
        if time.monotonic() - moved > still_s:
            raise TimeoutError(f"{what}: nothing moved for {still_s:.0f} s, stuck at {last}")
        time.sleep(poll)
        now = progress()
        if now != last:
            last, moved = now, time.monotonic()
    return time.monotonic() - started


def wait_for_finished(url: str, count: int, *, still_s: float, what: str) -> float:
    """Wait until ``count`` submissions of the store at ``url`` are final, while the batch moves
    (`wait_for_progress` over `movement`)."""
    return wait_for_progress(
        lambda: movement(url), lambda: finished(url) >= count, still_s=still_s, what=what
    )


def wait_for_quietly(predicate: Callable[[], bool], timeout: float, poll: float = 0.5) -> bool:
    """Like `wait_for`, but returns False instead of raising when time runs out."""
    try:
        wait_for(predicate, timeout=timeout, what="", poll=poll)
    except TimeoutError:
        return False
    return True


# --- counts ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Counts:
    """What the store holds for a batch: the figures every drill asserts on."""

    submissions: int
    statuses: dict[str, int]
    evaluations: int
    evaluations_per_submission: dict[int, int]  # rows per submission -> how many submissions
    tier_rows: int
    tier_rows_per_key: dict[int, int]  # rows per (submission, tier) -> how many keys
    tier_statuses: dict[str, int]
    merges: dict[int, int]  # merge_count -> how many evaluations
    deliveries: dict[int, int]  # tier deliveries -> how many tier rows

    @property
    def final(self) -> int:
        """Submissions done, degraded or failed."""
        return sum(n for s, n in self.statuses.items() if s in ("done", "degraded", "failed"))


def _histogram(values: list[Any]) -> dict[Any, int]:
    out: dict[Any, int] = {}
    for value in values:
        out[value] = out.get(value, 0) + 1
    return dict(sorted(out.items()))


def counts(url: str) -> Counts:
    """Count the rows of the store (all of it: a drill's database holds only its batch)."""
    with session_scope(url) as session:
        statuses = dict(
            session.execute(
                select(SubmissionRow.status, func.count()).group_by(SubmissionRow.status)
            ).all()
        )
        per_submission = session.execute(
            select(func.count()).select_from(EvaluationRow).group_by(EvaluationRow.submission_id)
        ).scalars()
        per_key = session.execute(
            select(func.count())
            .select_from(TierResultRow)
            .group_by(TierResultRow.submission_id, TierResultRow.tier)
        ).scalars()
        tier_statuses = dict(
            session.execute(
                select(TierResultRow.status, func.count()).group_by(TierResultRow.status)
            ).all()
        )
        merges = list(session.scalars(select(EvaluationRow.merge_count)))
        deliveries = list(session.scalars(select(TierResultRow.deliveries)))
        return Counts(
            submissions=sum(statuses.values()),
            statuses=statuses,
            evaluations=len(merges),
            evaluations_per_submission=_histogram(list(per_submission)),
            tier_rows=len(deliveries),
            tier_rows_per_key=_histogram(list(per_key)),
            tier_statuses=tier_statuses,
            merges=_histogram(merges),
            deliveries=_histogram(deliveries),
        )


def finished(url: str) -> int:
    """How many submissions are in a final state (cheap: polled while a batch runs)."""
    with session_scope(url) as session:
        return int(
            session.scalar(
                select(func.count())
                .select_from(SubmissionRow)
                .where(SubmissionRow.status.in_(("done", "degraded", "failed")))
            )
            or 0
        )


def movement(url: str) -> str:
    """What a batch has done so far, finer than `finished`: final submissions, tier rows by
    status and their deliveries, evaluations (a change in any of them is progress)."""
    with session_scope(url) as session:
        tiers = session.execute(
            select(TierResultRow.status, func.count(), func.sum(TierResultRow.deliveries)).group_by(
                TierResultRow.status
            )
        ).all()
        evaluations = session.scalar(select(func.count()).select_from(EvaluationRow))
    tiers_said = ", ".join(f"{status} {n} ({d} deliveries)" for status, n, d in sorted(tiers))
    return f"{finished(url)} final; tier rows: {tiers_said or 'none'}; {evaluations} evaluations"


def tier_row(url: str, submission_id: str, tier: str) -> tuple[str, int] | None:
    """(status, deliveries) of one tier row, None while it does not exist."""
    with session_scope(url) as session:
        row = session.get(TierResultRow, (submission_id, tier))
        return None if row is None else (row.status, row.deliveries)


def assert_exactly_once(c: Counts, n: int, tiers: int = 3) -> None:
    """Every one of ``n`` submissions final, one evaluation row each, one row per tier."""
    assert c.submissions == n, c
    assert c.final == n, c
    assert c.evaluations == n and c.evaluations_per_submission == {1: n}, c
    assert c.tier_rows == n * tiers and c.tier_rows_per_key == {1: n * tiers}, c
    assert "running" not in c.tier_statuses, c


# --- a private broker ------------------------------------------------------------------------


def free_port() -> int:
    """A TCP port nothing listens on right now."""
    with socket.socket() as probe:
        probe.bind((REDIS_HOST, 0))
        return int(probe.getsockname()[1])


@dataclass
class PrivateRedis:
    """A ``redis-server`` of the drill's own (own port, own directory, AOF on) it may stop.

    The shared Redis is never stopped: a drill that restarts the broker runs its own.
    """

    directory: Path
    port: int = field(default_factory=free_port)
    process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        """Broker and result-backend URL (database 0 of this server)."""
        return f"redis://{REDIS_HOST}:{self.port}/0"

    def start(self) -> None:
        """Start the server (again: it reloads its append-only file) and wait for it."""
        server = shutil.which("redis-server")
        if server is None:
            pytest.skip("redis-server is not installed")
        self.directory.mkdir(parents=True, exist_ok=True)
        argv = [
            server,
            "--port",
            str(self.port),
            "--bind",
            REDIS_HOST,
            "--dir",
            str(self.directory),
        ]
        argv += ["--appendonly", "yes", "--save", "", "--daemonize", "no"]
        with (self.directory / "redis.log").open("ab") as out:
            self.process = subprocess.Popen(
                argv, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
            )
        wait_for(
            self._answers, timeout=30 * PATIENCE, what=f"redis-server on port {self.port}", poll=0.1
        )

    def _answers(self) -> bool:
        assert self.process is not None and self.process.poll() is None, "redis-server exited"
        try:
            with redis.Redis(host=REDIS_HOST, port=self.port, socket_timeout=1) as client:
                return bool(client.ping())
        except redis.RedisError:
            return False

    def stop(self) -> None:
        """SIGTERM, as an init system stops it: Redis writes its append-only file and exits."""
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=30 * PATIENCE)


@contextmanager
def private_redis(directory: Path) -> Iterator[PrivateRedis]:
    """A started `PrivateRedis`, stopped (killed if need be) when the block ends."""
    server = PrivateRedis(directory)
    server.start()
    try:
        yield server
    finally:
        try:
            server.stop()
        except subprocess.TimeoutExpired:
            assert server.process is not None
            server.process.kill()
