"""What the HTTP clients send and how they read the answers: shared by the sync and async ones.

Requests are validated here with the same wire models the server uses, so bad input is refused
before it leaves the process with the same ``(field, rule)`` problems as `evalq.service.client`
(and a value JSON cannot carry, such as a lone surrogate, never reaches the encoder). Answers
become the in-process client's types: `Submitted`, `InvalidInput`, `Conflict`, `NotFound`,
`BrokerUnavailable` / `UpstreamFailure`, plus `Unauthorized` for a refused key.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from urllib.parse import quote, urlsplit

import httpx

from evalq.core.errors import (
    BrokerUnavailable,
    Conflict,
    EvalqError,
    InvalidInput,
    NotFound,
    Unauthorized,
    UpstreamFailure,
)
from evalq.core.labels import LabelRequest, parse_labels
from evalq.core.metadata import filter_problems
from evalq.core.monitors import MonitorRequest, parse_monitor
from evalq.core.review_decisions import ReviewAction, checked_reason
from evalq.core.schemas import Submission, Task, parse_submission, parse_submissions, parse_task
from evalq.core.tickets import PlanRequest, new_plan_id, parse_plan_request
from evalq.core.trace_rules import TraceRule, parse_backfill, parse_trace_rule
from evalq.core.webhooks import parse_webhook_request
from evalq.service.submitted import Submitted

RETRIES = 3
"""Transport failures retried per call (each call this client makes is idempotent)."""
BACKOFF_SECONDS = 0.5
"""First pause before a retry; doubled each time."""
BATCH_ITEM = re.compile(r"^submissions\.(\d+)\.")
NOT_ENQUEUED = "stored but not enqueued"


@dataclass(frozen=True)
class Call:
    """One request to make: method, path, JSON body or query, and the submission ids it carries."""

    method: str
    path: str
    json: Any = None
    params: httpx.QueryParams | None = None
    ids: tuple[str, ...] = ()
    content: bytes | None = None
    content_type: str | None = None

    def request(self) -> dict[str, Any]:
        """The keyword arguments of `httpx.Client.request` for this call."""
        if self.content is None:
            return {"json": self.json, "params": self.params}
        headers = {"Content-Type": self.content_type or "application/octet-stream"}
        return {"content": self.content, "params": self.params, "headers": headers}


def put_task_call(task: Task | Mapping[str, Any]) -> tuple[Call, Task]:
    """PUT /v1/tasks/{id} of a task validated here (`InvalidInput` as `Client.put_task`)."""
    parsed = task if isinstance(task, Task) else parse_task(task)
    call = Call("PUT", f"/v1/tasks/{_segment(parsed.id)}", json=parsed.model_dump(mode="json"))
    return call, parsed


def submit_call(submissions: Iterable[Submission | Mapping[str, Any]], *, batch: bool) -> Call:
    """POST /v1/submissions of submissions validated here, as one item or one batch.

    A batch is all or nothing on the server, as `Client.submit_many` is; its problems are
    named ``[INDEX].field`` as that method names them.
    """
    items = list(submissions)
    if not batch:
        item = items[0]
        parsed = [item if isinstance(item, Submission) else parse_submission(item)]
    else:
        parsed = _parse_all(items)
    bodies = [s.model_dump(mode="json") for s in parsed]
    body = {"submissions": bodies} if batch else bodies[0]
    return Call("POST", "/v1/submissions", json=body, ids=tuple(s.id for s in parsed))


def _parse_all(items: list[Submission | Mapping[str, Any]]) -> list[Submission]:
    parsed = parse_submissions(items)  # as `Client.submit_many` names problems
    if not parsed:
        raise InvalidInput([("submissions", "must hold at least 1 item")])
    return parsed


def otlp_call(
    data: bytes | str | Mapping[str, Any],
    *,
    task_id: str | None,
    tool: str | None,
    model: str | None,
    variant: str | None,
) -> Call:
    """POST /v1/submissions of the submissions OTLP trace data maps to (as `Client.import_otlp`).

    The data is read and mapped here: an exported file's JSON lines are merged into one
    request, so a trace exported in several batches is whole; a trace that cannot be mapped is
    refused with its span-and-attribute problems before anything is sent. (``POST /v1/traces``
    takes spans as exporters stream them, and evaluates a trace once it is over; an exported
    file is over already.)
    """
    from evalq import traces  # protobuf, only when traces are imported

    if isinstance(data, Mapping):
        request = traces.parse_json(dict(data))
    else:
        request = traces.parse_export(data.encode() if isinstance(data, str) else data)
    defaults = traces.TraceDefaults(task_id=task_id, tool=tool, model=model, variant=variant)
    imported = traces.submissions_from_otlp(request, defaults)
    return submit_call([trace.submission for trace in imported], batch=True)


def import_call(name: str, data: bytes, *, columns: Mapping[str, Any] | None, apply: bool) -> Call:
    """POST /v1/imports/{format} of a results file (as `evalq.producer.importers.apply.
    import_file`); the format and columns are checked here, the file by the server."""
    from evalq.producer.importers.formats import FORMATS, MAPPED
    from evalq.producer.importers.generic import ColumnMap

    if name not in FORMATS:
        raise InvalidInput([("format", f"must be one of {', '.join(FORMATS)}")])
    if columns is not None and name not in MAPPED:
        raise InvalidInput([(next(iter(columns), "columns"), f"only for {' and '.join(MAPPED)}")])
    params: dict[str, Any] = {"apply": "true" if apply else "false"}
    if columns is not None or name in MAPPED:
        ColumnMap.of(columns or {})
        params |= {key: value for key, value in (columns or {}).items() if value is not None}
    return Call(
        "POST",
        f"/v1/imports/{_segment(name)}",
        params=httpx.QueryParams(params),
        content=data,
        content_type="application/octet-stream",
    )


def result_call(submission_id: str) -> Call:
    """GET /v1/submissions/{id}."""
    return Call("GET", f"/v1/submissions/{quote(submission_id, safe='/:')}")


def tasks_call() -> Call:
    """GET /v1/tasks."""
    return Call("GET", "/v1/tasks")


def leaderboard_call(
    task_id: str,
    *,
    tool: str | None,
    model: str | None,
    variant: str | None,
    metadata: Mapping[str, str] | None,
    include_held: bool = False,
    status: str | None = None,
    limit: int | None = None,
    offset: int = 0,
    cursor: str | None = None,
) -> Call:
    """GET /v1/tasks/{id}/leaderboard with its filters (``metadata.KEY=VALUE`` each) and page."""
    wanted = dict(metadata or {})
    problems = filter_problems(wanted)
    if problems:
        raise InvalidInput(problems)
    params = {name: value for name, value in (("tool", tool), ("model", model)) if value}
    params |= {"variant": variant} if variant else {}
    params |= {f"metadata.{key}": value for key, value in wanted.items()}
    params |= {"include_held": "true"} if include_held else {}
    params |= {"status": status} if status else {}
    params |= {"limit": str(limit)} if limit is not None else {}
    params |= {"offset": str(offset)} if offset else {}
    params |= {"cursor": cursor} if cursor is not None else {}
    path = f"/v1/tasks/{_segment(task_id)}/leaderboard"
    return Call("GET", path, params=httpx.QueryParams(params))


def compare_call(
    tasks: str,
    *,
    by: str,
    values: Sequence[str],
    correction: str,
    seed: int,
    include_held: bool = False,
) -> Call:
    """GET /v1/compare; ``values`` repeat the parameter (the reference first)."""
    params: dict[str, str | list[str]] = {"tasks": tasks, "by": by, "values": list(values)}
    params |= {"correction": correction, "seed": str(seed)}
    params |= {"include_held": "true"} if include_held else {}
    return Call("GET", "/v1/compare", params=httpx.QueryParams(params))


def plan_call(task_id: str, *, detect: float | None = None) -> Call:
    """GET /v1/tasks/{id}/plan."""
    params = {} if detect is None else {"detect": repr(float(detect))}
    return Call("GET", f"/v1/tasks/{_segment(task_id)}/plan", params=httpx.QueryParams(params))


def judges_call(task_id: str, *, detect: float | None = None) -> Call:
    """GET /v1/tasks/{id}/judges."""
    params = {} if detect is None else {"detect": repr(float(detect))}
    return Call("GET", f"/v1/tasks/{_segment(task_id)}/judges", params=httpx.QueryParams(params))


def audit_call(task_id: str) -> Call:
    """POST /v1/tasks/{id}/audit."""
    return Call("POST", f"/v1/tasks/{_segment(task_id)}/audit")


def gate_call(
    tasks: str,
    *,
    by: str,
    baseline: str,
    candidate: str,
    margin: float,
    too_few: str,
    seed: int,
    include_held: bool = False,
) -> Call:
    """GET /v1/gate."""
    params = {"tasks": tasks, "by": by, "baseline": baseline, "candidate": candidate}
    params |= {"margin": str(margin), "too_few": too_few, "seed": str(seed)}
    params |= {"include_held": "true"} if include_held else {}
    return Call("GET", "/v1/gate", params=httpx.QueryParams(params))


def add_webhook_call(task_id: str, webhook: Mapping[str, Any]) -> Call:
    """POST /v1/tasks/{id}/webhooks of a registration validated here (as `Client.add_webhook`)."""
    request = parse_webhook_request(webhook)
    body = request.model_dump(mode="json", exclude_none=True)
    return Call("POST", f"/v1/tasks/{_segment(task_id)}/webhooks", json=body)


def webhooks_call(task_id: str) -> Call:
    """GET /v1/tasks/{id}/webhooks."""
    return Call("GET", f"/v1/tasks/{_segment(task_id)}/webhooks")


def remove_webhook_call(task_id: str, webhook_id: str) -> Call:
    """DELETE /v1/tasks/{id}/webhooks/{webhook id}."""
    return Call("DELETE", f"/v1/tasks/{_segment(task_id)}/webhooks/{_segment(webhook_id)}")


def put_monitor_call(name: str, monitor: MonitorRequest | Mapping[str, Any]) -> Call:
    """PUT /v1/monitors/{name} of a monitor validated here (as `Client.set_monitor`)."""
    request = parse_monitor(name, monitor)
    body = request.model_dump(mode="json", exclude_none=True)
    return Call("PUT", f"/v1/monitors/{_segment(name)}", json=body)


def register_plan_call(task_id: str, plan: PlanRequest | Mapping[str, Any]) -> Call:
    """POST /v1/tasks/{id}/plans of a plan validated here (its deadline's time zone too; the
    server checks it against its own clock)."""
    found = parse_plan_request(plan)
    if found.id is None:  # one id for every retry of this call: one plan, however many
        found = found.model_copy(update={"id": new_plan_id()})
    body = found.model_dump(mode="json", exclude_none=True)
    return Call("POST", f"/v1/tasks/{_segment(task_id)}/plans", json=body)


def plans_call(task_id: str, *, with_tickets: bool = False) -> Call:
    """GET /v1/tasks/{id}/plans."""
    params = httpx.QueryParams({"tickets": "true"} if with_tickets else {})
    return Call("GET", f"/v1/tasks/{_segment(task_id)}/plans", params=params)


def monitor_call(name: str, method: str = "GET") -> Call:
    """GET (or DELETE) /v1/monitors/{name}."""
    return Call(method, f"/v1/monitors/{_segment(name)}")


def monitor_page_call(after: str | None, limit: int) -> Call:
    """GET /v1/monitors: the page after the name ``after``, at most ``limit`` monitors."""
    given = {"limit": str(limit)} | ({} if after is None else {"after": after})
    return Call("GET", "/v1/monitors", params=httpx.QueryParams(given))


def put_trace_rule_call(task_id: str, rule: TraceRule | Mapping[str, Any]) -> Call:
    """PUT /v1/tasks/{id}/trace-rule of a rule validated here (as `Client.put_trace_rule`)."""
    parsed = rule if isinstance(rule, TraceRule) else parse_trace_rule(rule)
    return Call("PUT", f"/v1/tasks/{_segment(task_id)}/trace-rule", json=parsed.model_dump())


def trace_rule_call(task_id: str, method: str = "GET") -> Call:
    """GET (or DELETE) /v1/tasks/{id}/trace-rule."""
    return Call(method, f"/v1/tasks/{_segment(task_id)}/trace-rule")


def session_call(session_id: str, *, task_id: str | None = None) -> Call:
    """GET /v1/sessions/{session id}."""
    params = None if task_id is None else httpx.QueryParams({"task_id": task_id})
    return Call("GET", f"/v1/sessions/{_segment(session_id)}", params=params)


def session_board_call(task_id: str, *, limit: int) -> Call:
    """GET /v1/tasks/{id}/sessions."""
    params = httpx.QueryParams({"limit": str(limit)})
    return Call("GET", f"/v1/tasks/{_segment(task_id)}/sessions", params=params)


def backfill_call(task_id: str, *, since: datetime, until: datetime) -> Call:
    """POST /v1/tasks/{id}/trace-rule/backfill of a time range validated here (as `Client`)."""
    window = parse_backfill({"since": since, "until": until})
    body = window.model_dump(mode="json")
    return Call("POST", f"/v1/tasks/{_segment(task_id)}/trace-rule/backfill", json=body)


def deliveries_call(task_id: str, webhook_id: str, *, limit: int) -> Call:
    """GET /v1/tasks/{id}/webhooks/{webhook id}/deliveries."""
    path = f"/v1/tasks/{_segment(task_id)}/webhooks/{_segment(webhook_id)}/deliveries"
    return Call("GET", path, params=httpx.QueryParams({"limit": str(limit)}))


def add_labels_call(labels: Iterable[LabelRequest | Mapping[str, Any]]) -> Call:
    """POST /v1/labels of labels validated here (as `Client.add_labels`)."""
    body = [label.model_dump(mode="json", exclude_none=True) for label in parse_labels(labels)]
    return Call("POST", "/v1/labels", json={"labels": body})


def labels_call(*, task_id: str | None, submission_id: str | None, labeller: str | None) -> Call:
    """GET /v1/labels with the filters given."""
    wanted = {"task_id": task_id, "submission_id": submission_id, "labeller": labeller}
    params = {name: value for name, value in wanted.items() if value is not None}
    return Call("GET", "/v1/labels", params=httpx.QueryParams(params))


def label_queue_call(task_id: str, *, unlabelled_only: bool) -> Call:
    """GET /v1/labels/queue."""
    params = {"task_id": task_id, "unlabelled_only": str(unlabelled_only).lower()}
    return Call("GET", "/v1/labels/queue", params=httpx.QueryParams(params))


def judge_agreement_call(tasks: str, *, seed: int) -> Call:
    """GET /v1/judge/agreement."""
    return Call("GET", "/v1/judge/agreement", params=httpx.QueryParams(tasks=tasks, seed=seed))


def single(error: InvalidInput) -> InvalidInput:
    """A one-item batch's problems named as for one item: ``submission_id``, not ``[0]...``."""
    return InvalidInput([(f.removeprefix("[0]."), rule) for f, rule in error.problems])


