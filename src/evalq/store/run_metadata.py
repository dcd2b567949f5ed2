"""The runs' metadata entries a board filter can name (`RunMetadataRow`), written once at merge.

A board filtered on ``metadata.KEY=VALUE`` keeps the runs whose metadata holds the entry, the
value compared as text (`evalq.core.metadata.matches`). The entries are stored apart from the
run's payload, one row per top-level key whose value a filter can equal, so the board ranks
the kept runs in the database like any other filter (`evalq.store.standings.Kept`) instead
of decoding every run's payload at every read. The projector writes them at the run's merge
(`evalq.read.boards.projector.project_runs`); a run's metadata never changes after it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from sqlalchemy import exists, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session
from sqlalchemy.sql.elements import ColumnElement

from evalq.core.metadata import MAX_FILTER_VALUE_CHARS, as_text
from evalq.store.models import RunMetadataRow, SubmissionRow


def entries(submission_id: str, metadata: Any) -> list[dict[str, str]]:
    """The rows of one run's metadata: each top-level key whose value a filter can equal."""
    if not isinstance(metadata, Mapping):
        return []
    return [
        {"submission_id": submission_id, "key": key, "value": text}
        for key, value in metadata.items()
        if isinstance(key, str)
        and (text := as_text(value)) is not None
        and len(text) <= MAX_FILTER_VALUE_CHARS
    ]


def store(session: Session, runs: Iterable[SubmissionRow]) -> None:
    """Store the metadata entries of ``runs`` (one statement; a redelivered merge's runs,
    already stored, are left as they are)."""
    rows = [row for run in runs for row in entries(run.id, (run.payload or {}).get("metadata"))]
    if not rows:
        return
    insert = postgresql.insert if session.get_bind().dialect.name == "postgresql" else sqlite.insert
    session.execute(insert(RunMetadataRow).on_conflict_do_nothing(), rows)


def holds(wanted: Sequence[tuple[str, str]], submission_id: Any) -> list[ColumnElement[bool]]:
    """One condition per ``(key, value)`` of ``wanted``: the run ``submission_id`` (a column)
    has that entry."""
    m = RunMetadataRow
    return [
        exists(
            select(m.submission_id).where(
                m.submission_id == submission_id, m.key == key, m.value == value
            )
        )
        for key, value in wanted
    ]
