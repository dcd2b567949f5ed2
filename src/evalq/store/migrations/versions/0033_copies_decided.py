"""copies_decided: how far the refresh has decided each task's copy marks

Revision ID: 0033_copies_decided
Revises: 0032_run_sketches
Create Date: 2026-11-29 18:00:00

The refresh decided every run's copy mark again from the whole task (`duplicates` over every
run near another in usage: most of an Arena refresh of 100,000 runs). A run's mark depends only
on the runs before it, so the refresh now records the latest submission time it decided through
and how many runs it decided (`evalq.store.review_sql`), and the next one decides only the runs
submitted since, against the counted runs in reach of them, unless a run it had not decided
arrived with an earlier time (then the whole task, as before). No row for any task here: the
first refresh after this revision decides the whole task once.

A table of its own, not columns of ``tasks``: a merge updates its task's row last (it claims the
refresh), after the tallies; a refresh that updated the same row before counting the tallies
again would wait on a merge that waits on it (PostgreSQL's deadlock detector then aborts one).
Only the refresh writes this row.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0033_copies_decided"
down_revision = "0032_run_sketches"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "copies_decided",
        sa.Column(
            "task_id",
            sa.String(128),
            sa.ForeignKey("tasks.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column("through", sa.DateTime(timezone=True), nullable=False),
        sa.Column("runs", sa.BigInteger(), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("copies_decided")
