"""human labels of runs

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-24 20:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "labels",
        sa.Column("submission_id", sa.String(length=128), nullable=False),
        sa.Column("labeller", sa.String(length=100), nullable=False),
        sa.Column("task_id", sa.String(length=128), nullable=False),
        sa.Column("scores", sa.JSON(), nullable=False),
        sa.Column("recommendation", sa.String(length=16), nullable=True),
        sa.Column("passed", sa.Boolean(), nullable=True),
        sa.Column("note", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["submission_id"], ["submissions.id"]),
        sa.ForeignKeyConstraint(["task_id"], ["tasks.id"]),
        sa.PrimaryKeyConstraint("submission_id", "labeller"),
    )
    # Agreement reads a task's labels at once.
    op.create_index("ix_labels_task_id", "labels", ["task_id"])


def downgrade() -> None:
    op.drop_table("labels")
