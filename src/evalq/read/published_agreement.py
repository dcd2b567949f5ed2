"""Judge-human agreement on a published set: a real LLM judge against the people it was
published with, measured the way a board measures its own judge.

The bundled examples run no judge, so their boards have no agreement figure of their own. This
is the figure on real data: ChatGPT's 1-5 ratings of 132 stories of the HANNA benchmark against
the three people who rated each story, from the set the authors published
(`evalq/examples/published/README.md` names the source, the commit, the licence and what was
taken). It is computed by the same pure function as a task's agreement
(`evalq.judge.validation.judge_agreement`: ordinal Krippendorff's alpha, its 95% bootstrap
interval over stories, the bias, and people's own alpha as the ceiling) with the default
profile's minima, once per process: the file never changes.

Its criteria are HANNA's (relevance, coherence, empathy, surprise, engagement, complexity),
not evalq's rubrics: it shows how the figures read, it validates no judge of yours.
"""

from __future__ import annotations

import functools
import json
from importlib import resources
from pathlib import Path

from evalq.core.judge_validation import HumanScore, JudgedRun, JudgeValidation
from evalq.core.profile import JudgeProfile

PUBLISHED = Path(str(resources.files("evalq") / "examples" / "published"))
HANNA = PUBLISHED / "hanna_chatgpt_vs_people.jsonl"
TASK = "hanna-stories"
JUDGE = "ChatGPT (HANNA eval prompt 1)"
SOURCE = (
    'Chhun, Suchanek, Clavel, "Do Language Models Enjoy Their Own Stories? Prompting Large '
    'Language Models for Automatic Story Evaluation", TACL 2024; github.com/dig-team/'
    "hanna-benchmark-asg, commit 282f275, hanna_metric_scores_llm.csv (MIT licence)"
)
"""Where the figures come from, in words (the page and the docs say it)."""


@functools.cache
def hanna_agreement() -> JudgeValidation:
    """ChatGPT's agreement with the three people per HANNA criterion (computed once)."""
    from evalq.judge.validation import judge_agreement

    judged, humans = [], []
    for line in HANNA.read_text(encoding="utf-8").splitlines():
        story = json.loads(line)
        run = f"hanna-{story['story']}"
        scores = {name: (value - 1) / 4 for name, value in story["judge"].items()}
        judged.append(JudgedRun(run, TASK, JUDGE, scores))
        humans += [
            HumanScore(run, f"rater-{slot}", name, score)
            for name, ratings in story["people"].items()
            for slot, score in enumerate(ratings, start=1)
        ]
    profile = JudgeProfile()
    report = judge_agreement(
        judged,
        humans,
        tasks=[TASK],
        min_labels=profile.min_labels,
        min_alpha=profile.min_alpha,
    )
    validated = all(entry.validated for entry in report.rubrics)
    return JudgeValidation(
        status="validated" if validated else "not validated", rubrics=report.rubrics
    )
