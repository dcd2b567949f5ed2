"""traces whose spans arrive over many requests, their spans, and the tasks' trace rules

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-24 20:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "traces",
        sa.Column("trace_id", sa.String(length=32), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("service_name", sa.String(length=200), nullable=True),
        sa.Column("defaults", sa.JSON(), nullable=False),
        sa.Column("span_count", sa.Integer(), nullable=False),
        sa.Column("late_spans", sa.Integer(), nullable=False),
        sa.Column("has_root", sa.Boolean(), nullable=False),
        sa.Column("end_marked", sa.Boolean(), nullable=False),
        sa.Column("start_ns", sa.BigInteger(), nullable=True),
        sa.Column("end_ns", sa.BigInteger(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_span_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("claimed_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("submission_id", sa.String(length=128), nullable=True),
        sa.Column("error", sa.JSON(), nullable=True),
        sa.PrimaryKeyConstraint("trace_id"),
        # One submission per trace, whatever the retries or concurrent sweeps.
        sa.UniqueConstraint("submission_id"),
    )
    # The sweep's question: which open traces have been quiet long enough?
    op.create_index("ix_traces_status_last_span_at", "traces", ["status", "last_span_at"])
    op.create_table(
        "trace_spans",
        sa.Column("trace_id", sa.String(length=32), nullable=False),
        sa.Column("span_id", sa.String(length=16), nullable=False),
        sa.Column("parent_id", sa.String(length=16), nullable=True),
        sa.Column("start_ns", sa.BigInteger(), nullable=False),
        sa.Column("end_ns", sa.BigInteger(), nullable=False),
        sa.Column("late", sa.Boolean(), nullable=False),
        sa.Column("received_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("data", sa.LargeBinary(), nullable=False),
        sa.ForeignKeyConstraint(["trace_id"], ["traces.trace_id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("trace_id", "span_id"),
    )
    op.create_table(
        "trace_rules",
        sa.Column("task_id", sa.String(length=128), nullable=False),
        sa.Column("rule", sa.JSON(), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["task_id"], ["tasks.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("task_id"),
    )


def downgrade() -> None:
    op.drop_table("trace_rules")
    op.drop_table("trace_spans")
    op.drop_index("ix_traces_status_last_span_at", table_name="traces")
    op.drop_table("traces")
