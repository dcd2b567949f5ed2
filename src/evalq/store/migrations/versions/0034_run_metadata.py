"""run_metadata: the runs' metadata entries a board filter can name, stored apart

Revision ID: 0034_run_metadata
Revises: 0033_task_refreshes
Create Date: 2026-11-30 00:20:00

A board filtered on ``metadata.KEY=VALUE`` read every run of the task whole and ranked it in
Python (the last board read that did). One row per top-level entry whose value a filter can
equal (`evalq.store.run_metadata`), written by the projector at merge, lets the board rank the
kept runs in the database. The runs stored before this revision get theirs here, read from
their payloads' ``metadata`` in batches.
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from alembic import op

from evalq.store.run_metadata import entries

revision = "0034_run_metadata"
down_revision = "0033_task_refreshes"
branch_labels = None
depends_on = None

BATCH = 2_000


def upgrade() -> None:
    table = op.create_table(
        "run_metadata",
        sa.Column(
            "submission_id",
            sa.String(128),
            sa.ForeignKey("submissions.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column("key", sa.String(64), primary_key=True),
        sa.Column("value", sa.String(200), nullable=False),
    )
    op.create_index("ix_run_metadata_value", "run_metadata", ["key", "value"])
    submissions = sa.table("submissions", sa.column("id", sa.String), sa.column("payload", sa.JSON))
    bind = op.get_bind()
    after = ""
    while True:
        batch: list[Any] = list(
            bind.execute(
                sa.select(submissions.c.id, submissions.c.payload["metadata"])
                .where(submissions.c.id > after)
                .order_by(submissions.c.id)
                .limit(BATCH)
            )
        )
        if not batch:
            return
        rows = [row for sid, metadata in batch for row in entries(sid, metadata)]
        if rows:
            bind.execute(table.insert(), rows)
        after = batch[-1][0]


def downgrade() -> None:
    op.drop_index("ix_run_metadata_value", table_name="run_metadata")
    op.drop_table("run_metadata")
