"""the judge's counted figures as columns; the tasks page's index

Revision ID: 0015
Revises: 0014
Create Date: 2026-11-26 07:10:00

`/metrics` summed four values out of every judge tier's JSON metrics (a decode per row: 2-3 s
on PostgreSQL at 333,000 runs); they are columns now, filled here from the stored JSON. The
tasks page counts runs by task and status with their latest change: an index that holds all
three answers it without reading the rows.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None

FIGURES = {  # name -> whether it is a float (else an integer)
    "transport_retries": False,
    "validation_retries": False,
    "rate_limited": False,
    "cost_usd": True,
}


def upgrade() -> None:
    for name, real in FIGURES.items():
        kind = sa.Float() if real else sa.Integer()
        op.add_column("tier_results", sa.Column(f"judge_{name}", kind, nullable=True))
    postgres = op.get_bind().dialect.name == "postgresql"
    for name, real in FIGURES.items():
        cast = "double precision" if real else "bigint"
        value = (
            f"(metrics::json ->> '{name}')::{cast}"
            if postgres
            else f"json_extract(metrics, '$.{name}')"
        )
        op.execute(
            f"UPDATE tier_results SET judge_{name} = {value} "
            "WHERE tier = 'judge' AND metrics IS NOT NULL"
        )
    op.create_index(
        "ix_submissions_task_status_updated",
        "submissions",
        ["task_id", "status", "updated_at"],
    )


def downgrade() -> None:
    op.drop_index("ix_submissions_task_status_updated", table_name="submissions")
    for name in FIGURES:
        op.drop_column("tier_results", f"judge_{name}")
