"""standings: what a board ranks each evaluated run by, stored when it changes

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-26 07:00:00

The table starts empty: the first read of each task fills it from the stored evaluations
(`evalq.read.standings.sync`), which scoring code does and a migration should not.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "standings",
        sa.Column("submission_id", sa.String(length=128), nullable=False),
        sa.Column("task_id", sa.String(length=128), nullable=False),
        sa.Column("basis", sa.String(length=80), nullable=False),
        sa.Column("task_hash", sa.String(length=64), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("partial", sa.Boolean(), nullable=False),
        sa.Column("problem", sa.String(length=500), nullable=True),
        sa.Column("correctness", sa.Float(), nullable=False),
        sa.Column("arena_key", sa.Float(), nullable=True),
        sa.Column("efficiency_key", sa.Float(), nullable=False),
        sa.Column("speed_key", sa.Float(), nullable=False),
        sa.Column("cost_key", sa.Float(), nullable=False),
        sa.Column("correctness_key", sa.Float(), nullable=False),
        sa.Column("peerread_key", sa.Float(), nullable=True),
        sa.Column("scylla_key", sa.Float(), nullable=True),
        sa.Column("suite_passed", sa.Boolean(), nullable=True),
        sa.Column("suite_key", sa.Float(), nullable=True),
        sa.Column("recommendation", sa.String(length=16), nullable=True),
        sa.Column("unjudged", sa.Boolean(), nullable=False),
        sa.ForeignKeyConstraint(["submission_id"], ["submissions.id"]),
        sa.ForeignKeyConstraint(["task_id"], ["tasks.id"]),
        sa.PrimaryKeyConstraint("submission_id"),
    )
    op.create_index("ix_standings_task_basis", "standings", ["task_id", "basis", "task_hash"])


def downgrade() -> None:
    op.drop_table("standings")
