"""SQLAlchemy 2 models. The database is the source of truth; the broker only delivers."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, ClassVar, Literal

from sqlalchemy import (
    JSON,
    BigInteger,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    String,
    Text,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column


def utcnow() -> datetime:
    """Timezone-aware now, the only clock the store uses."""
    return datetime.now(UTC)


class Base(DeclarativeBase):
    """Declarative base of every evalq table."""

    type_annotation_map: ClassVar[dict[Any, Any]] = {
        dict[str, Any]: JSON,
        datetime: DateTime(timezone=True),
    }


class TaskRow(Base):
    """A task definition (the validated `evalq.core.schemas.Task` as JSON)."""

    __tablename__ = "tasks"

    id: Mapped[str] = mapped_column(String(128), primary_key=True)
    definition: Mapped[dict[str, Any]]
    content_hash: Mapped[str] = mapped_column(String(64))
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)
    # Debounce of baseline refreshes: set when a refresh is scheduled, cleared when it starts.
    refresh_scheduled: Mapped[bool] = mapped_column(default=False)
    # The task's kind as it names it or as its runs derive it (migration 0020_task_kind), kept
    # by `evalq.store.task_kinds`: the tasks page and the boards read it, never derive it.
    kind: Mapped[str] = mapped_column(String(16), default="arena", server_default="arena")


Review = Literal["flagged", "accepted"]
"""A submission's manual review: ``flagged`` (its outlier flags ask for a person; it is left out
of its task's baseline until accepted) or ``accepted`` (a person accepted it; it counts again).
None: never flagged."""


class SubmissionRow(Base):
    """One submission, its lifecycle status, and the raw metrics baselines are built from."""

    __tablename__ = "submissions"

    id: Mapped[str] = mapped_column(String(128), primary_key=True)
    task_id: Mapped[str] = mapped_column(ForeignKey("tasks.id"), index=True)
    content_hash: Mapped[str] = mapped_column(String(64))
    payload: Mapped[dict[str, Any]]
    status: Mapped[str] = mapped_column(String(16), index=True)
    error: Mapped[dict[str, Any] | None] = mapped_column(JSON, default=None)
    enqueue_count: Mapped[int] = mapped_column(default=0)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow, index=True)
    tool: Mapped[str] = mapped_column(String(200))
    model: Mapped[str] = mapped_column(String(200))
    variant: Mapped[str | None] = mapped_column(String(8), default=None)
    run_index: Mapped[int | None] = mapped_column(default=None)
    total_tokens: Mapped[int] = mapped_column(Integer)
    tool_calls: Mapped[int] = mapped_column(Integer)
    iterations: Mapped[int] = mapped_column(Integer)
    execution_time: Mapped[float | None] = mapped_column(Float, default=None)
    cost_usd: Mapped[float | None] = mapped_column(Float, default=None)
    # Where cost_usd's price came from (`PriceSource` as JSON), stored at submit (migration
    # 0007); None without a cost, and on rows stored before 0007 (the merge prices them again).
    priced_by: Mapped[dict[str, Any] | None] = mapped_column(JSON, default=None)
    # `core.schemas.run_digests` (migration 0008): a copy of a run (same content, any id or
    # labels) has the same run_hash; the same output with other usage the same output_hash only.
    run_hash: Mapped[str | None] = mapped_column(String(64), default=None)
    output_hash: Mapped[str | None] = mapped_column(String(64), default=None)
    # The earliest evaluated run of the task with the same run_hash, when this run is a copy of
    # it (set at every baseline refresh: evalq.store.review_sql.settle_reviews).
    copy_of: Mapped[str | None] = mapped_column(String(128), default=None)
    # `core.schemas.shape_digest` (migration 0018): the content without the usage, the output's
    # case and spacing normalised; one agent's runs with one shape and nudged usage are
    # near-copies (`evalq.scoring.review.duplicates`), marked copy_of like copies.
    shape_hash: Mapped[str | None] = mapped_column(String(64), default=None)
    # What the run's trace says its usage must at least be (`core.schemas.trace_bounds`,
    # migration 0018): usage below it is held for review (`evalq.scoring.review`).
    trace_seconds: Mapped[float | None] = mapped_column(Float, default=None)
    # Who assembled the run's trace (`evalq.core.provenance`, migration 0028): "collected" by
    # the OTLP intake under a key the task trusts, "submitted" by the submitter; None: no trace,
    # its usage is self-reported. Decided at intake; the boards read it (`evalq.read.usage`).
    trace_provenance: Mapped[str | None] = mapped_column(String(16), default=None)
    # How many runs the submitter plans for the run's variant (``planned_runs``, migration
    # 0029): a column, so a Scylla board's run counts take the most per variant without
    # decoding each run's payload (`evalq.read.boards.sample.run_counts`).
    planned_runs: Mapped[int | None] = mapped_column(Integer, default=None)
    # trajectory integrity (metrics/graph/integrity.py): hits counted at intake, with evidence
    integrity_hits: Mapped[int | None] = mapped_column(Integer, default=None)
    integrity: Mapped[list[Any] | None] = mapped_column(JSON, default=None)
    # sentences tier 1 marked as instructions to the evaluator that the judge scored without
    # leaving out (scoring/injection.py `judged_as_written`), counted at merge (migration 0031)
    judged_as_written: Mapped[int | None] = mapped_column(Integer, default=None)
    # The content's MinHash sketch (`evalq.scoring.near_copy.sketch_bytes`), written at merge by
    # the projector (migration 0032) and read by the refresh's near-copy search instead of the
    # payload (`evalq.store.review_sql`); None for a run merged before it: read from the payload.
    sketch: Mapped[bytes | None] = mapped_column(LargeBinary, default=None, deferred=True)
    trace_steps: Mapped[int | None] = mapped_column(Integer, default=None)
    # Manual review (migration 0004): a flagged run is left out of the baseline (baseline_sql).
    review: Mapped[Review | None] = mapped_column(String(16), default=None)
    reviewed_at: Mapped[datetime | None] = mapped_column(default=None)


class TierResultRow(Base):
    """The outcome of one tier for one submission; upserted, never duplicated."""

    __tablename__ = "tier_results"

    submission_id: Mapped[str] = mapped_column(ForeignKey("submissions.id"), primary_key=True)
    tier: Mapped[str] = mapped_column(String(16), primary_key=True)
    status: Mapped[str] = mapped_column(String(16), index=True)  # running/ok/skipped/failed
    metrics: Mapped[dict[str, Any] | None] = mapped_column(JSON, default=None)
    error: Mapped[dict[str, Any] | None] = mapped_column(JSON, default=None)
    deliveries: Mapped[int] = mapped_column(default=0)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)
    # The worker incarnation that last started the tier (migration 0005; `workers/heartbeat.py`):
    # a running tier whose owner has no heartbeat is lost work, not waiting work.
    owner: Mapped[str | None] = mapped_column(String(255), default=None)
    # The judge tier's four counted figures as columns (migration 0015), copied from its
    # metrics when stored: `/metrics` sums them without decoding a JSON document per row.
    judge_transport_retries: Mapped[int | None] = mapped_column(default=None)
    judge_validation_retries: Mapped[int | None] = mapped_column(default=None)
    judge_rate_limited: Mapped[int | None] = mapped_column(default=None)
    judge_cost_usd: Mapped[float | None] = mapped_column(Float, default=None)


class EvaluationRow(Base):
    """The merged evaluation of one submission; one row per submission, upserted."""

    __tablename__ = "evaluations"

    submission_id: Mapped[str] = mapped_column(ForeignKey("submissions.id"), primary_key=True)
    task_id: Mapped[str] = mapped_column(ForeignKey("tasks.id"), index=True)
    status: Mapped[str] = mapped_column(String(16))  # done / degraded / failed
    scores: Mapped[dict[str, Any]]
    missing_tiers: Mapped[dict[str, Any]]
    baseline_version: Mapped[int] = mapped_column(Integer)
    profile_hash: Mapped[str] = mapped_column(String(64))
    merge_count: Mapped[int] = mapped_column(default=1)
    evaluated_at: Mapped[datetime] = mapped_column(default=utcnow)


class BaselineRow(Base):
    """A versioned Arena baseline snapshot of a task (version 0 is the default baseline)."""

    __tablename__ = "baselines"

    task_id: Mapped[str] = mapped_column(ForeignKey("tasks.id"), primary_key=True)
    version: Mapped[int] = mapped_column(primary_key=True)
    data: Mapped[dict[str, Any]]
    submission_count: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


Index("ix_submissions_task_status", SubmissionRow.task_id, SubmissionRow.status)
# The tasks page counts every task's runs by status with their latest change (migration 0015):
# an index-only scan instead of reading every row.
# A task's version (`evalq.store.versions.task_version`): its runs' latest change, one index
# probe (migration 0016).
Index("ix_submissions_task_updated", SubmissionRow.task_id, SubmissionRow.updated_at)
Index(
    "ix_submissions_task_status_updated",
    SubmissionRow.task_id,
    SubmissionRow.status,
    SubmissionRow.updated_at,
)
# A task's newest runs first, read a window at a time by the monitors and /metrics' score gauge
# (`evalq.store.monitors.window`, migration 0021_window_index): the first rows of the index,
# not a sort of the whole task.
Index(
    "ix_submissions_task_created",
    SubmissionRow.task_id,
    SubmissionRow.created_at,
    SubmissionRow.id,
)
# Runs with the same content, and with the same output, grouped at each refresh
# (review_sql.settle_reviews, migration 0008): index-only reads, whatever the task's size.
Index(
    "ix_submissions_task_run_hash",
    SubmissionRow.task_id,
    SubmissionRow.run_hash,
    SubmissionRow.status,
    SubmissionRow.copy_of,
)
Index(
    "ix_submissions_task_output_hash",
    SubmissionRow.task_id,
    SubmissionRow.output_hash,
    SubmissionRow.status,
    SubmissionRow.copy_of,
    SubmissionRow.tool,
    SubmissionRow.model,
)
# One agent's runs of one shape, grouped at each refresh to find near-copies (migration 0018).
Index(
    "ix_submissions_task_shape_hash",
    SubmissionRow.task_id,
    SubmissionRow.shape_hash,
    SubmissionRow.status,
    SubmissionRow.tool,
    SubmissionRow.model,
)
# Rank indexes of the baseline's order statistics (evalq.store.baseline_sql, migrations 0003-4,
# 0008): the review and copy columns last, so leaving held runs and copies out stays index-only.
for _column in ("total_tokens", "tool_calls", "iterations", "execution_time", "cost_usd"):
    Index(
        f"ix_submissions_task_rank_{_column}",
        SubmissionRow.task_id,
        getattr(SubmissionRow, _column),
        SubmissionRow.status,
        SubmissionRow.review,
        SubmissionRow.copy_of,
    )


class StandingRow(Base):
    """What a board ranks one evaluated submission by, stored when it changes (migration 0011).

    Written at merge and, when the task's Arena baseline, profile or definition moves, again by
    the refresh (`evalq.read.standings`): a board ranks a page in the database from these
    columns (index-range counts) instead of re-scoring every run at each read. Keys are rounded
    as the board compares them (the kind's value to 4 digits, the Arena categories to 2), so
    SQL ties are the displayed ties.
    """

    __tablename__ = "standings"

    submission_id: Mapped[str] = mapped_column(ForeignKey("submissions.id"), primary_key=True)
    task_id: Mapped[str] = mapped_column(ForeignKey("tasks.id"))
    # What the Arena columns were scored against ("<baseline version>:<profile hash>"), and
    # the task definition's hash (correctness reads it): a row whose basis is not the task's
    # current one is scored again before a board reads it.
    basis: Mapped[str] = mapped_column(String(80))
    task_hash: Mapped[str] = mapped_column(String(64))
    status: Mapped[str] = mapped_column(String(16))  # done / degraded
    partial: Mapped[bool] = mapped_column(default=False)
    # Why the stored run or evaluation no longer validates (it ranks last, marked); None: fine.
    problem: Mapped[str | None] = mapped_column(String(500), default=None)
    correctness: Mapped[float] = mapped_column(Float, default=0.0)  # unrounded, for rescoring
    arena_key: Mapped[float | None] = mapped_column(Float, default=None)
    efficiency_key: Mapped[float] = mapped_column(Float, default=0.0)
    speed_key: Mapped[float] = mapped_column(Float, default=0.0)
    cost_key: Mapped[float] = mapped_column(Float, default=0.0)
    correctness_key: Mapped[float] = mapped_column(Float, default=0.0)
    peerread_key: Mapped[float | None] = mapped_column(Float, default=None)
    scylla_key: Mapped[float | None] = mapped_column(Float, default=None)
    suite_passed: Mapped[bool | None] = mapped_column(default=None)
    suite_key: Mapped[float | None] = mapped_column(Float, default=None)
    recommendation: Mapped[str | None] = mapped_column(String(16), default=None)
    unjudged: Mapped[bool] = mapped_column(default=False)
    # The run this one copies, as a board reads it (migration 0029): the refresh's mark
    # (`SubmissionRow.copy_of`) or a copy `evalq.scoring.review.duplicates` finds among the
    # runs that share its content or its agent's shape, decided again for those runs at each
    # merge (`evalq.read.boards.copies`); None: not a copy. A board leaves these rows out.
    copy_of: Mapped[str | None] = mapped_column(String(128), default=None)
    # The run's place on its task's unfiltered board (held runs and copies left out) as the
    # last refresh ranked it (migration 0016): its competition rank, how many rows tie with it,
    # and its four Arena category ranks; null when not ranked there. A page of that board reads
    # them in order while the task has not moved since (`evalq.read.leaderboard`).
    place: Mapped[int | None] = mapped_column(default=None)
    place_tied: Mapped[int | None] = mapped_column(default=None)
    efficiency_place: Mapped[int | None] = mapped_column(default=None)
    speed_place: Mapped[int | None] = mapped_column(default=None)
    cost_place: Mapped[int | None] = mapped_column(default=None)
    correctness_place: Mapped[int | None] = mapped_column(default=None)


class RunMetadataRow(Base):
    """One top-level metadata entry of an evaluated run as a board filter compares it
    (migration 0034): the key and the value's text (`evalq.core.metadata.as_text`), for the
    values a filter can name (a string, number, boolean or null of at most
    `evalq.core.metadata.MAX_FILTER_VALUE_CHARS` characters).

    Written once, by the projector at the run's merge (`evalq.store.run_metadata`); a board
    filtered on ``metadata.KEY=VALUE`` ranks the runs that have the entry in the database,
    as any other filter, instead of reading every run's payload."""

    __tablename__ = "run_metadata"
    __table_args__ = (Index("ix_run_metadata_value", "key", "value"),)

    submission_id: Mapped[str] = mapped_column(
        ForeignKey("submissions.id", ondelete="CASCADE"), primary_key=True
    )
    key: Mapped[str] = mapped_column(String(64), primary_key=True)
    value: Mapped[str] = mapped_column(String(200))


class BoardFiguresRow(Base):
    """A Scylla or suite board's whole-task figures (migration 0014): the per-variant board,
    the entries' rank intervals and how they were drawn, stored with the version of the task
    they were computed at (`evalq.store.versions.task_version` and the standings' basis).

    They need every run (bootstraps over variants' runs or entries' scenarios); the refresh
    computes them after its merges, and a page reuses them while the version holds.
    """

    __tablename__ = "board_figures"

    task_id: Mapped[str] = mapped_column(
        String(128), ForeignKey("tasks.id", ondelete="CASCADE"), primary_key=True
    )
    version: Mapped[str] = mapped_column(String(200))
    data: Mapped[dict[str, Any]]
    computed_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)


