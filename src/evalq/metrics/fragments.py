"""Extractive fragments: how much of a text is copied from a source (Grusky et al. 2018).

Newsroom (Grusky, Naaman and Artzi, NAACL 2018, section 4.1) describes a summary by the shared
sequences of tokens it takes from its article. Walking through the summary, each position starts
the longest token sequence that also occurs in the article; that sequence is one *extractive
fragment* and the walk resumes after it (a token found nowhere moves the walk one token on). With
``F`` the fragments and ``S`` the summary's tokens:

    coverage = sum(|f| for f in F) / |S|       share of the text inside some fragment
    density  = sum(|f|^2 for f in F) / |S|     average length of the fragment a token sits in

evalq's own implementation, with two choices of its own: tokens are the words (letters and
digits, with inner apostrophes and hyphens) of the text's normal form (`evalq.core.text_form`:
invisible characters removed, look-alike letters folded, case folded), and a fragment may
come from any of several sources (the longest match over all of them), so a splice of two
sources is covered as one copy is. The paper's pseudo-code resumes its search in the article
after a match, which can miss a longer match that overlaps it; here every occurrence of the
token is tried.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from evalq.core.text_form import text_form

_WORD = re.compile(r"[a-z0-9]+(?:['-][a-z0-9]+)*")


def words(text: str) -> list[str]:
    """The text's tokens: the words of its normal form (letters and digits, inner ' and -
    kept), so a zero-width character inside a word or a look-alike letter changes no token."""
    return _WORD.findall(text_form(text))


@dataclass(frozen=True)
class Fragments:
    """The extractive fragments of a text in its sources.

    Attributes:
        lengths: each fragment's length in tokens, in text order.
        tokens: how many tokens the text has.
    """

    lengths: tuple[int, ...]
    tokens: int

    @property
    def coverage(self) -> float:
        """Share of the text's tokens inside a fragment, in [0, 1]; 0 for an empty text."""
        return sum(self.lengths) / self.tokens if self.tokens else 0.0

    @property
    def density(self) -> float:
        """Mean squared fragment length per token, in [0, tokens]; 0 for an empty text."""
        return sum(n * n for n in self.lengths) / self.tokens if self.tokens else 0.0

    def copied(self, min_words: int) -> float:
        """Share of the text's tokens inside fragments of at least ``min_words`` tokens."""
        if not self.tokens:
            return 0.0
        return sum(n for n in self.lengths if n >= min_words) / self.tokens


def fragments(text: Sequence[str], sources: Sequence[Sequence[str]]) -> Fragments:
    """The greedy extractive fragments of ``text`` (tokens) in ``sources`` (token lists).

    At each position the longest run of tokens equal to a run in any source is one fragment;
    the walk resumes after it. Without sources (or with empty ones) there are no fragments.
    """
    positions: list[tuple[Sequence[str], dict[str, list[int]]]] = []
    for source in sources:
        where: dict[str, list[int]] = {}
        for index, token in enumerate(source):
            where.setdefault(token, []).append(index)
        positions.append((source, where))
    lengths: list[int] = []
    i = 0
    while i < len(text):
        longest = 0
        rest = len(text) - i
        for source, where in positions:
            for j in where.get(text[i], ()):
                k = 1
                while k < rest and j + k < len(source) and text[i + k] == source[j + k]:
                    k += 1
                longest = max(longest, k)
                if longest == rest:  # nothing longer exists: a repeated word cannot stall it
                    break
            if longest == rest:
                break
        if longest:
            lengths.append(longest)
            i += longest
        else:
            i += 1
    return Fragments(lengths=tuple(lengths), tokens=len(text))


def text_fragments(text: str, sources: Sequence[str]) -> Fragments:
    """`fragments` of two plain texts, tokenised by `words`."""
    return fragments(words(text), [words(source) for source in sources])
