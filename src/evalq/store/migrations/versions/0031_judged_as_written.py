"""submissions.judged_as_written: how many sentences tier 1 marked as instructions to the
evaluator that the judge scored without leaving out (a run with one is held for review)

Revision ID: 0031_judged_as_written
Revises: 0030_run_tickets
Create Date: 2026-11-29 12:00:00

Written at merge (`evalq.service.evaluated.record_evaluations`) and read by every refresh's
review decision (`evalq.store.review_sql`), as ``integrity_hits`` is. Runs merged before this
revision have none: they are decided as they were.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0031_judged_as_written"
down_revision = "0030_run_tickets"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("submissions") as batch:
        batch.add_column(sa.Column("judged_as_written", sa.Integer(), nullable=True))


def downgrade() -> None:
    # ALTER TABLE ... DROP COLUMN on both databases (SQLite >= 3.35): a batch copy of
    # `submissions` would drop the table the tier rows' and evaluations' foreign keys name
    op.execute("ALTER TABLE submissions DROP COLUMN judged_as_written")
