"""Wire models: what producers send evalq and what evalq stores as JSON.

Every model is strict about shape: unknown fields are rejected, counts cannot be negative or
wider than 32 bits, floats must be finite, strings must be ones the store can keep (no NUL, no
lone surrogates: `evalq.core.storable`), and every limit below is part of the public contract
(docs/submissions.md).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable
from itertools import islice
from typing import Annotated, Any, ClassVar, Literal, get_args

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    JsonValue,
    ValidationError,
    ValidationInfo,
    WithJsonSchema,
    field_validator,
    model_validator,
)

from evalq.core.errors import MAX_PROBLEMS, InvalidInput
from evalq.core.integrity import IntegrityPatterns
from evalq.core.metadata import KEY_PATTERN, MAX_BYTES, MAX_DEPTH, MAX_KEYS, check_metadata
from evalq.core.storable import MAX_INT, printable, storable_keys, storable_string
from evalq.core.text_form import text_form
from evalq.core.trajectory import ArgValue, ToolCall, TrajectoryMode

MAX_TEXT_CHARS = 100_000
"""Longest output, reference or scenario text accepted (characters)."""
MAX_CONTEXT_CHARS = 400_000
"""Longest task context (e.g. a paper) accepted (characters)."""
MAX_TRACE_NODES = 1000
"""Distinct tools and agents in one trace (spec 001's graph limit)."""
MAX_TRACE_EDGES = 5000
"""Tool transitions plus agent messages in one trace (spec 001's graph limit)."""
MAX_ITEMS = 10_000
"""Longest list of evidence, test results, behaviours, scenarios or required scenarios."""
MAX_UNKNOWN_KEYS = 10
"""Unknown keys named one by one in an object; with more, the object gets one problem."""

Storable = BeforeValidator(storable_string)
"""On every string type below: no NUL, no lone surrogates, whichever door the value came in by."""
ProfileName = Annotated[
    str, Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9][A-Za-z0-9_-]*$"), Storable
]
"""A profile's name: ``NAME.toml`` in the profile directory, so never a path."""
Identifier = Annotated[
    str,
    Field(min_length=1, max_length=128, pattern=r"^[A-Za-z0-9][A-Za-z0-9._:\-/]*$"),
    Storable,
]
"""A scenario id (it may hold '/': it is never part of a URL)."""
PATH_SEGMENT_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._:\-]*$"
TASK_ID_PATTERN = PATH_SEGMENT_PATTERN
STORED = {"stored": True}
"""Validation context for rows already in the store, which may predate a tightened rule."""


def _one_path_segment(kind: str) -> Callable[[str, ValidationInfo], str]:
    """An id that is one URL path segment: ``PUT /v1/tasks/0/baseline`` once created a task
    ``0/baseline``; a submission ``a/../b`` was answered with a ``url`` that was a 404.

    Rows stored before this rule (validated with the `STORED` context) still load.
    """

    def check(value: str, info: ValidationInfo) -> str:
        stored = isinstance(info.context, dict) and info.context.get("stored") is True
        if "/" in value and not stored:
            raise ValueError(f"a {kind} id must not contain '/'")
        return value

    return check


PATH_SEGMENT_SCHEMA = WithJsonSchema(
    {"type": "string", "minLength": 1, "maxLength": 128, "pattern": PATH_SEGMENT_PATTERN}
)
TaskId = Annotated[Identifier, AfterValidator(_one_path_segment("task")), PATH_SEGMENT_SCHEMA]
"""A task's id: letters, digits and ``._:-``, never '/' (it is a URL path segment)."""
SubmissionId = Annotated[
    Identifier, AfterValidator(_one_path_segment("submission")), PATH_SEGMENT_SCHEMA
]
"""A submission's id: letters, digits and ``._:-``, never '/' (it is a URL path segment)."""
Name = Annotated[str, Field(min_length=1, max_length=200), Storable]
KeyName = Annotated[str, Field(min_length=1, max_length=100), Storable]
"""The name of an API key (`evalq.store.keys`), never its secret."""
Text = Annotated[str, Field(max_length=MAX_TEXT_CHARS), Storable]
Context = Annotated[str, Field(max_length=MAX_CONTEXT_CHARS), Storable]
MAX_COUNT = MAX_INT
"""Largest count accepted (the store's integer columns are 32-bit on PostgreSQL)."""
# Numbers and flags are strict: `true`, `"12"` or `12.5` for a count is an error, never a
# coercion (`true` was stored as 1); an integer is accepted where a float is expected.
Count = Annotated[int, Field(ge=0, le=MAX_COUNT, strict=True)]
Seconds = Annotated[float, Field(ge=0, allow_inf_nan=False, strict=True)]
Dollars = Annotated[float, Field(ge=0, allow_inf_nan=False, strict=True)]
Fraction = Annotated[float, Field(ge=0, le=1, allow_inf_nan=False, strict=True)]
Flag = Annotated[bool, Field(strict=True)]

