"""standings.place: each run's place on its task's unfiltered board, stored by the refresh

Revision ID: 0016
Revises: 0015
Create Date: 2026-11-26 07:30:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None

COLUMNS = (
    "place",
    "place_tied",
    "efficiency_place",
    "speed_place",
    "cost_place",
    "correctness_place",
)


def upgrade() -> None:
    for name in COLUMNS:
        op.add_column("standings", sa.Column(name, sa.Integer(), nullable=True))
    op.create_index("ix_standings_task_place", "standings", ["task_id", "place", "submission_id"])
    # a task's version reads its runs' latest change: one index probe
    op.create_index("ix_submissions_task_updated", "submissions", ["task_id", "updated_at"])


def downgrade() -> None:
    op.drop_index("ix_submissions_task_updated", table_name="submissions")
    op.drop_index("ix_standings_task_place", table_name="standings")
    for name in COLUMNS:
        op.drop_column("standings", name)
