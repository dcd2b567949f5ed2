"""Helpers of the judge tests: scripted FunctionModels, submissions, tasks, a trace."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, UserPromptPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.usage import RequestUsage

from evalq.core.profile import load_profile
from evalq.core.schemas import Submission, Task, Trace
from evalq.judge import Judge, JudgeLimits

FAST = JudgeLimits(backoff_base_s=0.001, backoff_cap_s=0.01, max_attempts=3, output_retries=2)


def criteria_of(info: AgentInfo) -> list[str]:
    """The criterion names the request's output schema asks for."""
    output = info.model_request_parameters.output_object
    assert output is not None, "the judge must use native (JSON schema) output here"
    return list(output.json_schema["properties"])


def verdict_json(names: list[str], scores: dict[str, Any] | int) -> str:
    """A verdict answer: every criterion with its score and a short rationale."""
    return json.dumps(
        {
            n: {"score": scores if isinstance(scores, int) else scores[n], "rationale": "cited"}
            for n in names
        }
    )


def user_prompt(messages: list[ModelMessage]) -> str:
    """The text of the first user prompt in ``messages``."""
    for message in messages:
        for part in message.parts:
            if isinstance(part, UserPromptPart) and isinstance(part.content, str):
                return part.content
    raise AssertionError("no user prompt")


class Scripted:
    """A FunctionModel body that answers from a script and records what it was asked.

    Each entry of ``script`` is an answer (a JSON string, an int score for every criterion,
    a dict of scores) or an exception to raise; the last entry repeats.
    """

    def __init__(self, *script: Any, usage: tuple[int, int] | None = None) -> None:
        self.script = list(script) or [3]
        self.calls: list[tuple[list[ModelMessage], AgentInfo]] = []
        self.usage = usage

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.calls.append((messages, info))
        step = self.script[min(len(self.calls) - 1, len(self.script) - 1)]
        if isinstance(step, BaseException):
            raise step
        text = step if isinstance(step, str) else verdict_json(criteria_of(info), step)
        tokens_in, tokens_out = self.usage or (100, 20)
        usage = RequestUsage(input_tokens=tokens_in, output_tokens=tokens_out)
        return ModelResponse(parts=[TextPart(text)], usage=usage)

    def model(self) -> FunctionModel:
        return FunctionModel(self, model_name="scripted")


NONCE = re.compile(r"<<<DATA ([0-9a-f]{16}) ")


def scripted_judge(body: Callable[..., ModelResponse], **kwargs: Any) -> Judge:
    """A `Judge` whose model is a FunctionModel running ``body``."""
    return Judge(
        model_id=kwargs.pop("model_id", "scripted"),
        model_factory=lambda: FunctionModel(body, model_name="scripted"),
        profile=kwargs.pop("profile", load_profile()),
        limits=kwargs.pop("limits", FAST),
        **kwargs,
    )


def submission(output: str = "A review. Strengths: X. Weaknesses: Y.", **kw: Any) -> Submission:
    return Submission(
        id=kw.pop("id", "s1"),
        task_id="t1",
        tool="agent",
        model="gpt-4o",
        usage={"input_tokens": 1, "output_tokens": 1},
        output=output,
        **kw,
    )


def task(context: str | None = "The paper proposes method M and tests it on D.") -> Task:
    return Task(id="t1", category="data_analysis", context=context)


TRACE = Trace.model_validate(
    {
        "steps": [
            {"agent": "planner", "tool": "search", "started_at": 0, "ended_at": 1},
            {"agent": "coder", "tool": "edit", "started_at": 1, "ended_at": 3},
            {"agent": "coder", "tool": "test", "started_at": 3, "ended_at": 4},
        ],
        "messages": [{"sender": "planner", "receiver": "coder", "type": "handoff"}],
    }
)