Category = Literal[
    "frontend_development", "backend_development", "data_analysis", "debugging", "refactoring"
]
Difficulty = Literal["beginner", "intermediate", "advanced"]
CoordinationMessage = Literal["coordination", "status_update", "handoff"]
"""Message types that organise the work (spec 001, communication overhead)."""
ProductiveMessage = Literal["task_request", "result_delivery", "data_transfer"]
"""Message types that carry the work itself (spec 001)."""
MessageType = Literal[CoordinationMessage, ProductiveMessage]
ScenarioCategory = Literal["happy_path", "edge_case", "adversarial", "regression"]
Capability = Literal["core_function", "convenience_feature"]
TaskKind = Literal["arena", "peerread", "scylla", "suite"]
PeerReadInput = Literal[
    "time_taken",
    "task_success",
    "output_similarity",
    "coordination_quality",
    "tool_efficiency",
    "planning_rationality",
    "technical_accuracy",
    "constructiveness",
]
PEERREAD_INPUTS: tuple[PeerReadInput, ...] = get_args(PeerReadInput)
"""The six PeerRead inputs of spec 001, in its order, then the judge's two review rubrics
(evalq's addition: with a judge configured they are what tells a review from a summary)."""
TRACE_INPUTS: tuple[PeerReadInput, ...] = (
    "coordination_quality",
    "tool_efficiency",
    "planning_rationality",
)
"""The PeerRead inputs read from a run's execution trace (tier 3's two, and the judge's
``planning_rationality``, whose rubric reads the trace's summary)."""
TASK_KINDS: tuple[TaskKind, ...] = get_args(TaskKind)
RubricName = Literal["technical_accuracy", "constructiveness", "planning_rationality"]
RUBRIC_NAMES: tuple[RubricName, ...] = get_args(RubricName)
"""The judge's three rubrics of spec 001 tier 2, in its order (each a section of the profile's
``[judge]``)."""
Tier = Literal["text", "judge", "graph"]
TIERS: tuple[Tier, ...] = get_args(Tier)


class Strict(BaseModel):
    """Base of every wire model: unknown fields are an error, floats must be finite."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False, frozen=True)

    @model_validator(mode="before")
    @classmethod
    def _few_unknown_keys(cls, data: Any) -> Any:
        """One problem for an object with many unknown keys, instead of one per key.

        pydantic names every unknown key on its own: a 5 MiB object of short unknown keys was
        hundreds of thousands of problems to build, hold and list.
        """
        if isinstance(data, dict) and len(data) > len(cls.model_fields) + MAX_UNKNOWN_KEYS:
            unknown = (repr(str(key)[:40]) for key in data if key not in cls.model_fields)
            raise ValueError(
                f"{len(data) - len(cls.model_fields.keys() & data.keys())} unknown fields "
                f"(e.g. {', '.join(islice(unknown, 3))}); the fields are "
                f"{', '.join(cls.model_fields)}"
            )
        return data

    @model_validator(mode="before")
    @classmethod
    def _storable_keys(cls, data: Any) -> Any:
        return storable_keys(data)


# --- task definition -------------------------------------------------------------------------


class FileExists(Strict):
    """Passes when ``file_path`` is among the submission's ``evidence.files_created``."""

    type: Literal["file_exists"]
    file_path: Name


