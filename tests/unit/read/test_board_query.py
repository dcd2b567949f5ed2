"""A board query's cursor: made for one query, where its page starts, at the board's version."""

from __future__ import annotations

import pytest

from evalq.core.errors import InvalidInput
from evalq.read.boards.query import BoardQuery, Cursor, decode

QUERY = BoardQuery(task_id="t", tool="aider", metadata={"a": "1", "b": "2"}, limit=10)


def test_a_cursor_reads_back_what_it_was_made_of() -> None:
    token = QUERY.next_cursor(version="v1", total=25)
    assert token is not None and decode(token) == Cursor("v1", 10, QUERY.key())
    asked, cursor = BoardQuery(**{**QUERY.__dict__, "cursor": token}).resolved()
    assert (asked.offset, asked.cursor, cursor) == (10, None, Cursor("v1", 10, QUERY.key()))
    after = asked.next_cursor(version="v2", total=25)
    assert after is not None and decode(after) == Cursor("v2", 20, QUERY.key())
    assert BoardQuery(**{**asked.__dict__, "offset": 20}).next_cursor(version="v", total=25) is None


def test_the_key_is_the_query_less_its_start() -> None:
    key = QUERY.key()
    assert BoardQuery(**{**QUERY.__dict__, "offset": 30}).key() == key
    assert BoardQuery(**{**QUERY.__dict__, "metadata": {"b": "2", "a": "1"}}).key() == key
    for change in ({"limit": 11}, {"tool": None}, {"include_held": True}, {"metadata": {}}):
        assert BoardQuery(**{**QUERY.__dict__, **change}).key() != key, change


def test_an_unpaged_read_has_no_next_cursor() -> None:
    assert BoardQuery(task_id="t").next_cursor(version="v", total=500) is None


@pytest.mark.parametrize(
    "token",
    ["", "%%", "bm90IGpzb24", "WzEsMiwzXQ", "WyJ2IiwtMSwiayJd", "WyJ2Iix0cnVlLCJrIl0"],
    ids=["empty", "not-base64", "not-json", "numbers", "negative-offset", "bool-offset"],
)
def test_a_token_this_reader_did_not_make_is_refused_on_cursor(token: str) -> None:
    with pytest.raises(InvalidInput) as refused:
        BoardQuery(task_id="t", limit=10, cursor=token).resolved()
    assert [name for name, _ in refused.value.problems] == ["cursor"]


def test_a_cursor_for_another_query_or_beside_an_offset_is_refused() -> None:
    token = QUERY.next_cursor(version="v", total=25)
    with pytest.raises(InvalidInput) as other:
        BoardQuery(task_id="t", limit=10, cursor=token).resolved()
    assert [name for name, _ in other.value.problems] == ["cursor"]
    with pytest.raises(InvalidInput) as both:
        BoardQuery(**{**QUERY.__dict__, "cursor": token, "offset": 10}).resolved()
    assert [name for name, _ in both.value.problems] == ["offset"]
