"""The single Settings object; every knob has the ``EVALQ_`` prefix."""

from __future__ import annotations

import base64
from functools import lru_cache
from pathlib import Path

from pydantic import Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    """Process-wide configuration, read from the environment (``EVALQ_*``) once."""

    model_config = SettingsConfigDict(env_prefix="EVALQ_", extra="ignore")

    database_url: str = Field(
        default=f"sqlite:///{Path.cwd() / 'evalq.db'}",
        description="SQLAlchemy URL of the store; SQLite file in the working directory by default.",
    )
    read_database_url: str | None = Field(
        default=None,
        description="SQLAlchemy URL of a read replica of the store, for the reads that tolerate "
        "lag (boards, compare, report, UI pages); unset: every read goes to database_url "
        '(docs/deploy.md, "A read replica").',
    )
    broker_url: str | None = Field(
        default=None,
        description="Celery broker (redis://...). Unset: embedded in-process worker (memory://).",
    )
    result_backend: str | None = Field(
        default=None, description="Celery result backend; defaults to the broker URL."
    )
    redis_master_name: str | None = Field(
        default=None,
        description="Name of the Redis master the sentinels watch; required when a Redis URL "
        "is sentinel://host:port;sentinel://host:port (Redis with failover, docs/deploy.md).",
    )
    broker_connect_timeout_s: float = Field(
        default=3.0,
        gt=0,
        description="Producers: seconds to reach the broker before a submit answers unavailable.",
    )
    profile_path: Path | None = Field(
        default=None, description="Scoring profile TOML; the bundled default when unset."
    )
    profile_dir: Path | None = Field(
        default=None, description="Directory of named profiles (NAME.toml) that tasks select."
    )
    visibility_timeout_s: int = Field(
        default=3600,
        ge=60,
        description="Broker visibility timeout; must exceed the longest task plus its retries.",
    )
    task_time_limit_s: int = Field(default=900, ge=10, description="Hard limit of one tier task.")
    tier_max_retries: int = Field(default=3, ge=0, description="Retries of a tier task on error.")
    tier_retry_backoff_s: int = Field(default=5, ge=0, description="First retry countdown.")
    max_deliveries: int = Field(
        default=3, ge=1, description="Deliveries of one tier task before it is recorded failed."
    )
    stuck_after_s: int = Field(
        default=1800, ge=10, description="Submissions queued/running longer are re-enqueued."
    )
    baseline_refresh_debounce_s: float = Field(
        default=2.0, ge=0, description="One baseline refresh per task per this many seconds."
    )
    baseline_refresh_share: float = Field(
        default=0.25,
        gt=0,
        le=1,
        description="The most of the time a task's scheduled refreshes take: after one that "
        "took d seconds the next a merge schedules starts d (1 / share - 1) after it ended.",
    )
    unacked_restore_interval_s: int = Field(
        default=10, ge=1, description="How often workers look for unacked messages to restore."
    )
    recover_every_s: float = Field(
        default=60, gt=0, description="Period of the beat entry that runs the recovery sweep."
    )
    monitor_every_s: float = Field(
        default=60, gt=0, description="Period of the beat entry that checks every monitor."
    )
    ticket_sweep_every_s: float = Field(
        default=60,
        gt=0,
        description="Period of the beat entry that refreshes the tasks whose run tickets "
        "lapsed (a deadline passed without a run) since their board was drawn.",
    )
    worker_heartbeat_s: float = Field(
        default=10,
        gt=0,
        description="How often a worker renews its heartbeat key; the key lives 3 times as long.",
    )
    lost_after_s: int = Field(
        default=60,
        ge=0,
        description="Work no live worker holds (its worker died, or a broker restart dropped "
        "its messages) is re-enqueued once this old.",
    )
    memory_poll_interval_s: float = Field(
        default=0.005, gt=0, description="Polling interval of the embedded memory:// transport."
    )
    judge_model: str | None = Field(
        default=None, description="pydantic-ai model string, or unset to skip tier 2."
    )
    judge_base_url: str | None = Field(
        default=None, description="OpenAI-compatible base URL for a local judge server."
    )
    judge_api_key: SecretStr | None = Field(default=None, description="Judge provider API key.")
    judge_keys: dict[str, SecretStr] = Field(
        default_factory=dict,
        description="Named API keys of judge cascade levels (a JSON object, e.g. "
        '{"local": "none", "hosted": "sk-..."}); a level names its key with `key`.',
    )
    judge_max_attempts: int | None = Field(default=None, ge=1, description="Tries per call.")
    judge_output_retries: int | None = Field(
        default=None, ge=0, description="Retries of an output that fails validation."
    )
    judge_request_timeout_s: float | None = Field(default=None, gt=0)
    judge_backoff_base_s: float | None = Field(default=None, ge=0)
    judge_backoff_cap_s: float | None = Field(default=None, ge=0)
    judge_max_output_tokens: int | None = Field(default=None, ge=16)
    judge_requests_per_minute: int | None = Field(
        default=None, ge=1, description="Shared by every worker (Redis token bucket)."
    )
    judge_tokens_per_minute: int | None = Field(default=None, ge=1)
    judge_cache_url: str | None = Field(
        default=None,
        description="Redis URL of the judgment cache (e.g. a DB with maxmemory + allkeys-lru); "
        "unset: the broker's Redis, bounded by judge_cache_ttl_s and judge_cache_max_entries.",
    )
    judge_cache_ttl_s: int = Field(
        default=30 * 24 * 3600, ge=1, description="Lifetime of a cached judgment (30 days)."
    )
    judge_cache_max_entries: int = Field(
        default=50_000,
        ge=1,
        description="Most cached judgments kept; inserting past it drops the oldest.",
    )
    api_max_body_bytes: int = Field(
        default=5 * 1024 * 1024, ge=1024, description="HTTP API: larger request bodies get 413."
    )
    api_max_batch: int = Field(
        default=1000, ge=1, description="HTTP API: most submissions in one POST /v1/submissions."
    )
    forwarded_allow_ips: str | None = Field(
        default=None,
        pattern=r"^[0-9A-Fa-f.:/*, ]+$",
        description="`evalq api`: the proxies (addresses or networks, comma-separated; '*' "
        "for any) whose X-Forwarded-For / X-Forwarded-Proto are believed. Unset: none are, from "
        "any client, loopback included (the scheme decides the cookies' Secure flag).",
    )
    trace_quiet_s: float = Field(
        default=15,
        ge=0,
        description="OTLP spans in: a trace whose root span has ended becomes a submission once "
        "no span of it arrived for this many seconds (or at once, given evalq.trace.end).",
    )
    trace_sweep_every_s: float = Field(
        default=5,
        gt=0,
        description="Period of the beat entry (or, with no broker, the API's thread) that turns "
        "complete traces into submissions.",
    )
    otel_results_endpoint: str | None = Field(
        default=None,
        description="Results out: the OTLP/HTTP logs endpoint (http://collector:4318/v1/logs) "
        "each evaluation is sent to as one gen_ai.evaluation.result event, best effort, once "
        "its merge has committed (docs/traces.md, 'Results out'). Unset: nothing is sent.",
    )
    otel_results_headers: SecretStr | None = Field(
        default=None,
        description="Results out: headers for that endpoint, as OTEL_EXPORTER_OTLP_HEADERS "
        "writes them (key=value,key=value; e.g. authorization=Bearer%20<token>).",
    )
    otel_results_timeout_s: float = Field(
        default=5,
        gt=0,
        le=60,
        description="Results out: seconds one export to that endpoint may take, retries "
        "included (a dead endpoint delays a process's exit by at most about this much).",
    )
    session_quiet_s: float = Field(
        default=60,
        ge=0,
        description="Sessions: a session (runs sharing gen_ai.conversation.id or session.id) "
        "is evaluated as a unit once none of its turns was merged for this many seconds "
        "(docs/sessions.md); a later turn opens it again.",
    )
    trace_retention_s: int = Field(
        default=7 * 24 * 3600,
        ge=0,
        description="A finished trace that names no task and that no task's rule took is kept "
        "this long (for a backfill), then dropped by the trace sweep.",
    )
    trace_backfill_max_traces: int = Field(
        default=10_000,
        ge=1,
        description="Most untaken traces one backfill may examine; a time range holding more "
        "is refused (422) before any is taken, so it is backfilled in shorter ranges.",
    )
    trace_max_spans: int = Field(
        default=10_000,
        ge=1,
        description="Most spans one trace may hold; a trace past it is refused whole, never cut.",
    )
    trace_max_request_spans: int = Field(
        default=10_000,
        ge=1,
        description="HTTP API: most spans in one POST /v1/traces (the SDK sends 512 at most).",
    )
    compare_max_tasks: int = Field(
        default=100,
        ge=1,
        description="Compare (API, CLI, Client): most tasks one comparison may name (after globs).",
    )
    compare_max_groups: int = Field(
        default=20,
        ge=2,
        description="Compare: most groups one comparison may compare, the reference included.",
    )
    compare_max_submissions: int = Field(
        default=50_000,
        ge=1,
        description="Compare: most evaluated submissions one comparison may read (counted first).",
    )
    compare_max_units: int = Field(
        default=5_000,
        ge=2,
        description="Compare: most units (tasks, or a suite's scenarios) one comparison may pair.",
    )
    compare_concurrency: int = Field(
        default=1,
        ge=1,
        description="HTTP API: comparisons computed at once per process; others wait their turn.",
    )
    actor: str | None = Field(
        default=None,
        max_length=100,
        description="Who the Python client and the CLI record as deciding a review (accept, "
        "un-accept) when the call names no one (by=, --by); the HTTP API records the key's name.",
    )
    task_sent_events: bool = Field(
        default=False,
        description="Producers send a task-sent event per task they publish (Flower then shows "
        "each task's queue and its time waiting). Off: Flower still shows every task from the "
        "workers' events, without its routing key; the events cost ~11% of a submit.",
    )
    task_events: bool = Field(
        default=False,
        description="Workers send task events (received, started, succeeded) for every task "
        "from their start. Off: none until a monitor asks for them (Flower does, on start and "
        "every 5 s); each event is a message the worker builds and publishes.",
    )
    flower_user: str = Field(default="evalq", min_length=1, description="Flower basic-auth user.")
    flower_password: SecretStr | None = Field(
        default=None, description="Flower basic-auth password; no default: Flower refuses to start."
    )
    webhook_key: SecretStr | None = Field(
        default=None,
        description="Fernet key(s) that encrypt webhook signing secrets, comma-separated: the "
        "first encrypts, every one decrypts (rotation). Unset: registering a webhook is refused.",
    )
    webhook_max_attempts: int = Field(
        default=5, ge=1, le=20, description="Webhooks: deliveries of one event before giving up."
    )
    webhook_backoff_s: float = Field(
        default=5,
        ge=0,
        description="Webhooks: first retry countdown; doubles per attempt (capped at 300 s).",
    )
    webhook_timeout_s: float = Field(
        default=10, gt=0, le=60, description="Webhooks: seconds one POST to a receiver may take."
    )
    webhook_allow_private: bool = Field(
        default=False,
        description="Webhooks: allow receivers on private, loopback, link-local and other "
        "non-global addresses (local development); refused by default.",
    )
    trace_max_open_per_key: int = Field(
        default=10_000,
        ge=1,
        description="HTTP API: most open traces (spans arriving, not yet finalised) one API key "
        "may hold; a POST /v1/traces that would open more is refused whole with 429.",
    )
    webhook_max_answer_bytes: int = Field(
        default=8192,
        ge=1024,
        le=1024 * 1024,
        description="Webhooks: most bytes of a receiver's answer read (its status line and "
        "headers; the body is never read). A longer head fails the attempt.",
    )
    monitor_max: int = Field(
        default=500,
        ge=1,
        description="Monitors: most monitors in the store; setting one more is refused (422).",
    )
    monitor_max_per_task: int = Field(
        default=50,
        ge=1,
        description="Monitors: most monitors watching one task; a monitor that would watch a "
        "stored task past it is refused (422), and a check reads at most this many per task.",
    )
    event_resend_after_s: float = Field(
        default=300,
        gt=0,
        description="Webhook events: a pending event whose message was sent this long ago (or "
        "never could be) is sent again by the event sweep.",
    )
    event_sweep_every_s: float = Field(
        default=30,
        gt=0,
        description="Period of the beat entry that sends again the webhook events still pending "
        "past EVALQ_EVENT_RESEND_AFTER_S (with no broker, `evalq api` sends every pending event "
        "again when it starts).",
    )
    text_batch_max: int = Field(
        default=32,
        ge=1,
        le=1024,
        description="Tier 1: submissions scored together in one batch by a worker that runs "
        "tier 1 in threads (the calls waiting when a compute slot frees; none is waited for).",
    )
    text_threads: int | None = Field(
        default=None,
        ge=1,
        description="Tier 1: torch threads per computation. Unset: this worker's CPUs shared "
        "out over its children (or its tier-1 slots); set it when several workers share one "
        "machine, so that workers x children x threads <= CPUs (docs/deploy.md).",
    )
    text_helpers: int | None = Field(
        default=None,
        ge=0,
        description="Tier 1 of the in-process worker (no broker: `evalq demo`, `evalq api`, the "
        "Python Client): how many helper processes own the model and run its batches, out of "
        "the interpreter where merges and refreshes run. Unset: one per tier-1 slot (one per "
        "CPU); at most that many; 0: tier 1 in the worker's own threads. Each helper holds its "
        "own copy of torch and the model (~400 MB). Distributed workers never use helpers.",
    )
    text_slots_dir: str | None = Field(
        default=None,
        description="Tier 1: the directory where every evalq process on this machine records "
        "its tier-1 compute slots, so that each shares the CPUs out over all of them (torch "
        "threads = CPUs / slots on the machine). Unset: <temp dir>/evalq-tier1-slots-<uid>; "
        "containers that share a host's CPUs share it through one mounted directory.",
    )
    text_device: str = Field(
        default="cpu",
        pattern=r"^(cpu|cuda(:[0-9]+)?)$",
        description="Tier 1: where the BERTScore model runs: cpu, cuda (the current GPU) or "
        "cuda:N. Needs a CUDA build of torch and the device present (checked at load). The "
        "profile's text.precision applies on any device (bf16 runs on a GPU too).",
    )

    @field_validator("webhook_key")
    @classmethod
    def _fernet_keys(cls, value: SecretStr | None) -> SecretStr | None:
        """Each comma-separated key must be a Fernet key: 32 bytes in URL-safe base64."""
        if value is not None:
            for key in value.get_secret_value().split(","):
                if not is_fernet_key(key.strip()):
                    raise ValueError(
                        "each comma-separated key must be 32 bytes in URL-safe base64 (make one "
                        "with: python -c 'import base64,os;print(base64.urlsafe_b64encode("
                        "os.urandom(32)).decode())')"
                    )
        return value

    @field_validator("read_database_url")
    @classmethod
    def _replica_is_postgresql(cls, value: str | None) -> str | None:
        """A read replica is a PostgreSQL streaming standby: evalq asks it for its lag. Empty
        is unset (a chart's or compose file's blank value)."""
        if not value:
            return None
        if not value.startswith("postgresql"):
            raise ValueError(
                "must be a PostgreSQL URL (postgresql+psycopg://...) of a streaming replica "
                "of EVALQ_DATABASE_URL"
            )
        return value

    @model_validator(mode="after")
    def _sentinel_needs_master_name(self) -> Settings:
        """A ``sentinel://`` URL names sentinels, not a server: the master's name is required."""
        for name in ("broker_url", "result_backend", "judge_cache_url"):
            url = getattr(self, name)
            if url and url.startswith("sentinel://") and not self.redis_master_name:
                raise ValueError(
                    f"EVALQ_{name.upper()} is a sentinel:// URL: set EVALQ_REDIS_MASTER_NAME "
                    "to the name of the master the sentinels watch"
                )
        return self


def is_fernet_key(text: str) -> bool:
    """True when ``text`` is 32 bytes in URL-safe base64, the form Fernet keys take."""
    try:
        return len(base64.urlsafe_b64decode(text.encode("ascii"))) == 32 and len(text) == 44
    except (ValueError, UnicodeEncodeError):
        return False


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The process's Settings, created on first use."""
    return Settings()