class NoErrors(Strict):
    """Passes when the run reported success and no errors."""

    type: Literal["no_errors"]


class TestsPass(Strict):
    """Passes when every named test passed (no names: every reported test, at least one)."""

    __test__: ClassVar[bool] = False  # a criterion, not a pytest test class

    type: Literal["tests_pass"]
    tests: list[Name] = Field(
        default_factory=list,
        max_length=MAX_ITEMS,
        fail_fast=True,
        description="Test names; empty = all.",
    )


class MinFunctionality(Strict):
    """Passes when the fraction of reported tests that passed is at least ``min_pass_rate``."""

    type: Literal["min_functionality"]
    min_pass_rate: Fraction = Field(default=0.5, description="Fraction of tests that must pass.")


Criterion = Annotated[
    FileExists | NoErrors | TestsPass | MinFunctionality, Field(discriminator="type")
]


class ToolGraph(Strict):
    """A task's reference tool graph: which tool may follow which, where a run starts and ends."""

    edges: list[tuple[Name, Name]] = Field(
        max_length=MAX_TRACE_EDGES,
        fail_fast=True,
        description="Directed edges (from_tool, to_tool).",
    )
    start: Name = Field(description="Tool a run starts from.")
    end: Name = Field(description="Tool that completes the task.")

    @model_validator(mode="after")
    def _within_limits(self) -> ToolGraph:
        nodes = {n for edge in self.edges for n in edge} | {self.start, self.end}
        if len(nodes) > MAX_TRACE_NODES:
            raise ValueError(f"reference graph has {len(nodes)} nodes; at most {MAX_TRACE_NODES}")
        if len(self.edges) > MAX_TRACE_EDGES:
            raise ValueError(
                f"reference graph has {len(self.edges)} edges; at most {MAX_TRACE_EDGES}"
            )
        return self


class Task(Strict):
    """A task that submissions are evaluated against."""

    id: TaskId
    kind: TaskKind | None = Field(
        default=None,
        description="What the task's leaderboard ranks by: arena, peerread, scylla or suite. "
        "Absent: derived (docs/scoring.md, 'Task kinds').",
    )
    category: Category | None = Field(
        default=None,
        description="Spec 000 category; selects the Arena weights (absent: the general weights).",
    )
    difficulty: Difficulty = Field(default="beginner", description="Spec 000 difficulty bonus.")
    success_criteria: list[Criterion] = Field(
        default_factory=list,
        max_length=MAX_ITEMS,
        fail_fast=True,
        description="Checked against each submission's evidence.",
    )
    reference_outputs: list[Text] = Field(
        default_factory=list,
        max_length=20,
        fail_fast=True,
        description="Reference texts (e.g. reviews).",
    )
    context: Context | None = Field(default=None, description="Paper or task context text.")
    reference_tool_graph: ToolGraph | None = Field(default=None, description="For tier 3.")
    expected_tool_calls: list[ToolCall] | None = Field(
        default=None,
        max_length=MAX_TRACE_EDGES,
        description="Tier 3's trajectory match: the tool calls a run should make, in order, "
        "each with the arguments that must match (docs/scoring.md, 'Trajectory match').",
        exclude_if=lambda value: value is None,  # a task without it hashes as before
    )
    integrity: IntegrityPatterns | None = Field(
        default=None,
        description="Trajectory integrity: the paths and sources a run's tool calls may not "
        "touch, added to the defaults for code tasks (docs/integrity.md). Absent: the defaults.",
        exclude_if=lambda value: value is None,  # a task without it hashes as before
    )
    trajectory_mode: TrajectoryMode = Field(
        default="in_order",
        description="How the calls are matched: exact, in_order, any_order or subset.",
        exclude_if=lambda value: value == "in_order",
    )
    optimal_tools: dict[Name, Name] = Field(
        default_factory=dict,
        max_length=MAX_TRACE_NODES,
        description="Context -> the tool that should be used there.",
    )
    required_scenarios: list[Identifier] = Field(
        default_factory=list,
        max_length=MAX_ITEMS,
        fail_fast=True,
        description="Suite scenarios that must pass for the suite to pass.",
    )
    profile: ProfileName = Field(
        default="default",
        description="Scoring profile name: letters, digits, '_' and '-' (a file in "
        "EVALQ_PROFILE_DIR, never a path).",
    )
    inputs: list[PeerReadInput] | None = Field(
        default=None,
        min_length=1,
        max_length=6,
        description="The PeerRead composite inputs this task asks for; the others are not "
        "applicable to any of its runs (left out, never 0). Absent: every input, except the "
        "trace inputs (coordination_quality, tool_efficiency, planning_rationality) when the "
        "task has neither a reference_tool_graph nor optimal_tools (a text-only review task).",
    )
    trusted_trace_keys: list[KeyName] = Field(
        default_factory=list,
        max_length=20,
        description="Names of the API keys that export this task's runs from the agents' "
        "runtime over OTLP (POST /v1/traces): a run the OTLP intake assembles from spans sent "
        "under one of them has a collected trace; any other trace (one inside a submission, or "
        "spans sent under another key) is the submitter's own. Decides the usage_source the "
        'boards show and which runs a profile with arena.usage = "traced" ranks '
        "(docs/traces.md, 'Trace provenance'). Empty: no run's trace is collected.",
        exclude_if=lambda value: not value,  # a task without it hashes as before
    )


