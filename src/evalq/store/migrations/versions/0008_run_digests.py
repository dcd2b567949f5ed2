"""what a run did, hashed: copies of a run and copied outputs

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-24 17:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from evalq.core.schemas import run_digests

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None

BATCH = 1000


def upgrade() -> None:
    # run_hash: a run's content without its id, labels or metadata, so a copy sent under a new
    # id counts once; output_hash: the output alone (a copied answer with other usage is held
    # for review). Both computed from the stored payload for the rows already there.
    with op.batch_alter_table("submissions", schema=None) as batch_op:
        batch_op.add_column(sa.Column("run_hash", sa.String(length=64), nullable=True))
        batch_op.add_column(sa.Column("output_hash", sa.String(length=64), nullable=True))
    submissions = sa.table(
        "submissions",
        sa.column("id", sa.String),
        sa.column("payload", sa.JSON),
        sa.column("run_hash", sa.String),
        sa.column("output_hash", sa.String),
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
            run, output = run_digests(row.payload)
            connection.execute(
                submissions.update()
                .where(submissions.c.id == row.id)
                .values(run_hash=run, output_hash=output)
            )
        last = rows[-1].id
    # The baseline's reads ask, per row, whether an earlier run of the task has its content.
    op.create_index("ix_submissions_task_run_hash", "submissions", ["task_id", "run_hash"])


def downgrade() -> None:
    op.drop_index("ix_submissions_task_run_hash", table_name="submissions")
    # In place (SQLite 3.35+), as in 0004: a table copy would trip the foreign keys.
    with op.batch_alter_table("submissions", schema=None, recreate="never") as batch_op:
        batch_op.drop_column("output_hash")
        batch_op.drop_column("run_hash")