class AgentTallyRow(Base):
    """What one agent (tool, model) has on one task's board, kept by the projector (migration
    0024_board_tallies): its runs with a standing by status, how many the baseline counts
    (not held, not a copy), how many are held for review, and the range of each usage figure
    over the counted ones (a time or cost of 0 is not measured). The merge adds what its runs
    change, the refresh recounts the task set-wise (`evalq.store.tallies`); the flood note,
    the baseline note and the Arena answer read them instead of grouping the task's runs."""

    __tablename__ = "agent_tallies"

    task_id: Mapped[str] = mapped_column(
        String(128), ForeignKey("tasks.id", ondelete="CASCADE"), primary_key=True
    )
    tool: Mapped[str] = mapped_column(String(200), primary_key=True)
    model: Mapped[str] = mapped_column(String(200), primary_key=True)
    done: Mapped[int] = mapped_column(default=0)
    degraded: Mapped[int] = mapped_column(default=0)
    counted: Mapped[int] = mapped_column(default=0)
    held: Mapped[int] = mapped_column(default=0)
    time_min: Mapped[float | None] = mapped_column(Float, default=None)
    time_max: Mapped[float | None] = mapped_column(Float, default=None)
    cost_min: Mapped[float | None] = mapped_column(Float, default=None)
    cost_max: Mapped[float | None] = mapped_column(Float, default=None)
    tokens_min: Mapped[float | None] = mapped_column(Float, default=None)
    tokens_max: Mapped[float | None] = mapped_column(Float, default=None)
    calls_min: Mapped[float | None] = mapped_column(Float, default=None)
    calls_max: Mapped[float | None] = mapped_column(Float, default=None)