# --- submission ------------------------------------------------------------------------------


class Usage(Strict):
    """Resource figures of one run.

    The schema says what the validator enforces: ``total_tokens``, or both ``input_tokens`` and
    ``output_tokens`` (``usage: {}`` is a 422). That the three add up it cannot say.
    """

    model_config = ConfigDict(
        json_schema_extra={
            "anyOf": [
                {"required": ["total_tokens"], "properties": {"total_tokens": {"type": "integer"}}},
                {
                    "required": ["input_tokens", "output_tokens"],
                    "properties": {
                        "input_tokens": {"type": "integer"},
                        "output_tokens": {"type": "integer"},
                    },
                },
            ]
        }
    )

    input_tokens: Count | None = None
    output_tokens: Count | None = None
    total_tokens: Count | None = Field(
        default=None, description="Defaults to input + output; must equal it when all are given."
    )
    tool_calls: Count = 0
    iterations: int = Field(
        default=1, ge=1, le=MAX_COUNT, strict=True, description="Attempts/refinements; at least 1."
    )
    execution_time: Seconds | None = Field(default=None, description="Wall time in seconds.")
    cost_usd: Dollars | None = Field(
        default=None, description="Run cost; priced from the profile by `model` when absent."
    )

    @model_validator(mode="after")
    def _tokens_add_up(self) -> Usage:
        parts = (self.input_tokens, self.output_tokens)
        if self.total_tokens is None:
            if None in parts:
                raise ValueError(
                    "total_tokens is required unless input_tokens and output_tokens are both given"
                )
            object.__setattr__(self, "total_tokens", sum(p or 0 for p in parts))
        elif None not in parts and self.total_tokens != sum(p or 0 for p in parts):
            raise ValueError("total_tokens must equal input_tokens + output_tokens")
        return self

    @property
    def tokens(self) -> int:
        """Total tokens (always set after validation)."""
        assert self.total_tokens is not None
        return self.total_tokens


class TraceStep(Strict):
    """One tool call in an execution trace, in the order it happened."""

    tool: Name
    agent: Name | None = None
    context: Name | None = Field(default=None, description="Decision context, for tool accuracy.")
    started_at: Seconds | None = None
    ended_at: Seconds | None = None
    arguments: dict[Annotated[str, Field(max_length=200)], ArgValue] | None = Field(
        default=None,
        max_length=50,
        description="The call's arguments (scalars), for the trajectory match.",
        exclude_if=lambda value: value is None,  # a trace without them hashes as before
    )

    @model_validator(mode="after")
    def _ordered(self) -> TraceStep:
        if (
            self.started_at is not None
            and self.ended_at is not None
            and self.ended_at < self.started_at
        ):
            raise ValueError("ended_at must not be before started_at")
        return self


class AgentMessage(Strict):
    """One message between agents."""

    sender: Name
    receiver: Name
    type: MessageType


