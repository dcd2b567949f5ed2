"""webhook deliveries as the events' outbox: when a pending event is due to be sent again

Revision ID: 0022_event_outbox
Revises: 0021_window_index
Create Date: 2026-11-28 09:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0022_event_outbox"
down_revision = "0021_window_index"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("webhook_deliveries") as batch:
        batch.add_column(sa.Column("due_at", sa.DateTime(timezone=True), nullable=True))
    # the events pending at the upgrade are due at once: their messages may be gone
    op.execute("UPDATE webhook_deliveries SET due_at = updated_at WHERE status = 'pending'")
    op.create_index("ix_webhook_deliveries_status_due", "webhook_deliveries", ["status", "due_at"])


def downgrade() -> None:
    op.drop_index("ix_webhook_deliveries_status_due", table_name="webhook_deliveries")
    with op.batch_alter_table("webhook_deliveries") as batch:
        batch.drop_column("due_at")