class TaskTallyRow(Base):
    """One count of a task's board kept by the projector (migration 0029_planned_runs): its
    rows by review, copy and trace, each kind's ranking value's count, sum and sum of squares
    in whole ten-thousandths and its histogram bins, PeerRead's recommendations, the filter
    values (`evalq.store.task_tallies`, which names the keys). The merge adds what its runs
    change, the refresh counts the task again set-wise; a live board's summary, histogram and
    filter choices read these instead of aggregating the task's rows."""

    __tablename__ = "task_tallies"

    task_id: Mapped[str] = mapped_column(
        String(128), ForeignKey("tasks.id", ondelete="CASCADE"), primary_key=True
    )
    key: Mapped[str] = mapped_column(String(240), primary_key=True)
    count: Mapped[int] = mapped_column(BigInteger, default=0)


class TaskRefreshRow(Base):
    """What the refresh keeps of its own work on a task (migration 0033_task_refreshes).

    How far it has decided the task's copy marks: the latest submission time of the runs it
    decided and how many runs it decided (`evalq.store.review_sql`); None before a refresh
    decided them all. A migration that changes what a run's mark is decided from (its digests,
    usage or sketch) clears them. And how long its last refresh took and when it ended: a
    refresh a merge scheduled waits so that the task's refreshes take at most
    EVALQ_BASELINE_REFRESH_SHARE of the time (`evalq.tasks.merge.refresh_baseline`).

    Only the refresh writes it, and not on the task's own row: a merge claims the refresh on that
    row after it adds to the tallies, and a refresh holding the row while it counts the tallies
    again would deadlock with it."""

    __tablename__ = "task_refreshes"

    task_id: Mapped[str] = mapped_column(
        String(128), ForeignKey("tasks.id", ondelete="CASCADE"), primary_key=True
    )
    copies_through: Mapped[datetime | None] = mapped_column(default=None)
    copies_runs: Mapped[int | None] = mapped_column(BigInteger, default=None)
    cost_s: Mapped[float | None] = mapped_column(default=None)
    ended_at: Mapped[datetime | None] = mapped_column(default=None)


