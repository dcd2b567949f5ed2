"""indexes that serve the baseline's order statistics

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-22 05:10:00
"""

from __future__ import annotations

from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

# (task_id, figure, status): `evalq.store.baseline_sql` reads a rank of one figure among a task's
# evaluated submissions with ORDER BY figure OFFSET rank; the status in the index makes the scan
# index-only, without a sort or a table lookup per row.
RANK_COLUMNS = ("total_tokens", "tool_calls", "iterations", "execution_time", "cost_usd")


def upgrade() -> None:
    for column in RANK_COLUMNS:
        op.create_index(
            f"ix_submissions_task_rank_{column}", "submissions", ["task_id", column, "status"]
        )


def downgrade() -> None:
    for column in RANK_COLUMNS:
        op.drop_index(f"ix_submissions_task_rank_{column}", table_name="submissions")