def review_call(submission_id: str, action: ReviewAction, *, reason: str) -> Call:
    """POST /v1/submissions/{id}/review/accept or .../unaccept with its reason, checked here
    (`InvalidInput` on ``reason`` as `Client.accept_review`); the server records the key's
    name as who decided."""
    body = {"reason": checked_reason(reason)}
    path = f"/v1/submissions/{quote(submission_id, safe='/:')}/review/{action}"
    return Call("POST", path, json=body)


def _segment(task_id: str) -> str:
    """A task id as one URL path segment, escaped. Task ids have no '/' (`TaskId`); one stored
    before that rule cannot be reached over HTTP (the server matches the decoded path)."""
    return quote(task_id, safe="")


def accepted(body: dict[str, Any]) -> list[Submitted]:
    """The `Submitted` of each item of a submit's answer (one, or a batch in request order)."""
    items = body.get("submissions", [body])
    return [Submitted(item["id"], item["created"]) for item in items]


def checked(response: httpx.Response, call: Call) -> Any:
    """The decoded body of a 2xx answer; otherwise the error the in-process client would raise."""
    if response.is_success:
        return response.json()
    raise error_of(response, call)


def error_of(response: httpx.Response, call: Call) -> EvalqError:
    """The evalq error an error answer stands for."""
    status = response.status_code
    body = _json_or_none(response)
    detail = body.get("detail") if isinstance(body, dict) else None
    if status == 422 and isinstance(detail, list):
        problems = [(_field(p.get("field", "")), str(p.get("rule", ""))) for p in detail]
        return InvalidInput(problems, total=len(problems) + int(body.get("more", 0)))
    text = detail if isinstance(detail, str) else response.text[:500]
    if status in (401, 403):
        return Unauthorized(text, status=status)
    if status == 404:
        return NotFound(text)
    if status == 409:
        return Conflict(text)
    if status in (413, 415):
        return InvalidInput([("(body)", text)])
    if status == 503 and "broker" in text:
        unsent = list(call.ids) if NOT_ENQUEUED in text else []
        return BrokerUnavailable(f"the evalq API answered 503: {text}", unsent)
    return UpstreamFailure(f"the evalq API answered {status}: {text}")


def _field(field: str) -> str:
    """A batch item's field as `Client.submit_many` names it: ``[1].output``."""
    return BATCH_ITEM.sub(lambda match: f"[{match.group(1)}].", field)


def _json_or_none(response: httpx.Response) -> Any:
    try:
        return response.json()
    except ValueError:
        return None


def unreachable(base_url: str, error: httpx.TransportError, attempts: int) -> UpstreamFailure:
    """The error raised once every attempt of a call failed in transport."""
    parts = urlsplit(base_url)
    where = parts._replace(netloc=parts.netloc.rpartition("@")[2]).geturl()  # no credentials
    return UpstreamFailure(
        f"the evalq API at {where} is unreachable ({type(error).__name__}) "
        f"after {attempts} attempts"
    )


def backoff(attempt: int) -> float:
    """Seconds to pause before retry ``attempt`` (1, 2, ...)."""
    return float(BACKOFF_SECONDS * 2 ** (attempt - 1))


def headers(api_key: str | None) -> dict[str, str]:
    """The headers every request carries."""
    return {"Authorization": f"Bearer {api_key}"} if api_key else {}