class JudgeTallyRow(Base):
    """How many of a task's runs with a standing each judge model scored on each rubric
    (migration 0024_board_tallies), kept by the projector at merge: the judge's validation
    reads which (rubric, model) pairs a task has here, and decodes only the labelled runs."""

    __tablename__ = "judge_tallies"

    task_id: Mapped[str] = mapped_column(
        String(128), ForeignKey("tasks.id", ondelete="CASCADE"), primary_key=True
    )
    model: Mapped[str] = mapped_column(String(200), primary_key=True)
    rubric: Mapped[str] = mapped_column(String(200), primary_key=True)
    runs: Mapped[int] = mapped_column(default=0)


# Which tasks an agent ran (the flood note's "seen on no other task"): an index range per agent.
Index("ix_agent_tallies_agent", AgentTallyRow.tool, AgentTallyRow.model, AgentTallyRow.task_id)
# The runs held for review of a task, by id (a board names the first of them): an index range.
Index("ix_submissions_task_review", SubmissionRow.task_id, SubmissionRow.review, SubmissionRow.id)
# One agent's runs of a task: its tally's ranges recounted when a counted run leaves them.
Index("ix_submissions_task_agent", SubmissionRow.task_id, SubmissionRow.tool, SubmissionRow.model)


# A board's copies (`StandingRow.copy_of`): an index range over the task's copies alone.
Index("ix_standings_task_copy", StandingRow.task_id, StandingRow.copy_of)
# A board reads its task's rows; the freshness check counts those on the current basis.
Index("ix_standings_task_basis", StandingRow.task_id, StandingRow.basis, StandingRow.task_hash)
# The unfiltered board's pages, in order, from the places the refresh stored.
Index("ix_standings_task_place", StandingRow.task_id, StandingRow.place, StandingRow.submission_id)
# A live board's counts of the rows above a place, tied with it, or better in a category,
# and its page read segment by segment in value order (`evalq.store.standings.ranked_page`):
# an index range of the task's flags and key (migration 0027).
_R = StandingRow
Index("ix_standings_task_arena_key", _R.task_id, _R.partial, _R.arena_key, _R.submission_id)
Index("ix_standings_task_peerread_key", _R.task_id, _R.partial, _R.peerread_key, _R.submission_id)
Index("ix_standings_task_scylla_key", _R.task_id, _R.partial, _R.scylla_key, _R.submission_id)
Index(
    "ix_standings_task_suite_key",
    _R.task_id,
    _R.partial,
    _R.suite_passed,
    _R.suite_key,
    _R.submission_id,
)
for _key in ("efficiency_key", "speed_key", "cost_key", "correctness_key"):
    Index(f"ix_standings_task_{_key}", _R.task_id, getattr(_R, _key), _R.submission_id)


