"""Ids derived from the source's ids."""

from __future__ import annotations

from evalq.producer.importers.plan import MAX_ID_CHARS, source_id


def test_a_valid_source_id_is_kept_readable() -> None:
    assert source_id("inspect", "8zXj", 1, "e1") == "inspect-8zXj-1-e1"


def test_an_id_that_had_to_change_carries_a_digest_of_the_original() -> None:
    spaced, slashed = source_id("inspect", "a b"), source_id("inspect", "a/b")
    assert spaced.startswith("inspect-a_b-") and slashed.startswith("inspect-a_b-")
    assert spaced != slashed  # both become a_b; the digest keeps them apart
    assert source_id("inspect", "a b") == spaced  # and is the same on every import
    long = source_id("promptfoo", "x" * 300)
    assert len(long) <= MAX_ID_CHARS and long != source_id("promptfoo", "x" * 299)
