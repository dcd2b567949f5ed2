"""GET /metrics: evaluation health for Prometheus, read from the store and the broker per scrape.

A failed tier is a successful Celery task (the failure is data in the row), so Flower's failure
counter stays at 0 while evaluations degrade. These series say it instead. The API process sees
none of the workers' events, so nothing is counted in-process: a custom collector asks the store
(`evalq.read.health`, aggregate queries only) and the broker (`evalq.workers.depths`) at each
scrape, which keeps the figures right with any number of API and worker processes.

Needs an API key with the ``read`` scope, like every other read (Prometheus sends it with
``authorization: {credentials_file: ...}`` in its scrape config): the figures name tiers, error
classes and spend.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import get_args

from fastapi import APIRouter, Depends, Response
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector

from evalq.core.monitors import MonitorState
from evalq.core.settings import Settings
from evalq.core.status import STATUSES
from evalq.producer.api.auth import require
from evalq.producer.api.deps import SettingsDep
from evalq.producer.api.errors import ERROR_RESPONSES
from evalq.read import monitors
from evalq.read.health import EvaluationHealth, evaluation_health
from evalq.read.monitors import SCORE_WINDOW, TaskScore
from evalq.store.db import session_scope
from evalq.store.models import TraceStatus
from evalq.workers.depths import BROKER_TIMEOUT_S, redis_queue_depths
from evalq.workers.redis_url import is_redis_url

router = APIRouter(tags=["health"])


class EvaluationCollector(Collector):
    """Yields evalq's series from the store and the broker of ``settings`` when scraped."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings

    def collect(self) -> Iterator[GaugeMetricFamily | CounterMetricFamily]:
        """Every series, read now."""
        with session_scope(self.settings.database_url) as session:
            health = evaluation_health(session)
            scores = monitors.task_scores(session)
            states = monitors.state_counts(session)
        yield from store_series(health, datetime.now(UTC))
        yield from score_series(scores, states)
        yield from broker_series(self.settings.broker_url, self.settings.redis_master_name)


def store_series(
    health: EvaluationHealth, now: datetime
) -> Iterator[GaugeMetricFamily | CounterMetricFamily]:
    """The series the store answers: statuses, tier failures, the judge's spend, queued age."""
    statuses = GaugeMetricFamily(
        "evalq_evaluations", "Submissions per evaluation status.", labels=["status"]
    )
    for status in (*STATUSES, *sorted(set(health.by_status) - set(STATUSES))):
        statuses.add_metric([status], health.by_status.get(status, 0))
    yield statuses
    failures = CounterMetricFamily(
        "evalq_tier_failures",
        "Tier results stored as failed, by tier and error class.",
        labels=["tier", "error"],
    )
    for (tier, error), count in sorted(health.tier_failures.items()):
        failures.add_metric([tier, error], count)
    yield failures
    judge = health.judge
    retries = CounterMetricFamily(
        "evalq_judge_retries", "Judge requests sent again, by cause.", labels=["kind"]
    )
    retries.add_metric(["transport"], judge.transport_retries)
    retries.add_metric(["validation"], judge.validation_retries)
    yield retries
    yield CounterMetricFamily(
        "evalq_judge_rate_limited", "Judge requests refused with 429.", value=judge.rate_limited
    )
    yield CounterMetricFamily(
        "evalq_judge_cost_usd", "Dollars of the priced judgments.", value=judge.cost_usd
    )
    traces = GaugeMetricFamily(
        "evalq_traces",
        "Streamed traces per status; refused and failed ones can never be runs "
        "(GET /v1/traces/{id} says why).",
        labels=["status"],
    )
    for status in sorted(set(get_args(TraceStatus)) | set(health.traces_by_status)):
        traces.add_metric([status], health.traces_by_status.get(status, 0))
    yield traces
    yield GaugeMetricFamily(
        "evalq_oldest_queued_age_seconds",
        "Seconds the longest-waiting queued submission has waited (0: none queued).",
        value=health.oldest_queued_age_s(now),
    )


def score_series(
    scores: list[TaskScore], states: dict[str, dict[MonitorState, int]]
) -> Iterator[GaugeMetricFamily]:
    """Each task's recent score and its monitors' states: one series per task and kind key,
    one per monitored task and state (no run, model, tool or monitor label: the count of
    series is the count of tasks and monitored tasks, however many runs and monitors)."""
    score = GaugeMetricFamily(
        "evalq_task_score",
        f"Mean of the task kind's ranking value over its latest {SCORE_WINDOW} complete runs.",
        labels=["task", "key"],
    )
    runs = GaugeMetricFamily(
        "evalq_task_score_runs",
        "Runs the task's score gauge is the mean of.",
        labels=["task", "key"],
    )
    for found in scores:
        score.add_metric([found.task_id, found.key], found.mean)
        runs.add_metric([found.task_id, found.key], found.runs)
    yield score
    yield runs
    held = GaugeMetricFamily(
        "evalq_task_monitors",
        "Monitors holding the task in each state (ok, warning, alert, no data).",
        labels=["task", "state"],
    )
    for task_id, counts in states.items():
        for state, count in counts.items():
            held.add_metric([task_id, state], count)
    yield held


def broker_series(broker_url: str | None, master_name: str | None) -> Iterator[GaugeMetricFamily]:
    """Messages waiting per queue, and whether the broker answered (depths only from Redis)."""
    up = GaugeMetricFamily("evalq_broker_up", "1 when the Redis broker answered this scrape.")
    if not broker_url or not is_redis_url(broker_url) or broker_url.startswith("unix://"):
        return
    try:
        depths = redis_queue_depths(broker_url, master_name=master_name, timeout_s=BROKER_TIMEOUT_S)
    except Exception:  # any failure means "not reachable"; the scrape itself still answers
        up.add_metric([], 0)
        yield up
        return
    up.add_metric([], 1)
    yield up
    gauge = GaugeMetricFamily("evalq_queue_depth", "Messages waiting per queue.", labels=["queue"])
    for queue, depth in depths.items():
        gauge.add_metric([queue], depth)
    yield gauge


@router.get(
    "/metrics",
    response_class=Response,
    responses={
        200: {"content": {CONTENT_TYPE_LATEST: {}}},
        401: ERROR_RESPONSES[401],
        403: ERROR_RESPONSES[403],
    },
    dependencies=[Depends(require("read"))],
)
def metrics(settings: SettingsDep) -> Response:
    """Prometheus text exposition of evaluation health (API key with the ``read`` scope)."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(EvaluationCollector(settings))
    return Response(generate_latest(registry), media_type=CONTENT_TYPE_LATEST)