class ApiKeyRow(Base):
    """One API key: its name, its scopes, and the SHA-256 digest of the secret."""

    __tablename__ = "api_keys"

    name: Mapped[str] = mapped_column(String(100), primary_key=True)
    key_hash: Mapped[str] = mapped_column(String(64), unique=True)
    scopes: Mapped[str] = mapped_column(String(100))  # comma-separated, sorted
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    revoked_at: Mapped[datetime | None] = mapped_column(default=None)


class WebhookRow(Base):
    """A receiver of a task's evaluation events; its signing secret is stored encrypted."""

    __tablename__ = "webhooks"

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    task_id: Mapped[str] = mapped_column(ForeignKey("tasks.id"), index=True)
    url: Mapped[str] = mapped_column(String(2000))
    description: Mapped[str | None] = mapped_column(String(500), default=None)
    # Fernet token of the whsec_ secret (EVALQ_WEBHOOK_KEY); the secret itself is never stored.
    secret_encrypted: Mapped[str] = mapped_column(Text)
    created_by: Mapped[str | None] = mapped_column(String(100), default=None)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class WebhookDeliveryRow(Base):
    """One event for one webhook (keyed by its stable ``webhook-id``) and its attempts.

    An evaluation's event names its submission (its body is the run's result, read when sent);
    a monitor's event has none and carries its body in ``payload``, fixed when the state
    changed (migration 0019), so every retry sends what was true then.

    The table is also the events' outbox (migration 0022_event_outbox): a row is written in the
    transaction that decided its event (the merge, a monitor's check), and ``due_at`` says
    when the event sweep sends a pending one again, should its message never arrive."""

    __tablename__ = "webhook_deliveries"

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    webhook_id: Mapped[str] = mapped_column(ForeignKey("webhooks.id", ondelete="CASCADE"))
    submission_id: Mapped[str | None] = mapped_column(
        ForeignKey("submissions.id"), index=True, default=None
    )
    event: Mapped[str] = mapped_column(String(40))
    payload: Mapped[dict[str, Any] | None] = mapped_column(JSON, default=None)
    status: Mapped[str] = mapped_column(String(16))  # pending / delivered / failed
    attempts: Mapped[int] = mapped_column(default=0)
    last_status_code: Mapped[int | None] = mapped_column(default=None)
    last_error: Mapped[str | None] = mapped_column(String(500), default=None)
    history: Mapped[list[Any]] = mapped_column(JSON, default=list)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)
    delivered_at: Mapped[datetime | None] = mapped_column(default=None)
    due_at: Mapped[datetime | None] = mapped_column(default=None)


