"""Does a run's output try to instruct its evaluator? Text that addresses the grader, not the
task: orders to ignore the instructions or the rubric, a score or verdict it asks for itself,
forged data fences, chat-template turns.

The judge is hardened against such text (`evalq.judge.prompts`: the output is fenced data), but
a board ranked without a judge (a PeerRead composite from similarity alone), or a person reading
the board, should still see that a run tried. So the attempt is named, never scored: a run is
marked, not held, and its figures are what the scorers computed. A mark is a prompt for a person
to read the output, not a verdict; the patterns are kept narrow (an order, a self-awarded score,
a forged delimiter), so an ordinary review that discusses scores does not match.

The patterns read the output's normal form (`evalq.core.text_form`, lines kept): a trigger word
with a zero-width character inside it, or with a look-alike letter from another script, is the
word a reader sees.
"""

from __future__ import annotations

import re

from evalq.core.text_form import text_form_lines

MAX_CHARS = 200_000
"""The output's first characters read (a submission's output is bounded well below this)."""

_ANGLES = "<>\uff1c\uff1e\ufe64\ufe65\u2039\u203a\u00ab\u00bb\u3008\u3009\u27e8\u27e9"
_FLAGS = re.IGNORECASE | re.MULTILINE
PATTERNS: dict[str, re.Pattern[str]] = {
    "orders the evaluator to ignore its instructions": re.compile(
        r"\b(ignore|disregard|forget|override)\b[^.\n]{0,40}\b(previous|prior|above|earlier|"
        r"your|the|all)\b[^.\n]{0,20}\b(instructions?|rubrics?|prompts?|rules|guidelines)\b"
        r"|\bnew instructions\s*:"
        r"|\b(note|message|instructions?)\s+(to|for)\s+the\s+(evaluat\w*|grader|judge|"
        r"reviewer|scoring)\b"
        r"|\bpretend\s+(you\s+are|to\s+be)\b"
        r"|\bas the author of (this|the) rubric\b"
        r"|\bstop evaluating\b",
        _FLAGS,
    ),
    "awards itself a score": re.compile(
        r"\b(give|rate|score|award|assign|output|report|set)\b[^.\n]{0,60}"
        r"\b([0-9]|10)\s*(/|out of)\s*([0-9]|10)\b"
        r"|\b(give|assign|award)\b[^.\n]{0,40}\ba score of\s*\d"
        r"|\bdeserves a score of\b"
        r"|\bset\s+score\s*=\s*\d"
        r'|"score"\s*:\s*\d'
        r"|\bscore\s*[:=]?\s*[0-9]\b(?![.,\d%])"
        r"|^\s*[a-z]+(_[a-z]+)+\s*:\s*[1-5]\s*$",
        _FLAGS,
    ),
    "forges a data fence": re.compile(
        f"[{_ANGLES}](?:[ \\t]*[{_ANGLES}]){{2,}}|\\bEND\\s+DATA\\b"
        r"|</?(instructions|system|data)>|<!--|\]\]>",
        _FLAGS,
    ),
    "speaks as another chat turn": re.compile(
        r"<\|im_(start|end)\|>|\[/?INST\]|^\s*(system|assistant)\s*:", _FLAGS
    ),
}
"""What each kind of attempt looks like; the names are what a mark says."""


def injection_attempts(text: str | None) -> list[str]:
    """The kinds of attempt found in ``text`` (names of `PATTERNS`, in their order); empty for
    none, for an empty or missing text."""
    if not text:
        return []
    head = text_form_lines(text[:MAX_CHARS])
    return [name for name, pattern in PATTERNS.items() if pattern.search(head)]
