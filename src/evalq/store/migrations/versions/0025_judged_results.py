"""judged_results: every judge's scores of a run, appended and never updated;
the judge tier rows already stored with an identity are copied in as their first series;
task_judge_series: the judges that scored each task's runs

Revision ID: 0025_judged_results
Revises: 0024_board_tallies
Create Date: 2026-11-28 12:30:00
"""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime

import sqlalchemy as sa
from alembic import op

revision = "0025_judged_results"
down_revision = "0024_board_tallies"
branch_labels = None
depends_on = None


def _series(identity: dict[str, object]) -> str:  # as evalq.core.judge_series.series_id
    text = json.dumps(identity, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def upgrade() -> None:
    judged = op.create_table(
        "judged_results",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("submission_id", sa.String(length=128), nullable=False),
        sa.Column("series", sa.String(length=16), nullable=False),
        sa.Column("identity", sa.JSON(), nullable=False),
        sa.Column("scores", sa.JSON(), nullable=False),
        sa.Column("source", sa.String(length=16), nullable=False),
        sa.Column("judged_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["submission_id"], ["submissions.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index(
        "ix_judged_results_run_series", "judged_results", ["submission_id", "series"], unique=True
    )
    tiers = sa.table(
        "tier_results",
        sa.column("submission_id", sa.String),
        sa.column("tier", sa.String),
        sa.column("status", sa.String),
        sa.column("metrics", sa.JSON),
        sa.column("updated_at", sa.DateTime(timezone=True)),
    )
    rows = op.get_bind().execute(
        sa.select(tiers.c.submission_id, tiers.c.metrics, tiers.c.updated_at).where(
            tiers.c.tier == "judge", tiers.c.status.in_(("ok", "failed"))
        )
    )
    copied = []
    for submission_id, metrics, updated_at in rows:
        identity = (metrics or {}).get("identity")
        if not identity:
            continue  # judged before identities were recorded: no series to name
        copied.append(
            {
                "submission_id": submission_id,
                "series": _series(identity),
                "identity": identity,
                "scores": metrics.get("scores") or {},
                "source": "tier",
                "judged_at": updated_at or datetime.now(UTC),
            }
        )
    if copied:
        op.bulk_insert(judged, copied)
    op.create_table(
        "task_judge_series",
        sa.Column("task_id", sa.String(length=128), nullable=False),
        sa.Column("series", sa.String(length=16), nullable=False),
        sa.ForeignKeyConstraint(["task_id"], ["tasks.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("task_id", "series"),
    )
    op.execute(
        "INSERT INTO task_judge_series (task_id, series) SELECT DISTINCT submissions.task_id, "
        "judged_results.series FROM judged_results JOIN submissions "
        "ON submissions.id = judged_results.submission_id WHERE judged_results.source = 'tier'"
    )


def downgrade() -> None:
    op.drop_table("task_judge_series")
    op.drop_index("ix_judged_results_run_series", table_name="judged_results")
    op.drop_table("judged_results")
