"""what a run did, hashed: copies of a run (marked copy_of) and copied outputs

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
RANK_COLUMNS = ("total_tokens", "tool_calls", "iterations", "execution_time", "cost_usd")


def upgrade() -> None:
    # run_hash: a run's content without its id, labels or metadata, so a copy sent under a new
    # id counts once; output_hash: the output alone (a copied answer with other usage is held
    # for review). Both computed from the stored payload for the rows already there.
    with op.batch_alter_table("submissions", schema=None) as batch_op:
        batch_op.add_column(sa.Column("run_hash", sa.String(length=64), nullable=True))
        batch_op.add_column(sa.Column("output_hash", sa.String(length=64), nullable=True))
        # copy_of: the earliest run with the same run_hash; set at the next baseline refresh.
        batch_op.add_column(sa.Column("copy_of", sa.String(length=128), nullable=True))
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
    # A refresh groups the task's runs by content and by output, reading these indexes only.
    op.create_index(
        "ix_submissions_task_run_hash",
        "submissions",
        ["task_id", "run_hash", "status", "copy_of"],
    )
    op.create_index(
        "ix_submissions_task_output_hash",
        "submissions",
        ["task_id", "output_hash", "status", "copy_of", "tool", "model"],
    )
    # The baseline's rank indexes end with copy_of, so leaving copies out stays index-only.
    for column in RANK_COLUMNS:
        name = f"ix_submissions_task_rank_{column}"
        op.drop_index(name, table_name="submissions")
        op.create_index(name, "submissions", ["task_id", column, "status", "review", "copy_of"])


def downgrade() -> None:
    for column in RANK_COLUMNS:
        name = f"ix_submissions_task_rank_{column}"
        op.drop_index(name, table_name="submissions")
        op.create_index(name, "submissions", ["task_id", column, "status", "review"])
    op.drop_index("ix_submissions_task_output_hash", table_name="submissions")
    op.drop_index("ix_submissions_task_run_hash", table_name="submissions")
    # In place (SQLite 3.35+), as in 0004: a table copy would trip the foreign keys.
    with op.batch_alter_table("submissions", schema=None, recreate="never") as batch_op:
        batch_op.drop_column("copy_of")
        batch_op.drop_column("output_hash")
        batch_op.drop_column("run_hash")
