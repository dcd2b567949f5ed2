"""traces.owner: the API key (its name) whose spans opened a trace

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-26 08:00:00

Traces stored before this have no owner: the first key that sends a span to one takes it.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("traces") as batch:
        batch.add_column(sa.Column("owner", sa.String(length=100), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("traces") as batch:
        batch.drop_column("owner")
