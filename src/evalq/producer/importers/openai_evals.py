"""OpenAI Evals exports (the Evals API's own objects, saved as JSON or JSON Lines) as evalq runs.

An export holds the API's objects as it returned them: evals (``"object": "eval"``), runs
(``"eval.run"``), output items (``"eval.run.output_item"``) and list pages of any of them
(``"object": "list"``). One task per eval (``openai-evals-<eval id>``), one submission per
output item (``openai-evals-<output item id>``); each grader's result is kept in metadata as
the imported score (docs/importers.md, "OpenAI Evals").
"""

from __future__ import annotations

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

TOOL = "openai_evals"
PREFIX = "openai-evals"
KINDS = ("eval", "eval.run", "eval.run.output_item", "list")


def plan_openai_evals(records: list[tuple[str, Any]]) -> ImportPlan:
    """The tasks and submissions an export's records (`source.parse_records`) map to.

    Raises:
        InvalidInput: a record is not an Evals API object, or an output item cannot be
            mapped; each problem is named by its line and JSON path (``line 3: data[0].sample``).
    """
    evals: dict[str, dict[str, Any]] = {}
    runs: dict[str, dict[str, Any]] = {}
    items: list[tuple[str, dict[str, Any]]] = []
    builder = PlanBuilder()
    for where, value in _objects(records, builder):
        kind = value["object"]
        if kind == "eval":
            evals[value["id"]] = value
        elif kind == "eval.run":
            runs[value["id"]] = value
        else:
            items.append((where, value))
    for eval_id in evals:
        builder.task("eval.id", {"id": source_id(PREFIX, eval_id)})
    for where, item in items:
        try:
            data = _submission(item, where, evals=evals, runs=runs)
        except InvalidInput as error:
            for name, rule in error.problems:
                builder.problem(name, rule)
            continue
        builder.task(child(where, "eval_id"), {"id": data["task_id"]})
        builder.submission(where, data)
    return builder.plan()


def _objects(
    records: list[tuple[str, Any]], builder: PlanBuilder
) -> list[tuple[str, dict[str, Any]]]:
    """Every eval, run and output item in the records, list pages and arrays opened."""
    found: list[tuple[str, dict[str, Any]]] = []
    pending = list(reversed(records))
    while pending:
        where, value = pending.pop()
        if isinstance(value, list):
            pending.extend(reversed([(child(where, f"[{i}]"), v) for i, v in enumerate(value)]))
            continue
        try:
            value = at(value, where or "(file)", dict, "an object (an Evals API object)")
            kind = member(value, "object", where, str, "the object's type")
            if kind not in KINDS:
                raise InvalidInput([(child(where, "object"), f"must be one of {', '.join(KINDS)}")])
            if kind == "list":
                data = member(value, "data", where, list, "a list (the page's objects)")
                pending.append((child(where, "data"), data))
                continue
            member(value, "id", where, str, "the object's id")
        except InvalidInput as error:
            for name, rule in error.problems:
                builder.problem(name, rule)
            continue
        found.append((where, value))
    return found


def _submission(
    item: dict[str, Any],
    where: str,
    *,
    evals: dict[str, dict[str, Any]],
    runs: dict[str, dict[str, Any]],
) -> dict[str, Any]:
    item_id = member(item, "id", where, str, "the output item's id")
    eval_id = member(item, "eval_id", where, str, "the eval's id")
    run_id = member(item, "run_id", where, str, "the run's id")
    sample_at = child(where, "sample")
    sample = member(item, "sample", where, dict, "an object (the model's input and output)")
    run = runs.get(run_id, {})
    model = optional(sample, "model", sample_at, str, "the model's name") or run.get("model")
    if not isinstance(model, str) or not model:
        raise InvalidInput([(child(sample_at, "model"), "missing, and no run names a model")])
    output = optional(sample, "output", sample_at, list, "a list of messages") or []
    calls = _tool_calls(output, child(sample_at, "output"))
    metadata: dict[str, Any] = _grades(item, where) | {
        "openai_eval_id": eval_id,
        "openai_run_id": run_id,
    }
    for key, source, name in (
        ("openai_eval_name", evals.get(eval_id, {}), "name"),
        ("openai_run_name", run, "name"),
    ):
        if isinstance(source.get(name), str):
            metadata[key] = source[name]
    data: dict[str, Any] = {
        "id": source_id(PREFIX, item_id),
        "task_id": source_id(PREFIX, eval_id),
        "tool": TOOL,
        "model": model,
        "output": _text(output, child(sample_at, "output")),
        "usage": _usage(sample, sample_at) | {"tool_calls": len(calls)},
        "metadata": metadata,
    }
    if calls:
        data["trace"] = {"steps": [{"tool": name} for name in calls]}
    return data


def _text(output: list[Any], where: str) -> str:
    """The content of the last assistant message (its text parts joined), or empty."""
    for index in range(len(output) - 1, -1, -1):
        message = at(output[index], f"{where}[{index}]", dict, "an object (a message)")
        if message.get("role") != "assistant":
            continue
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
    return ""


def _tool_calls(output: list[Any], where: str) -> list[str]:
    """The functions the assistant's output messages called, in order."""
    names = []
    for index, message in enumerate(output):
        if not isinstance(message, dict):
            continue
        calls = optional(message, "tool_calls", f"{where}[{index}]", list, "a list") or []
        for number, call in enumerate(calls):
            path = f"{where}[{index}].tool_calls[{number}]"
            call = at(call, path, dict, "an object (a tool call)")
            function = member(call, "function", path, dict, "an object (the function called)")
            names.append(member(function, "name", f"{path}.function", str, "its name"))
    return names


def _usage(sample: dict[str, Any], where: str) -> dict[str, Any]:
    path = child(where, "usage")
    usage = member(sample, "usage", where, dict, "an object (the tokens used)")
    prompt = optional(usage, "prompt_tokens", path, int, "a count")
    completion = optional(usage, "completion_tokens", path, int, "a count")
    total = optional(usage, "total_tokens", path, int, "a count")
    if prompt is not None and completion is not None:
        return {"input_tokens": prompt, "output_tokens": completion}
    if total is not None:
        return {"total_tokens": total}
    raise InvalidInput([(path, "needs total_tokens, or prompt_tokens and completion_tokens")])


def _grades(item: dict[str, Any], where: str) -> dict[str, JsonValue]:
    """The graders' results as imported metadata: the first grader's score, every result
    when there are several (a list: grader names need not be metadata keys), and whether
    the item passed."""
    status = member(item, "status", where, str, "the item's status")
    results = member(item, "results", where, list, "a list (the graders' results)")
    grades: list[dict[str, JsonValue]] = []
    for index, result in enumerate(results):
        path = child(where, f"results[{index}]")
        result = at(result, path, dict, "an object (a grader's result)")
        grades.append(
            {
                "grader": member(result, "name", path, str, "the grader's name"),
                "score": optional(result, "score", path, (int, float), "a number"),
                "passed": optional(result, "passed", path, bool, "true or false"),
            }
        )
    metadata: dict[str, JsonValue] = {"imported_pass": status == "pass"}
    if not grades:
        return metadata | {IMPORTED_GRADER: TOOL}
    first = grades[0]
    metadata |= {IMPORTED_SCORE: first["score"], IMPORTED_GRADER: f"{TOOL}/{first['grader']}"}
    if len(grades) > 1:
        metadata["imported_scores"] = list[JsonValue](grades)
    return metadata
