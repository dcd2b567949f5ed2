"""Inspect AI eval logs in JSON (``inspect eval --log-format json``) as evalq tasks and runs.

One task per Inspect task (``inspect-<task>``), one submission per sample and epoch
(``inspect-<eval id>-<sample id>-<epoch>``): the eval's model, the sample's final output and
token usage, its tool calls as a trace, its scores kept in metadata (docs/importers.md).
"""

from __future__ import annotations

from typing import Any

from pydantic import JsonValue

from evalq.core.errors import InvalidInput
from evalq.producer.importers.fields import at, member, optional
from evalq.producer.importers.plan import (
    IMPORTED_GRADER,
    IMPORTED_SCORE,
    ImportPlan,
    PlanBuilder,
    source_id,
)

TOOL = "inspect_ai"


def plan_inspect(document: Any) -> ImportPlan:
    """The tasks and submissions an Inspect AI JSON eval log maps to.

    Raises:
        InvalidInput: the file is not an eval log with samples, or a sample cannot be mapped;
            each problem is named by its JSON path (``samples[2].output.usage``).
    """
    top = at(document, "(file)", dict, "a JSON object (an Inspect AI eval log)")
    spec = member(top, "eval", "", dict, "an object (the eval's spec)")
    task_name = member(spec, "task", "eval", str, "the task's name")
    eval_id = optional(spec, "eval_id", "eval", str, "a string") or member(
        spec, "task_id", "eval", str, "the task run's id"
    )
    model = member(spec, "model", "eval", str, "the model's name")
    samples = member(top, "samples", "", list, "a list (a log written with its samples)")
    builder = PlanBuilder()
    task_id = source_id("inspect", task_name)
    builder.task("eval.task", {"id": task_id})
    for index, sample in enumerate(samples):
        where = f"samples[{index}]"
        try:
            data = _submission(sample, where, task_id=task_id, eval_id=eval_id, model=model)
        except InvalidInput as error:
            for name, rule in error.problems:
                builder.problem(name, rule)
            continue
        builder.submission(where, data)
    return builder.plan()


def _submission(
    sample: Any, where: str, *, task_id: str, eval_id: str, model: str
) -> dict[str, Any]:
    sample = at(sample, where, dict, "an object (one sample)")
    sample_id = member(sample, "id", where, (int, str), "the sample's id")
    epoch = member(sample, "epoch", where, int, "the epoch (an integer)")
    output = optional(sample, "output", where, dict, "an object (the model's output)") or {}
    messages = optional(sample, "messages", where, list, "a list of messages") or []
    calls = _tool_calls(messages, f"{where}.messages")
    usage = _usage(sample, output, where) | {"tool_calls": len(calls)}
    turns = sum(1 for m in messages if isinstance(m, dict) and m.get("role") == "assistant")
    usage["iterations"] = max(turns, 1)
    data: dict[str, Any] = {
        "id": source_id("inspect", eval_id, sample_id, f"e{epoch}"),
        "task_id": task_id,
        "tool": TOOL,
        "model": model,
        "output": _completion(output, f"{where}.output"),
        "usage": usage,
        "metadata": _scores(sample, where) | {"inspect_eval_id": eval_id},
    }
    if calls:
        data["trace"] = {"steps": [{"tool": name} for name in calls]}
    return data


def _completion(output: dict[str, Any], where: str) -> str:
    """The text of the first choice's message (its text parts joined), or empty."""
    choices = optional(output, "choices", where, list, "a list") or []
    if not choices:
        return ""
    choice = at(choices[0], f"{where}.choices[0]", dict, "an object")
    message = member(choice, "message", f"{where}.choices[0]", dict, "an object")
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            part["text"]
            for part in content
            if isinstance(part, dict) and isinstance(part.get("text"), str)
        )
    return ""


def _usage(sample: dict[str, Any], output: dict[str, Any], where: str) -> dict[str, Any]:
    usage = optional(output, "usage", f"{where}.output", dict, "an object")
    if usage is None:
        usage = _summed_model_usage(sample, where)
    path = f"{where}.output.usage"
    inputs = optional(usage, "input_tokens", path, int, "a count")
    outputs = optional(usage, "output_tokens", path, int, "a count")
    total = optional(usage, "total_tokens", path, int, "a count")
    figures: dict[str, Any] = {}
    if inputs is not None and outputs is not None:
        figures |= {"input_tokens": inputs, "output_tokens": outputs}
    elif total is not None:
        figures["total_tokens"] = total
    else:
        raise InvalidInput([(path, "needs total_tokens, or input_tokens and output_tokens")])
    seconds = optional(sample, "total_time", where, (int, float), "seconds")
    if seconds is not None:
        figures["execution_time"] = seconds
    return figures


def _summed_model_usage(sample: dict[str, Any], where: str) -> dict[str, Any]:
    """A sample without ``output.usage``: its ``model_usage`` summed over models."""
    per_model = optional(sample, "model_usage", where, dict, "an object")
    if not per_model:
        raise InvalidInput([(f"{where}.output.usage", "missing, and no model_usage either")])
    summed = {"input_tokens": 0, "output_tokens": 0}
    for name, figures in per_model.items():
        figures = at(figures, f"{where}.model_usage.{name}", dict, "an object")
        for key in summed:
            summed[key] += member(figures, key, f"{where}.model_usage.{name}", int, "a count")
    return summed


def _tool_calls(messages: list[Any], where: str) -> list[str]:
    """The functions the assistant called, in order."""
    names = []
    for index, message in enumerate(messages):
        if not isinstance(message, dict) or message.get("role") != "assistant":
            continue
        calls = optional(message, "tool_calls", f"{where}[{index}]", list, "a list") or []
        for number, call in enumerate(calls):
            path = f"{where}[{index}].tool_calls[{number}]"
            call = at(call, path, dict, "an object (a tool call)")
            names.append(member(call, "function", path, str, "the function's name"))
    return names


def _scores(sample: dict[str, Any], where: str) -> dict[str, JsonValue]:
    """The sample's scores as imported metadata: the first scorer's value, and every value
    when there are several."""
    scores = optional(sample, "scores", where, dict, "an object (scorer name -> score)") or {}
    values: dict[str, JsonValue] = {}
    for name, score in scores.items():
        score = at(score, f"{where}.scores.{name}", dict, "an object (a score)")
        values[name] = score.get("value")
    if not values:
        return {IMPORTED_GRADER: TOOL}
    first = next(iter(values))
    metadata: dict[str, JsonValue] = {
        IMPORTED_SCORE: values[first],
        IMPORTED_GRADER: f"{TOOL}/{first}",
    }
    if len(values) > 1:
        metadata["imported_scores"] = values
    return metadata
