"""task_audits: each task's last verifier audit; submissions.integrity_hits, integrity: the
trajectory integrity hits found at intake (a run with one is held for review)

Revision ID: 0023_task_audits
Revises: 0022_event_outbox
Create Date: 2026-11-28 09:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0023_task_audits"
down_revision = "0022_event_outbox"
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
    with op.batch_alter_table("submissions") as batch:
        batch.add_column(sa.Column("integrity_hits", sa.Integer(), nullable=True))
        batch.add_column(sa.Column("integrity", sa.JSON(), nullable=True))


def downgrade() -> None:
    # ALTER TABLE ... DROP COLUMN on both databases (SQLite >= 3.35): a batch copy of
    # `submissions` would drop the table the tier rows' and evaluations' foreign keys name
    op.execute("ALTER TABLE submissions DROP COLUMN integrity")
    op.execute("ALTER TABLE submissions DROP COLUMN integrity_hits")
    op.drop_table("task_audits")