Index("ix_webhook_deliveries_status_due", WebhookDeliveryRow.status, WebhookDeliveryRow.due_at)
Index(
    "ix_webhook_deliveries_webhook_created",
    WebhookDeliveryRow.webhook_id,
    WebhookDeliveryRow.created_at,
)


TraceStatus = Literal["open", "finalising", "finalised", "refused", "failed", "untaken"]
"""A trace's life (migration 0009): ``open`` while its spans arrive; ``finalising`` once a sweep
claimed it; ``finalised`` with its submission; ``refused`` (over EVALQ_TRACE_MAX_SPANS: never
evaluated, later spans refused too); ``failed`` (its spans cannot be mapped to a submission,
``error`` says why); ``untaken`` (it names no task and no task's rule took it: kept for
EVALQ_TRACE_RETENTION_S, for a backfill, then dropped)."""


class TraceRow(Base):
    """One OTLP trace whose spans arrive over any number of requests (`evalq.store.traces`)."""

    __tablename__ = "traces"

    trace_id: Mapped[str] = mapped_column(String(32), primary_key=True)
    status: Mapped[str] = mapped_column(String(16))
    service_name: Mapped[str | None] = mapped_column(String(200), default=None)
    # The request's mapping (task_id, tool, model, variant query parameters), last given wins.
    defaults: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    span_count: Mapped[int] = mapped_column(default=0)  # spans stored before finalising
    late_spans: Mapped[int] = mapped_column(default=0)  # spans stored after it was claimed
    has_root: Mapped[bool] = mapped_column(default=False)
    end_marked: Mapped[bool] = mapped_column(default=False)
    start_ns: Mapped[int | None] = mapped_column(BigInteger, default=None)
    end_ns: Mapped[int | None] = mapped_column(BigInteger, default=None)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    last_span_at: Mapped[datetime] = mapped_column(default=utcnow)
    claimed_at: Mapped[datetime | None] = mapped_column(default=None)
    # One submission per trace: set once, by the sweep that claimed the trace.
    submission_id: Mapped[str | None] = mapped_column(String(128), default=None, unique=True)
    error: Mapped[dict[str, Any] | None] = mapped_column(JSON, default=None)
    # The name of the API key whose spans opened the trace: only that key adds spans to it.
    owner: Mapped[str | None] = mapped_column(String(100), default=None)
    # Tool spans stored: each is a step of the run, so past MAX_TRACE_EDGES + 1 it can never be one.
    tool_spans: Mapped[int] = mapped_column(default=0)


Index("ix_traces_status_last_span_at", TraceRow.status, TraceRow.last_span_at)


