"""Lexical similarity of an output to a reference: TF-IDF cosine and word-set Jaccard (spec 001).

Both are symmetric scores in [0, 1]. See docs/scoring/tier1.md.
"""

from __future__ import annotations

from collections.abc import Sequence

from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.metrics.pairwise import cosine_similarity


def tfidf_cosine(
    text: str,
    reference: str,
    *,
    ngram_range: tuple[int, int] = (1, 2),
    stop_words: str | None = "english",
) -> float:
    """Cosine of the TF-IDF vectors of ``text`` and ``reference``, fitted on that pair alone.

    As spec 001: a `TfidfVectorizer` (English stop words, word 1- and 2-grams by default) is fitted
    on ``[text, reference]`` and the cosine of the two rows is returned.

    A text without terms (empty, whitespace, punctuation or only stop words) has a zero vector.
    Two such texts would make scikit-learn raise "empty vocabulary"; evalq defines them as equal
    (1.0), since nothing distinguishes them in this representation. One such text against a text
    with terms scores 0.0.

    Args:
        text: the agent's output.
        reference: the reference text.
        ngram_range: word n-gram sizes, inclusive.
        stop_words: scikit-learn stop-word list name, or None to keep every word.

    Returns:
        The cosine similarity in [0, 1].
    """
    vectorizer = TfidfVectorizer(stop_words=stop_words, ngram_range=ngram_range)
    analyze = vectorizer.build_analyzer()
    if not analyze(text) and not analyze(reference):
        return 1.0
    matrix = vectorizer.fit_transform([text, reference])
    value = float(cosine_similarity(matrix[0:1], matrix[1:2])[0][0])
    return min(1.0, max(0.0, value))  # rounding guard: identical rows give 1 + 2e-16


def tfidf_cosine_many(
    text: str,
    references: Sequence[str],
    *,
    ngram_range: tuple[int, int] = (1, 2),
    stop_words: str | None = "english",
) -> list[float]:
    """`tfidf_cosine` of ``text`` against each reference, in order.

    One vectorizer fitted on the text and all references would be cheaper but is not the same
    metric: the idf weights depend on the fitted corpus (2 documents per pair versus 1 + n), so
    the scores would change with the number of references. The pairwise definition is kept.
    """
    return [
        tfidf_cosine(text, reference, ngram_range=ngram_range, stop_words=stop_words)
        for reference in references
    ]


def jaccard(text: str, reference: str) -> float:
    """Jaccard index of the lower-cased, whitespace-split word sets (spec 001).

    ``|A ∩ B| / |A ∪ B|``; two texts without words are equal (1.0). Punctuation stays attached
    to words, as in the spec ("end." and "end" differ).
    """
    words = set(text.lower().split())
    reference_words = set(reference.lower().split())
    union = words | reference_words
    if not union:
        return 1.0
    return len(words & reference_words) / len(union)
