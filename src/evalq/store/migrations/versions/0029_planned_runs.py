"""submissions.planned_runs; standings.copy_of and task_tallies: a live board's copies,
summary, histogram and filter values kept at merge

Revision ID: 0029_planned_runs
Revises: 0028_trace_provenance
Create Date: 2026-11-28 22:00:00

``planned_runs`` is copied from each stored payload (SQLite's json_extract, PostgreSQL's ->>),
so a Scylla board's run counts read a column. A board's copy marks start as the refresh's
(``submissions.copy_of``): the copies found among runs merged since the last refresh are
marked by that task's next merge of a repeat or its next refresh. The tallies are counted
as `evalq.store.task_tallies.recount` counts them.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import sqlalchemy as sa
from alembic import op

revision = "0029_planned_runs"
down_revision = "0028_trace_provenance"
branch_labels = None
depends_on = None

SCALE = 10_000
BINS = 10
KINDS = {  # kind -> (its value's column, its scale)
    "arena": ("arena_key", (0.0, 100.0)),
    "peerread": ("peerread_key", (0.0, 1.0)),
    "scylla": ("scylla_key", (0.0, 1.0)),
    "suite": ("suite_key", (0.0, 1.0)),
}
CHOICES = ("tool", "model", "variant")

r = sa.table(
    "standings",
    sa.column("submission_id", sa.String),
    sa.column("task_id", sa.String),
    sa.column("copy_of", sa.String),
    sa.column("recommendation", sa.String),
    sa.column("unjudged", sa.Boolean),
    *(sa.column(column, sa.Float) for column, _ in KINDS.values()),
)
s = sa.table(
    "submissions",
    sa.column("id", sa.String),
    sa.column("review", sa.String),
    sa.column("trace_provenance", sa.String),
    *(sa.column(name, sa.String) for name in CHOICES),
)


def upgrade() -> None:
    op.add_column("submissions", sa.Column("planned_runs", sa.Integer(), nullable=True))
    postgres = op.get_bind().dialect.name == "postgresql"
    planned = (
        "(payload::json ->> 'planned_runs')::integer"
        if postgres
        else "CAST(json_extract(payload, '$.planned_runs') AS INTEGER)"
    )
    op.execute(f"UPDATE submissions SET planned_runs = {planned} WHERE {planned} IS NOT NULL")
    op.add_column("standings", sa.Column("copy_of", sa.String(length=128), nullable=True))
    op.execute(
        "UPDATE standings SET copy_of = (SELECT s.copy_of FROM submissions s"
        " WHERE s.id = standings.submission_id) WHERE EXISTS (SELECT 1 FROM submissions s"
        " WHERE s.id = standings.submission_id AND s.copy_of IS NOT NULL)"
    )
    op.create_index("ix_standings_task_copy", "standings", ["task_id", "copy_of"])
    op.create_table(
        "task_tallies",
        sa.Column("task_id", sa.String(length=128), nullable=False),
        sa.Column("key", sa.String(length=240), nullable=False),
        sa.Column("count", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(["task_id"], ["tasks.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("task_id", "key"),
    )
    _count()


def _sum(condition: Any, value: Any = 1) -> Any:
    return sa.func.sum(sa.case((condition, value), else_=0))


def _count() -> None:
    """Every task's tallies, as the refresh counts them."""
    connection = op.get_bind()
    kept = r.c.copy_of.is_(None)
    held = sa.and_(s.c.review.is_not(None), s.c.review == "flagged")
    not_held = sa.or_(s.c.review.is_(None), s.c.review != "flagged")
    collected = sa.and_(s.c.trace_provenance.is_not(None), s.c.trace_provenance == "collected")
    ranked = {"any": sa.and_(kept, not_held), "collected": sa.and_(kept, not_held, collected)}
    columns: dict[str, Any] = {
        "rows": _sum(kept),
        "held": _sum(sa.and_(kept, held)),
        "collected": _sum(sa.and_(kept, collected)),
        "held collected": _sum(sa.and_(kept, held, collected)),
        "own trace": _sum(
            sa.and_(kept, s.c.trace_provenance.is_not(None), s.c.trace_provenance == "submitted")
        ),
    }
    for scope, where in ranked.items():
        columns[f"unjudged {scope}"] = _sum(sa.and_(where, r.c.unjudged))
        for kind, (name, (lo, hi)) in KINDS.items():
            value = r.c[name]
            units = sa.cast(sa.func.round(value * SCALE), sa.BigInteger)
            counted = sa.and_(where, value.is_not(None))
            columns[f"{kind} {scope} values"] = _sum(counted)
            columns[f"{kind} {scope} sum"] = _sum(counted, units)
            columns[f"{kind} {scope} squares"] = _sum(counted, units * units)
            step = (hi - lo) / BINS
            lower = [lo + i * step for i in range(BINS)]
            for i, low in enumerate(lower):
                inside = (
                    value >= low if i == BINS - 1 else sa.and_(value >= low, value < lower[i + 1])
                )
                columns[f"{kind} {scope} bin {i}"] = _sum(sa.and_(counted, inside))
    joined = sa.select(r.c.task_id).select_from(r.join(s, s.c.id == r.c.submission_id))
    found: Counter[tuple[str, str]] = Counter()
    for task_id, *totals in connection.execute(
        joined.add_columns(*columns.values()).group_by(r.c.task_id)
    ):
        for key, n in zip(columns, totals, strict=True):
            found[(task_id, key)] += int(n or 0)
    for task_id, label, *per_scope in connection.execute(
        joined.add_columns(r.c.recommendation, *(_sum(where) for where in ranked.values()))
        .where(kept)
        .group_by(r.c.task_id, r.c.recommendation)
    ):
        for scope, n in zip(ranked, per_scope, strict=True):
            found[(task_id, f"recommendation {scope} {label or 'none'}")] += int(n or 0)
    for name in CHOICES:
        column = s.c[name]
        for task_id, value, n in connection.execute(
            joined.add_columns(column, sa.func.count())
            .where(column.is_not(None))
            .group_by(r.c.task_id, column)
        ):
            found[(task_id, f"choice {name} {value}")] += int(n)
    rows = [{"task_id": t, "key": k, "count": n} for (t, k), n in sorted(found.items()) if n]
    if rows:
        tallies = sa.table(
            "task_tallies", sa.column("task_id"), sa.column("key"), sa.column("count")
        )
        connection.execute(tallies.insert(), rows)


def downgrade() -> None:
    op.drop_table("task_tallies")
    op.drop_index("ix_standings_task_copy", table_name="standings")
    # ALTER TABLE ... DROP COLUMN on both databases (SQLite >= 3.35), as 0028 does
    op.execute("ALTER TABLE standings DROP COLUMN copy_of")
    op.execute("ALTER TABLE submissions DROP COLUMN planned_runs")
