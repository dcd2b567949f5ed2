"""Task routes: define a task, and read its leaderboard, baseline, variants and suite gate.

A task id is one path segment (no converter that spans '/'): ``PUT /v1/tasks/0/baseline`` is a
405 (that path is a read route), never a task named ``0/baseline``.
"""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Depends, Path, Query, Request, Response

from evalq.core.audit import TaskAudit
from evalq.core.errors import InvalidInput, NotFound
from evalq.core.judge_series import JudgeHistory
from evalq.core.power import PowerPlan
from evalq.core.schemas import TASK_ID_PATTERN, parse_task
from evalq.core.tickets import PlanList, RegisteredPlan
from evalq.producer.api.auth import require
from evalq.producer.api.deps import (
    ClientDep,
    JsonBody,
    ReadSessionDep,
    SessionDep,
    SettingsDep,
    known,
)
from evalq.producer.api.errors import ERROR_RESPONSES
from evalq.producer.api.models import Message, TaskStored
from evalq.read import served
from evalq.read.audit import audit_task, stored_audit
from evalq.read.boards.query import MAX_CURSOR, BoardQuery
from evalq.read.judge_series import judge_history
from evalq.read.leaderboard import MAX_LIMIT, LeaderboardReport
from evalq.read.power import task_plan
from evalq.read.reports import (
    BaselineReport,
    SuiteReport,
    VariantsReport,
    baseline_report,
    suite_report,
    variant_report,
)
from evalq.store import queries
from evalq.store.keys import ApiKey
from evalq.store.models import TaskRow

router = APIRouter(prefix="/v1/tasks", tags=["tasks"])
READ = [Depends(require("read"))]
Writer = Annotated[ApiKey, Depends(require("write"))]
NOT_FOUND = {404: {"model": Message, "description": "No such task."}, **ERROR_RESPONSES}
Filter = Annotated[str | None, Query(max_length=200)]
NewTaskId = Annotated[
    str,
    Path(
        min_length=1,
        max_length=128,
        pattern=TASK_ID_PATTERN,
        description="The task's id: one path segment, never '/'.",
    ),
]


METADATA_PREFIX = "metadata."
METADATA_FILTER = {
    "name": "metadata.KEY",
    "in": "query",
    "required": False,
    "description": "Keep the submissions whose metadata has KEY equal to this value (compared "
    "as strings: 3, true and null match those JSON values); repeat with other keys to require "
    "all. E.g. ?metadata.git_sha=4f2a1c&metadata.experiment=prompt-v2.",
    "schema": {"type": "string", "maxLength": 200},
}


def metadata_filters(request: Request) -> dict[str, str]:
    """The ``metadata.KEY=VALUE`` query parameters; a key given twice is a 422 on it."""
    wanted: dict[str, str] = {}
    for name, value in request.query_params.multi_items():
        if name.startswith(METADATA_PREFIX):
            key = name.removeprefix(METADATA_PREFIX)
            if key in wanted:
                raise InvalidInput([(name, "given more than once; each key takes one value")])
            wanted[key] = value
    return wanted


@router.get("", dependencies=READ, responses=ERROR_RESPONSES)
def list_tasks(session: ReadSessionDep) -> served.TaskList:
    """Every task, by id: its kind (named, or derived from its runs), its submissions counted
    by status, its last activity and who leads its board as the last refresh placed it."""
    return served.task_list(session)


