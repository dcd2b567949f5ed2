"""Inspect AI eval logs (``.eval`` archives, and ``.json``) as evalq tasks and runs.

One task per Inspect task (``inspect-<task>``), one submission per sample and epoch
(``inspect-<eval id>-<sample id>-<epoch>``): the eval's model, the sample's final output and
token usage, its tool calls as a trace, its scores kept in metadata (docs/importers.md).
"""

from __future__ import annotations

import io
import json
import zipfile
from typing import Any

from pydantic import JsonValue

from evalq.core.errors import InvalidInput
from evalq.producer.importers.fields import at, child, member, optional
from evalq.producer.importers.plan import (
    IMPORTED_GRADER,
    IMPORTED_SCORE,
    ImportPlan,
    PlanBuilder,
    source_id,
)
from evalq.producer.importers.source import too_large

TOOL = "inspect_ai"
ZIP_MAGIC = b"PK\x03\x04"
"""How a ``.eval`` log (a zip archive) begins."""


def plan_inspect(document: Any) -> ImportPlan:
    """The tasks and submissions an Inspect AI JSON eval log maps to.

    Raises:
        InvalidInput: the file is not an eval log with samples, or a sample cannot be mapped;
            each problem is named by its JSON path (``samples[2].output.usage``).
    """
    top = at(document, "(file)", dict, "a JSON object (an Inspect AI eval log)")
    samples = member(top, "samples", "", list, "a list (a log written with its samples)")
    return _plan(top, "", [(f"samples[{i}]", sample) for i, sample in enumerate(samples)])


def plan_inspect_archive(raw: bytes, *, max_bytes: int) -> ImportPlan:
    """The tasks and submissions an Inspect AI ``.eval`` log (a zip archive) maps to: its
    ``header.json`` and each ``samples/*.json``, read uncompressed up to ``max_bytes`` in all.

    Raises:
        InvalidInput: the archive cannot be read, is larger than ``max_bytes`` uncompressed,
            lacks its header or samples, or a sample cannot be mapped; each problem is named
            by its member and JSON path (``samples/1_epoch_1.json: output.usage``).
    """
    try:
        archive = zipfile.ZipFile(io.BytesIO(raw))
    except zipfile.BadZipFile as error:
        raise InvalidInput([("(file)", f"not a .eval log: {error}")]) from error
    with archive:
        names = archive.namelist()
        if "header.json" not in names:
            raise InvalidInput([("header.json", "missing: an Inspect .eval log has one")])
        members = ["header.json", *sorted(n for n in names if _is_sample(n))]
        budget = max_bytes
        documents = []
        for name in members:
            content = _member(archive, name, budget)
            budget -= len(content)
            documents.append((f"{name}:", content))
    header = at(documents[0][1], "header.json:", dict, "a JSON object (the log's header)")
    if len(documents) == 1:
        raise InvalidInput([("samples/", "no samples: a log written without its samples")])
    return _plan(header, "header.json:", documents[1:])


def _is_sample(name: str) -> bool:
    return name.startswith("samples/") and name.endswith(".json")


def _member(archive: zipfile.ZipFile, name: str, budget: int) -> Any:
    """The JSON in the archive's member ``name``, refused once past ``budget`` bytes."""
    try:
        with archive.open(name) as stream:
            content = stream.read(budget + 1)
    except (zipfile.BadZipFile, OSError, NotImplementedError) as error:
        raise InvalidInput([(name, f"cannot be read: {error}")]) from error
    if len(content) > budget:
        raise too_large(budget)
    try:
        return json.loads(content)
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        place = (
            f"line {error.lineno}, column {error.colno}: "
            if isinstance(error, json.JSONDecodeError)
            else ""
        )
        raise InvalidInput([(name, f"{place}invalid JSON: {error}")]) from error


def _plan(top: dict[str, Any], where: str, samples: list[tuple[str, Any]]) -> ImportPlan:
    """The plan of a log whose header (``eval``) is in ``top``, found at ``where``."""
    spec = member(top, "eval", where, dict, "an object (the eval's spec)")
    spec_at = child(where, "eval")
    task_name = member(spec, "task", spec_at, str, "the task's name")
    eval_id = optional(spec, "eval_id", spec_at, str, "a string") or member(
        spec, "task_id", spec_at, str, "the task run's id"
    )
    model = member(spec, "model", spec_at, str, "the model's name")
    builder = PlanBuilder()
    task_id = source_id("inspect", task_name)
    builder.task(child(spec_at, "task"), {"id": task_id})
    for sample_at, sample in samples:
        try:
            data = _submission(sample, sample_at, task_id=task_id, eval_id=eval_id, model=model)
        except InvalidInput as error:
            for name, rule in error.problems:
                builder.problem(name, rule)
            continue
        builder.submission(sample_at, data)
    return builder.plan()


def _submission(
    sample: Any, where: str, *, task_id: str, eval_id: str, model: str
) -> dict[str, Any]:
    sample = at(sample, where, dict, "an object (one sample)")
    sample_id = member(sample, "id", where, (int, str), "the sample's id")
    epoch = member(sample, "epoch", where, int, "the epoch (an integer)")
    output = optional(sample, "output", where, dict, "an object (the model's output)") or {}
    messages = optional(sample, "messages", where, list, "a list of messages") or []
    calls = _tool_calls(messages, child(where, "messages"))
    usage = _usage(sample, output, where) | {"tool_calls": len(calls)}
    turns = sum(1 for m in messages if isinstance(m, dict) and m.get("role") == "assistant")
    usage["iterations"] = max(turns, 1)
    data: dict[str, Any] = {
        "id": source_id("inspect", eval_id, sample_id, f"e{epoch}"),
        "task_id": task_id,
        "tool": TOOL,
        "model": model,
        "output": _completion(output, child(where, "output")),
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
    choice = at(choices[0], child(where, "choices[0]"), dict, "an object")
    message = member(choice, "message", child(where, "choices[0]"), dict, "an object")
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
    usage = optional(output, "usage", child(where, "output"), dict, "an object")
    if usage is None:
        usage = _summed_model_usage(sample, where)
    path = child(where, "output.usage")
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
        raise InvalidInput([(child(where, "output.usage"), "missing, and no model_usage either")])
    summed = {"input_tokens": 0, "output_tokens": 0}
    for name, figures in per_model.items():
        figures = at(figures, child(where, f"model_usage.{name}"), dict, "an object")
        for key in summed:
            summed[key] += member(figures, key, child(where, f"model_usage.{name}"), int, "a count")
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
        score = at(score, child(where, f"scores.{name}"), dict, "an object (a score)")
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
