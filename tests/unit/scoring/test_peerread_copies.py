"""PeerRead rewards reviewing, not restating or copying: the attacks on the bundled example.

Each attack is the bundled faithful review (``peer-01-balanced``: its usage and trace) with one
change, its output: a reference copied, two references spliced, generic praise followed by the
references' long words, or the task's context restated with a one-line verdict. Each is scored
through tier 1 (`text_result`, the bundled BERTScore model), tier 3 and `evaluate_submission`,
as the merge scores it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from importlib import resources

os.environ["HF_HUB_OFFLINE"] = "1"

import pytest

from evalq.core.applicable import NO_JUDGE
from evalq.core.profile import Profile
from evalq.core.results import PeerReadScores, TierOutcome
from evalq.core.schemas import Submission, Task
from evalq.metrics.graph import graph_metrics
from evalq.metrics.semantic import SemanticScorer
from evalq.metrics.text import text_result
from evalq.scoring.arena import compute_baseline
from evalq.scoring.evaluation import evaluate_submission

PROFILE = Profile()
EXAMPLES = resources.files("evalq") / "examples"
TASK = next(
    Task.model_validate(t)
    for t in json.loads((EXAMPLES / "tasks.json").read_text())
    if t["id"] == "peerread-salience-gating"
)
RUNS = {
    r["id"]: Submission.model_validate(r)
    for r in map(json.loads, (EXAMPLES / "peerread.jsonl").read_text().splitlines())
}
FAITHFUL = RUNS["peer-01-balanced"]
PRAISE = (
    "This is a well written paper with a clear contribution. The experiments are convincing "
    "and the results are strong. I recommend acceptance."
)


def _attacks() -> dict[str, str]:
    first, second = TASK.reference_outputs
    a, b = first.split(), second.split()
    long_words: list[str] = []
    for word in f"{first} {second}".replace(",", " ").replace(".", " ").split():
        if len(word) >= 8 and word.lower() not in long_words:
            long_words.append(word.lower())
    assert TASK.context is not None
    return {
        "copy": first,
        "splice": " ".join(a[: len(a) // 2] + b[len(b) // 2 :]),
        "praise plus long words": f"{PRAISE} {' '.join(long_words)}",
        "restated context": f"{TASK.context} Accept.",
    }


ATTACKS = _attacks()


@pytest.fixture(scope="module")
def scorer() -> Iterator[SemanticScorer]:
    yield SemanticScorer.from_profile(PROFILE.text)


_SCORED: dict[tuple[str, str | None], PeerReadScores] = {}


def score(run: Submission, scorer: SemanticScorer, output: str | None = None) -> PeerReadScores:
    """The run's PeerRead scores (with ``output`` instead of its own), scored once per module."""
    key = (run.id, output)
    if key not in _SCORED:
        _SCORED[key] = _score(run, scorer, output)
    return _SCORED[key]


def _score(run: Submission, scorer: SemanticScorer, output: str | None) -> PeerReadScores:
    sent = run if output is None else run.model_copy(update={"output": output})
    text = text_result(
        sent.output,
        TASK.reference_outputs,
        sent.usage.execution_time,
        profile=PROFILE.text,
        semantic=scorer,
        context=TASK.context,
    )
    graph = (
        TierOutcome(tier="graph", status="ok", result=graph_metrics(sent.trace, TASK))
        if sent.trace is not None
        else TierOutcome(tier="graph", status="skipped", reason="the submission has no trace")
    )
    tiers = {
        "text": TierOutcome(tier="text", status="ok", result=text),
        "graph": graph,
        "judge": TierOutcome(tier="judge", status="skipped", reason=NO_JUDGE),
    }
    baseline = compute_baseline([], PROFILE.arena)
    result = evaluate_submission(sent, TASK, tiers, baseline, PROFILE, cost_usd=None)
    assert result.scores.peerread is not None
    return result.scores.peerread


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_each_attack_is_marked_and_ranks_below_the_faithful_review(
    attack: str, scorer: SemanticScorer
) -> None:
    faithful = score(FAITHFUL, scorer)
    attacked = score(FAITHFUL, scorer, ATTACKS[attack])
    assert faithful.copied is None
    assert attacked.copied is not None, attack
    assert attacked.composite is not None and faithful.composite is not None
    assert attacked.composite < faithful.composite, (attack, attacked, faithful)


def test_the_marks_name_what_was_copied(scorer: SemanticScorer) -> None:
    marks = {name: score(FAITHFUL, scorer, text).copied or "" for name, text in ATTACKS.items()}
    assert marks["copy"].startswith("copies reference 1")
    assert marks["splice"].startswith("splices the references")
    assert marks["restated context"].startswith("restates the task's context")
    # the references' long words after the praise are a list, not sentences: stuffing
    assert marks["praise plus long words"].startswith("stuffs the references' words")


def test_another_papers_review_reads_reject(scorer: SemanticScorer) -> None:
    wrong = score(RUNS["peer-03-wrong-paper"], scorer)
    assert wrong.recommendation == "reject"
    assert wrong.copied is None  # off-topic, not copied


def test_of_the_bundled_reviews_only_the_parrot_is_marked(scorer: SemanticScorer) -> None:
    marked = {name: score(run, scorer).copied for name, run in RUNS.items()}
    # peer-06-parrot retells the paper's own account of itself (the task's context)
    assert {name for name, mark in marked.items() if mark} == {"peer-06-parrot"}
    assert (marked["peer-06-parrot"] or "").startswith("restates the task's context")


def _zero_width_every_third_word(text: str) -> str:
    words = text.split(" ")
    return " ".join(
        w[:1] + "\u200b" + w[1:] if i % 3 == 0 and len(w) > 1 else w for i, w in enumerate(words)
    )


def test_a_copy_with_invisible_characters_is_the_copy(scorer: SemanticScorer) -> None:
    plain = score(FAITHFUL, scorer, ATTACKS["copy"])
    hidden = _zero_width_every_third_word(ATTACKS["copy"])
    assert hidden != ATTACKS["copy"] and "\u200b" in hidden
    scored = score(FAITHFUL, scorer, hidden)
    assert (scored.copied or "").startswith("copies reference 1")
    assert scored.composite == plain.composite
    assert scored.recommendation == plain.recommendation


def test_a_copy_in_look_alike_letters_is_the_copy(scorer: SemanticScorer) -> None:
    cyrillic = ATTACKS["copy"].translate(
        str.maketrans("aeopcx", "\u0430\u0435\u043e\u0440\u0441\u0445")
    )
    scored = score(FAITHFUL, scorer, cyrillic)
    assert (scored.copied or "").startswith("copies reference 1")
    assert scored.composite == score(FAITHFUL, scorer, ATTACKS["copy"]).composite


def test_another_papers_review_stuffed_with_the_references_words_does_not_move(
    scorer: SemanticScorer,
) -> None:
    wrong = RUNS["peer-03-wrong-paper"]
    vocabulary: list[str] = []
    for word in " ".join(TASK.reference_outputs).replace(",", " ").replace(".", " ").split():
        if word.isalpha() and len(word) >= 5 and word.lower() not in vocabulary:
            vocabulary.append(word.lower())
    line = " ".join(sorted(vocabulary, key=lambda w: (-len(w), w))[:30])
    plain = score(wrong, scorer)
    stuffed = score(wrong, scorer, f"{wrong.output}\n{line}")
    assert (stuffed.copied or "").startswith("stuffs the references' words: 30 words")
    assert stuffed.composite is not None and plain.composite is not None
    assert stuffed.composite <= plain.composite + 0.005