@router.get(
    "/{task_id}/leaderboard",
    dependencies=READ,
    responses=NOT_FOUND,
    openapi_extra={"parameters": [METADATA_FILTER]},
)
def get_leaderboard(
    task_id: str,
    request: Request,
    session: ReadSessionDep,
    settings: SettingsDep,
    tool: Filter = None,
    model: Filter = None,
    variant: Filter = None,
    include_held: Annotated[
        bool,
        Query(
            description="Rank the runs held for review (flagged outliers not yet accepted) "
            "among the others; by default they are listed after the ranked rows, unranked, "
            "and left out of every statistic."
        ),
    ] = False,
    status: Annotated[
        Literal["done", "degraded"] | None,
        Query(description="Only the done (complete) or the degraded (partial) evaluations."),
    ] = None,
    limit: Annotated[
        int | None,
        Query(
            ge=1,
            le=MAX_LIMIT,
            description="List at most this many entries (1 to 1,000), from offset, in the "
            "board's order; ranks, percentiles and the interval stay the whole board's. "
            "Omitted: every entry (the whole board, as before pagination).",
        ),
    ] = None,
    offset: Annotated[int, Query(ge=0, description="Entries to skip before the first listed.")] = 0,
    cursor: Annotated[
        str | None,
        Query(
            max_length=MAX_CURSOR,
            description="The next_cursor of the page before, for the page after it (same "
            "filters and limit, no offset): the answer says whether the board moved in "
            "between (board_moved).",
        ),
    ] = None,
) -> LeaderboardReport:
    """Every evaluated submission ranked by what the task's kind is about (ranks 1, 1, 3).

    Arena figures are re-scored against the current baseline. Filters keep the matching
    submissions (``metadata.KEY=VALUE``: exact matches on the submission's metadata); ranks,
    percentiles and the confidence interval of the mean ranking value are computed among those
    kept. No filter changes what the rows are ranked by. Runs held for review are listed
    after the ranked rows (``held``, rank null) unless ``include_held=true``. ``limit`` and
    ``offset`` page the entries (``total`` says how many there are); a page of an Arena or
    PeerRead board scores in full only the runs it lists. A paged answer's ``next_cursor``
    reads the next page and says whether the board moved since (``board_moved``).
    """
    query = BoardQuery(
        task_id=known("task", task_id),
        tool=tool,
        model=model,
        variant=variant,
        metadata=metadata_filters(request),
        include_held=include_held,
        status=status,
        limit=limit,
        offset=offset,
        cursor=cursor,
    )
    return served.board(session, query, settings=settings)


@router.get("/{task_id}/baseline", dependencies=READ, responses=NOT_FOUND)
def get_baseline(task_id: str, session: SessionDep, settings: SettingsDep) -> BaselineReport:
    """The current Arena baseline snapshot and its version (0: the profile's defaults)."""
    return baseline_report(session, task_id=known("task", task_id), settings=settings)


@router.get("/{task_id}/variants", dependencies=READ, responses=NOT_FOUND)
def get_variants(
    task_id: str,
    session: SessionDep,
    settings: SettingsDep,
    include_held: Annotated[
        bool,
        Query(
            description="Count the runs held for review (flagged outliers not yet accepted) "
            "in the statistics; by default they are left out."
        ),
    ] = False,
) -> VariantsReport:
    """Per-variant statistics (T0..Tn) and each variant's uplift over T0 (null when T0 is 0);
    runs held for review are left out unless ``include_held=true``."""
    return variant_report(
        session, task_id=known("task", task_id), settings=settings, include_held=include_held
    )


@router.get("/{task_id}/plan", dependencies=READ, responses=NOT_FOUND)
def get_plan(
    task_id: str,
    session: SessionDep,
    settings: SettingsDep,
    detect: Annotated[
        float | None,
        Query(
            gt=0,
            allow_inf_nan=False,
            description="The difference in the ranking score to detect; default: the "
            "profile's power.detect, else a tenth of the score's scale.",
        ),
    ] = None,
) -> PowerPlan:
    """Runs per variant or agent the task's observed noise needs for the paired test to detect
    ``detect`` with 80% power at the task's alpha (docs/power.md)."""
    return task_plan(session, task_id=known("task", task_id), detect=detect, settings=settings)


@router.post(
    "/{task_id}/plans",
    status_code=201,
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {
                "application/json": {"schema": {"$ref": "#/components/schemas/PlanRequest"}}
            },
        }
    },
    responses={
        **NOT_FOUND,
        200: {"model": RegisteredPlan, "description": "The plan of this id, registered earlier."},
        409: {"model": Message, "description": "The plan's id names another plan."},
        413: {"model": Message, "description": "Body larger than EVALQ_API_MAX_BODY_BYTES."},
        415: {"model": Message, "description": "Content-Type is not application/json."},
    },
)
def post_plan(
    task_id: str, data: JsonBody, client: ClientDep, key: Writer, response: Response
) -> RegisteredPlan:
    """Register a variant's runs before they happen: one ticket per run (each with its seed,
    when ``seeds`` are given), due by ``deadline``. Send each run with its ``ticket``: once a
    variant has tickets only its ticketed runs count for it, a ticket with no run by the
    deadline counts as a failure at the task's worst cost, and the verdicts wait while tickets
    are pending; a variant without tickets has its verdicts say "not pre-registered"
    (docs/scoring.md). A bad body is a 422 naming the field and its rule; nothing is stored.
    ``id`` is an idempotency key: sent again with the same plan, the plan registered first
    comes back (200, ``created: false``); with another plan, 409."""
    found = client.register_plan(known("task", task_id), data, issued_by=key.name)
    if not found.created:
        response.status_code = 200
    return found


