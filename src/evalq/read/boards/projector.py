"""The one writer of the boards' read model: the merge and the refresh call it, reads never.

What it writes, and when:

- at merge (`project_runs`), in the merge's transaction: each merged run's standing (its
  ranking values, `evalq.read.standings.write_all`), its task's stored kind moved forward by
  what the run carries (`evalq.store.task_kinds.note_runs`), the runs the merge holds for
  review flagged, and the task's tallies moved by what these runs changed (its agents' runs by
  status, counted and held, their usage ranges, the judged runs per model and rubric:
  `evalq.store.tallies.add`, a fixed number of statements whatever the task's size), the
  copies among the runs that repeat them decided again (`evalq.store.copies.regroup`), and the
  board's counts moved by what these runs changed (its rows by review and trace, each kind's
  value moments and histogram bins, PeerRead's labels, the filter values:
  `evalq.store.task_tallies.add`, one upsert), each run's content sketch, which the
  refresh's near-copy search reads (`evalq.store.review_sql.store_sketches`, one statement),
  and the run's metadata entries a board filter names (`evalq.store.run_metadata.store`, one
  statement);
- at a person's accept or un-accept (`project_review`), in its transaction: the tallies moved
  by the run's new review;
- at the refresh that follows a batch of merges (`project_task`): every standing scored
  against the new baseline (`evalq.read.standings.sync`), the task's kind settled from its runs,
  the agents' tallies counted again set-wise (the refresh decides copies and holds anew), the
  copies the board reads stored (`evalq.store.copies.store_all`), its counts counted again
  set-wise (`evalq.store.task_tallies.recount`), the places of the unfiltered board
  (`evalq.store.standings.store_places`) and the board's whole-task figures
  (`evalq.read.leaderboard.draw_figures`) stored at the task's version.

A board read finds them or does without, and never writes: standings behind the task's basis
are ranked as stored and the board says how many (`LeaderboardReport.rescoring_note`), figures
not stored yet are drawn for that read only (`evalq.read.leaderboard.board_figures`). A task
redefined while it has runs is refreshed in the definition's transaction
(`evalq.read.served.define_task`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

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
from evalq.store import (
    copies,
    queries,
    review_sql,
    run_metadata,
    tallies,
    task_kinds,
    task_tallies,
)
from evalq.store import standings as table
from evalq.store.models import EvaluationRow, SubmissionRow


def project_runs(
    session: Session,
    contexts: Mapping[str, TaskContext],
    runs: Sequence[tuple[SubmissionRow, EvaluationRow]],
    *,
    held: Sequence[str] = (),
) -> set[tallies.Agent]:
    """The merge's share, in the caller's transaction: the standings of ``runs`` (each in its
    task's context), their tasks' kinds, the runs of ``held`` flagged for review (those a
    person never decided on), the copies among the runs that repeat them decided again, and
    the tallies moved by what changed. Returns the agents whose standing (the tasks they ran)
    the runs moved (`tallies.add`)."""
    ids = [sub_row.id for sub_row, _ in runs]
    before = tallies.snapshot(session, ids)
    counted = task_tallies.snapshot(session, ids)
    standings.write_all(session, contexts, runs)
    for sid in held:
        queries.flag_for_review(session, submission_id=sid)
    after = tallies.snapshot(session, ids)
    came_or_went = [
        sid for sid in ids if (sid in before and before[sid].tallied) != after[sid].tallied
    ]
    moved = tallies.add(session, before, after, tallies.judged_of(session, came_or_went))
    marks = copies.regroup(session, [sub_row for sub_row, _ in runs])
    counted |= task_tallies.snapshot(session, [sid for sid in marks if sid not in set(ids)])
    copies.mark(session, marks)
    task_tallies.add(session, counted, task_tallies.snapshot(session, [*ids, *marks]))
    review_sql.store_sketches(session, [sub_row for sub_row, _ in runs])
    run_metadata.store(session, [sub_row for sub_row, _ in runs])
    return moved


def project_review(session: Session, submission_id: str, decide: Callable[[], bool]) -> bool:
    """A person's decision on a run's review (``decide``: accept or un-accept it, returning
    whether anything changed), with the tallies moved by it in the same transaction: a board
    read before the refresh that follows counts the run where the decision put it."""
    agents = tallies.snapshot(session, [submission_id])
    counted = task_tallies.snapshot(session, [submission_id])
    changed = decide()
    if changed:
        tallies.add(session, agents, tallies.snapshot(session, [submission_id]), {})
        task_tallies.add(session, counted, task_tallies.snapshot(session, [submission_id]))
    return changed


def project_task(session: Session, context: TaskContext) -> None:
    """The refresh's share, after the task's baseline is stored: its standings scored against
    it, its kind settled, its copies as the board reads them, the tallies counted again, the
    unfiltered board's places and the whole-board figures stored."""
    task_id = context.task.id
    standings.sync(session, context)
    task_kinds.settle(session, context.task)
    tallies.recount(session, task_id=task_id)
    copied, _ = copies_of(session, task_id=task_id)
    copies.mark(session, copies.store_all(session, task_id=task_id, copies=copied))
    task_tallies.recount(session, task_id=task_id)
    rule = rule_of(session, context)
    kept = table.Kept(task_id, copies=frozenset(copied), traced_only=traced_only(context))
    table.store_places(session, rule, kept)
    figures = draw_figures(session, context)
    table.store_figures(
        session,
        task_id=task_id,
        version=figures_version(session, context),
        data=figures.model_dump(mode="json"),
        drawn_at=context.read_at,
    )
