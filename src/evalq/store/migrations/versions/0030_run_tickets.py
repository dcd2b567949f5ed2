"""run_tickets: a variant's runs registered before they happen, one ticket per run

Revision ID: 0030_run_tickets
Revises: 0029_planned_runs
Create Date: 2026-11-28 22:00:00

A new table, empty: no run stored before this revision carries a ticket, so every variant
reads as it did (its verdicts now say "not pre-registered"; `evalq.read.plans`). A ticket is
used by one submission at most and a submission uses one ticket at most (``used_by`` unique).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0030_run_tickets"
down_revision = "0029_planned_runs"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "run_tickets",
        sa.Column("id", sa.String(length=40), primary_key=True),
        sa.Column("plan_id", sa.String(length=80), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column(
            "task_id",
            sa.String(length=128),
            sa.ForeignKey("tasks.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("variant", sa.String(length=8), nullable=False),
        sa.Column("seed", sa.BigInteger(), nullable=True),
        sa.Column("issued_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("deadline", sa.DateTime(timezone=True), nullable=False),
        sa.Column("issued_by", sa.String(length=100), nullable=True),
        sa.Column(
            "used_by",
            sa.String(length=128),
            sa.ForeignKey("submissions.id", ondelete="SET NULL"),
            nullable=True,
            unique=True,
        ),
    )
    op.create_index("ix_run_tickets_plan_id", "run_tickets", ["plan_id"])
    op.create_index("ix_run_tickets_task_id", "run_tickets", ["task_id"])


def downgrade() -> None:
    op.drop_index("ix_run_tickets_task_id", table_name="run_tickets")
    op.drop_index("ix_run_tickets_plan_id", table_name="run_tickets")
    op.drop_table("run_tickets")
