"""submissions.shape_hash, trace_seconds, trace_steps: near-copies count once; usage under its
trace is held

Revision ID: 0018
Revises: 0017
Create Date: 2026-11-26 09:40:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from evalq.core.schemas import shape_digest, trace_bounds

revision = "0018"
down_revision = "0017"
branch_labels = None
depends_on = None

BATCH = 1000


def upgrade() -> None:
    # shape_hash: the run's content without its usage (the output's case and spacing
    # normalised); computed from the stored payload for the rows already there. The next
    # baseline refresh marks the near-copies it finds (copy_of).
    with op.batch_alter_table("submissions", schema=None) as batch_op:
        batch_op.add_column(sa.Column("shape_hash", sa.String(length=64), nullable=True))
        # what the run's trace says its usage must at least be (time, tool calls)
        batch_op.add_column(sa.Column("trace_seconds", sa.Float(), nullable=True))
        batch_op.add_column(sa.Column("trace_steps", sa.Integer(), nullable=True))
    submissions = sa.table(
        "submissions",
        sa.column("id", sa.String),
        sa.column("payload", sa.JSON),
        sa.column("shape_hash", sa.String),
        sa.column("trace_seconds", sa.Float),
        sa.column("trace_steps", sa.Integer),
    )
    connection = op.get_bind()
    last = ""
    while True:
        rows = connection.execute(
            sa.select(submissions.c.id, submissions.c.payload)
            .where(submissions.c.id > last)
            .order_by(submissions.c.id)
            .limit(BATCH)
        ).all()
        if not rows:
            break
        for row in rows:
            seconds, steps = trace_bounds(row.payload)
            connection.execute(
                submissions.update()
                .where(submissions.c.id == row.id)
                .values(
                    shape_hash=shape_digest(row.payload), trace_seconds=seconds, trace_steps=steps
                )
            )
        last = rows[-1].id
    # A refresh groups one agent's runs by shape, reading this index only.
    op.create_index(
        "ix_submissions_task_shape_hash",
        "submissions",
        ["task_id", "shape_hash", "status", "tool", "model"],
    )


def downgrade() -> None:
    op.drop_index("ix_submissions_task_shape_hash", table_name="submissions")
    # In place (SQLite 3.35+), as in 0004: a table copy would trip the foreign keys.
    with op.batch_alter_table("submissions", schema=None, recreate="never") as batch_op:
        batch_op.drop_column("trace_steps")
        batch_op.drop_column("trace_seconds")
        batch_op.drop_column("shape_hash")
