"""where a submission's price came from, stored at submit

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-16 10:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # priced_by: the PriceSource of cost_usd as JSON; NULL without a cost. Rows stored before
    # keep NULL, and the merge prices them again to recover it (scoring/evaluation.run_cost).
    with op.batch_alter_table("submissions", schema=None) as batch_op:
        batch_op.add_column(sa.Column("priced_by", sa.JSON(), nullable=True))


def downgrade() -> None:
    # recreate="never": SQLite drops a plain column in place (see 0004's downgrade).
    with op.batch_alter_table("submissions", schema=None, recreate="never") as batch_op:
        batch_op.drop_column("priced_by")
