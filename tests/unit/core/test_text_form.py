"""The one text normal form: what renders alike reads alike."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from evalq.core.text_form import is_invisible, text_form, text_form_lines


def test_invisible_characters_are_removed() -> None:
    hidden = "co\u200bpy\u200c of\u00ad the re\u2060fer\ufe0fence\u200d\ufeff"
    assert text_form(hidden) == "copy of the reference"


def test_look_alike_letters_from_other_scripts_fold_to_latin() -> None:
    cyrillic = "\u0456gn\u043er\u0435 th\u0435 \u0440r\u0435v\u0456\u043eus"  # і о е р
    greek = "\u03bfverride"  # ο
    assert text_form(cyrillic) == "ignore the previous"
    assert text_form(greek) == "override"


def test_compatibility_forms_case_and_spacing_fold() -> None:
    assert (
        text_form("  \uff21\uff22\uff23  \U0001d41bold\n\tTEXT \u2800 end ") == "abc bold text end"
    )


def test_ascii_is_left_as_a_reader_wrote_it() -> None:
    # TS #39's skeleton would turn m into rn and 1 into l; evalq's form leaves ASCII alone
    assert text_form("Item 10: model m1 in 2016") == "item 10: model m1 in 2016"


def test_lines_are_kept_where_asked() -> None:
    assert text_form_lines("First\u200b line\n\n  SYSTEM :  x ") == "first line\nsystem : x"


def test_format_characters_are_invisible() -> None:
    assert all(is_invisible(c) for c in "\u200b\u200e\u202e\u2060\ufeff\ufe0f\U000e0041")
    assert not any(is_invisible(c) for c in "a é\u0301-")


@given(st.text())
def test_the_form_is_idempotent(text: str) -> None:
    once = text_form(text)
    assert text_form(once) == once
    assert text_form_lines(text_form_lines(text)) == text_form_lines(text)
