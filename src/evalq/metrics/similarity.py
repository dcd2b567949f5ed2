"""Lexical similarity of an output to a reference: TF-IDF cosine and word-set Jaccard (spec 001).

Both are symmetric scores in [0, 1]. See docs/scoring/tier1.md.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Sequence
from functools import lru_cache

from sklearn.feature_extraction.text import TfidfVectorizer

IDF_ONE_OF_TWO = math.log(1.5) + 1
"""Smooth idf of a term found in one of the two fitted documents: ln((1 + 2) / (1 + 1)) + 1.

A term found in both has ln(3 / 3) + 1 = 1."""


def tfidf_cosine(
    text: str,
    reference: str,
    *,
    ngram_range: tuple[int, int] = (1, 2),
    stop_words: str | None = "english",
) -> float:
    """Cosine of the TF-IDF vectors of ``text`` and ``reference``, fitted on that pair alone.

    As spec 001: a `TfidfVectorizer` (English stop words, word 1- and 2-grams by default) fitted
    on ``[text, reference]``, and the cosine of its two rows. The value is computed without
    fitting one (`tfidf_cosine_many` says how); it equals scikit-learn's within 1e-12.

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
    return tfidf_cosine_many(text, [reference], ngram_range=ngram_range, stop_words=stop_words)[0]


def tfidf_cosine_many(
    text: str,
    references: Sequence[str],
    *,
    ngram_range: tuple[int, int] = (1, 2),
    stop_words: str | None = "english",
) -> list[float]:
    """`tfidf_cosine` of ``text`` against each reference, in order, each pair fitted alone.

    Fitting a vectorizer per pair is what costs (1.7-2.8 ms a pair); its result is known in
    closed form. With two documents a term's smooth idf is 1 when both contain it and
    ``IDF_ONE_OF_TWO`` otherwise, so the cosine of the l2-normalised rows is
    ``sum(a_t * b_t) / (|a| |b|)`` over the shared terms' counts, the norms weighting each
    term found in one text only by that idf. The terms are scikit-learn's own: its analyzer
    (same preprocessing, token pattern, stop words, n-grams) is built once per setting, and the
    output is analysed once for all references.

    One vectorizer fitted on the text and all references would be cheaper still but is not the
    same metric: the idf weights depend on the fitted corpus (2 documents per pair versus 1 + n),
    so the scores would change with the number of references. The pairwise definition is kept.
    """
    analyze = _analyzer(tuple(ngram_range), stop_words)
    terms = Counter(analyze(text))
    return [_pair_cosine(terms, Counter(analyze(reference))) for reference in references]


@lru_cache(maxsize=16)
def _analyzer(ngram_range: tuple[int, ...], stop_words: str | None) -> Callable[[str], list[str]]:
    """scikit-learn's analyzer for these settings: the exact terms its vectorizer would count."""
    vectorizer = TfidfVectorizer(stop_words=stop_words, ngram_range=ngram_range)
    analyzer: Callable[[str], list[str]] = vectorizer.build_analyzer()
    return analyzer


def _pair_cosine(terms: Counter[str], reference_terms: Counter[str]) -> float:
    """TF-IDF cosine of two term counts, the idf that of a vectorizer fitted on the two."""
    if not terms or not reference_terms:
        return 1.0 if not terms and not reference_terms else 0.0
    shared = sum(
        count * reference_terms[term] for term, count in terms.items() if term in reference_terms
    )
    if not shared:
        return 0.0
    norms = _tfidf_norm(terms, reference_terms) * _tfidf_norm(reference_terms, terms)
    return min(1.0, max(0.0, shared / norms))  # rounding guard: identical texts give 1 + 2e-16


def _tfidf_norm(terms: Counter[str], other: Counter[str]) -> float:
    """l2 norm of a text's TF-IDF row: counts weighted by idf 1 if ``other`` has the term."""
    return math.sqrt(
        sum(
            (count if term in other else count * IDF_ONE_OF_TWO) ** 2
            for term, count in terms.items()
        )
    )


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
