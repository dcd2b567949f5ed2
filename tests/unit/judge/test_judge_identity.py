"""Every judged score records its judge: model, provider, version, and the digests of the
prompt and rubrics asked; a changed rubric is another judge; stored rows read back as before."""

from __future__ import annotations

import dataclasses

from evalq.core.results import JudgeResult
from evalq.judge.identity import judge_identity, prompt_digest, rubric_digest
from evalq.judge.panel import combine
from evalq.judge.rubrics import RUBRICS
from tests.unit.judge.judge_helpers import TRACE, Scripted, scripted_judge, submission, task


def test_a_judged_result_records_its_judge_and_stores_it() -> None:
    outcome = scripted_judge(Scripted(4), model_id="openai:judge-x").evaluate(
        submission(trace=TRACE), task(), deadline_s=30
    )
    identity = outcome.identity
    assert identity is not None
    assert identity.model == "openai:judge-x"
    assert (identity.provider, identity.version) == ("function", "scripted")  # FunctionModel's
    assert identity.prompt_digest == prompt_digest() and len(identity.prompt_digest) == 64
    assert identity.rubric_digest == rubric_digest(RUBRICS)
    stored = outcome.model_dump(mode="json")
    assert JudgeResult.model_validate(stored).identity == identity


def test_a_changed_rubric_or_model_is_another_judge() -> None:
    changed = dataclasses.replace(RUBRICS[0], instructions=RUBRICS[0].instructions + " Be kind.")
    assert rubric_digest([changed, *RUBRICS[1:]]) != rubric_digest(RUBRICS)
    bumped = dataclasses.replace(RUBRICS[1], version="2")
    assert rubric_digest([RUBRICS[0], bumped, RUBRICS[2]]) != rubric_digest(RUBRICS)
    a = judge_identity("openai:gpt-4o", None, RUBRICS)
    b = judge_identity("anthropic:claude-haiku-4-5", None, RUBRICS)
    assert (a.provider, b.provider) == ("openai", "anthropic") and a != b


def test_a_panel_records_its_members_and_old_rows_read_without_one() -> None:
    first = scripted_judge(Scripted(4), model_id="a").evaluate(submission(), task(), deadline_s=30)
    second = scripted_judge(Scripted(2), model_id="b").evaluate(submission(), task(), deadline_s=30)
    panel = combine([first, second], budget_usd=1.0)
    assert panel.identity is not None and panel.identity.model == "a + b"
    old = first.model_dump(mode="json")
    del old["identity"]
    assert JudgeResult.model_validate(old).identity is None  # judged before it was recorded
