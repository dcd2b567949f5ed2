"""manual review of outlier runs

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-24 10:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


# The baseline's rank indexes (0003) gain the review column, so the order statistics stay
# index-only scans now that flagged runs are left out (measured at 100k runs: without it the
# refresh took 525 ms on SQLite and 336 ms on PostgreSQL, with it 91 and 129 ms).
RANK_COLUMNS = ("total_tokens", "tool_calls", "iterations", "execution_time", "cost_usd")


def upgrade() -> None:
    # review: NULL (never flagged), "flagged" (left out of the baseline) or "accepted".
    with op.batch_alter_table("submissions", schema=None) as batch_op:
        batch_op.add_column(sa.Column("review", sa.String(length=16), nullable=True))
        batch_op.add_column(sa.Column("reviewed_at", sa.DateTime(timezone=True), nullable=True))
    for column in RANK_COLUMNS:
        name = f"ix_submissions_task_rank_{column}"
        op.drop_index(name, table_name="submissions")
        op.create_index(name, "submissions", ["task_id", column, "status", "review"])


def downgrade() -> None:
    for column in RANK_COLUMNS:
        name = f"ix_submissions_task_rank_{column}"
        op.drop_index(name, table_name="submissions")
        op.create_index(name, "submissions", ["task_id", column, "status"])
    # SQLite (3.35+) drops these plain columns in place. Batch mode's default would copy the
    # table and drop the old one, which foreign keys from evaluations and tier_results forbid
    # once runs are stored (and PRAGMA foreign_keys cannot change inside the transaction).
    with op.batch_alter_table("submissions", schema=None, recreate="never") as batch_op:
        batch_op.drop_column("reviewed_at")
        batch_op.drop_column("review")
