"""task_refreshes: how far the refresh has decided each task's copy marks, and its last cost

Revision ID: 0033_task_refreshes
Revises: 0032_run_sketches
Create Date: 2026-11-29 18:00:00

The refresh decided every run's copy mark again from the whole task (`duplicates` over every
run near another in usage: most of an Arena refresh of 100,000 runs). A run's mark depends only
on the runs before it, so the refresh now records the latest submission time it decided through
and how many runs it decided (`evalq.store.review_sql`), and the next one decides only the runs
submitted since, against the counted runs in reach of them, unless a run it had not decided
arrived with an earlier time (then the whole task, as before). No row for any task here: the
first refresh after this revision decides the whole task once.

The row also keeps how long the task's last refresh took and when it ended: a refresh a merge
scheduled starts no sooner than a multiple of that after it (EVALQ_BASELINE_REFRESH_SHARE), so
the refreshes of a large task that keeps receiving runs take a bounded share of a worker.

A table of its own, not columns of ``tasks``: a merge updates its task's row last (it claims the
refresh), after the tallies; a refresh that updated the same row before counting the tallies
again would wait on a merge that waits on it (PostgreSQL's deadlock detector then aborts one).
Only the refresh writes this row.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0033_task_refreshes"
down_revision = "0032_run_sketches"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "task_refreshes",
        sa.Column(
            "task_id",
            sa.String(128),
            sa.ForeignKey("tasks.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column("copies_through", sa.DateTime(timezone=True), nullable=True),
        sa.Column("copies_runs", sa.BigInteger(), nullable=True),
        sa.Column("cost_s", sa.Float(), nullable=True),
        sa.Column("ended_at", sa.DateTime(timezone=True), nullable=True),
    )


def downgrade() -> None:
    op.drop_table("task_refreshes")
