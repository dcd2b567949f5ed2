"""The one normal form in which evalq compares, hashes and scans text.

Two texts that render alike should be read alike: a reference copied with a zero-width space
inside every third word, or with Cyrillic letters that look Latin, is still the reference. Every
place that compares, hashes or scans a run's text (copy detection and near-copies, the fragments
of copying, the similarity inputs, the injection scan) reads `text_form` of it, so no rule can be
stepped past by characters a reader cannot see. In order:

1. **Invisible characters removed**: Unicode's format characters (general category ``Cf``: zero-
   width space and joiners, soft hyphen, bidi controls, word joiner, byte-order mark, tags) and
   the rest of the ``Default_Ignorable_Code_Point`` property (variation selectors, the combining
   grapheme joiner, Hangul fillers; `IGNORABLE`, from Unicode's DerivedCoreProperties.txt).
2. **NFKC**: compatibility forms (fullwidth, mathematical alphanumerics, ligatures) become the
   letters they stand for.
3. **Confusables folded** (Unicode TS #39, section 4): a character outside ASCII whose prototype
   in Unicode's confusables table is one ASCII letter or digit becomes that letter (Cyrillic
   ``а``, Greek ``ο``, Latin ``ı``...). The table is the one the maintained
   ``confusable-homoglyphs`` package ships (Unicode's confusables.txt as JSON). Departure from
   the TS #39 skeleton: ASCII itself is left alone (the skeleton also turns ``m`` into ``rn``,
   ``1`` and ``I`` into ``l``, ``0`` into ``O``), because the form is also what the similarity
   metrics read, and folding ordinary English would change them; a substitution inside ASCII is
   visible on close reading, one across scripts is not.
4. **Case and spacing folded**: ``casefold`` (done before step 3), then every run of white
   space (and the blank that renders as one, U+2800) one space, stripped; `text_form_lines`
   keeps line breaks.

The form is idempotent (``text_form(text_form(x)) == text_form(x)``) and plain lower-case ASCII
with single spaces is its own form, so ordinary English text reads exactly as before.
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache

IGNORABLE: tuple[tuple[int, int], ...] = (
    (0x00AD, 0x00AD),
    (0x034F, 0x034F),
    (0x061C, 0x061C),
    (0x115F, 0x1160),
    (0x17B4, 0x17B5),
    (0x180B, 0x180F),
    (0x200B, 0x200F),
    (0x202A, 0x202E),
    (0x2060, 0x206F),
    (0x3164, 0x3164),
    (0xFE00, 0xFE0F),
    (0xFEFF, 0xFEFF),
    (0xFFA0, 0xFFA0),
    (0xFFF0, 0xFFF8),
    (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A),
    (0xE0000, 0xE0FFF),
)
"""``Default_Ignorable_Code_Point`` ranges (Unicode 15.1 DerivedCoreProperties.txt), inclusive."""

BLANKS = "\u2800"
"""Characters that render as a space but are not white space to Python (braille blank)."""


def is_invisible(char: str) -> bool:
    """Whether ``char`` renders as nothing: a format character or a default-ignorable one."""
    if unicodedata.category(char) == "Cf":
        return True
    code = ord(char)
    return any(low <= code <= high for low, high in IGNORABLE)


@lru_cache(maxsize=4096)
def _folded(char: str) -> str:
    """One character, invisible ones removed and confusables folded (steps 1 and 3)."""
    if char.isascii():
        return char
    if is_invisible(char):
        return ""
    if char in BLANKS:
        return " "
    return _prototypes().get(char, char)


@lru_cache(maxsize=1)
def _prototypes() -> dict[str, str]:
    """``{character: ASCII letter or digit}`` for every non-ASCII character whose TS #39
    prototype is one ASCII letter or digit (lower-cased: case is folded anyway)."""
    from confusable_homoglyphs.confusables import confusables_data

    found: dict[str, str] = {}
    for char, homoglyphs in confusables_data.items():
        if char.isascii() or len(char) != 1 or len(homoglyphs) != 1:
            continue
        target = homoglyphs[0]["c"]
        if len(target) == 1 and target.isascii() and target.isalnum():
            found[char] = target.lower()
    return found


def _folded_text(text: str) -> str:
    """Steps 1 to 3 and the case fold (before the confusables, so a capital folds as its small
    letter does: Cyrillic capital I is Latin i, not the l that TS #39 gives the capital)."""
    if text.isascii():
        return text.casefold()
    cased = unicodedata.normalize("NFKC", text).casefold()
    folded = "".join(_folded(c) for c in cased)
    # NFKC once more: a folded letter may now compose with a following combining mark
    return unicodedata.normalize("NFKC", folded)


def text_form(text: str) -> str:
    """``text`` in evalq's normal form, on one line (the module's four steps)."""
    return " ".join(_folded_text(text).split())


def text_form_lines(text: str) -> str:
    """`text_form` of each line of ``text``, the lines kept (for rules that read a line's
    start or end); empty lines dropped."""
    lines = (" ".join(line.split()) for line in _folded_text(text).splitlines())
    return "\n".join(line for line in lines if line)
