"""the worker that claimed a running tier

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-02 10:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # owner: the worker incarnation ("node/token") that last started the tier; the recovery
    # sweep re-enqueues a running tier at once when that worker's heartbeat is gone.
    with op.batch_alter_table("tier_results", schema=None) as batch_op:
        batch_op.add_column(sa.Column("owner", sa.String(length=255), nullable=True))
    # The sweep looks for running tiers every EVALQ_RECOVER_EVERY_S; few rows are running.
    op.create_index("ix_tier_results_status", "tier_results", ["status"])


def downgrade() -> None:
    op.drop_index("ix_tier_results_status", table_name="tier_results")
    # In place (SQLite 3.35+), as in 0004: a table copy would trip the foreign keys.
    with op.batch_alter_table("tier_results", schema=None, recreate="never") as batch_op:
        batch_op.drop_column("owner")
