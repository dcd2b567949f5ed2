"""TF-IDF cosine and word-set Jaccard (spec 001, tier 1)."""

from __future__ import annotations

import math

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.metrics.pairwise import cosine_similarity

from evalq.metrics.similarity import jaccard, tfidf_cosine, tfidf_cosine_many

REVIEW = (
    "The paper proposes a graph neural network for citation recommendation. The method is "
    "novel, but the evaluation uses only two small datasets and omits strong baselines."
)
REFERENCE = (
    "A new graph-based neural model for recommending citations is introduced. Experiments are "
    "limited to small datasets and the comparison with recent baselines is missing."
)
UNRELATED = "Preheat the oven to 200 degrees and bake the bread for forty minutes."

# smooth idf of a term in 1 of the 2 fitted documents: ln((1 + 2) / (1 + 1)) + 1
IDF_ONE = math.log(1.5) + 1  # 1.405465; a term in both documents has ln(3/3) + 1 = 1

words = st.lists(st.sampled_from(["the", "Cat", "cat", "sat", "on", "mat.", "a", "dog", ""]))
texts = words.map(" ".join)


def spec_cosine(text1: str, text2: str) -> float:
    """Spec 001's reference implementation, as written there."""
    vectorizer = TfidfVectorizer(stop_words="english", ngram_range=(1, 2))
    tfidf_matrix = vectorizer.fit_transform([text1, text2])
    return float(cosine_similarity(tfidf_matrix[0:1], tfidf_matrix[1:2])[0][0])


def sklearn_cosine(
    text1: str, text2: str, ngram_range: tuple[int, int], stop_words: str | None
) -> float:
    """The fitted computation, with evalq's rule for two texts without terms (1.0)."""
    vectorizer = TfidfVectorizer(stop_words=stop_words, ngram_range=ngram_range)
    analyze = vectorizer.build_analyzer()
    if not analyze(text1) and not analyze(text2):
        return 1.0
    matrix = vectorizer.fit_transform([text1, text2])
    return float(cosine_similarity(matrix[0:1], matrix[1:2])[0][0])


# Words that exercise the analyzer: stop words, case, accents and other scripts, one-letter and
# digit tokens (dropped by the token pattern), punctuation, hyphens, apostrophes, emoji.
VOCABULARY = [
    "the", "and", "of", "Cat", "cat", "CAT", "sat", "mat.", "a", "I", "7", "42", "x-ray",
    "don't", "naïve", "NAÏVE", "café", "straße", "Σίσυφος", "日本語", "données", "🙂", "--",
    "...", "paper", "method", "baseline", "baselines", "results", "\n", "\t",
]  # fmt: skip
vocabulary_texts = st.lists(st.sampled_from(VOCABULARY), max_size=40).map(" ".join)
any_texts = vocabulary_texts | st.text(max_size=200)
ngram_ranges = st.sampled_from([(1, 1), (1, 2), (1, 3), (2, 2), (2, 3)])


@settings(max_examples=600, deadline=None)
@given(any_texts, any_texts, ngram_ranges, st.sampled_from(["english", None]))
@example("", "", (1, 2), "english")
@example("", "paper", (1, 2), "english")
@example("paper", "paper", (1, 2), "english")
@example("paper", "paper paper paper", (1, 2), "english")
@example("paper paper method paper", "method paper method", (1, 2), "english")
@example("naïve café", "NAÏVE CAFÉ", (1, 1), None)
@example("the of and", "paper", (1, 2), "english")
@example(REVIEW, REFERENCE, (1, 2), "english")
def test_cosine_equals_the_fitted_vectorizer(
    text: str, reference: str, ngram_range: tuple[int, int], stop_words: str | None
) -> None:
    # evalq computes the pair's TF-IDF in closed form; scikit-learn's fit is the definition
    expected = sklearn_cosine(text, reference, ngram_range, stop_words)
    got = tfidf_cosine(text, reference, ngram_range=ngram_range, stop_words=stop_words)
    assert abs(got - min(1.0, expected)) <= 1e-12
    many = tfidf_cosine_many(
        text, [reference, text], ngram_range=ngram_range, stop_words=stop_words
    )
    assert many[0] == got
    assert abs(many[1] - min(1.0, sklearn_cosine(text, text, ngram_range, stop_words))) <= 1e-12


