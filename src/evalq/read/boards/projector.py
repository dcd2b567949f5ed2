"""The one writer of the boards' read model: the merge and the refresh call it, reads never.

What it writes, and when:

- at merge (`project_runs`), in the merge's transaction: each merged run's standing (its
  ranking values, `evalq.read.standings.write_all`) and its task's stored kind moved forward by
  what the run carries (`evalq.store.task_kinds.note_runs`);
- at the refresh that follows a batch of merges (`project_task`): every standing scored
  against the new baseline (`evalq.read.standings.sync`), the task's kind settled from its runs,
  the places of the unfiltered board (`evalq.store.standings.store_places`) and the board's
  whole-task figures (`evalq.read.leaderboard.draw_figures`) stored at the task's version.

A board read finds them or does without: standings behind the task's basis make the reader
rank the whole task from its runs, figures not stored yet are drawn for that read only
(`evalq.read.leaderboard.board_figures`); neither writes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from sqlalchemy.orm import Session

from evalq.read import standings
from evalq.read.leaderboard import (
    copies_of,
    draw_figures,
    figures_version,
    rule_of,
    traced_only,
)
from evalq.read.view import TaskContext
from evalq.store import standings as table
from evalq.store import task_kinds
from evalq.store.models import EvaluationRow, SubmissionRow


def project_runs(
    session: Session,
    contexts: Mapping[str, TaskContext],
    runs: Sequence[tuple[SubmissionRow, EvaluationRow]],
) -> None:
    """The merge's share: the standings of ``runs`` (each in its task's context) and their
    tasks' kinds, in the caller's transaction."""
    standings.write_all(session, contexts, runs)


def project_task(session: Session, context: TaskContext) -> None:
    """The refresh's share, after the task's baseline is stored: its standings scored against
    it, its kind settled, the unfiltered board's places and the whole-board figures stored."""
    standings.sync(session, context)
    task_kinds.settle(session, context.task)
    rule = rule_of(session, context)
    copied, _ = copies_of(session, task_id=context.task.id)
    kept = table.Kept(context.task.id, copies=frozenset(copied), traced_only=traced_only(context))
    table.store_places(session, rule, kept)
    figures = draw_figures(session, context)
    table.store_figures(
        session,
        task_id=context.task.id,
        version=figures_version(session, context),
        data=figures.model_dump(mode="json"),
    )
