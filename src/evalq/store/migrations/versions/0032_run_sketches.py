"""submissions.sketch: each run's content sketch (MinHash), stored once at its merge

Revision ID: 0032_run_sketches
Revises: 0031_judged_as_written
Create Date: 2026-11-29 16:00:00

Written by the projector at merge (`evalq.read.boards.projector.project_runs`) and read by the
refresh's near-copy search (`evalq.store.review_sql`), which sketched every usage-near run's
payload at every refresh (most of an Arena refresh of 100,000 runs). Runs merged before this
revision have none: the refresh sketches their payloads, as before.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0032_run_sketches"
down_revision = "0031_judged_as_written"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("submissions") as batch:
        batch.add_column(sa.Column("sketch", sa.LargeBinary(), nullable=True))


def downgrade() -> None:
    # ALTER TABLE ... DROP COLUMN on both databases (SQLite >= 3.35): a batch copy of
    # `submissions` would drop the table the tier rows' and evaluations' foreign keys name
    op.execute("ALTER TABLE submissions DROP COLUMN sketch")