class TraceSpanRow(Base):
    """One span as received: a protobuf ``ResourceSpans`` holding its resource and the span.

    Keyed by (trace id, span id), so a retried export stores nothing twice.
    """

    __tablename__ = "trace_spans"

    trace_id: Mapped[str] = mapped_column(
        String(32), ForeignKey("traces.trace_id", ondelete="CASCADE"), primary_key=True
    )
    span_id: Mapped[str] = mapped_column(String(16), primary_key=True)
    parent_id: Mapped[str | None] = mapped_column(String(16), default=None)
    start_ns: Mapped[int] = mapped_column(BigInteger)
    end_ns: Mapped[int] = mapped_column(BigInteger)
    late: Mapped[bool] = mapped_column(default=False)
    received_at: Mapped[datetime] = mapped_column(default=utcnow)
    data: Mapped[bytes] = mapped_column(LargeBinary)


class TraceRuleRow(Base):
    """A task's rule for the traces it takes (`evalq.core.trace_rules.TraceRule` as JSON)."""

    __tablename__ = "trace_rules"

    task_id: Mapped[str] = mapped_column(
        String(128), ForeignKey("tasks.id", ondelete="CASCADE"), primary_key=True
    )
    rule: Mapped[dict[str, Any]]
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)


class LabelRow(Base):
    """One person's label of one run (`evalq.core.labels`); one per labeller and run."""

    __tablename__ = "labels"

    submission_id: Mapped[str] = mapped_column(ForeignKey("submissions.id"), primary_key=True)
    labeller: Mapped[str] = mapped_column(String(100), primary_key=True)
    task_id: Mapped[str] = mapped_column(ForeignKey("tasks.id"), index=True)
    scores: Mapped[dict[str, Any]]
    recommendation: Mapped[str | None] = mapped_column(String(16), default=None)
    passed: Mapped[bool | None] = mapped_column(default=None)
    note: Mapped[str | None] = mapped_column(Text, default=None)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)


class ReviewDecisionRow(Base):
    """One person's decision on a run's review (`evalq.core.review_decisions`): an accept or
    an un-accept, who, when and why. Kept: undoing a decision adds a row (migration 0017)."""

    __tablename__ = "review_decisions"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    submission_id: Mapped[str] = mapped_column(ForeignKey("submissions.id"))
    action: Mapped[str] = mapped_column(String(16))
    decided_by: Mapped[str] = mapped_column(String(100))
    reason: Mapped[str] = mapped_column(Text)
    decided_at: Mapped[datetime] = mapped_column(default=utcnow)


# A run's decisions, newest first: one index range.
Index("ix_review_decisions_submission", ReviewDecisionRow.submission_id, ReviewDecisionRow.id)


class MonitorRow(Base):
    """A monitor (`evalq.core.monitors.MonitorRequest` as JSON), by name (migration 0019)."""

    __tablename__ = "monitors"

    name: Mapped[str] = mapped_column(String(63), primary_key=True)
    definition: Mapped[dict[str, Any]]
    created_by: Mapped[str | None] = mapped_column(String(100), default=None)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)


class MonitorStateRow(Base):
    """One task's state under one monitor, and the last event sent about it."""

    __tablename__ = "monitor_states"

    monitor: Mapped[str] = mapped_column(
        String(63), ForeignKey("monitors.name", ondelete="CASCADE"), primary_key=True
    )
    task_id: Mapped[str] = mapped_column(ForeignKey("tasks.id"), primary_key=True)
    state: Mapped[str] = mapped_column(String(16))  # ok / warning / alert / no data
    value: Mapped[float | None] = mapped_column(Float, default=None)
    n: Mapped[int] = mapped_column(default=0)
    evaluated_at: Mapped[datetime] = mapped_column(default=utcnow)
    changed_at: Mapped[datetime] = mapped_column(default=utcnow)
    # The last event sent (monitor.alert / monitor.resolved), the state it told of, and when;
    # ``notices`` counts the events, so each has its own stable webhook-id.
    notified: Mapped[str | None] = mapped_column(String(40), default=None)
    notified_state: Mapped[str | None] = mapped_column(String(16), default=None)
    notified_at: Mapped[datetime | None] = mapped_column(default=None)
    notices: Mapped[int] = mapped_column(default=0)


class TaskAuditRow(Base):
    """A task's last verifier audit (`evalq.read.audit`): probes its checks should refuse."""

    __tablename__ = "task_audits"

    task_id: Mapped[str] = mapped_column(
        String(128), ForeignKey("tasks.id", ondelete="CASCADE"), primary_key=True
    )
    status: Mapped[str] = mapped_column(String(16))
    audit: Mapped[dict[str, Any]]
    task_hash: Mapped[str] = mapped_column(String(64))
    audited_at: Mapped[datetime] = mapped_column(default=utcnow)


