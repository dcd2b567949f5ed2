"""submissions.trace_provenance: a trace collected by the OTLP intake under a key the task
trusts, or the submitter's own

Revision ID: 0028_trace_provenance
Revises: 0027_standings_key_indexes
Create Date: 2026-11-28 19:10:00

Before this revision a run with a timed trace (``trace_seconds`` set) read as usage "from a
trace", whoever wrote the trace. No stored run recorded which key sent its spans, so every run
already stored with a timed trace is ``submitted`` (its own trace, unverified); only runs the
OTLP intake makes from now on, under a key their task trusts, are ``collected``. A board's
stored figures drawn before this revision are not read again (`BoardFigures.placed` asks for
the ``own_trace`` count they lack), so a board that ranks only collected usage is ranked anew.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0028_trace_provenance"
down_revision = "0027_standings_key_indexes"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("submissions") as batch:
        batch.add_column(sa.Column("trace_provenance", sa.String(length=16), nullable=True))
    submissions = sa.table(
        "submissions",
        sa.column("trace_seconds", sa.Float),
        sa.column("trace_provenance", sa.String),
    )
    op.execute(
        submissions.update()
        .where(submissions.c.trace_seconds.is_not(None))
        .values(trace_provenance="submitted")
    )


def downgrade() -> None:
    # ALTER TABLE ... DROP COLUMN on both databases (SQLite >= 3.35): a batch copy of
    # `submissions` would drop the table the tier rows' and evaluations' foreign keys name
    op.execute("ALTER TABLE submissions DROP COLUMN trace_provenance")