@router.get("/{task_id}/plans", dependencies=READ, responses=NOT_FOUND)
def get_plans(
    task_id: str,
    client: ClientDep,
    tickets: Annotated[
        bool, Query(description="List each plan's tickets (ids, seeds, the runs that used them).")
    ] = False,
) -> PlanList:
    """The task's registered plans, the newest first, each with its tickets used, unused
    (pending: before the deadline) and expired (each a failure)."""
    return client.registered_plans(known("task", task_id), with_tickets=tickets)


@router.get("/{task_id}/judges", dependencies=READ, responses=NOT_FOUND)
def get_judges(
    task_id: str,
    session: SessionDep,
    settings: SettingsDep,
    detect: Annotated[
        float | None,
        Query(
            gt=0,
            le=1,
            allow_inf_nan=False,
            description="The judge bias a bridge is sized to detect, on the judge's [0, 1] "
            "scale; default 0.1.",
        ),
    ] = None,
) -> JudgeHistory:
    """The task's judges over time: each judge's series, where the series breaks, and the
    bridge across each break (runs judged by both: bias and agreement with intervals, and how
    many runs the bridge needs; docs/judge.md)."""
    return judge_history(session, task_id=known("task", task_id), detect=detect, settings=settings)


@router.get("/{task_id}/audit", dependencies=READ, responses=NOT_FOUND)
def get_audit(task_id: str, session: SessionDep) -> TaskAudit:
    """The task's last verifier audit (docs/audit.md); 404 when it was never audited."""
    found = stored_audit(session, task_id=known("task", task_id))
    if found is None:
        queries.get_task(session, task_id=task_id)  # 404 on an unknown task
        raise NotFound(f"task {task_id!r} was never audited (POST /v1/tasks/{task_id}/audit)")
    return found


@router.post("/{task_id}/audit", dependencies=[Depends(require("write"))], responses=NOT_FOUND)
def post_audit(task_id: str, session: SessionDep, settings: SettingsDep) -> TaskAudit:
    """Probe the task's checks now (an empty output, its text echoed, a refusal, other tasks'
    best runs) and store the result: a probe that passes marks the task unverified."""
    return audit_task(session, task_id=known("task", task_id), settings=settings)


@router.get("/{task_id}/suite", dependencies=READ, responses=NOT_FOUND)
def get_suite(task_id: str, session: SessionDep, settings: SettingsDep) -> SuiteReport:
    """The suite gate (pass, blocking failures, warnings, metrics) of each suite submission."""
    return suite_report(session, task_id=known("task", task_id), settings=settings)


@router.put(
    "/{task_id}",
    dependencies=[Depends(require("write"))],
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/TaskBody"}}},
        }
    },
    responses={
        201: {"model": TaskStored, "description": "Created."},
        413: {"model": Message, "description": "Body larger than EVALQ_API_MAX_BODY_BYTES."},
        415: {"model": Message, "description": "Content-Type is not application/json."},
        **ERROR_RESPONSES,
    },
)
def put_task(
    task_id: NewTaskId,
    response: Response,
    data: JsonBody,
    session: SessionDep,
    settings: SettingsDep,
) -> TaskStored:
    """Create or replace a task definition (a `Task`).

    The body may omit ``id``; when it names one, it must equal the id in the path. The task's
    ``profile`` must name a profile this deployment has (``default`` or EVALQ_PROFILE_DIR/NAME).
    A changed definition of a task that has runs refreshes the task before answering (its
    baseline and every run's standing scored for the new definition): the answer waits for it.
    """
    if isinstance(data, dict) and data.setdefault("id", task_id) != task_id:
        raise InvalidInput([("id", f"must equal the task id in the path ({task_id!r})")])
    task = parse_task(data)
    created = session.get(TaskRow, task.id) is None
    # InvalidInput on `profile` when this deployment lacks it
    changed = served.define_task(session, task=task, settings=settings)
    response.status_code = 201 if created else 200
    return TaskStored(task=task.model_dump(mode="json"), created=created, changed=changed)
