"""sessions, session_turns: runs that share a conversation, evaluated as a unit

Revision ID: 0026_sessions
Revises: 0025_judged_results
Create Date: 2026-11-28 12:30:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0026_sessions"
down_revision = "0025_judged_results"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "sessions",
        sa.Column("task_id", sa.String(length=128), nullable=False),
        sa.Column("session_id", sa.String(length=200), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("last_turn_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("claimed_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("evaluated_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("evaluations", sa.Integer(), nullable=False),
        sa.Column("turns", sa.Integer(), nullable=False),
        sa.Column("passed", sa.Boolean(), nullable=True),
        sa.Column("turns_to_success", sa.Integer(), nullable=True),
        sa.Column("score", sa.Float(), nullable=True),
        sa.Column("scores", sa.JSON(), nullable=True),
        sa.ForeignKeyConstraint(["task_id"], ["tasks.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("task_id", "session_id"),
    )
    op.create_index(
        "ix_sessions_status_last_turn_at", "sessions", ["status", "last_turn_at"], unique=False
    )
    op.create_table(
        "session_turns",
        sa.Column("submission_id", sa.String(length=128), nullable=False),
        sa.Column("task_id", sa.String(length=128), nullable=False),
        sa.Column("session_id", sa.String(length=200), nullable=False),
        sa.Column("added_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["submission_id"], ["submissions.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("submission_id"),
    )
    op.create_index(
        "ix_session_turns_session", "session_turns", ["task_id", "session_id"], unique=False
    )


def downgrade() -> None:
    op.drop_index("ix_session_turns_session", table_name="session_turns")
    op.drop_table("session_turns")
    op.drop_index("ix_sessions_status_last_turn_at", table_name="sessions")
    op.drop_table("sessions")