class Trace(Strict):
    """An execution trace: ordered tool calls and agent-to-agent messages."""

    steps: list[TraceStep] = Field(
        default_factory=list, max_length=MAX_TRACE_EDGES + 1, fail_fast=True
    )
    messages: list[AgentMessage] = Field(
        default_factory=list, max_length=MAX_TRACE_EDGES, fail_fast=True
    )

    @model_validator(mode="after")
    def _within_limits(self) -> Trace:
        nodes = {s.tool for s in self.steps} | {s.agent for s in self.steps if s.agent}
        nodes |= {m.sender for m in self.messages} | {m.receiver for m in self.messages}
        if len(nodes) > MAX_TRACE_NODES:
            raise ValueError(
                f"trace has {len(nodes)} distinct tools/agents; at most {MAX_TRACE_NODES}"
            )
        edges = max(0, len(self.steps) - 1) + len(self.messages)
        if edges > MAX_TRACE_EDGES:
            raise ValueError(
                f"trace has {edges} edges (transitions + messages); at most {MAX_TRACE_EDGES}"
            )
        return self


class TestResult(Strict):
    """One test outcome reported by the run."""

    __test__: ClassVar[bool] = False  # wire model, not a pytest test class

    name: Name
    passed: Flag


class Evidence(Strict):
    """What the run produced, for checking the task's success criteria."""

    files_created: list[Name] = Field(default_factory=list, max_length=MAX_ITEMS, fail_fast=True)
    errors: list[Text] = Field(default_factory=list, max_length=MAX_ITEMS, fail_fast=True)
    success: Flag = Field(default=True, description="Did the workflow complete without errors?")
    tests: list[TestResult] = Field(default_factory=list, max_length=MAX_ITEMS, fail_fast=True)


class ScenarioResult(Strict):
    """One scenario of an evaluation suite (spec 004)."""

    id: Identifier
    category: ScenarioCategory = "happy_path"
    capability: Capability | None = None
    expected_behaviors: list[Name] = Field(
        default_factory=list, max_length=MAX_ITEMS, fail_fast=True
    )
    observed_behaviors: list[Name] = Field(
        default_factory=list, max_length=MAX_ITEMS, fail_fast=True
    )
    must_not_violations: list[Name] = Field(
        default_factory=list,
        max_length=MAX_ITEMS,
        fail_fast=True,
        description="Must-not rules the run broke; any one fails it.",
    )
    latency_ms: Annotated[float, Field(ge=0, allow_inf_nan=False, strict=True)] | None = None
    correct_outputs: Count | None = None
    total_outputs: Count | None = None
    true_positives: Count | None = None
    false_positives: Count | None = None
    false_negatives: Count | None = None
    tokens_used: Count | None = None

    @model_validator(mode="after")
    def _consistent(self) -> ScenarioResult:
        if (self.correct_outputs is None) != (self.total_outputs is None):
            raise ValueError("correct_outputs and total_outputs come together")
        if self.correct_outputs is not None and self.correct_outputs > (self.total_outputs or 0):
            raise ValueError("correct_outputs must not exceed total_outputs")
        return self


MAX_PLANNED_RUNS = 10_000
"""Most runs a variant's run plan may declare."""
TICKET_PATTERN = r"^tkt_[A-Za-z0-9_-]{32}$"
"""A run ticket (`evalq.core.tickets`): ``tkt_`` and 32 URL-safe characters from the OS's
random source (192 bits)."""


