"""promptfoo results files (``promptfoo eval -o results.json``) as evalq tasks and submissions.

One task per eval (``promptfoo-<evalId>``), one submission per result row
(``promptfoo-<result id>``): the provider is the model, the response the output, the row's
score, pass flag and reason are kept in metadata (docs/importers.md, "promptfoo").
"""

from __future__ import annotations

import json
from typing import Any

from evalq.core.errors import InvalidInput
from evalq.producer.importers.fields import at, member, optional
from evalq.producer.importers.plan import (
    IMPORTED_GRADER,
    IMPORTED_SCORE,
    ImportPlan,
    PlanBuilder,
    source_id,
)

TOOL = "promptfoo"
MAX_REASON_CHARS = 500
"""The grading reason kept in metadata is cut to this many characters (metadata is small)."""


def plan_promptfoo(document: Any) -> ImportPlan:
    """The tasks and submissions a promptfoo results file maps to.

    Raises:
        InvalidInput: the file is not a promptfoo results file, or a row cannot be mapped;
            each problem is named by its JSON path (``results.results[3].response``).
    """
    top = at(document, "(file)", dict, "a JSON object (a promptfoo results file)")
    eval_id = member(top, "evalId", "", str, "the eval's id (a string)")
    body = member(top, "results", "", dict, "an object (the eval's results)")
    rows = member(body, "results", "results", list, "a list of result rows")
    builder = PlanBuilder()
    task_id = source_id(TOOL, eval_id)
    builder.task("evalId", {"id": task_id})
    for index, row in enumerate(rows):
        where = f"results.results[{index}]"
        try:
            builder.submission(where, _submission(row, where, task_id=task_id, eval_id=eval_id))
        except InvalidInput as error:
            for name, rule in error.problems:
                builder.problem(name, rule)
    return builder.plan()


def _submission(row: Any, where: str, *, task_id: str, eval_id: str) -> dict[str, Any]:
    row = at(row, where, dict, "an object (one result row)")
    row_id = optional(row, "id", where, str, "a string")
    test_idx = optional(row, "testIdx", where, int, "an integer")
    prompt_idx = optional(row, "promptIdx", where, int, "an integer")
    if row_id is None and (test_idx is None or prompt_idx is None):
        raise InvalidInput(
            [(f"{where}.id", "missing: a row needs an id, or testIdx and promptIdx")]
        )
    submission_id = (
        source_id(TOOL, row_id) if row_id else source_id(TOOL, eval_id, test_idx, prompt_idx)
    )
    response = member(row, "response", where, dict, "an object (the provider's response)")
    output = response.get("output")
    text = output if isinstance(output, str) else "" if output is None else json.dumps(output)
    metadata: dict[str, Any] = {IMPORTED_GRADER: TOOL, "promptfoo_eval_id": eval_id}
    score = optional(row, "score", where, (int, float), "a number")
    if score is not None:
        metadata[IMPORTED_SCORE] = score
    passed = optional(row, "success", where, bool, "true or false")
    if passed is not None:
        metadata["imported_pass"] = passed
    grading = optional(row, "gradingResult", where, dict, "an object")
    reason = None if grading is None else grading.get("reason")
    if isinstance(reason, str) and reason:
        metadata["imported_reason"] = reason[:MAX_REASON_CHARS]
    if test_idx is not None:
        metadata["promptfoo_test_idx"] = test_idx
    return {
        "id": submission_id,
        "task_id": task_id,
        "tool": TOOL,
        "model": _provider(row, where),
        "output": text,
        "usage": _usage(row, response, where),
        "metadata": metadata,
    }


def _provider(row: dict[str, Any], where: str) -> str:
    provider = member(row, "provider", where, (dict, str), "the provider (an object or id)")
    if isinstance(provider, str):
        return provider
    label = provider.get("label")
    if isinstance(label, str) and label:
        return label
    return str(member(provider, "id", f"{where}.provider", str, "the provider's id"))


def _usage(row: dict[str, Any], response: dict[str, Any], where: str) -> dict[str, Any]:
    path = f"{where}.response.tokenUsage"
    tokens = member(response, "tokenUsage", f"{where}.response", dict, "an object")
    prompt = optional(tokens, "prompt", path, int, "a count")
    completion = optional(tokens, "completion", path, int, "a count")
    total = optional(tokens, "total", path, int, "a count")
    usage: dict[str, Any] = {}
    if prompt is not None and completion is not None:
        usage |= {"input_tokens": prompt, "output_tokens": completion}
    elif total is not None:
        usage["total_tokens"] = total
    else:
        raise InvalidInput([(path, "needs total, or prompt and completion")])
    latency = optional(row, "latencyMs", where, (int, float), "milliseconds")
    if latency is not None:
        usage["execution_time"] = latency / 1000
    cost = optional(row, "cost", where, (int, float), "dollars")
    if cost is not None:
        usage["cost_usd"] = cost
    return usage
