"""Keyword stuffing: passages that list the references' words instead of arguing.

Similarity to the references rewards shared vocabulary, so a line of the references' words
appended to any review lifts it (another paper's review plus 30 such words: composite 0.195 ->
0.548 on the real PeerRead papers). Argued text is made of sentences, and sentences carry
function words ("the", "of", "is"); a list of terms carries almost none. A *stuffed passage* is a
line or sentence of at least `MIN_WORDS` words whose share of English stop words is under
`MAX_STOP_SHARE` and whose content words are mostly (`MIN_REFERENCE_SHARE`) the references'.
Such passages are left out of what the similarity reads, and the run is marked, so stuffing
neither moves the composite nor passes unsaid.

Measured on the real ICLR 2017 reviews in bench/data (240 reviews, train and held-out): real
reviews' sentences of 8+ words have a stop-word share of 0.2-0.6; none is a stuffed passage.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

from evalq.metrics.fragments import words

MIN_WORDS = 8
"""A passage shorter than this is a heading or a short list, not stuffing."""
MAX_STOP_SHARE = 0.12
"""Sentences carry function words; a passage with fewer is a list of terms."""
MIN_REFERENCE_SHARE = 0.6
"""...and a list of terms mostly taken from the references is stuffing."""

_PASSAGES = re.compile(r"[^\n.!?;]+")


@dataclass(frozen=True)
class Argued:
    """An output split into what it argues and what it stuffs.

    Attributes:
        text: the output without its stuffed passages.
        stuffed_words: how many words the stuffed passages held.
    """

    text: str
    stuffed_words: int


def is_stuffed(passage: list[str], vocabulary: set[str]) -> bool:
    """Whether a passage's tokens are a list of the references' words (module docstring)."""
    if len(passage) < MIN_WORDS:
        return False
    stops = sum(1 for t in passage if t in ENGLISH_STOP_WORDS)
    if stops / len(passage) >= MAX_STOP_SHARE:
        return False
    content = [t for t in passage if t not in ENGLISH_STOP_WORDS]
    taken = sum(1 for t in content if t in vocabulary)
    return bool(content) and taken / len(content) >= MIN_REFERENCE_SHARE


def argued_content(output: str, references: Iterable[str]) -> Argued:
    """``output`` without the passages (lines or sentences) that stuff the references' words."""
    vocabulary = {t for reference in references for t in words(reference)}
    kept: list[str] = []
    stuffed = 0
    for match in _PASSAGES.finditer(output):
        tokens = words(match.group())
        if is_stuffed(tokens, vocabulary):
            stuffed += len(tokens)
        else:
            kept.append(match.group())
    if not stuffed:
        return Argued(text=output, stuffed_words=0)
    return Argued(text=". ".join(p.strip() for p in kept if p.strip()), stuffed_words=stuffed)
