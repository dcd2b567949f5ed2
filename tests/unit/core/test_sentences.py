"""The units a mark names: sentences as spans of the text as written, long ones as windows."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from evalq.core.sentences import WINDOW_WORDS, Span, sentence_spans, without_spans


def pieces(text: str) -> list[str]:
    return [text[s.start : s.end] for s in sentence_spans(text)]


def test_sentences_lines_and_invisible_breaks_end_a_unit() -> None:
    text = "First point. Second? Third!\nA line without a stop\n\nLast.\u200bHidden break."
    assert pieces(text) == [
        "First point.",
        "Second?",
        "Third!",
        "A line without a stop",
        "Last.",
        "Hidden break.",
    ]


def test_numbers_and_abbreviations_inside_a_sentence_do_not_cut_it() -> None:
    assert pieces("It runs at 1/8.33 ms per frame (Fig.3) on 2.5 GPUs.") == [
        "It runs at 1/8.33 ms per frame (Fig.3) on 2.5 GPUs."
    ]


def test_a_long_sentence_is_read_as_overlapping_windows() -> None:
    words = [f"w{i}" for i in range(WINDOW_WORDS * 2)]
    windows = pieces(" ".join(words))
    assert windows[0].split() == words[:WINDOW_WORDS]
    assert windows[1].split()[0] == words[WINDOW_WORDS // 2]
    assert windows[-1].split()[-1] == words[-1]
    assert len(windows) == 3


def test_blank_text_has_no_units() -> None:
    assert sentence_spans("") == []
    assert sentence_spans(" \n\t\n ") == []


def test_removing_spans_keeps_the_rest_as_written() -> None:
    text = "Keep this. Drop this one.\nAnd keep this line.\nDrop.\n"
    spans = sentence_spans(text)
    dropped = [s for s in spans if text[s.start : s.end].startswith("Drop")]
    assert without_spans(text, dropped) == "Keep this.\nAnd keep this line."
    assert without_spans(text, []) == text


@given(st.text(alphabet=st.sampled_from("ab .?!\n\u200b"), max_size=200))
def test_units_are_inside_the_text_in_order_and_never_blank(text: str) -> None:
    spans = sentence_spans(text)
    assert all(0 <= s.start < s.end <= len(text) for s in spans)
    assert all(text[s.start : s.end].strip() for s in spans)
    assert spans == sorted(spans, key=lambda s: (s.start, s.end))
    assert without_spans(text, spans).strip(" \n.?!\u200b") == ""
    assert Span(0, 0) not in spans
