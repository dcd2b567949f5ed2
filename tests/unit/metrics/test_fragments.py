"""Extractive fragment coverage and density (Grusky et al. 2018) on hand-made texts."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evalq.metrics.fragments import fragments, text_fragments, words


def test_a_verbatim_copy_is_one_fragment_covering_everything() -> None:
    found = text_fragments("The model is small and fast.", ["the model is small and fast"])
    assert found.lengths == (6,)
    assert found.coverage == 1.0
    assert found.density == 6.0  # 6^2 / 6
    assert found.copied(3) == 1.0


def test_coverage_and_density_of_a_partial_copy() -> None:
    # text: a b c x d e ; source: a b c d e  ->  fragments "a b c" (3) and "d e" (2); "x" none
    found = fragments(list("abcxde"), [list("abcde")])
    assert found.lengths == (3, 2)
    assert found.coverage == pytest.approx(5 / 6)
    assert found.density == pytest.approx((9 + 4) / 6)
    assert found.copied(3) == pytest.approx(3 / 6)  # only the 3-word passage counts as copied


def test_the_greedy_walk_takes_the_longest_match_at_each_position() -> None:
    # "a b" occurs early, "a b c d" later: the walk must take the longer one
    found = fragments(list("abcd"), [list("abxabcd")])
    assert found.lengths == (4,)


def test_a_splice_of_two_sources_is_covered_as_a_copy_is() -> None:
    first, second = "one two three four", "five six seven eight"
    spliced = "one two three four five six seven eight"
    together = text_fragments(spliced, [first, second])
    assert together.coverage == 1.0 and together.lengths == (4, 4)
    assert text_fragments(spliced, [first]).coverage == 0.5


def test_unrelated_text_has_no_fragments_and_empty_text_scores_zero() -> None:
    assert text_fragments("green apples fall", ["blue sky rises"]).coverage == 0.0
    empty = text_fragments("", ["anything"])
    assert (empty.coverage, empty.density, empty.copied(3)) == (0.0, 0.0, 0.0)
    assert text_fragments("some words", []).lengths == ()


def test_words_are_lower_cased_with_inner_apostrophes_and_hyphens() -> None:
    assert words("The model's state-of-the-art F1, 0.93!") == [
        "the",
        "model's",
        "state-of-the-art",
        "f1",
        "0",
        "93",
    ]


@given(
    st.lists(st.sampled_from("abcde"), max_size=30),
    st.lists(st.lists(st.sampled_from("abcdef"), max_size=20), max_size=3),
)
def test_fragments_tile_part_of_the_text(text: list[str], sources: list[list[str]]) -> None:
    found = fragments(text, sources)
    assert sum(found.lengths) <= len(text)
    assert 0.0 <= found.coverage <= 1.0
    assert found.coverage <= found.density <= max(1, len(text))
    vocabulary = {t for source in sources for t in source}
    assert found.coverage == pytest.approx(
        sum(t in vocabulary for t in text) / len(text) if text else 0.0
    )  # every token found in a source starts or continues a fragment


def test_a_text_of_one_repeated_word_is_one_fragment_without_stalling() -> None:
    found = fragments(["a"] * 5_000, [["a"] * 20_000])
    assert found.lengths == (5_000,)
