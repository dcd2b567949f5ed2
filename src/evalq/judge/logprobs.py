"""A verdict's probability from the token logprobs of its 1-5 scores.

OpenAI-compatible servers (OpenAI, vLLM, llama.cpp's server) return, when asked
(``logprobs: true``), the log-probability of each token of the answer; pydantic-ai keeps them in
the response's ``provider_details["logprobs"]`` as ``{"token", "logprob", ...}`` per token. The
verdict is JSON with one ``"score": N`` per criterion; the probability the model gave its own
verdict is the product, over the criteria, of the probability of the token that wrote N (a
criterion's score is one digit, one token on every tokenizer seen). None when the answer carries
no logprobs (a tool-call answer, a server that ignores the request) or a score's token is not
found: the caller falls back on the samples' agreement.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

_SCORE = re.compile(r'"score"\s*:\s*([1-5])')


def verdict_probability(tokens: Sequence[Mapping[str, Any]] | None, criteria: int) -> float | None:
    """The product of the probabilities of the ``criteria`` score tokens, or None.

    Args:
        tokens: the answer's tokens with their logprobs, in order.
        criteria: how many ``"score"`` values the verdict must hold.
    """
    if not tokens:
        return None
    starts, text = [], ""
    for token in tokens:
        starts.append(len(text))
        text += str(token.get("token", ""))
    scores = [match.start(1) for match in _SCORE.finditer(text)]
    if len(scores) != criteria:
        return None
    total = 0.0
    for offset in scores:
        index = max(i for i, start in enumerate(starts) if start <= offset)
        logprob = tokens[index].get("logprob")
        if not isinstance(logprob, int | float) or math.isnan(logprob):
            return None
        total += min(0.0, float(logprob))
    return math.exp(total)
