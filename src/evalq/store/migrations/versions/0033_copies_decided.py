"""tasks.copies_through, tasks.copies_decided: how far the refresh has decided the task's copies

Revision ID: 0033_copies_decided
Revises: 0032_run_sketches
Create Date: 2026-11-29 18:00:00

The refresh decided every run's copy mark again from the whole task (`duplicates` over every
run near another in usage: most of an Arena refresh of 100,000 runs). A run's mark depends only
on the runs before it, so the refresh now records the latest submission time it decided through
and how many runs it decided (`evalq.store.review_sql`), and the next one decides only the runs
submitted since, against the counted runs in reach of them, unless a run it had not decided
arrived with an earlier time (then the whole task, as before). Null on every task here: the
first refresh after this revision decides the whole task once.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0033_copies_decided"
down_revision = "0032_run_sketches"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("tasks") as batch:
        batch.add_column(sa.Column("copies_through", sa.DateTime(), nullable=True))
        batch.add_column(sa.Column("copies_decided", sa.BigInteger(), nullable=True))


def downgrade() -> None:
    op.execute("ALTER TABLE tasks DROP COLUMN copies_decided")
    op.execute("ALTER TABLE tasks DROP COLUMN copies_through")
