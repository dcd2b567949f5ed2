"""The judge's identity, recorded with every judged score (`evalq.core.results.JudgeIdentity`).

A judge is its model and the questions it was asked: the same model name behind another
provider, a model the provider swapped under its name, or a changed rubric or prompt template
make another judge. The digests change exactly when the text or schema sent changes; the
model's version is the name the provider's model object resolved (a provider that serves a new
snapshot under an old alias is not seen).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence

from pydantic_ai.models import Model

from evalq.core.results import JudgeIdentity
from evalq.judge.prompts import PROMPT_TEMPLATE, PROMPT_VERSION
from evalq.judge.rubrics import Rubric


def _digest(data: object) -> str:
    text = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def prompt_digest() -> str:
    """SHA-256 of the prompt template every rubric's request is built from, and its version."""
    return _digest({"version": PROMPT_VERSION, "template": PROMPT_TEMPLATE})


def rubric_digest(rubrics: Sequence[Rubric]) -> str:
    """SHA-256 of the rubrics asked: name, version, instructions and verdict schema of each."""
    return _digest(
        [
            {
                "name": r.name,
                "version": r.version,
                "instructions": r.instructions,
                "verdict": r.verdict.model_json_schema(),
            }
            for r in rubrics
        ]
    )


def judge_identity(model_id: str, model: Model | None, rubrics: Sequence[Rubric]) -> JudgeIdentity:
    """The identity of a judge of ``model_id`` asking ``rubrics`` (``model``: the built model,
    None when it could not be built)."""
    provider = model.system if model is not None else model_id.partition(":")[0] or None
    return JudgeIdentity(
        model=model_id,
        provider=provider,
        version=None if model is None else model.model_name,
        prompt_digest=prompt_digest(),
        rubric_digest=rubric_digest(rubrics),
    )