def test_cosine_hand_computed_unigrams() -> None:
    # vocabulary apple (both docs, idf 1), banana, cherry (one doc each, idf a = 1.405465)
    # v1 = (1, a, 0), v2 = (1, 0, a): cos = 1 / (1 + a^2) = 0.336097
    value = tfidf_cosine("apple banana", "apple cherry", ngram_range=(1, 1), stop_words=None)
    assert value == pytest.approx(1 / (1 + IDF_ONE**2))
    assert value == pytest.approx(0.336097, abs=1e-6)


def test_cosine_hand_computed_with_spec_defaults() -> None:
    # "the" is a stop word. Terms: cat (both, idf 1); sat, "cat sat" | ran, "cat ran" (idf a)
    # v1 = (1, a, a, 0, 0), v2 = (1, 0, 0, a, a): cos = 1 / (1 + 2 a^2) = 0.201993
    assert tfidf_cosine("the cat sat", "the cat ran") == pytest.approx(1 / (1 + 2 * IDF_ONE**2))


def test_cosine_equals_the_spec_implementation_on_real_text() -> None:
    assert tfidf_cosine(REVIEW, REFERENCE) == pytest.approx(spec_cosine(REVIEW, REFERENCE))
    assert tfidf_cosine(REVIEW, REFERENCE) > tfidf_cosine(REVIEW, UNRELATED)
    assert tfidf_cosine(REVIEW, UNRELATED) == 0.0  # no shared non-stop-word term


def test_cosine_without_terms() -> None:
    # sklearn raises "empty vocabulary" when neither text has a term; evalq calls them equal
    with pytest.raises(ValueError, match="empty vocabulary"):
        spec_cosine("", "the and of")
    assert tfidf_cosine("", "") == 1.0
    assert tfidf_cosine("", "the and of") == 1.0
    assert tfidf_cosine("  ...  ", "!") == 1.0
    assert tfidf_cosine("", "cat") == 0.0
    assert tfidf_cosine("the", "cat") == 0.0


def test_cosine_stop_words_and_ngrams_come_from_arguments() -> None:
    # with stop words kept, "the" (both docs) is shared: cos = 1 / (1 + a^2), as above
    assert tfidf_cosine("the cat", "the dog") == 0.0
    kept = tfidf_cosine("the cat", "the dog", ngram_range=(1, 1), stop_words=None)
    assert kept == pytest.approx(1 / (1 + IDF_ONE**2))


def test_many_is_the_pairwise_definition() -> None:
    references = [REFERENCE, UNRELATED, REVIEW]
    assert tfidf_cosine_many(REVIEW, references) == [
        tfidf_cosine(REVIEW, reference) for reference in references
    ]
    assert tfidf_cosine_many(REVIEW, []) == []


def test_one_shared_fit_would_change_the_scores() -> None:
    # Why tfidf_cosine_many loops: fitting once on text + all references changes the idf.
    references = [REFERENCE, UNRELATED]
    matrix = TfidfVectorizer(stop_words="english", ngram_range=(1, 2)).fit_transform(
        [REVIEW, *references]
    )
    shared = float(cosine_similarity(matrix[0:1], matrix[1:2])[0][0])
    assert shared != pytest.approx(tfidf_cosine(REVIEW, REFERENCE), abs=1e-3)


def test_jaccard_hand_computed() -> None:
    # {the, cat, sat} vs {the, cat, ran}: 2 shared of 4 distinct words
    assert jaccard("The cat sat", "the cat  ran") == 0.5
    # {a, b} vs {b, c, d}: 1 of 4
    assert jaccard("a b a", "B c d") == 0.25
    assert jaccard("end.", "end") == 0.0  # punctuation stays attached, as in the spec


def test_jaccard_empty() -> None:
    assert jaccard("", "") == 1.0
    assert jaccard("  \n", "\t") == 1.0
    assert jaccard("", "cat") == 0.0


@given(texts, texts)
def test_ranges_and_symmetry(text: str, reference: str) -> None:
    assert 0.0 <= jaccard(text, reference) <= 1.0
    assert jaccard(text, reference) == jaccard(reference, text)
    cosine = tfidf_cosine(text, reference)
    assert 0.0 <= cosine <= 1.0
    assert cosine == pytest.approx(tfidf_cosine(reference, text))


@given(texts)
def test_a_text_is_identical_to_itself(text: str) -> None:
    assert jaccard(text, text) == 1.0
    assert tfidf_cosine(text, text) == pytest.approx(1.0)
    assert jaccard(text, text.upper()) == 1.0  # lower-cased
