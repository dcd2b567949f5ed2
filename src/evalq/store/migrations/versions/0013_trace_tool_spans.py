"""traces.tool_spans: tool calls stored, so a trace that can never be a run is refused at once

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-26 08:30:00

Traces stored before this count 0: their earlier tool spans are not counted (the submission's
own edge limit still refuses such a run when it is finalised, as before).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("traces") as batch:
        batch.add_column(
            sa.Column("tool_spans", sa.Integer(), nullable=False, server_default=sa.text("0"))
        )


def downgrade() -> None:
    with op.batch_alter_table("traces") as batch:
        batch.drop_column("tool_spans")