class Submission(Strict):
    """One agent run on one task. ``id`` is the idempotency key."""

    id: SubmissionId = Field(description="Idempotency key: same id + same content = same job.")
    task_id: TaskId
    tool: Name = Field(description="The AI tool or agent framework that ran.")
    model: Name = Field(description="The model behind it; also the pricing key.")
    variant: Annotated[str, Field(pattern=r"^T\d{1,3}$"), Storable] | None = Field(
        default=None, description="Scylla variant tier T0..Tn; T0 is the baseline."
    )
    run_index: Count | None = Field(default=None, description="Repeat number within a variant.")
    planned_runs: Annotated[int, Field(ge=1, le=MAX_PLANNED_RUNS)] | None = Field(
        default=None,
        description="The run plan: how many runs this run's variant will send in all (the "
        "largest any of its runs declares holds). Runs planned and not sent count as failures "
        "at the task's worst cost; a variant that sends fewer runs than planned, or than its "
        "peers, says so and its verdicts say so or are withheld. Needs a variant.",
    )
    ticket: Annotated[str, Field(pattern=TICKET_PATTERN)] | None = Field(
        default=None,
        description="A run ticket of this task and variant (POST /v1/tasks/{id}/plans, `evalq "
        "plan`), unused, sent before its deadline: the run is one its variant registered "
        "before it happened. Once a variant has tickets only its ticketed runs count for it, "
        "and a ticket with no run by its deadline counts as a failure. Needs a variant.",
    )
    usage: Usage
    output: Text = ""
    trace: Trace | None = None
    evidence: Evidence = Field(default_factory=Evidence)
    scenarios: list[ScenarioResult] = Field(
        default_factory=list, max_length=MAX_ITEMS, fail_fast=True
    )
    passed: Flag | None = Field(
        default=None, description="Scylla pass/fail; derived from the success criteria if absent."
    )
    impl_rate: Fraction | None = Field(
        default=None, description="Scylla implementation rate from an external judge, if any."
    )
    metadata: Annotated[
        dict[str, JsonValue],
        BeforeValidator(check_metadata),
        WithJsonSchema(
            {
                "type": "object",
                "maxProperties": MAX_KEYS,
                "propertyNames": {"maxLength": 64, "pattern": KEY_PATTERN.pattern},
            }
        ),
    ] = Field(
        default_factory=dict,
        description=f"Free-form: at most {MAX_KEYS} keys (letters, digits, '_', '.', '-'; "
        f"64 characters), nested at most {MAX_DEPTH} levels, {MAX_BYTES} bytes as JSON. "
        "Stored and returned, never scored; part of the content the id's idempotency covers; "
        "leaderboards filter on it (metadata.KEY=VALUE).",
    )

    @model_validator(mode="after")
    def _unique_scenarios(self) -> Submission:
        ids = [s.id for s in self.scenarios]
        if len(ids) != len(set(ids)):
            raise ValueError("scenario ids must be unique")
        return self

    @field_validator("planned_runs")
    @classmethod
    def _plan_of_a_variant(cls, value: int | None, info: ValidationInfo) -> int | None:
        if value is not None and info.data.get("variant") is None:
            raise ValueError("needs a variant: a run plan is a variant's")
        return value

    @field_validator("ticket")
    @classmethod
    def _ticket_of_a_variant(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is not None and info.data.get("variant") is None:
            raise ValueError("needs a variant: a run ticket is a variant's")
        return value

    def content_hash(self) -> str:
        """SHA-256 of the canonical JSON form; detects a reused id with different content.

        Metadata is content: the same id re-sent with other metadata is a conflict. Empty
        metadata is left out, so a submission without any hashes as it did before the field
        existed (re-sending a run stored then is still recognised as the same run).
        """
        data = self.model_dump(mode="json")
        if not data["metadata"]:
            del data["metadata"]
        if data["planned_runs"] is None:  # as metadata: runs stored before the field hash alike
            del data["planned_runs"]
        if data["ticket"] is None:  # as planned_runs
            del data["ticket"]
        return canonical_hash(data)


RUN_CONTENT = ("output", "trace", "usage", "evidence", "scenarios", "passed", "impl_rate")
"""What a run did: two runs of a task equal on these are one run counted twice (a copy). Not the
id, the labels (tool, model, variant, run index) or the metadata, which a copy can change."""


def run_digests(payload: dict[str, Any]) -> tuple[str, str | None]:
    """``(run, output)`` digests of a stored submission payload (``model_dump(mode="json")``).

    The run digest covers `RUN_CONTENT`; the output digest covers the output text alone (None
    when it is empty), so the same answer sent with other usage can be told apart from a copy.
    """
    run = canonical_hash({key: payload.get(key) for key in RUN_CONTENT})
    output = payload.get("output") or ""
    return run, (canonical_hash(output) if output else None)


SHAPE_CONTENT = tuple(key for key in RUN_CONTENT if key != "usage")
"""What a run did apart from its usage: two runs of one agent equal on these, with usage within
`evalq.scoring.review.NEAR_COPY_TOLERANCE`, are one run sent twice (a near-copy)."""


def shape_digest(payload: dict[str, Any]) -> str:
    """Digest of a stored payload's `SHAPE_CONTENT`, its output text normalised
    (`normalised_output`): a resend that changes only the usage, the case or the spacing of the
    output has the run's shape digest."""
    shape = {key: payload.get(key) for key in SHAPE_CONTENT}
    shape["output"] = normalised_output(payload.get("output") or "")
    return canonical_hash(shape)


def trace_bounds(payload: dict[str, Any]) -> tuple[float | None, int | None]:
    """What a stored payload's trace says its usage must at least be: the seconds from its
    first step's start to its last step's end (None without timed steps), and its number of
    steps, each one tool call (None without steps)."""
    steps = (payload.get("trace") or {}).get("steps") or []
    timed = [
        (s["started_at"], s["ended_at"])
        for s in steps
        if s.get("started_at") is not None and s.get("ended_at") is not None
    ]
    seconds = max(e for _, e in timed) - min(b for b, _ in timed) if timed else None
    return seconds, (len(steps) if steps else None)


def normalised_output(text: str) -> str:
    """``text`` in evalq's normal form (`evalq.core.text_form`: invisible characters removed,
    NFKC, look-alike letters folded, case and spacing folded): the edits that change no word
    of an answer as a reader sees it."""
    return text_form(text)


def canonical_hash(data: Any) -> str:
    """SHA-256 hex of ``data`` as canonical JSON (sorted keys, no whitespace)."""
    blob = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(blob.encode()).hexdigest()


def problems_of(error: ValidationError, prefix: str = "") -> list[tuple[str, str]]:
    """Flatten a pydantic ``ValidationError`` into ``(dotted.field, rule)`` pairs.

    Fields and rules are made printable: a key the caller sent, or a value pydantic echoes in
    its message (a discriminator's tag), may hold NUL or a lone surrogate. The wire models keep
    the count small (bounded lists that stop at their first bad item, one problem for an object
    of many unknown keys), so building them all stays cheap.
    """
    problems = []
    for item in error.errors(include_url=False, include_input=False, include_context=False):
        loc = ".".join(printable(str(part)) for part in item["loc"])
        field = f"{prefix}{loc}" if loc else prefix.rstrip(".") or "(root)"
        problems.append((field, printable(item["msg"])))
    return problems


def invalid_input(error: ValidationError) -> InvalidInput:
    """The `InvalidInput` of a pydantic error: its first `MAX_PROBLEMS` problems and its count."""
    return InvalidInput(problems_of(error)[:MAX_PROBLEMS], total=error.error_count())


def parse_submission(data: Any) -> Submission:
    """Validate one submission, raising `InvalidInput` that names each bad field and rule."""
    try:
        return Submission.model_validate(data)
    except ValidationError as error:
        raise invalid_input(error) from None


def parse_submissions(items: Iterable[Submission | Any]) -> list[Submission]:
    """Validate a batch: each item a `Submission` already or its data.

    Raises:
        InvalidInput: every bad item's problems, named ``[INDEX].field`` (the first
            `MAX_PROBLEMS`, with the total count); nothing is returned.
    """
    parsed: list[Submission] = []
    problems: list[tuple[str, str]] = []
    total = 0
    for index, item in enumerate(items):
        try:
            parsed.append(item if isinstance(item, Submission) else parse_submission(item))
        except InvalidInput as error:
            problems += [(f"[{index}].{field}", rule) for field, rule in error.problems]
            del problems[MAX_PROBLEMS:]
            total += error.total
    if problems:
        raise InvalidInput(problems, total=total)
    return parsed


def parse_task(data: Any) -> Task:
    """Validate one task definition, raising `InvalidInput` on any problem."""
    try:
        return Task.model_validate(data)
    except ValidationError as error:
        raise invalid_input(error) from None
