"""agent_tallies, judge_tallies: a task's board tallies kept at merge; indexes of a
task's held runs and of one agent's runs

Revision ID: 0024_board_tallies
Revises: 0023_task_audits
Create Date: 2026-11-28 12:30:00
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import sqlalchemy as sa
from alembic import op

revision = "0024_board_tallies"
down_revision = "0023_task_audits"
branch_labels = None
depends_on = None

FIGURES = {
    "time": "execution_time",
    "cost": "cost_usd",
    "tokens": "total_tokens",
    "calls": "tool_calls",
}


def upgrade() -> None:
    op.create_table(
        "agent_tallies",
        sa.Column("task_id", sa.String(length=128), nullable=False),
        sa.Column("tool", sa.String(length=200), nullable=False),
        sa.Column("model", sa.String(length=200), nullable=False),
        *(
            sa.Column(name, sa.Integer(), nullable=False)
            for name in ("done", "degraded", "counted", "held")
        ),
        *(
            sa.Column(f"{name}_{end}", sa.Float(), nullable=True)
            for name in FIGURES
            for end in ("min", "max")
        ),
        sa.ForeignKeyConstraint(["task_id"], ["tasks.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("task_id", "tool", "model"),
    )
    op.create_index("ix_agent_tallies_agent", "agent_tallies", ["tool", "model", "task_id"])
    op.create_table(
        "judge_tallies",
        sa.Column("task_id", sa.String(length=128), nullable=False),
        sa.Column("model", sa.String(length=200), nullable=False),
        sa.Column("rubric", sa.String(length=200), nullable=False),
        sa.Column("runs", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(["task_id"], ["tasks.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("task_id", "model", "rubric"),
    )
    op.create_index("ix_submissions_task_review", "submissions", ["task_id", "review", "id"])
    op.create_index("ix_submissions_task_agent", "submissions", ["task_id", "tool", "model"])
    _count_agents()
    _count_judged()


def _count_agents() -> None:
    """Every task's agent tallies, as `evalq.store.tallies.recount` counts them."""
    op.execute(
        "INSERT INTO agent_tallies (task_id, tool, model, done, degraded, counted, held, "
        + ", ".join(f"{n}_min, {n}_max" for n in FIGURES)
        + ") SELECT s.task_id, s.tool, s.model, "
        "SUM(CASE WHEN r.status = 'done' THEN 1 ELSE 0 END), "
        "SUM(CASE WHEN r.status = 'degraded' THEN 1 ELSE 0 END), "
        f"SUM(CASE WHEN {_COUNTED} THEN 1 ELSE 0 END), "
        "SUM(CASE WHEN s.review = 'flagged' AND s.copy_of IS NULL THEN 1 ELSE 0 END), "
        + ", ".join(
            f"MIN(CASE WHEN {_COUNTED} THEN {_measured(n, c)} END), "
            f"MAX(CASE WHEN {_COUNTED} THEN {_measured(n, c)} END)"
            for n, c in FIGURES.items()
        )
        + " FROM submissions s JOIN standings r ON r.submission_id = s.id"
        " GROUP BY s.task_id, s.tool, s.model"
    )


_COUNTED = "(s.review IS NULL OR s.review <> 'flagged') AND s.copy_of IS NULL"


def _measured(name: str, column: str) -> str:
    return f"NULLIF(s.{column}, 0)" if name in ("time", "cost") else f"s.{column}"


def _count_judged() -> None:
    """Every task's judged runs per (model, rubric), as `evalq.store.tallies.judge_pairs`
    reads a stored judge tier (ok scores only; a panel's members each on their own)."""
    connection = op.get_bind()
    rows = connection.execute(
        sa.text(
            "SELECT r.task_id, t.metrics FROM tier_results t "
            "JOIN standings r ON r.submission_id = t.submission_id "
            "WHERE t.tier = 'judge' AND t.status IN ('ok', 'failed')"
        )
    )
    runs: Counter[tuple[str, str, str]] = Counter()
    for task_id, metrics in rows:
        for model, rubric in _pairs(metrics):
            runs[(task_id, model, rubric)] += 1
    if runs:
        table = sa.table(
            "judge_tallies",
            sa.column("task_id"),
            sa.column("model"),
            sa.column("rubric"),
            sa.column("runs"),
        )
        connection.execute(
            table.insert(),
            [
                {"task_id": t, "model": m, "rubric": r, "runs": n}
                for (t, m, r), n in sorted(runs.items())
            ],
        )


def _pairs(metrics: Any) -> set[tuple[str, str]]:
    if isinstance(metrics, str):
        import json

        metrics = json.loads(metrics)
    if not metrics or "scores" not in metrics:
        return set()
    panel = metrics.get("panel") or []
    members = [(m.get("model"), m.get("rubrics") or []) for m in panel] or [
        (metrics.get("model"), metrics.get("rubrics") or [])
    ]
    return {
        (model or "(unnamed)", r["rubric"])
        for model, rubrics in members
        for r in rubrics
        if r.get("status", "ok") == "ok" and r.get("score") is not None
    }


def downgrade() -> None:
    op.drop_index("ix_submissions_task_agent", table_name="submissions")
    op.drop_index("ix_submissions_task_review", table_name="submissions")
    op.drop_table("judge_tallies")
    op.drop_index("ix_agent_tallies_agent", table_name="agent_tallies")
    op.drop_table("agent_tallies")
