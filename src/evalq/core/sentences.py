"""A text cut into the units an injection mark names and removes: sentences, as spans of it.

A mark must say which words it means, and the tiers must be able to read the text without them,
so the units are spans of the text as written (``text[start:end]``), never of a normalised
copy. A line ends a unit; so does a sentence's end mark followed by white space, or by a
character a reader cannot see (a zero-width space after the full stop still ends the sentence
a reader sees). A unit longer than `WINDOW_WORDS` words is read as overlapping windows of that
many words, half a window apart: an instruction buried inside a 400-word sentence is then read
beside its own words, not averaged with the whole paragraph.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

WINDOW_WORDS = 40
"""Longest unit in words; a longer sentence is read as windows of this many words."""

_INVISIBLE = "\u200b\u200c\u200d\u2060\ufeff\u00ad"
_BREAK = re.compile(f"(?<=[.!?\u3002\uff01\uff1f\uff0e])[\\s{_INVISIBLE}]+|\\n+")
_WORD = re.compile(r"\S+")


@dataclass(frozen=True)
class Span:
    """One unit of a text: ``text[start:end]``."""

    start: int
    end: int


def sentence_spans(text: str) -> list[Span]:
    """The units of ``text`` in order, each stripped of surrounding space; none for blank text.

    Windows of a long sentence overlap; every other unit is disjoint from the rest.
    """
    spans: list[Span] = []
    start = 0
    for found in _BREAK.finditer(text):
        spans += _windows(text, start, found.start())
        start = found.end()
    spans += _windows(text, start, len(text))
    return spans


def _windows(text: str, start: int, end: int) -> list[Span]:
    """The unit ``text[start:end]`` without its edge space; as windows when it is long."""
    words = [m.span() for m in _WORD.finditer(text, start, end)]
    if not words:
        return []
    if len(words) <= WINDOW_WORDS:
        return [Span(words[0][0], words[-1][1])]
    step = WINDOW_WORDS // 2
    firsts = range(0, len(words) - step, step)
    return [Span(words[i][0], words[min(i + WINDOW_WORDS, len(words)) - 1][1]) for i in firsts]


def without_spans(text: str, spans: list[Span]) -> str:
    """``text`` with every character inside one of ``spans`` removed; the lines it leaves
    empty dropped, other white space kept."""
    if not spans:
        return text
    keep = [True] * len(text)
    for span in spans:
        keep[span.start : span.end] = [False] * (span.end - span.start)
    kept = "".join(char for char, k in zip(text, keep, strict=True) if k)
    return "\n".join(line.rstrip() for line in kept.splitlines() if line.strip())
