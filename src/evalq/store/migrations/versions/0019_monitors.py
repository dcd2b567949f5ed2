"""monitors, their per-task states, and webhook deliveries that name no submission

Revision ID: 0019
Revises: 0018
Create Date: 2026-11-26 09:30:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0019"
down_revision = "0018"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "monitors",
        sa.Column("name", sa.String(length=63), nullable=False),
        sa.Column("definition", sa.JSON(), nullable=False),
        sa.Column("created_by", sa.String(length=100), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("name"),
    )
    op.create_table(
        "monitor_states",
        sa.Column("monitor", sa.String(length=63), nullable=False),
        sa.Column("task_id", sa.String(length=128), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("value", sa.Float(), nullable=True),
        sa.Column("n", sa.Integer(), nullable=False),
        sa.Column("evaluated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("changed_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("notified", sa.String(length=40), nullable=True),
        sa.Column("notified_state", sa.String(length=16), nullable=True),
        sa.Column("notified_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("notices", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(["monitor"], ["monitors.name"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["task_id"], ["tasks.id"]),
        sa.PrimaryKeyConstraint("monitor", "task_id"),
    )
    # a monitor's event has no submission; its body is fixed when the state changed
    with op.batch_alter_table("webhook_deliveries") as batch:
        batch.alter_column("submission_id", existing_type=sa.String(length=128), nullable=True)
        batch.add_column(sa.Column("payload", sa.JSON(), nullable=True))


def downgrade() -> None:
    op.execute("DELETE FROM webhook_deliveries WHERE submission_id IS NULL")
    with op.batch_alter_table("webhook_deliveries") as batch:
        batch.drop_column("payload")
        batch.alter_column("submission_id", existing_type=sa.String(length=128), nullable=False)
    op.drop_table("monitor_states")
    op.drop_table("monitors")
