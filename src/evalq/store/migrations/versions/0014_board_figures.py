"""board_figures: a Scylla or suite board's whole-task figures, kept while the task holds still

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-26 07:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "board_figures",
        sa.Column("task_id", sa.String(length=128), nullable=False),
        sa.Column("version", sa.String(length=200), nullable=False),
        sa.Column("data", sa.JSON(), nullable=False),
        sa.Column("computed_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["task_id"], ["tasks.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("task_id"),
    )


def downgrade() -> None:
    op.drop_table("board_figures")
