"""tasks.kind: the kind of a task stored, not derived from its runs at every read

Revision ID: 0020_task_kind
Revises: 0019
Create Date: 2026-11-28 08:45:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0020_task_kind"
down_revision = "0019"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("tasks", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("kind", sa.String(length=16), nullable=False, server_default="arena")
        )
    # Backfill, as `evalq.scoring.kinds.derive_kind` decides (the order matters): the kind the
    # definition names; else required scenarios or a run with a suite gate -> suite; reference
    # outputs -> peerread; an evaluated run naming a variant -> scylla; else arena.
    tasks = sa.table(
        "tasks", sa.column("id", sa.String), sa.column("definition", sa.JSON), sa.column("kind")
    )
    submissions = sa.table(
        "submissions",
        sa.column("task_id", sa.String),
        sa.column("status", sa.String),
        sa.column("variant", sa.String),
    )
    standings = sa.table(
        "standings", sa.column("task_id", sa.String), sa.column("suite_passed", sa.Boolean)
    )
    connection = op.get_bind()
    for task_id, definition in connection.execute(sa.select(tasks.c.id, tasks.c.definition)):
        named = (definition or {}).get("kind")
        if named:
            kind = named
        elif (definition or {}).get("required_scenarios") or _exists(
            connection,
            standings,
            standings.c.task_id == task_id,
            standings.c.suite_passed.is_not(None),
        ):
            kind = "suite"
        elif (definition or {}).get("reference_outputs"):
            kind = "peerread"
        elif _exists(
            connection,
            submissions,
            submissions.c.task_id == task_id,
            submissions.c.status.in_(("done", "degraded")),
            submissions.c.variant.is_not(None),
        ):
            kind = "scylla"
        else:
            kind = "arena"
        connection.execute(tasks.update().where(tasks.c.id == task_id).values(kind=kind))


def _exists(
    connection: sa.Connection, table: sa.TableClause, *where: sa.ColumnElement[bool]
) -> bool:
    return bool(
        connection.execute(
            sa.select(sa.literal(1)).select_from(table).where(*where).limit(1)
        ).first()
    )


def downgrade() -> None:
    # ALTER TABLE ... DROP COLUMN on both databases (SQLite >= 3.35): a batch copy of `tasks`
    # would drop the table the submissions' foreign key names
    op.execute("ALTER TABLE tasks DROP COLUMN kind")
