"""submissions (task_id, created_at, id): a task's newest runs read off an index

Revision ID: 0021_window_index
Revises: 0020_task_kind
Create Date: 2026-11-28 09:00:00
"""

from __future__ import annotations

from alembic import op

revision = "0021_window_index"
down_revision = "0020_task_kind"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # The monitors' windows and /metrics' per-task score gauge read a task's latest runs: in
    # this index's order they stop after the window instead of sorting the whole task.
    op.create_index(
        "ix_submissions_task_created",
        "submissions",
        ["task_id", "created_at", "id"],
        unique=False,
    )


def downgrade() -> None:
    op.drop_index("ix_submissions_task_created", table_name="submissions")