class JudgedResultRow(Base):
    """One judge's scores of one run (migration 0025): appended, never updated, so a change of
    judge or a re-judge adds a series beside the scores it would otherwise have replaced."""

    __tablename__ = "judged_results"
    __table_args__ = (
        Index("ix_judged_results_run_series", "submission_id", "series", unique=True),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    submission_id: Mapped[str] = mapped_column(
        String(128), ForeignKey("submissions.id", ondelete="CASCADE")
    )
    series: Mapped[str] = mapped_column(String(16))
    identity: Mapped[dict[str, Any]]
    scores: Mapped[dict[str, Any]]
    source: Mapped[str] = mapped_column(String(16))
    judged_at: Mapped[datetime] = mapped_column(default=utcnow)


class TaskJudgeSeriesRow(Base):
    """A judge that scored some of a task's runs (a judge-tier result in `JudgedResultRow`),
    written beside the result that first shows it (migration 0025), so a board learns whether
    its task's scores come from one judge or several without reading the task's results."""

    __tablename__ = "task_judge_series"

    task_id: Mapped[str] = mapped_column(
        String(128), ForeignKey("tasks.id", ondelete="CASCADE"), primary_key=True
    )
    series: Mapped[str] = mapped_column(String(16), primary_key=True)


class SessionRow(Base):
    """A session: the runs of one task that share a conversation (docs/sessions.md).

    Opened (again) by the merge of each of its turns; evaluated as a unit by the session sweep
    once no turn was merged for EVALQ_SESSION_QUIET_S (`evalq.service.sessions`). ``passed``,
    ``turns_to_success`` and ``score`` are the session board's keys, written with ``scores``.
    """

    __tablename__ = "sessions"

    task_id: Mapped[str] = mapped_column(
        String(128), ForeignKey("tasks.id", ondelete="CASCADE"), primary_key=True
    )
    session_id: Mapped[str] = mapped_column(String(200), primary_key=True)
    status: Mapped[str] = mapped_column(String(16))  # open / evaluating / evaluated
    last_turn_at: Mapped[datetime] = mapped_column(default=utcnow)
    claimed_at: Mapped[datetime | None] = mapped_column(default=None)
    evaluated_at: Mapped[datetime | None] = mapped_column(default=None)
    evaluations: Mapped[int] = mapped_column(default=0)
    turns: Mapped[int] = mapped_column(default=0)  # in its last evaluation
    passed: Mapped[bool | None] = mapped_column(default=None)
    turns_to_success: Mapped[int | None] = mapped_column(default=None)
    score: Mapped[float | None] = mapped_column(Float, default=None)
    scores: Mapped[dict[str, Any] | None] = mapped_column(JSON, default=None)


Index("ix_sessions_status_last_turn_at", SessionRow.status, SessionRow.last_turn_at)


class SessionTurnRow(Base):
    """A run that is a turn of a session (written by its merge)."""

    __tablename__ = "session_turns"

    submission_id: Mapped[str] = mapped_column(
        String(128), ForeignKey("submissions.id", ondelete="CASCADE"), primary_key=True
    )
    task_id: Mapped[str] = mapped_column(String(128))
    session_id: Mapped[str] = mapped_column(String(200))
    added_at: Mapped[datetime] = mapped_column(default=utcnow)


Index("ix_session_turns_session", SessionTurnRow.task_id, SessionTurnRow.session_id)


class RunTicketRow(Base):
    """One run registered before it happened (`evalq.core.tickets`, migration 0030): issued
    with the others of its plan (``plan_id``) and used by at most one submission, each
    submission using at most one ticket (``used_by`` is unique)."""

    __tablename__ = "run_tickets"

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    plan_id: Mapped[str] = mapped_column(String(80), index=True)
    position: Mapped[int] = mapped_column(Integer)  # the run's place in its plan, from 0
    task_id: Mapped[str] = mapped_column(
        String(128), ForeignKey("tasks.id", ondelete="CASCADE"), index=True
    )
    variant: Mapped[str] = mapped_column(String(8))
    seed: Mapped[int | None] = mapped_column(BigInteger, default=None)
    issued_at: Mapped[datetime] = mapped_column(default=utcnow)
    deadline: Mapped[datetime]
    issued_by: Mapped[str | None] = mapped_column(String(100), default=None)
    used_by: Mapped[str | None] = mapped_column(
        String(128), ForeignKey("submissions.id", ondelete="SET NULL"), unique=True, default=None
    )
