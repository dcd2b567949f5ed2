"""Keyword stuffing: a list of the references' words is left out of the similarity and said."""

from __future__ import annotations

import json
from pathlib import Path

from evalq.metrics.stuffing import argued_content

DATA = Path(__file__).resolve().parents[3] / "bench" / "data"
REFERENCE = (
    "The paper proposes salience gating for recurrent networks and evaluates it on language "
    "modelling benchmarks with careful ablations of the gating temperature and regularisation."
)
REVIEW = "The experiments are thin. I would like to see a comparison with attention baselines."


def test_a_line_of_the_references_words_is_left_out() -> None:
    stuffed = (
        f"{REVIEW}\nsalience gating recurrent networks language modelling benchmarks ablations"
    )
    argued = argued_content(stuffed, [REFERENCE])
    assert argued.stuffed_words == 8
    assert "salience" not in argued.text and "experiments are thin" in argued.text


def test_short_lists_and_words_of_its_own_are_not_stuffing() -> None:
    assert (
        argued_content(f"{REVIEW}\nPros: gating, ablations, benchmarks", [REFERENCE]).stuffed_words
        == 0
    )
    own = f"{REVIEW}\nquantum chromodynamics lattice gauge fermions hadrons gluons quarks mesons"
    assert argued_content(own, [REFERENCE]).stuffed_words == 0


def test_no_real_review_is_stuffing() -> None:
    found = []
    for name in ("peerread_iclr2017_train.json", "peerread_iclr2017_heldout.json"):
        for paper in json.loads((DATA / name).read_text())["papers"]:
            texts = [r["text"] for r in paper["reviews"]]
            for i, text in enumerate(texts):
                if argued_content(text, [*texts[:i], *texts[i + 1 :]]).stuffed_words:
                    found.append((paper["id"], i))
    assert found == []
