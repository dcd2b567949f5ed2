"""standings: an index per ranking key, so a live board counts the rows above a place

Revision ID: 0027_standings_key_indexes
Revises: 0026_sessions
Create Date: 2026-11-28 16:00:00

A board read between a merge and the refresh ranks its page by counting the task's kept rows
whose key is better than the page's first row, tied with its ends, and better in each Arena
category than each listed row (`evalq.store.standings.ranked_page`), and reads a page's rows
segment by segment in value order: each an index range of (task, flags, value), the
submission id carried for the join to the run's review.
"""

from __future__ import annotations

from alembic import op

revision = "0027_standings_key_indexes"
down_revision = "0026_sessions"
branch_labels = None
depends_on = None

VALUES = {
    "arena_key": ["task_id", "partial", "arena_key", "submission_id"],
    "peerread_key": ["task_id", "partial", "peerread_key", "submission_id"],
    "scylla_key": ["task_id", "partial", "scylla_key", "submission_id"],
    "suite_key": ["task_id", "partial", "suite_passed", "suite_key", "submission_id"],
}
"""A kind's value after the flags a board orders by first (a segment of the board)."""
CATEGORIES = ("efficiency_key", "speed_key", "cost_key", "correctness_key")


def upgrade() -> None:
    for key, columns in VALUES.items():
        op.create_index(f"ix_standings_task_{key}", "standings", columns)
    for key in CATEGORIES:
        op.create_index(f"ix_standings_task_{key}", "standings", ["task_id", key, "submission_id"])


def downgrade() -> None:
    for key in [*VALUES, *CATEGORIES]:
        op.drop_index(f"ix_standings_task_{key}", table_name="standings")
