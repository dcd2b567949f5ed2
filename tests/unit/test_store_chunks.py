"""One bound on the values one statement binds, for every query that splits a caller's list."""

from __future__ import annotations

from evalq.store.chunks import CHUNK, chunks


def test_values_come_back_in_order_in_pieces_of_at_most_chunk() -> None:
    values = [f"run-{i:05d}" for i in range(2 * CHUNK + 7)]
    pieces = list(chunks(values))
    assert [len(p) for p in pieces] == [CHUNK, CHUNK, 7]
    assert [v for p in pieces for v in p] == values
    assert all(isinstance(p, list) for p in pieces)  # SQLAlchemy's in_() takes lists


def test_no_values_no_statement() -> None:
    assert list(chunks([])) == []
    assert list(chunks(("a",))) == [["a"]]


def test_the_bound_stays_below_sqlites_oldest_parameter_limit() -> None:
    assert 0 < CHUNK < 999
