"""task_audits: each task's last verifier audit (probes that its checks should refuse)

Revision ID: 0020m48
Revises: 0019
Create Date: 2026-11-28 09:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0020m48"
down_revision = "0019"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "task_audits",
        sa.Column("task_id", sa.String(length=128), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("audit", sa.JSON(), nullable=False),
        sa.Column("task_hash", sa.String(length=64), nullable=False),
        sa.Column("audited_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["task_id"], ["tasks.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("task_id"),
    )


def downgrade() -> None:
    op.drop_table("task_audits")
